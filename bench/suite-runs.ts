/**
 * `npm run bench:suite -- --runs N`: the whole suite benchmark N times in a row, each run in its own
 * process (its own library passes before and after, its own service and worker, a new job), then
 * every run's figures side by side with the median and the range of the target ratio.
 *
 * Why: on a shared VM the same code measures differently from one minute to the next (the
 * library's own single-thread passes vary by ±15 % within a run, and other guests take CPU time:
 * "steal"). One run can land on either side of a target; N runs show where the figure sits and
 * how far it moves. Each run's full result goes next to the summary (`-run<i>` files).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface RunResult {
  at: string;
  loadavg_1m: number;
  library: { passes_mb_s: number[]; mb_s: number };
  library_threads_at_once: { of_single_times_threads: number };
  end_to_end: { seconds: number; mb_s: number; idle_s?: number; steal_s?: number };
  target_throughput: { ideal_mb_s: number; ratio: number; target: number; met: boolean };
  job_only_ratio: number;
  segments_done_when_upload_ended: number;
  phases: Record<string, { cpu: { worker_s: number; service_s: number; bench_s: number } }>;
  rss: { service: { peak: number }; worker: { peak: number }; limit: number; met: boolean };
  worker_threads: number;
  input: { bytes: number };
  verified: boolean;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const fmt = (x: number, d = 1) => x.toFixed(d);
const say = (line: string) =>
  process.stderr.write(`[bench:suite runs ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** argv without `--runs N` and `--out FILE` (each run gets its own --out) */
function runArgs(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--runs" || argv[i] === "--out") i++;
    else out.push(argv[i] as string);
  }
  return out;
}

function runOnce(args: string[], out: string): Promise<number | null> {
  const script = fileURLToPath(new URL("./suite.ts", import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, script, ...args, "--out", out], { stdio: "inherit" });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
}

export async function repeatRuns(opts: { runs: number; argv: string[]; resultFile: string }): Promise<number> {
  const args = runArgs(opts.argv);
  const base = opts.resultFile.replace(/\.json$/, "");
  const results: RunResult[] = [];
  for (let i = 1; i <= opts.runs; i++) {
    const file = `${base}-run${i}.json`;
    fs.rmSync(file, { force: true });
    say(`run ${i} of ${opts.runs}`);
    const code = await runOnce(args, file);
    if (code !== 0 || !fs.existsSync(file)) {
      say(`run ${i} failed (exit ${code}); stopping`);
      return 1;
    }
    results.push(JSON.parse(fs.readFileSync(file, "utf8")) as RunResult);
  }

  const ratios = results.map((r) => r.target_throughput.ratio);
  const target = results[0]?.target_throughput.target ?? 0.8;
  const summary = {
    at: new Date().toISOString(),
    command: `npm run bench:suite -- ${opts.argv.join(" ")}`.trim(),
    runs: results.map((r, i) => ({
      file: path.basename(`${base}-run${i + 1}.json`),
      at: r.at,
      loadavg_1m: r.loadavg_1m,
      end_to_end_mb_s: r.end_to_end.mb_s,
      end_to_end_seconds: r.end_to_end.seconds,
      steal_s: r.end_to_end.steal_s ?? null,
      idle_s: r.end_to_end.idle_s ?? null,
      library_passes_mb_s: r.library.passes_mb_s,
      library_mb_s: r.library.mb_s,
      ratio: r.target_throughput.ratio,
      job_only_ratio: r.job_only_ratio,
      threads_at_once_scaling: r.library_threads_at_once.of_single_times_threads,
      worker_cpu_s: Object.values(r.phases).reduce((a, p) => a + p.cpu.worker_s, 0),
      peak_rss_service: r.rss.service.peak,
      peak_rss_worker: r.rss.worker.peak,
      verified: r.verified,
    })),
    ratio: {
      target,
      median: median(ratios),
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      runs_met: ratios.filter((x) => x >= target).length,
      median_met: median(ratios) >= target,
    },
    rss: {
      service_max: Math.max(...results.map((r) => r.rss.service.peak)),
      worker_max: Math.max(...results.map((r) => r.rss.worker.peak)),
      limit: results[0]?.rss.limit ?? 300e6,
      met_every_run: results.every((r) => r.rss.met),
    },
    verified_every_run: results.every((r) => r.verified),
  };
  const file = `${base}-runs.json`;
  fs.writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);

  const first = results[0] as RunResult;
  console.log(
    `\nbench:suite — ${opts.runs} runs of ${fmt(first.input.bytes / 1e6, 0)} MB, ${first.worker_threads} worker threads\n`,
  );
  console.log(
    "| run | at | end to end MB/s | library passes MB/s (fastest counts) | ratio | job phase ratio | steal s (clock) | worker CPU s | peak RSS service / worker MB |",
  );
  console.log("|---:|---|---:|---|---:|---:|---:|---:|---|");
  summary.runs.forEach((r, i) => {
    console.log(
      `| ${i + 1} | ${r.at.slice(11, 19)} | ${fmt(r.end_to_end_mb_s)} | ${r.library_passes_mb_s.map((x) => fmt(x)).join(", ")} | ${fmt(r.ratio, 3)} | ${fmt(r.job_only_ratio, 3)} | ${r.steal_s ?? "–"} | ${fmt(r.worker_cpu_s)} | ${fmt(r.peak_rss_service / 1e6, 0)} / ${fmt(r.peak_rss_worker / 1e6, 0)} |`,
    );
  });
  const r = summary.ratio;
  console.log(
    `\nend to end / (library × threads): median ${fmt(r.median, 3)} (min ${fmt(r.min, 3)}, max ${fmt(r.max, 3)}); ` +
      `≥ ${target} in ${r.runs_met} of ${opts.runs} runs; median ${r.median_met ? "met" : "NOT met"}`,
  );
  console.log(
    `peak RSS: service ≤ ${fmt(summary.rss.service_max / 1e6, 0)} MB, worker ≤ ${fmt(summary.rss.worker_max / 1e6, 0)} MB ` +
      `(limit ${fmt(summary.rss.limit / 1e6, 0)}): ${summary.rss.met_every_run ? "met in every run" : "NOT met in every run"}`,
  );
  console.log(
    `verified every run: ${summary.verified_every_run ? "yes" : "NO"}\nwrote ${path.relative(process.cwd(), file)}`,
  );
  return 0;
}

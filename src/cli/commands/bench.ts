import fs from "node:fs";
import { type BenchResult, bench } from "../../codec/api/bench.js";
import { LEVELS, type Level } from "../../codec/chambers/types.js";
import { type CliIO, type Command, UsageError } from "../command.js";
import { codecFailure, fmt, levelOf, mib, parseCodecArgs } from "./compress.js";

const HELP = `Usage: labphi bench FILE… [options]

Compresses each FILE with omni and its peers in the same run, decompresses every output and
compares it byte for byte. Prints per method: size, ratio (original / compressed), compress and
decompress speed, and the round-trip verdict. Exit status 1 when any round trip fails.

Options:
  --level LEVEL   fast | balanced | max | all (default max)
  --peers PEERS   classic (gzip-9, brotli-11) | all (also zstd-19 and xz-9; default)
  --json          print JSON (one result per file)
  -q, --quiet     no progress on stderr
  -h, --help      this help

The full corpus benchmark with per-class tables is 'npm run bench:codec'.`;

const rate = (bytes: number, msec: number): string => (msec > 0 ? `${(bytes / 1e6 / (msec / 1000)).toFixed(1)}` : "—");

export const benchCommand: Command = {
  name: "bench",
  summary: "Benchmark omni against gzip-9, brotli-11, zstd-19 and xz-9 on files, with round-trip checks",
  help: HELP,
  async run(args: string[], io: CliIO) {
    const a = parseCodecArgs(args, {
      values: ["level", "peers"],
      flags: ["json", "quiet"],
      aliases: { "-q": "quiet" },
    });
    if (a.positional.length === 0) throw new UsageError("give at least one FILE");
    const levels: Level[] = a.values.level === "all" ? [...LEVELS] : [levelOf(a.values.level)];
    const peers = a.values.peers ?? "all";
    if (peers !== "classic" && peers !== "all") throw new UsageError("--peers must be classic or all");
    const quiet = a.flags.has("quiet");
    for (const f of a.positional)
      if (!fs.existsSync(f) || !fs.statSync(f).isFile()) throw new Error(`no such file: ${f}`);

    const results: (BenchResult & { file: string })[] = [];
    let failed = false;
    for (const [i, file] of a.positional.entries()) {
      const bytes = new Uint8Array(fs.readFileSync(file));
      if (!quiet) io.stderr.write(`bench: [${i + 1}/${a.positional.length}] ${file} (${mib(bytes.length)})…\n`);
      let r: BenchResult;
      try {
        r = await bench(bytes, { levels, peers });
      } catch (err) {
        throw codecFailure(err);
      }
      if (!r.roundtrip || r.methods.some((m) => !m.roundtrip)) failed = true;
      results.push({ file, ...r });
      if (a.flags.has("json")) continue;
      const rows = r.methods.map((m) => [
        m.method,
        fmt(m.bytes),
        m.ratio.toFixed(3),
        rate(bytes.length, m.compress_ms),
        rate(bytes.length, m.decompress_ms),
        m.roundtrip ? "ok" : "FAILED",
      ]);
      const head = ["method", "bytes", "ratio", "comp MB/s", "dec MB/s", "round trip"];
      const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => (row[c] as string).length)));
      const line = (cells: string[]) =>
        cells.map((x, c) => (c === 0 ? x.padEnd(widths[c] ?? 0) : x.padStart(widths[c] ?? 0))).join("  ");
      io.stdout.write(
        `${file}: ${fmt(r.original_bytes)} bytes, ${r.data_class}, omni chamber ${r.chamber}, omni/brotli-11 = ${r.omni_vs_brotli}\n${line(head)}\n${rows.map(line).join("\n")}\n\n`,
      );
    }
    if (a.flags.has("json")) io.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
    if (failed) io.stderr.write("bench: a round trip FAILED (see the table)\n");
    return failed ? 1 : 0;
  },
};

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import SQLite from "../../src/db/sqlite-driver.js";
import { healthy, type Service, spawnService } from "./service.js";

/**
 * Issue #21 item 5 "Lists are bounded", at scale: 3,000 proposals of the longest allowed text
 * (8,000 characters) written straight into the database (a fixture: no participant, no limit),
 * then 20 concurrent GETs of /olympiad while /healthz is timed and the service's memory is read
 * from /proc. The service runs as a host runs it (`labphi serve`, its own process), so its RSS
 * is its own. Before the fix every page listed every proposal in full (37.5 MB a page, 2.2 GiB,
 * /healthz 3.4 s); now a page lists 20, cut, and is built once per change of the data.
 */

const MiB = 1024 * 1024;
const PROPOSALS = 3000;
const CONCURRENT = 20;
const RSS_LIMIT = 600 * MiB;
const HEALTHZ_LIMIT_MS = 500;

let dataDir: string;
let service: Service;
let keys: [string, string][];

/** The processes of the service's process group (the launcher and any child it started). */
function groupPids(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid pgrp …: comm may hold spaces, so split after its closing parenthesis
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid) pids.push(Number(name));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids;
}

/** The resident set (now, summed) and the peak of the largest process, in bytes (/proc/<pid>/status). */
function memory(pids: readonly number[]): { rss: number; hwm: number } {
  let rss = 0;
  let hwm = 0;
  for (const pid of pids) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
      rss += kb("VmRSS");
      hwm = Math.max(hwm, kb("VmHWM"));
    } catch {
      // the process ended meanwhile
    }
  }
  return { rss, hwm };
}

/**
 * Times GET /healthz from a process of its own (every 20 ms, at least `min` times, until its stdin
 * closes), so the figures are the service's latency, not this test process's busy event loop.
 */
function healthzProber(url: string, min: number) {
  const script = `
    let open = true;
    process.stdin.on("end", () => { open = false; });
    process.stdin.resume();
    (async () => {
      let n = 0;
      while (open || n < ${min}) {
        const t0 = performance.now();
        const r = await fetch(${JSON.stringify(`${url}/healthz`)}, { signal: AbortSignal.timeout(60000) });
        await r.arrayBuffer();
        console.log(String(performance.now() - t0));
        n++;
        await new Promise((done) => setTimeout(done, 20));
      }
      process.exit(0);
    })();`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    async stop(): Promise<number[]> {
      child.stdin.end();
      await exited;
      return out
        .split("\n")
        .filter(Boolean)
        .map((line) => Number(line));
    },
  };
}

/** Writes the fixture: PROPOSALS open proposals with the longest body and a few votes each; their sort keys. */
function seed(dir: string): [string, string][] {
  const keys: [string, string][] = [];
  const db = new SQLite(path.join(dir, "labphi.sqlite"));
  try {
    db.pragma("busy_timeout = 10000");
    const now = Date.now();
    const insert = db.prepare(
      "insert into olympiad_proposals (id, kind, title, body, proposer_id, opens_at, closes_at, state, outcome, tally, created_at) values (?, ?, ?, ?, ?, ?, ?, 'open', null, null, ?)",
    );
    const vote = db.prepare(
      "insert into olympiad_votes (proposal_id, voter_id, choice, constituency, cast_at, updated_at) values (?, ?, ?, ?, ?, ?)",
    );
    const body = (i: number) =>
      `Proposal ${i}: ${"all work and no play makes a long proposal text; ".repeat(200)}`.slice(0, 8000);
    db.transaction(() => {
      for (let i = 0; i < PROPOSALS; i++) {
        const at = new Date(now - (PROPOSALS - i) * 1000).toISOString();
        const id = `prop_flood_${String(i).padStart(5, "0")}`;
        keys.push([at, id]);
        insert.run(
          id,
          "new_games",
          `Flood proposal number ${i} ${"x".repeat(120)}`,
          body(i),
          `par_flood_${i % 1000}`,
          at,
          new Date(now + 7 * 24 * 3_600_000).toISOString(),
          at,
        );
        vote.run(id, `par_voter_a_${i}`, "yes", "public_community", at, at);
        vote.run(id, `par_voter_b_${i}`, "no", "entered_agents", at, at);
      }
    })();
  } finally {
    db.close();
  }
  return keys;
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-olympiad-flood-"));
  service = spawnService({ DATA_DIR: dataDir, RATE_LIMIT_ENABLED: "false" });
  await healthy(service);
  keys = seed(dataDir);
}, 180_000);

afterAll(async () => {
  await service?.kill();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Fires the GETs at once while sampling the service's RSS and timing /healthz. */
async function flood(urls: string[]) {
  const pids = groupPids(service.child.pid as number);
  const before = memory(pids);
  let peakRss = before.rss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, memory(pids).rss);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  const prober = healthzProber(service.url, 5);
  await new Promise((r) => setTimeout(r, 200)); // the prober is running
  const t0 = performance.now();
  const answers = await Promise.all(
    urls.map(async (url) => {
      const r = await fetch(`${service.url}${url}`, {
        headers: { accept: "text/html" },
        signal: AbortSignal.timeout(170_000),
      });
      const text = await r.text();
      return {
        status: r.status,
        bytes: Buffer.byteLength(text),
        cards: text.match(/<article class="card proposal"/g)?.length ?? 0,
      };
    }),
  );
  const loadMs = performance.now() - t0;
  const healthz = await prober.stop();
  sampling = false;
  await sampler;
  const after = memory(pids);
  const peak = Math.max(peakRss, after.hwm);
  return {
    answers,
    peak,
    healthzMax: Math.max(...healthz),
    figures: {
      gets: urls.length,
      statuses: [...new Set(answers.map((a) => a.status))],
      page_bytes_max: Math.max(...answers.map((a) => a.bytes)),
      proposals_per_page_max: Math.max(...answers.map((a) => a.cards)),
      load_ms: Math.round(loadMs),
      rss_before_mib: +(before.rss / MiB).toFixed(1),
      rss_peak_mib: +(peak / MiB).toFixed(1),
      rss_after_mib: +(after.rss / MiB).toFixed(1),
      healthz_max_ms: Math.round(Math.max(...healthz)),
      healthz_samples: healthz.length,
    },
  };
}

const cursorOf = (key: [string, string]) => Buffer.from(JSON.stringify(key), "utf8").toString("base64url");

describe("3,000 proposals: /olympiad under 20 concurrent GETs", () => {
  it("keeps the service under 600 MiB and /healthz under 500 ms; a page is bounded", async () => {
    const r = await flood(Array.from({ length: CONCURRENT }, () => "/olympiad"));
    console.log(`olympiad flood (${PROPOSALS} proposals, /olympiad): ${JSON.stringify(r.figures)}`);
    expect(r.answers.every((a) => a.status === 200)).toBe(true);
    expect(r.peak, `peak RSS ${r.figures.rss_peak_mib} MiB`).toBeLessThan(RSS_LIMIT);
    expect(r.healthzMax, `slowest /healthz ${r.figures.healthz_max_ms} ms`).toBeLessThan(HEALTHZ_LIMIT_MS);
    // a page lists 20 proposals with cut texts: far below 3,000 × 8,000 characters
    expect(r.figures.proposals_per_page_max).toBe(20);
    expect(r.figures.page_bytes_max).toBeLessThan(1 * MiB);
  }, 300_000);

  it("holds the same bounds for 20 different pages of 100 (nothing to share between them)", async () => {
    const urls = Array.from({ length: CONCURRENT }, (_, k) => {
      const key = keys[keys.length - 1 - 100 * (k + 1)] as [string, string];
      return `/olympiad?limit=100&cursor=${cursorOf(key)}`;
    });
    const r = await flood(urls);
    console.log(`olympiad flood (${PROPOSALS} proposals, 20 pages of 100): ${JSON.stringify(r.figures)}`);
    expect(r.answers.every((a) => a.status === 200)).toBe(true);
    expect(r.peak, `peak RSS ${r.figures.rss_peak_mib} MiB`).toBeLessThan(RSS_LIMIT);
    expect(r.healthzMax, `slowest /healthz ${r.figures.healthz_max_ms} ms`).toBeLessThan(HEALTHZ_LIMIT_MS);
    expect(r.figures.proposals_per_page_max).toBe(100);
    expect(r.figures.page_bytes_max).toBeLessThan(2 * MiB);
  }, 300_000);
});

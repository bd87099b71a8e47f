import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli/main.js";
import { entryHash, GENESIS_HASH, type JsonValue } from "../../../src/db/hash-chain.js";
import { EVENTS } from "../../../src/olympiad/events/events.js";
import { computeStandings } from "../../../src/olympiad/results/standings.js";
import { verifyStandingsDocument } from "../../../src/olympiad/results/verify.js";
import { type TestApp, testApp } from "../../support/app.js";
import { seedParticipants } from "../../support/olympiad.js";

const ADMIN_TOKEN = "admin-token-for-verify-standings-0123";
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const higher = EVENTS.filter((e) => e.entrants === "individual" && e.scoring.better === "higher");
const ev = (i: number) => (higher[i] as { id: string }).id;
const evidence = { url: "https://evidence.example/sheet", sha256: "0f".repeat(32) };

interface Entry {
  seq: number;
  at: string;
  kind: string;
  body: Record<string, JsonValue>;
  prev_hash: string;
  hash: string;
}
interface Doc {
  season: string;
  head: { seq: number; hash: string };
  standings: Record<string, unknown>[];
  seeding: Record<string, unknown>[];
  rules: { points_table: number[] };
  ranked_total: number;
  version: string;
  entries: Entry[];
}

async function cli(args: string[], stdin = "") {
  let out = "";
  let err = "";
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on("data", (c) => {
    out += String(c);
  });
  stderr.on("data", (c) => {
    err += String(c);
  });
  const input = new PassThrough();
  input.end(stdin);
  const code = await runCli(args, { stdin: input, stdout, stderr, env: {} });
  return { code, out, err };
}

/** The CLI as a real process (node + tsx), without blocking this process's server. */
function processRun(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const require = createRequire(import.meta.url);
  const tsx = require.resolve("tsx/cli");
  const main = path.resolve("src/cli/main.ts");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, main, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => {
      out += String(c);
    });
    child.stderr.on("data", (c) => {
      err += String(c);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

/** Rehashes every entry from `from` on (what a forger would do), and the head. */
function rehash(doc: Doc, from = 1) {
  let prev = from === 1 ? GENESIS_HASH : (doc.entries[from - 2] as Entry).hash;
  for (const e of doc.entries.slice(from - 1)) {
    e.prev_hash = prev;
    e.hash = entryHash({ ...e, chain: "olympiad" });
    prev = e.hash;
  }
  const last = doc.entries.at(-1) as Entry;
  doc.head = { seq: last.seq, hash: last.hash };
}

describe("labphi verify-standings", () => {
  let t: TestApp;
  let base: string;
  let dir: string;
  let original: Doc;
  const copy = (): Doc => structuredClone(original);
  let n = 0;
  const save = (doc: unknown): string => {
    const file = path.join(dir, `standings-${n++}.json`);
    fs.writeFileSync(file, JSON.stringify(doc, null, 1));
    return file;
  };
  const expectRejected = async (doc: unknown, message: RegExp, args: string[] = []) => {
    const r = await cli(["verify-standings", save(doc), ...args]);
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.err).toMatch(/NOT VERIFIED/);
    expect(r.err).toMatch(message);
    return r;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-verify-"));
    t = await testApp("sqlite", {
      ADMIN_TOKEN,
      OLYMPIAD_SEASON_YEAR: "2026",
      OLYMPIAD_REGISTRATION_OPENS: "2026-01-08",
    });
    t.app.services.olympiadRecords.now = () => new Date("2026-08-15T12:00:00Z");
    await seedParticipants(t.app.services.db.kysely, ["par_a", "par_b", "par_c", "par_d"]);
    const record = async (payload: Record<string, unknown>) => {
      const r = await t.app.inject({ method: "POST", url: "/api/admin/olympiad/results", payload, headers: auth });
      expect(r.statusCode, r.body).toBe(201);
    };
    const lines = (scores: Record<string, number>) =>
      Object.entries(scores).map(([participant_id, score]) => ({ participant_id, score }));
    await record({
      event_id: ev(0),
      quarter: "Q1",
      results: lines({ par_a: 9, par_b: 7, par_c: 5, par_d: 1 }),
      evidence,
    });
    await record({ event_id: ev(1), quarter: "Q1", results: lines({ par_b: 9, par_a: 3 }), evidence });
    await record({ event_id: ev(2), quarter: "tryouts", results: lines({ par_d: 9, par_c: 3 }), evidence });
    await record({
      event_id: ev(1),
      quarter: "Q1",
      supersedes: 2,
      reason: "photo finish reviewed",
      results: lines({ par_b: 9, par_a: 9 }),
      evidence,
    });
    await record({ event_id: ev(3), quarter: "Q2", results: lines({ par_c: 4, par_d: 2 }), evidence });
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
    original = (await t.app.inject({ method: "GET", url: "/standings.json" })).json() as Doc;
    expect(original.entries).toHaveLength(5);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("prints its help, refuses bad usage (2) and unreadable documents (3)", async () => {
    const help = await cli(["verify-standings", "--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("Usage: labphi verify-standings");
    expect(help.out).toMatch(/--head <seq>:<hash>/);
    expect((await cli(["--help"])).out).toMatch(/verify-standings\s+Verify published olympiad standings/);
    expect((await cli(["verify-standings"])).code).toBe(2);
    expect((await cli(["verify-standings", "a.json", "b.json"])).code).toBe(2);
    expect((await cli(["verify-standings", "a.json", "--head", "12:zz"])).code).toBe(2);
    expect((await cli(["verify-standings", "a.json", "--bogus"])).code).toBe(2);
    const missing = await cli(["verify-standings", path.join(dir, "nope.json")]);
    expect(missing.code).toBe(3);
    expect(missing.err).toMatch(/cannot read/);
    fs.writeFileSync(path.join(dir, "bad.json"), "{not json");
    expect((await cli(["verify-standings", path.join(dir, "bad.json")])).code).toBe(3);
    const notFound = await cli(["verify-standings", `${base}/standings-nowhere.json`]);
    expect(notFound.code).toBe(3);
    expect(notFound.err).toMatch(/404/);
  });

  it("verifies the live document by URL, a saved copy, and stdin: exit 0, saying what it checked", async () => {
    const live = await cli(["verify-standings", `${base}/standings.json`]);
    expect(live.code, live.out + live.err).toBe(0);
    expect(live.out).toContain("ok    chain: 5 entries, seq 1..5, every prev_hash links and every hash recomputes");
    expect(live.out).toContain(`ok    head: seq 5, hash ${original.head.hash}`);
    expect(live.out).toMatch(
      /ok {4}standings: 4 rows match the recomputation \(4 ranked; medals: gold par_a, silver par_b, bronze par_c\)/,
    );
    expect(live.out).toMatch(/ok {4}seeding: 2 rows match/);
    expect(live.out).toContain(`VERIFIED ${base}/standings.json`);
    expect((await cli(["verify-standings", save(original)])).code).toBe(0);
    expect((await cli(["verify-standings", "-"], JSON.stringify(original))).code).toBe(0);
    const json = await cli(["verify-standings", save(original), "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({ ok: true, entries: 5, head: original.head });
    const known = await cli(["verify-standings", save(original), "--head", `3:${original.entries[2]?.hash}`]);
    expect(known.code).toBe(0);
    expect(known.out).toMatch(/known head: seq 3 still has hash/);
  });

  it("detects a changed rank or score in a published record, naming the entry", async () => {
    const rank = copy();
    ((rank.entries[0] as Entry).body.results as { rank: number }[])[3] = {
      ...((rank.entries[0] as Entry).body.results as { rank: number }[])[3],
      rank: 1,
    } as never;
    await expectRejected(rank, /seq 1.*entry seq 1 is tampered: hash .* does not match/);
    const score = copy();
    ((score.entries[4] as Entry).body.results as { score: string }[])[0] = {
      participant_id: "par_c",
      score: "1",
      rank: 1,
    } as never;
    await expectRejected(score, /entry seq 5 is tampered/);
    const evidenceChanged = copy();
    (evidenceChanged.entries[1] as Entry).body.evidence = { url: "https://elsewhere.example" };
    await expectRejected(evidenceChanged, /entry seq 2 is tampered/);
  });

  it("detects a removed, reordered or appended-out-of-order entry", async () => {
    const removed = copy();
    removed.entries.splice(2, 1);
    await expectRejected(removed, /entry seq 3 is tampered: entry 3 is missing/);
    const last = copy();
    last.entries.pop();
    await expectRejected(last, /published head \(seq 5, .*\) is not the last entry \(seq 4/);
    const reordered = copy();
    [reordered.entries[1], reordered.entries[2]] = [reordered.entries[2] as Entry, reordered.entries[1] as Entry];
    await expectRejected(reordered, /entry seq 2 is tampered: entries are out of order|entry 2 is missing/);
  });

  it("detects changed standings or seeding lists and a changed head", async () => {
    const points = copy();
    (points.standings[0] as { points: number }).points += 1;
    await expectRejected(
      points,
      /standings position 1: published rank 1 par_a \(51 points.*recomputed rank 1 par_a \(50 points/,
    );
    const dropped = copy();
    dropped.standings.splice(1, 1);
    await expectRejected(dropped, /standings position 2/);
    const medal = copy();
    (medal.standings[0] as { medal: string }).medal = "silver";
    (medal.standings[1] as { medal: string }).medal = "gold";
    await expectRejected(medal, /standings position 1/);
    const extra = copy();
    extra.standings.push({ ...(extra.standings[0] as object), rank: 5, entrant: "par_z" });
    await expectRejected(extra, /standings lists rank 5 par_z/);
    const seeding = copy();
    seeding.seeding.reverse();
    await expectRejected(seeding, /seeding position 1/);
    const total = copy();
    total.ranked_total = 3;
    await expectRejected(total, /ranked_total/);
    const headHash = copy();
    headHash.head.hash = "f".repeat(64);
    await expectRejected(headHash, /published head/);
    const rules = copy();
    rules.rules.points_table[0] = 100;
    await expectRejected(rules, /rules/);
    const version = copy();
    version.version = "9.9.9";
    await expectRejected(version, /version 9\.9\.9/);
  });

  it("a forger who rehashes the whole chain is caught by the recomputed standings, or by a head seen before", async () => {
    const forged = copy();
    ((forged.entries[0] as Entry).body.results as { score: string; rank: number }[])[3] = {
      participant_id: "par_d",
      score: "10",
      rank: 1,
    } as never;
    rehash(forged);
    // The ranks no longer follow the scores: the records rules catch it.
    await expectRejected(forged, /records.*entry 1: par_a has rank 1 but its score ranks 2/);

    // A consistent forgery (scores, ranks, chain and standings all rewritten) passes on its own…
    const consistent = copy();
    const body = (consistent.entries[4] as Entry).body;
    body.results = [
      { participant_id: "par_d", rank: 1, score: "4" },
      { participant_id: "par_c", rank: 2, score: "2" },
    ];
    rehash(consistent, 5);
    const s = computeStandings(
      consistent.entries.map((e) => ({ ...e, chain: "olympiad" })),
      consistent.season,
    );
    consistent.standings = s.standings as never;
    consistent.seeding = s.seeding as never;
    expect(verifyStandingsDocument(consistent).ok).toBe(true);
    // …but not against a head published earlier.
    await expectRejected(consistent, /known_head.*seq 5 now has hash .* the chain was rewritten/, [
      "--head",
      `${original.head.seq}:${original.head.hash}`,
    ]);
    const shorter = copy();
    shorter.entries.pop();
    rehash(shorter, 5);
    await expectRejected(shorter, /seq 5 \(seen before\) is gone/, ["--head", `5:${original.head.hash}`]);

    // A correction of a set that does not exist, even rehashed, breaks the record rules.
    const badCorrection = copy();
    (badCorrection.entries[3] as Entry).body.supersedes = 42;
    rehash(badCorrection, 4);
    await expectRejected(badCorrection, /records.*corrects seq 42, which is not a recorded result set/);
  });

  it("works as a real process: exit 0 on the live URL, exit 1 on a tampered copy", async () => {
    const ok = await processRun(["verify-standings", `${base}/standings.json`]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain("VERIFIED");
    const tampered = copy();
    ((tampered.entries[1] as Entry).body.results as { score: string }[])[0] = {
      participant_id: "par_b",
      score: "1",
      rank: 1,
    } as never;
    const bad = await processRun(["verify-standings", save(tampered)]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/NOT VERIFIED \(chain, seq 2\): entry seq 2 is tampered/);
  }, 60_000);
});

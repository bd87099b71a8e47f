import { canonicalJson, GENESIS_HASH, verifyChain } from "../../db/hash-chain.js";
import { VERSIONS } from "../../versions.js";
import { computeStandings, RecordsError, type StandingRow, standingsRules } from "./standings.js";

/**
 * Verifies a published standings document (`GET /standings.json`) from its own contents alone
 * (docs/olympiad-records.md "Verifying"): every entry's hash and link, the head, the rules, and the
 * standings and seeding lists recomputed from the entries. Pure; `labphi verify-standings` prints
 * the report.
 */

export type VerifyFailure =
  | "format"
  | "version"
  | "chain"
  | "head"
  | "known_head"
  | "rules"
  | "records"
  | "standings"
  | "seeding";

export interface VerifyReport {
  ok: boolean;
  /** what was checked, one line each (also on failure: the checks that passed before it) */
  checked: string[];
  failure?: { kind: VerifyFailure; seq?: number; message: string };
  entries: number;
  head?: { seq: number; hash: string };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const short = (hash: string) => `${hash.slice(0, 16)}…`;

function describeRow(row: unknown): string {
  if (!isObject(row)) return JSON.stringify(row) ?? "nothing";
  return `rank ${row.rank} ${row.entrant} (${row.points} points, ${row.golds}/${row.silvers}/${row.bronzes} medals, reached seq ${row.reached_seq}, medal ${row.medal})`;
}

function compareList(
  name: "standings" | "seeding",
  published: unknown[],
  recomputed: StandingRow[],
): { message: string } | undefined {
  const n = Math.max(published.length, recomputed.length);
  for (let i = 0; i < n; i++) {
    const p = published[i];
    const r = recomputed[i];
    let same = false;
    try {
      same = p !== undefined && r !== undefined && canonicalJson(p) === canonicalJson(r);
    } catch {
      same = false;
    }
    if (!same) {
      if (r === undefined) return { message: `${name} lists ${describeRow(p)}, which the entries do not give` };
      if (p === undefined) return { message: `${name} leaves out ${describeRow(r)}, which the entries give` };
      return { message: `${name} position ${i + 1}: published ${describeRow(p)}, recomputed ${describeRow(r)}` };
    }
  }
  return undefined;
}

/** `knownHead`: a head seen earlier (seq and hash) that must still be part of the chain. */
export function verifyStandingsDocument(
  doc: unknown,
  opts: { knownHead?: { seq: number; hash: string } } = {},
): VerifyReport {
  const checked: string[] = [];
  const fail = (kind: VerifyFailure, message: string, seq?: number, entries = 0): VerifyReport => ({
    ok: false,
    checked,
    failure: { kind, message, ...(seq !== undefined ? { seq } : {}) },
    entries,
  });
  if (!isObject(doc)) return fail("format", "the document is not a JSON object");
  const { version, season, chain, head, standings, seeding, entries, rules } = doc;
  if (typeof season !== "string" || typeof chain !== "string") {
    return fail("format", "the document has no season or chain name");
  }
  if (!isObject(head) || typeof head.seq !== "number" || typeof head.hash !== "string") {
    return fail("format", "the document has no head {seq, hash}");
  }
  if (!Array.isArray(entries) || !Array.isArray(standings) || !Array.isArray(seeding)) {
    return fail("format", "the document lacks entries, standings or seeding lists");
  }
  if (version !== VERSIONS.standings) {
    return fail(
      "version",
      `standings version ${String(version)} is not the one this verifier knows (${VERSIONS.standings})`,
    );
  }
  checked.push(`document: standings version ${version}, season ${season}, chain '${chain}'`);

  // 1. The chain: links and hashes, from the published entries alone.
  const withChain = entries.map((e) => (isObject(e) ? { ...e, chain } : e));
  const verdict = verifyChain(withChain, { chain });
  if (!verdict.ok) {
    return fail("chain", `entry seq ${verdict.seq} is tampered: ${verdict.reason}`, verdict.seq, entries.length);
  }
  checked.push(
    entries.length === 0
      ? "chain: empty (no entries)"
      : `chain: ${entries.length} entries, seq 1..${entries.length}, every prev_hash links and every hash recomputes`,
  );

  // 2. The head.
  if (head.seq !== verdict.head.seq || head.hash !== verdict.head.hash) {
    return fail(
      "head",
      `the published head (seq ${head.seq}, ${head.hash}) is not the last entry (seq ${verdict.head.seq}, ${verdict.head.hash})`,
      verdict.head.seq,
      entries.length,
    );
  }
  checked.push(`head: seq ${head.seq}, hash ${head.hash === GENESIS_HASH ? "64 zeros (empty chain)" : head.hash}`);

  if (opts.knownHead) {
    const k = opts.knownHead;
    const at = k.seq === 0 ? { hash: GENESIS_HASH } : (withChain[k.seq - 1] as { hash?: string } | undefined);
    if (!at || at.hash !== k.hash) {
      return fail(
        "known_head",
        at
          ? `entry seq ${k.seq} now has hash ${at.hash}, not the ${k.hash} seen before: the chain was rewritten`
          : `the chain has only ${entries.length} entries: seq ${k.seq} (seen before) is gone`,
        k.seq,
        entries.length,
      );
    }
    checked.push(`known head: seq ${k.seq} still has hash ${short(k.hash)}`);
  }

  // 3. The rules the standings claim to follow are the ones recomputed here.
  let sameRules = false;
  try {
    sameRules = canonicalJson(rules) === canonicalJson(standingsRules());
  } catch {
    sameRules = false;
  }
  if (!sameRules) return fail("rules", "the published rules block differs from the rules this verifier applies");
  checked.push("rules: points table, quarters, top 50, medals and tiebreaks as published");

  // 4. Standings and seeding, recomputed from the entries.
  let recomputed: ReturnType<typeof computeStandings>;
  try {
    recomputed = computeStandings(withChain as never, season);
  } catch (err) {
    if (err instanceof RecordsError) return fail("records", err.message, err.seq, entries.length);
    throw err;
  }
  const s = compareList("standings", standings, recomputed.standings);
  if (s) return fail("standings", s.message, undefined, entries.length);
  if (doc.ranked_total !== undefined && doc.ranked_total !== recomputed.ranked_total) {
    return fail(
      "standings",
      `ranked_total is ${String(doc.ranked_total)}, recomputed ${recomputed.ranked_total}`,
      undefined,
      entries.length,
    );
  }
  checked.push(
    `standings: ${standings.length} rows match the recomputation (${recomputed.ranked_total} ranked; medals: ${
      recomputed.standings
        .filter((r) => r.medal)
        .map((r) => `${r.medal} ${r.entrant}`)
        .join(", ") || "none yet"
    })`,
  );
  const sd = compareList("seeding", seeding, recomputed.seeding);
  if (sd) return fail("seeding", sd.message, undefined, entries.length);
  checked.push(`seeding: ${seeding.length} rows match the recomputation (tryouts, no official points)`);

  const report: VerifyReport = {
    ok: true,
    checked,
    entries: entries.length,
    head: { seq: head.seq, hash: head.hash },
  };
  return report;
}

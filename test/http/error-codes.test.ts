import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * docs/errors.md lists every problem `code` the service can answer (issue #23 item 5). This test
 * reads the source (no app) and collects the codes from the places a code is written:
 *
 * 1. `new Problem(<status>, "<code>"` (the class of src/http/problem.ts), on one line or several;
 * 2. the helpers that build one from a code: `badRequest`, `notFound`, `conflict`, `unavailable`
 *    (src/http/problem.ts) and any `<name>Problem("<code>"` (mppProblem, …);
 * 3. every literal on the line of a `code: …` field or a `code = …` variable (tables such as
 *    FASTIFY_CODES / CLIENT_ERRORS in src/http/errors.ts, challenge errors `{ code, detail }` of
 *    the x402/MPP answers, `code = TABLE[status] ?? "fallback"`), except in CODE_FIELDS_NOT_PROBLEMS
 *    (fields named code that are not problem codes); and domain errors that carry
 *    their code into the problem, `new <Name>Error("<code>"` (RecordsError, …);
 * 4. the values of `*_CODES` tables keyed by status (TUS_CODES in src/jobs/tus.ts,
 *    TRANSPORT_CODES in src/mcp/http.ts);
 * 5. the codec's `CodecErrorCode` union (src/codec/errors.ts): codecProblem answers each as is;
 * 6. x402 refusal reasons, which become the 402's `code`: the literals of `reason: …` lines and
 *    `reject("<code>"` under src/payments/ (NOT_ANSWERED_REASONS: internal outcomes);
 * (src/agent/, the paying client, is skipped: its codes are its own, docs/agent-client.md.)
 * 8. the 202 answers of a payment being settled, `answers.pending("<code>"` (src/payments/x402):
 *    not problem+json, but their body has a `code` too;
 * 7. codes built from a template (`${field}_invalid`, `access_${order.status}`): TEMPLATES below
 *    says what each can become; a new template fails the test until it is added there.
 *
 * A code is "listed" when it appears in backquotes in docs/errors.md. The reverse check: every
 * code in the `code` column of a table there must still be produced somewhere (source codes, or
 * codes of dependencies in FROM_DEPENDENCIES); the `error.code` table of failed jobs is not checked.
 * When you add a code: add a row to docs/errors.md. When this test misses a new way of making
 * codes, add a pattern here.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
const SRC = path.join(ROOT, "src");
const DOC = fs.readFileSync(path.join(ROOT, "docs/errors.md"), "utf8");

/** Not the service's answers: the paying client `labphi agent` (its own codes: docs/agent-client.md). */
const NOT_SERVICE_DIRS = ["src/agent/"];

/** `code:` fields in these files are not problem codes. */
const CODE_FIELDS_NOT_PROBLEMS = new Set([
  "src/config.ts", // zod issue codes of the settings parser
  "src/olympiad/teams/ratio.ts", // reasons inside a ratio_rule problem (`reasons[].code`), not problem codes
  "src/orders/license-routes.ts", // the 200 answer's `code` (valid, revoked, refunded)
]);

/** `reason:` values under src/payments that are not x402 refusals (internal outcomes, never answered). */
const NOT_ANSWERED_REASONS = new Set([
  "base_rpc_not_configured", // manual claim chain check: shown to the operator
  "not_checkable",
  "rpc_error",
  "no_charge_id", // Stripe webhook events ignored, logged
  "no_dispute_id",
  "no_session_id",
  "unhandled_type",
  "insufficient_funds", // mapped to invalid_exact_evm_* by eip3009.ts before it is answered
]);

/** What a code written as a template can become. */
const TEMPLATES: Record<string, string[]> = {
  // src/identity/service.ts: the join-work text fields
  "${field}_invalid": ["name_invalid", "intent_invalid"],
  // src/olympiad/entry/entering.ts, src/orders/service.ts: an order that is not active
  "access_${order.status}": ["access_revoked", "access_refunded"],
  // src/jobs/transfer.ts: a job followed while its output is streamed ends without output
  "job_${job.state}": ["job_failed", "job_cancelled"],
};

/** Codes in docs/errors.md tables answered by code outside src (kept only while they are documented there). */
const FROM_DEPENDENCIES = new Set<string>([]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.(ts|mts|mjs)$/.test(e.name) && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

const CODE = "([a-z][a-z0-9]*(?:_[a-z0-9]+)*)";
/** a code literal that is a value, not the right side of a comparison (`x === "failed" ? … : …`) */
const VALUE = new RegExp(`(?<!(?:===|!==)\\s*)["']${CODE}["']`, "g");

/** code → where it was found (file: pattern) */
function collect(): { codes: Map<string, string[]>; templates: Map<string, string[]> } {
  const codes = new Map<string, string[]>();
  const templates = new Map<string, string[]>();
  const add = (into: Map<string, string[]>, code: string, where: string) => {
    into.set(code, [...(into.get(code) ?? []), where]);
  };
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(ROOT, file).split(path.sep).join("/");
    if (NOT_SERVICE_DIRS.some((d) => rel.startsWith(d))) continue;
    const text = fs.readFileSync(file, "utf8");
    const found = (re: RegExp, what: string) => {
      for (const m of text.matchAll(re)) add(codes, m[1] as string, `${rel} (${what})`);
    };
    // 1, 7: new Problem(status, "code" | `template`
    found(new RegExp(`new Problem\\(\\s*[^,()]+(?:\\([^()]*\\))?\\s*,\\s*["']${CODE}["']`, "g"), "new Problem");
    for (const m of text.matchAll(/new Problem\(\s*[^,()]+(?:\([^()]*\))?\s*,\s*`([^`]*)`/g)) {
      const t = m[1] as string;
      if (t.includes("${")) add(templates, t, rel);
      else if (new RegExp(`^${CODE}$`).test(t)) add(codes, t, `${rel} (new Problem)`);
    }
    // 2: helpers (a call, not a method of another object: `x.unavailable("…")` is not one)
    found(
      new RegExp(
        `(?<![.\\w])(?:badRequest|notFound|conflict|unavailable|[a-z][A-Za-z]*Problem)\\(\\s*["']${CODE}["']`,
        "g",
      ),
      "helper",
    );
    // 3: code fields and variables: every literal on the line of `code: …` / `const code = …`
    // (`code: cond ? "a" : "b"`, `code = TABLE[s] ?? "fallback"`)
    if (!CODE_FIELDS_NOT_PROBLEMS.has(rel)) {
      for (const line of text.matchAll(/\bcode(?::|\s*=(?!=))\s*([^;\n]*)/g)) {
        // a type annotation (`code: string) => …`, `code: string = "permanent"`), not a value
        if (/^(?:string|number|unknown|[A-Z]\w*)\b/.test(line[1] as string)) continue;
        for (const m of (line[1] as string).matchAll(VALUE)) {
          add(codes, m[1] as string, `${rel} (code:)`);
        }
      }
    }
    // 3b: domain errors that carry their code to the problem (RecordsError("record_not_found", …))
    found(new RegExp(`new [A-Z][A-Za-z]*Error\\(\\s*["']${CODE}["']`, "g"), "error class");
    // 4: status → code tables
    for (const table of text.matchAll(/const [A-Z_]+_CODES: Record<number, string> = \{([^}]*)\}/g)) {
      for (const m of (table[1] as string).matchAll(new RegExp(`\\d{3}:\\s*["']${CODE}["']`, "g"))) {
        add(codes, m[1] as string, `${rel} (status table)`);
      }
    }
    // 5: the codec's codes
    if (rel === "src/codec/errors.ts") {
      const union = /export type CodecErrorCode =([^;]*);/.exec(text)?.[1] ?? "";
      for (const m of union.matchAll(new RegExp(`"${CODE}"`, "g")))
        add(codes, m[1] as string, `${rel} (CodecErrorCode)`);
    }
    // 6: x402 refusals
    if (rel.startsWith("src/payments/")) {
      const refusal = (code: string) => {
        if (!NOT_ANSWERED_REASONS.has(code)) add(codes, code, `${rel} (x402 refusal)`);
      };
      for (const m of text.matchAll(new RegExp(`\\breject\\(\\s*["']${CODE}["']`, "g"))) refusal(m[1] as string);
      // every literal on a `reason: …` line (`reason: row.error_reason ?? "settlement_failed"`)
      for (const line of text.matchAll(/\breason:\s*([^;\n]*)/g)) {
        if (/^(?:string|[A-Z]\w*)\b/.test(line[1] as string)) continue;
        for (const m of (line[1] as string).matchAll(VALUE)) refusal(m[1] as string);
      }
      // 8: the 202 answers of a payment being settled (`answers.pending("<code>"`): not problems,
      // but a `code` a client switches on all the same
      for (const m of text.matchAll(new RegExp(`\\.pending\\(\\s*["']${CODE}["']`, "g"))) {
        add(codes, m[1] as string, `${rel} (202 pending)`);
      }
    }
  }
  return { codes, templates };
}

/** every backquoted snake_case word of docs/errors.md */
const listed = new Set([...DOC.matchAll(new RegExp(`\`${CODE}\``, "g"))].map((m) => m[1] as string));

/** the codes in the `code` (or `error.code`) column of the tables of docs/errors.md */
function tableCodes(): Set<string> {
  const out = new Set<string>();
  let column = -1;
  for (const line of DOC.split("\n")) {
    if (!line.startsWith("|")) {
      column = -1;
      continue;
    }
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    if (column < 0) {
      // tables of problem codes (not the `error.code` table of failed jobs: not HTTP answers)
      column = cells.indexOf("code");
      if (column < 0) column = Number.NaN;
      continue;
    }
    if (Number.isNaN(column) || /^-+$/.test(cells[0] ?? "")) continue;
    for (const m of (cells[column] ?? "").matchAll(new RegExp(`\`${CODE}\``, "g"))) out.add(m[1] as string);
  }
  return out;
}

describe("docs/errors.md lists every problem code", () => {
  const { codes, templates } = collect();

  it("finds the codes (the patterns still match the source)", () => {
    // a sample from each way of making a code: if one disappears, a pattern broke
    for (const code of [
      "validation_failed", // src/http/errors.ts, new Problem
      "unsupported_media_type", // FASTIFY_CODES (code:)
      "request_timeout", // CLIENT_ERRORS (code:)
      "upload_gone", // TUS_CODES
      "mpp_challenge_invalid", // mppProblem(…)
      "codec_bad_magic", // CodecErrorCode
      "invalid_exact_svm_payload_transaction", // x402 refusal
      "payment_header_not_base64", // badRequest(…)
    ]) {
      expect(codes.has(code), code).toBe(true);
    }
    expect(codes.size).toBeGreaterThan(200);
  });

  it("knows every code template", () => {
    expect([...templates.keys()].filter((t) => !(t in TEMPLATES))).toEqual([]);
  });

  it("every code the source can answer is in docs/errors.md", () => {
    const all = new Set([...codes.keys(), ...Object.values(TEMPLATES).flat()]);
    const missing = [...all]
      .filter((c) => !listed.has(c))
      .sort()
      .map((c) => `${c}  ← ${(codes.get(c) ?? ["template"]).join(", ")}`);
    expect(missing, "add a row to docs/errors.md for each").toEqual([]);
  });

  it("every code in a table of docs/errors.md still exists", () => {
    const all = new Set([...codes.keys(), ...Object.values(TEMPLATES).flat(), ...FROM_DEPENDENCIES]);
    const stale = [...tableCodes()].filter((c) => !all.has(c)).sort();
    expect(stale, "codes listed in docs/errors.md that nothing answers").toEqual([]);
  });
});

/**
 * Request parts for the HTTP fuzz (test/http/fuzz.test.ts): fast-check arbitraries built from the
 * JSON schemas of the OpenAPI document ("valid-ish" values), and mutations of those values
 * (wrong types, huge strings, control characters, deep nesting, missing and hostile keys).
 */
import fc from "fast-check";

export type Schema = Record<string, unknown>;

const WORDS = [
  "gao",
  "gao-entry",
  "zrw-pro",
  "chip",
  "fast",
  "balanced",
  "max",
  "base",
  "solana",
  "x402_base_usdc",
  "card",
  "ord_x",
  "job_1",
  "agent@example.com",
  "stripe",
  "usdc",
  "wire",
  "register",
  "vote",
  "enter",
];

/** Adds words of this instance (catalog skus, aliases) to the strings the generators pick. */
export function addWords(words: string[]): void {
  for (const w of words) if (w && !WORDS.includes(w)) WORDS.push(w);
}

/** printable strings, some domain words, some unicode */
const text = (min = 0, max = 40): fc.Arbitrary<string> =>
  fc
    .oneof(
      { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, max) }) },
      {
        weight: 3,
        arbitrary: fc
          .constant(null)
          .map(() => WORDS)
          .chain((w) => fc.constantFrom(...w)),
      },
      { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: min, maxLength: Math.max(min, max) }) },
    )
    .filter((s) => s.length >= min);

export function resolve(s: Schema, root: Schema): Schema {
  let cur = s;
  for (let i = 0; i < 8 && typeof cur.$ref === "string"; i++) {
    const parts = (cur.$ref as string).replace(/^#\//, "").split("/");
    let node: unknown = root;
    for (const p of parts) node = (node as Record<string, unknown> | undefined)?.[p];
    if (!node || typeof node !== "object") return {};
    cur = node as Schema;
  }
  return cur;
}

function stringFor(s: Schema): fc.Arbitrary<string> {
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const max = Math.min(typeof s.maxLength === "number" ? s.maxLength : 40, Math.max(min, 60));
  switch (s.format) {
    case "email":
      return fc.oneof(fc.emailAddress(), text(min, max));
    case "uri":
    case "url":
      return fc.oneof(fc.webUrl(), text(min, max));
    case "uuid":
      return fc.oneof(fc.uuid(), text(min, max));
    case "date-time":
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    default:
      return text(min, max);
  }
}

function numberFor(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo =
    typeof s.minimum === "number" ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum + 1 : -1000;
  const hi =
    typeof s.maximum === "number"
      ? s.maximum
      : typeof s.exclusiveMaximum === "number"
        ? s.exclusiveMaximum - 1
        : 1_000_000;
  // mostly small values near the lower bound (a valid but cheap request), sometimes the bounds
  const near = Math.min(hi, lo + 1000);
  const body = integer
    ? fc.integer({ min: Math.ceil(lo), max: Math.floor(Math.max(lo, near)) })
    : fc.double({ min: lo, max: Math.max(lo, near), noNaN: true });
  return fc.oneof({ weight: 8, arbitrary: body }, { weight: 1, arbitrary: fc.constantFrom(lo, hi) });
}

/** A value that the schema (mostly) accepts. */
export function fromSchema(schema: Schema | undefined, root: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  const s = resolve(schema, root);
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (Array.isArray(alts) && alts.length > 0) return fc.oneof(...alts.map((a) => fromSchema(a, root, depth + 1)));
  if (Array.isArray(s.allOf) && s.allOf.length > 0) {
    const merged: Schema = { type: "object", properties: {}, required: [] };
    for (const part of s.allOf as Schema[]) {
      const r = resolve(part, root);
      Object.assign(merged.properties as Schema, r.properties ?? {});
      (merged.required as string[]).push(...((r.required as string[] | undefined) ?? []));
    }
    return fromSchema(merged, root, depth + 1);
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === "string" ? [s.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => fromSchema({ ...s, type: t }, root, depth)));
  switch (types[0]) {
    case "string":
      return stringFor(s);
    case "integer":
      return numberFor(s, true);
    case "number":
      return numberFor(s, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const min = typeof s.minItems === "number" ? s.minItems : 0;
      const max = Math.max(min, Math.min(typeof s.maxItems === "number" ? s.maxItems : 4, 4));
      return fc.array(fromSchema(s.items as Schema | undefined, root, depth + 1), { minLength: min, maxLength: max });
    }
    default: {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      if (Object.keys(props).length === 0) return fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 }));
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) {
        const plain = fromSchema(v, root, depth + 1);
        // an e-mail field gets an address most of the time, so requests get past its check
        shape[k] = /email/i.test(k)
          ? fc.oneof({ weight: 3, arbitrary: fc.emailAddress() }, { weight: 1, arbitrary: plain })
          : plain;
      }
      const required = ((s.required as string[] | undefined) ?? []).filter((k) => k in props);
      return fc.record(shape, { requiredKeys: required });
    }
  }
}

/** Hostile replacements for one node of a value. */
const HOSTILE: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -1, 1e308, -0, 2 ** 53 + 1, "", true, false, null, [], {}, "NaN", "Infinity"),
  fc.constant("x".repeat(70_000)),
  fc.constant("💥".repeat(12_000)),
  fc.constant("\u0000\u0007\u001b[31m\r\n\u2028\u2029\ufeff\ud800"),
  fc.constant("<script>alert(1)</script>' OR 1=1 --"),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.nat({ max: 3 }).map((k) => nest([3000, 200, 40, 10][k]!)),
);

function nest(levels: number): unknown {
  let v: unknown = "deep";
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

export type Mutation =
  | { kind: "none" }
  | { kind: "replace"; at: number; value: unknown }
  | { kind: "drop"; at: number }
  | { kind: "hostile-key"; at: number; key: string; value: unknown }
  | { kind: "wrap"; levels: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: "none" } as const) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("replace" as const), at: fc.nat(), value: HOSTILE }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("hostile-key" as const),
      at: fc.nat(),
      key: fc.constantFrom("__proto__", "constructor", "prototype", "", "\u0000", "x".repeat(5000)),
      value: HOSTILE,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wrap" as const), levels: fc.constantFrom(1, 50, 2000) }) },
);

/** Paths to every node of a JSON value (objects and arrays included), depth-first. */
function nodes(v: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(path);
  if (out.length > 500) return out;
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) nodes(v[i], [...path, i], out);
  else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) nodes(x, [...path, k], out);
  return out;
}

export function mutate(value: unknown, m: Mutation): unknown {
  if (m.kind === "none") return value;
  if (m.kind === "wrap") return m.levels === 1 ? [value] : { wrapped: value, deep: nest(m.levels) };
  const copy = structuredClone(value);
  const all = nodes(copy);
  const path = all[m.at % all.length]!;
  if (path.length === 0) {
    if (m.kind === "replace") return m.value;
    if (m.kind === "hostile-key") return copy && typeof copy === "object" ? defineKey(copy, m.key, m.value) : copy;
    return undefined;
  }
  let parent = copy as Record<string | number, unknown>;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (m.kind === "replace") parent[last] = m.value;
  else if (m.kind === "drop") {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else {
    const target = parent[last];
    if (target && typeof target === "object") defineKey(target, m.key, m.value);
    else parent[last] = defineKey({}, m.key, m.value);
  }
  return copy;
}

/** Sets a key as an own property (so "__proto__" reaches JSON.stringify as a key). */
function defineKey(o: object, key: string, value: unknown): object {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  return o;
}

/** Header values: printable ASCII (what HTTP allows), long ones, base64 of JSON-ish payment proofs. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }),
  fc.constant("A".repeat(8000)),
  fc.base64String({ maxLength: 400 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v)).toString("base64")),
  fc
    .record({
      x402Version: fc.constantFrom(1, 2, 0, "1"),
      scheme: fc.constantFrom("exact", "upto", ""),
      network: fc.constantFrom("base", "base-sepolia", "solana", "eip155:8453", "x"),
      payload: fc.jsonValue({ maxDepth: 2 }),
    })
    .map((v) => Buffer.from(JSON.stringify(v)).toString("base64")),
);

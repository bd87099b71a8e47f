import { createHash } from "node:crypto";

/**
 * The public/private split of a key's rows (docs/olympiad-tasks.md "Split"): row `id` is public
 * when the first 8 hex digits of SHA-256(seed ":" id), read as an unsigned integer, modulo 10,000,
 * are below `public_bp` (basis points). The seed is secret until the close and then published, so
 * anyone can recompute which rows were public.
 */
export function isPublicRow(seed: string, id: string, publicBp: number): boolean {
  const h = createHash("sha256").update(`${seed}:${id}`, "utf8").digest("hex");
  return Number.parseInt(h.slice(0, 8), 16) % 10_000 < publicBp;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Exact comparison of two published scores (decimal strings): negative when a < b. */
export function compareScores(a: string, b: string): number {
  const scale = (s: string): bigint => {
    const negative = s.startsWith("-");
    const [whole = "0", frac = ""] = (negative ? s.slice(1) : s).split(".");
    const v = BigInt(whole) * 10n ** 18n + BigInt(frac.padEnd(18, "0").slice(0, 18));
    return negative ? -v : v;
  };
  const x = scale(a);
  const y = scale(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

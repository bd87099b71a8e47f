/**
 * Run counts of the property-based tests (fast-check). Each property has a default sized for CI;
 * `FUZZ_RUNS=<n>` runs every property n times instead (e.g. `FUZZ_RUNS=5000 npx vitest run
 * test/engine/fuzz.test.ts` for a long session), `FUZZ_RUNS=<n>x` multiplies the defaults.
 */
export function fuzzRuns(defaultRuns: number): number {
  const knob = process.env.FUZZ_RUNS?.trim();
  if (!knob) return defaultRuns;
  const times = /^(\d+)x$/.exec(knob);
  if (times) return Math.max(1, defaultRuns * Number(times[1]));
  const n = Number(knob);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`FUZZ_RUNS must be a positive integer or <n>x, not ${knob}`);
  return n;
}

/**
 * What is left to gain on an int32 series: the order-0 entropy of its residuals after no
 * transform, first and second differences (the bound of any coder that models each residual
 * independently: the table is not counted), and the lag-1 correlation of the first differences
 * (near 0: no context model has anything to predict).
 *
 *   npx tsx bench/int-residual-entropy.ts FILE.i32 [FILE.i32 …]
 */
import { readFileSync } from "node:fs";

for (const file of process.argv.slice(2)) {
  const b = readFileSync(file);
  const v = new Int32Array(b.buffer, b.byteOffset, Math.floor(b.length / 4));
  console.log(`${file}: ${v.length} values`);
  let cur: number[] = Array.from(v);
  for (const name of ["none", "delta", "delta-of-delta"]) {
    const counts = new Map<number, number>();
    for (const x of cur) counts.set(x, (counts.get(x) ?? 0) + 1);
    let h = 0;
    for (const c of counts.values()) h -= (c / cur.length) * Math.log2(c / cur.length);
    console.log(
      `  ${name}: ${counts.size} distinct residuals, order-0 entropy ${h.toFixed(4)} bits each = ${Math.round((h * cur.length) / 8)} B`,
    );
    if (name === "delta") {
      const n = cur.length - 1;
      let mx = 0;
      let my = 0;
      for (let i = 0; i < n; i++) {
        mx += cur[i]!;
        my += cur[i + 1]!;
      }
      mx /= n;
      my /= n;
      let sxy = 0;
      let sxx = 0;
      let syy = 0;
      for (let i = 0; i < n; i++) {
        const dx = cur[i]! - mx;
        const dy = cur[i + 1]! - my;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
      }
      console.log(`  lag-1 correlation of the differences: ${(sxy / Math.sqrt(sxx * syy)).toFixed(4)}`);
    }
    cur = cur.slice(1).map((x, i) => x - cur[i]!);
  }
}

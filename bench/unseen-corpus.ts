/**
 * Assemble the "unseen" codec corpus from files that `npm install` puts in node_modules — data the
 * engine was not tuned on — so its figures in docs/codec.md can be regenerated:
 *
 *   npx tsx bench/unseen-corpus.ts DIR && npx tsx bench/codec.ts --out DIR/results DIR
 *
 * text/   the first 600 KB of every LICENSE file and 1 MB of every README.md, concatenated in path order
 * code/   1 MB heads of typescript/lib/lib.dom.d.ts and typescript/lib/_tsc.js
 * json/   node_modules/.package-lock.json and @biomejs/biome/configuration_schema.json
 * binary/ 1 MB heads of the better-sqlite3 and zstd-napi native addons
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const NM = path.join(import.meta.dirname, "..", "node_modules");
const out = process.argv[2];
if (!out || out === "--help") {
  process.stderr.write("usage: npx tsx bench/unseen-corpus.ts DIR\n");
  process.exit(out ? 0 : 2);
}

function walk(dir: string, name: RegExp, acc: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, name, acc);
    else if (e.isFile() && name.test(e.name)) acc.push(p);
  }
  return acc;
}

function concat(files: string[], limit: number): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  for (const f of files) {
    if (n >= limit) break;
    const b = readFileSync(f);
    parts.push(b);
    n += b.length;
  }
  return Buffer.concat(parts).subarray(0, limit);
}

const head = (rel: string, limit: number): Buffer => readFileSync(path.join(NM, rel)).subarray(0, limit);

const files: Record<string, Buffer> = {
  "text/licenses.txt": concat(walk(NM, /^LICENSE(\.md|\.txt)?$/), 600_000),
  "text/readmes.md": concat(walk(NM, /^README\.md$/i), 1_000_000),
  "code/lib.dom.d.ts": head("typescript/lib/lib.dom.d.ts", 1_000_000),
  "code/_tsc.js": head("typescript/lib/_tsc.js", 1_000_000),
  "json/package-lock.json": readFileSync(path.join(NM, ".package-lock.json")),
  "json/biome_schema.json": head("@biomejs/biome/configuration_schema.json", Number.POSITIVE_INFINITY),
  "binary/better_sqlite3.node": head("better-sqlite3/build/Release/better_sqlite3.node", 1_000_000),
  "binary/zstd_binding.node": head("zstd-napi/build/Release/binding.node", 1_000_000),
};
for (const [rel, data] of Object.entries(files)) {
  const p = path.join(out, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, data);
  process.stdout.write(`${rel}\t${statSync(p).size} B\n`);
}

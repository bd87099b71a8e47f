import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CODEC_VERSION } from "../../src/codec/index.js";
import { VERSIONS, versionText } from "../../src/versions.js";

/**
 * Issue #25 item 4: every version string written in docs/ and bench/results/ is the code's. A version
 * of ours (src/versions.ts, the codec library's CODEC_VERSION, package.json's) may be written anywhere;
 * any other x.y.z must name the outside thing it is the version of (Node, a library, a protocol) just
 * before it. So a bumped version leaves no stale copy behind: the old string is no longer the code's.
 * CHANGELOG.md is a historical record and is not read.
 */

const ROOT = join(import.meta.dirname, "..", "..");
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/** The code's version strings. */
const OURS = new Set<string>([...Object.values(VERSIONS), CODEC_VERSION, PACKAGE_VERSION]);

/**
 * Versions of outside things, allowed when one of these names stands in the 240 characters before
 * the version (the version is then theirs, not ours).
 */
const OUTSIDE =
  /(\bNode\b|\btus\b|Tus-Resumable|\bzlib\b|\bbrotli\b|liblzma|\bstripe\b|@modelcontextprotocol\/\w+|\bviem\b|protocolVersion|A2A|@tus\/[\w-]+|\bs3rver\b|BullMQ|pg-boss|\bx402\b|@x402\/\w+|DEFAULT_MAX_AMOUNT_PER_PAYMENT|\bzstd\b|\bxz\b|\bbzip3\b|\bgzip\b|\bpodman\b|\bbuildah\b|\bdocker\b|\bdebian\b|\bcaddy\b|postgres(?:ql)?|seaweedfs|\bnpm\b|typescript|vitest|fastify|\bzod\b|kysely|sqlite|\banvil\b|foundry|litesvm|@solana\/[\w-]+|mppx)/i;

/** x.y.z (with an optional -suffix), not part of an address such as 127.0.0.1 or 192.0.0.0/24. */
const VERSION = /(?<![\w.])v?(\d+\.\d+\.\d+(?:-[a-z][a-z0-9-]*)?)(?![\w-]*\.\d|\/\d)/g;

/** Statements that name a version of ours by what it is: each must say the code's current value. */
const LABELLED: { file: string; what: string; pattern: RegExp; want: string }[] = [
  {
    file: "docs/engine-api.md",
    what: "GET /api/omni version",
    pattern: /GET \/api\/omni`: `\{[^}]*?version: "([^"]+)"/,
    want: VERSIONS.engine,
  },
  {
    file: "docs/engine-api.md",
    what: "GET /api/web-codec version",
    pattern: /GET \/api\/web-codec`: `\{[^}]*?version: "([^"]+)"/,
    want: VERSIONS.webCodec,
  },
  {
    file: "docs/discovery.md",
    what: "payments matrix version",
    pattern: /payments matrix, version ([^)\s]+)\)/,
    want: VERSIONS.payments,
  },
  {
    file: "docs/discovery.md",
    what: "agent document version",
    pattern: /source of truth for agents, version ([^)\s]+)\)/,
    want: VERSIONS.discovery,
  },
  { file: "docs/discovery.md", what: "api_version", pattern: /api_version \(([^)\s]+)\)/, want: VERSIONS.api },
  {
    file: "docs/discovery.md",
    what: "OpenAPI info.version",
    pattern: /version `([^`]+)`, with discovery additions/,
    want: VERSIONS.api,
  },
];

function documents(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const add = (file: string) => out.push({ file, text: readFileSync(join(ROOT, file), "utf8") });
  for (const f of readdirSync(join(ROOT, "docs")).sort()) if (f.endsWith(".md")) add(`docs/${f}`);
  for (const f of readdirSync(join(ROOT, "bench", "results")).sort()) {
    if (f.endsWith(".md") || f.endsWith(".json")) add(`bench/results/${f}`);
  }
  add("README.md");
  return out;
}

/** The version strings of a text that are neither ours nor named as an outside thing's. */
function strayVersions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(VERSION)) {
    const version = m[1] as string;
    if (OURS.has(version)) continue;
    const before = text.slice(Math.max(0, (m.index ?? 0) - 240), m.index);
    if (OUTSIDE.test(before)) continue;
    const line = text.slice(text.lastIndexOf("\n", m.index) + 1, text.indexOf("\n", m.index)).trim();
    out.push(`${version} in: ${line.slice(0, 160)}`);
  }
  return out;
}

describe("version strings in docs/ and bench/results/ are the code's", () => {
  it("every x.y.z is one of the code's versions, or names the outside thing it belongs to", () => {
    const stray: string[] = [];
    for (const { file, text } of documents()) for (const s of strayVersions(text)) stray.push(`${file}: ${s}`);
    expect(stray).toEqual([]);
  });

  it("the check does catch a stale version (an engine bumped without its docs)", () => {
    expect(strayVersions('`GET /api/omni`: `{ name, engine: "omni", version: "1.3.9-old-cone" }`')).toHaveLength(1);
    expect(strayVersions(`codec ${CODEC_VERSION}, engine ${VERSIONS.engine}`)).toEqual([]);
    expect(strayVersions("served on http://127.0.0.1:8080, Node v20.20.2, tus 1.0.0")).toEqual([]);
  });

  it.each(LABELLED)("$file: $what is the code's", ({ file, pattern, want }) => {
    const text = readFileSync(join(ROOT, file), "utf8");
    const m = pattern.exec(text);
    expect(m, `${file} no longer states it: update LABELLED`).not.toBeNull();
    expect(m?.[1]).toBe(want);
  });

  it("bench results name the engine version as GET /api/omni reports it, with the codec library's", () => {
    for (const { file, text } of documents()) {
      if (!file.startsWith("bench/results/codec") || !file.endsWith(".md")) continue;
      // "codec 1.0.0" alone reads as a different engine than the one /api/omni reports (issue #25).
      expect(text, file).toContain(versionText(CODEC_VERSION));
    }
  });
});

/**
 * Frozen containers: every file written by an earlier release (test/codec/frozen/<release>/,
 * listed in manifest.json, written by scripts/freeze-containers.ts) must still decode to the same
 * bytes, or fail with the same CodecError code. See docs/codec-format.md, "Compatibility".
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CHAMBERS } from "../../src/codec/chambers/registry.js";
import { CodecError, decompress, inspect, LEVELS } from "../../src/codec/index.js";
import { generate, sha256 } from "./frozen/inputs.js";
import { decodeStream, type Manifest } from "./frozen/manifest.js";

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "frozen");
const manifest = JSON.parse(readFileSync(path.join(DIR, "manifest.json"), "utf8")) as Manifest;
const releases = Object.keys(manifest.releases);

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "decoded";
  } catch (e) {
    if (e instanceof CodecError) return e.code;
    throw e;
  }
}

describe("frozen containers", () => {
  it("has at least one release, and every release folder is in the manifest", () => {
    expect(releases.length).toBeGreaterThan(0);
    const folders = readdirSync(DIR).filter((f) => statSync(path.join(DIR, f)).isDirectory());
    expect(folders.sort()).toEqual([...releases].sort());
  });

  it("has a frozen framed container for every chamber × level of the registry", () => {
    const have = new Set<string>();
    for (const r of Object.values(manifest.releases))
      for (const e of Object.values(r.files))
        if (e.kind === "container" && e.form === "framed") have.add(`${e.chamber}/${e.level}`);
    const missing = [...CHAMBERS.keys()].flatMap((c) => LEVELS.map((l) => `${c}/${l}`)).filter((k) => !have.has(k));
    expect(missing, "freeze a new release: tsx scripts/freeze-containers.ts --new-release <name>").toEqual([]);
  });

  it("keeps the stream format and at least the malformed cases the docs name", () => {
    const all = Object.values(manifest.releases).flatMap((r) => Object.values(r.files));
    expect(all.some((e) => e.kind === "stream")).toBe(true);
    const codes = new Set<string>(
      all.flatMap((e) => (e.kind === "malformed" || e.kind === "malformed-stream" ? [e.error] : [])),
    );
    for (const code of [
      "codec_truncated",
      "codec_bad_magic",
      "codec_bad_version",
      "codec_bad_flags",
      "codec_unknown_chamber",
      "codec_checksum_mismatch",
      "codec_corrupt",
      "codec_ratio_exceeded",
      "codec_too_large",
      "codec_trailing_bytes",
    ])
      expect(codes.has(code), code).toBe(true);
  });

  for (const release of releases) {
    const { files } = manifest.releases[release]!;
    describe(release, () => {
      it("lists exactly the files of its folder, unchanged", () => {
        const onDisk = readdirSync(path.join(DIR, release)).sort();
        expect(onDisk).toEqual(Object.keys(files).sort());
        for (const [name, e] of Object.entries(files)) {
          const bytes = readFileSync(path.join(DIR, release, name));
          expect(bytes.length, name).toBe(e.container_length);
          expect(sha256(bytes), `${name} was modified; frozen files never change`).toBe(e.container_sha256);
        }
      });

      for (const [name, e] of Object.entries(files)) {
        it(name, async () => {
          const bytes = new Uint8Array(readFileSync(path.join(DIR, release, name)));
          if (e.kind === "malformed") {
            expect(await codeOf(decompress(bytes))).toBe(e.error);
            return;
          }
          if (e.kind === "malformed-stream") {
            expect(await codeOf(decodeStream(bytes))).toBe(e.error);
            return;
          }
          const decoded = e.kind === "stream" ? await decodeStream(bytes) : await decompress(bytes);
          expect(decoded.length).toBe(e.decoded_length);
          expect(sha256(decoded)).toBe(e.decoded_sha256);
          // the seeded generator still rebuilds the input (so the release can be regenerated)
          expect(sha256(generate(e.generator))).toBe(e.decoded_sha256);
          if (e.kind === "container") {
            const info = inspect(bytes);
            expect(info.level).toBe(e.level);
            expect(info.bare).toBe(e.form === "bare");
            expect(info.chunked).toBe(e.form === "chunked");
            if (e.form !== "chunked") expect(info.chambers).toEqual([e.chamber]);
          }
        });
      }
    });
  }
});

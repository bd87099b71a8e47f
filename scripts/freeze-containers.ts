/**
 * Writes the frozen codec containers of one release into test/codec/frozen/<release>/ and adds
 * the release to test/codec/frozen/manifest.json (see docs/codec-format.md, "Compatibility:
 * frozen containers"). Files already frozen are never touched:
 *
 *   tsx scripts/freeze-containers.ts                       first freeze, release = package.json version
 *   tsx scripts/freeze-containers.ts --new-release 0.2.0   a new release folder next to the old ones
 *   tsx scripts/freeze-containers.ts --new-release 0.1.0+cm7 --max-only
 *                                   only the max-level containers of the model-coded chambers (text,
 *                                   JSON, float, routed, chunked, stream): a new context-mixing model
 *                                   or float mode, whose other containers did not change
 *
 * It refuses to run when the release folder or its manifest entry already exists. Every file is
 * checked before anything is written: containers decode to their input and carry the chamber and
 * level they claim; malformed ones fail with the error code the manifest will promise.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CHAMBERS, type ChamberName, chamberId } from "../src/codec/chambers/registry.js";
import { LEVELS, type Level } from "../src/codec/chambers/types.js";
import { crc32 } from "../src/codec/format/crc32.js";
import { ByteWriter } from "../src/codec/format/varint.js";
import { CODEC_VERSION, CodecError, type CodecErrorCode, compress, decompress, inspect } from "../src/codec/index.js";
import { type GeneratorSpec, generate, sha256 } from "../test/codec/frozen/inputs.js";
import {
  decodeStream,
  encodeStream,
  type FrozenEntry,
  MANIFEST_PATH,
  type Manifest,
} from "../test/codec/frozen/manifest.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const FROZEN = path.join(ROOT, "test/codec/frozen");

/** the input each chamber is frozen with: small, seeded, and one the chamber accepts */
const CHAMBER_INPUT: Record<ChamberName, GeneratorSpec> = {
  high_entropy: { name: "random-bytes", seed: 1, n: 512 },
  general: { name: "prose", seed: 2, n: 300 },
  text: { name: "prose", seed: 3, n: 200 },
  json_keys: { name: "json-records", seed: 4, n: 40 },
  json_residual: { name: "json-records", seed: 5, n: 40 },
  zrw: { name: "int32-walk", seed: 6, n: 1024 },
  float: { name: "f64-temps", seed: 7, n: 512 },
  delta: { name: "int32-clock", seed: 8, n: 1024 },
  "zrw-v5": { name: "int32-walk", seed: 9, n: 1024 },
  "zrw-v5-chunked": { name: "int32-walk", seed: 10, n: 1024 },
  "zrw-v5-delta": { name: "int32-walk", seed: 11, n: 1024 },
  "zrw-v5-stride8": { name: "records32", seed: 12, n: 64 },
  "zrw-v5-stride16": { name: "records32", seed: 13, n: 64 },
  "zrw-v5-stride32": { name: "records32", seed: 14, n: 64 },
  "zrw-v5-dark-attractor": { name: "int32-dominant", seed: 15, n: 1024 },
  "zrw-v5-dark-detractor": { name: "sparse-bytes", seed: 16, n: 4096 },
  legacy: { name: "prose", seed: 17, n: 300 },
};

/** --max-only: the containers a new context-mixing model or float mode changes */
const MAX_ONLY =
  /^(text|text-long|text-records|text-x86|text-cjk|text-lanes|json_keys|json_residual|float|routed|chunked|stream)\.max\.phis?$/;

interface Planned {
  file: string;
  bytes: Uint8Array;
  entry: FrozenEntry;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    if (e instanceof CodecError) return e.code;
    throw e;
  }
}

function describeInput(input: Uint8Array): { decoded_sha256: string; decoded_length: number } {
  return { decoded_sha256: sha256(input), decoded_length: input.length };
}

/** a framed header by hand: magic, version, flags, chamber id, declared length, params */
function header(w: ByteWriter, o: { version?: number; flags?: number; chamber: number; declared: number }): void {
  w.byte(0xcf);
  w.byte(0x86);
  w.byte(o.version ?? 1);
  w.byte(o.flags ?? 2);
  w.byte(o.chamber);
  w.uvarint(o.declared);
}

async function plan(): Promise<Planned[]> {
  const out: Planned[] = [];
  // one framed container per chamber × level, the chamber forced
  for (const name of CHAMBERS.keys()) {
    const spec = CHAMBER_INPUT[name];
    if (!spec) throw new Error(`no frozen input for chamber ${name}: add one to CHAMBER_INPUT`);
    const input = generate(spec);
    for (const level of LEVELS) {
      const bytes = await compress(input, { chamber: name, level });
      out.push({
        file: `${name}.${level}.phi`,
        bytes,
        entry: { kind: "container", form: "framed", chamber: name, level, generator: spec, ...describeInput(input) },
      });
    }
  }
  // longer context-mixing inputs at max: one per profile of the text chamber (prose, records, x86, whole characters)
  const longer: [string, GeneratorSpec][] = [
    ["text-long", { name: "prose", seed: 23, n: 6000 }],
    ["text-records", { name: "records32", seed: 24, n: 600 }],
    ["text-x86", { name: "elf-x86", seed: 25, n: 20000 }],
    // since codec 1.5: Japanese-like text, which the trial codes with whole-character contexts (layout 23)
    ["text-cjk", { name: "prose-ja", seed: 26, n: 3000 }],
    // since codec 1.6: a 16-bit table, which the trial codes in byte lanes of 2 (params [layout, 2])
    ["text-lanes", { name: "table16", seed: 27, n: 6000 }],
  ];
  for (const [name, spec] of longer) {
    const input = generate(spec);
    out.push({
      file: `${name}.max.phi`,
      bytes: await compress(input, { chamber: "text", level: "max" }),
      entry: {
        kind: "container",
        form: "framed",
        chamber: "text",
        level: "max",
        generator: spec,
        ...describeInput(input),
      },
    });
  }
  // the router's choice, the chunked frame and the bare stream, at every level
  const mixedSpec: GeneratorSpec = { name: "json-records", seed: 20, n: 120 };
  const mixed = generate(mixedSpec);
  const bareSpec: GeneratorSpec = { name: "int32-walk", seed: 21, n: 512 };
  const bare = generate(bareSpec);
  for (const level of LEVELS) {
    const routed = await compress(mixed, { level });
    out.push({
      file: `routed.${level}.phi`,
      bytes: routed,
      entry: {
        kind: "container",
        form: "framed",
        chamber: inspect(routed).chambers[0] as ChamberName,
        level,
        generator: mixedSpec,
        ...describeInput(mixed),
      },
    });
    out.push({
      file: `chunked.${level}.phi`,
      bytes: await compress(mixed, { level, chunkSize: 4096 }),
      entry: {
        kind: "container",
        form: "chunked",
        chamber: "chunked",
        level,
        generator: mixedSpec,
        ...describeInput(mixed),
      },
    });
    out.push({
      file: `bare.zrw.${level}.phi`,
      bytes: await compress(bare, { level, chamber: "zrw", bare: true }),
      entry: { kind: "container", form: "bare", chamber: "zrw", level, generator: bareSpec, ...describeInput(bare) },
    });
  }
  // the stream format: length-prefixed containers, several records
  const streamSpec: GeneratorSpec = { name: "prose", seed: 22, n: 2000 };
  const streamInput = generate(streamSpec);
  for (const level of ["fast", "max"] as const) {
    out.push({
      file: `stream.${level}.phis`,
      bytes: await encodeStream(streamInput, { level, chunkSize: 4096 }),
      entry: {
        kind: "stream",
        form: "stream",
        chamber: "stream",
        level,
        chunk_size: 4096,
        generator: streamSpec,
        ...describeInput(streamInput),
      },
    });
  }
  // malformed containers, each derived from a valid one or built by hand
  const base = out.find((p) => p.file === "zrw.max.phi")!.bytes;
  const stored = out.find((p) => p.file === "high_entropy.fast.phi")!.bytes;
  const stream = out.find((p) => p.file === "stream.fast.phis")!.bytes;
  const patch = (b: Uint8Array, at: number, v: number): Uint8Array => {
    const c = b.slice();
    c[at < 0 ? c.length + at : at] = v;
    return c;
  };
  const bad = (file: string, bytes: Uint8Array, error: CodecErrorCode, mutation: string, of = "zrw.max.phi"): void => {
    out.push({ file: `bad.${file}.phi`, bytes, entry: { kind: "malformed", error, derived_from: of, mutation } });
  };
  // a framed payload runs to the CRC, so a cut inside it reads as an inconsistent payload
  bad("truncated", base.subarray(0, Math.floor(base.length / 2)), "codec_corrupt", "first half of the container");
  const chunked = out.find((p) => p.file === "chunked.max.phi")!.bytes;
  bad(
    "truncated-chunked",
    chunked.subarray(0, Math.floor(chunked.length / 2)),
    "codec_corrupt",
    "first half of a chunked frame (a block length then exceeds the bytes left)",
    "chunked.max.phi",
  );
  bad("truncated-header", base.subarray(0, 4), "codec_truncated", "first 4 bytes (ends before the chamber byte)");
  bad("bad-magic", patch(base, 0, 0xff), "codec_bad_magic", "byte 0 = FF");
  bad("bad-version", patch(base, 2, 0x02), "codec_bad_version", "version byte = 02");
  bad("bad-flags", patch(base, 3, 0x03), "codec_bad_flags", "flags = 03 (level 3)");
  bad("reserved-flag", patch(base, 3, 0x02 | 0x80), "codec_bad_flags", "flags bit 7 set");
  bad("unknown-chamber", patch(base, 4, 30), "codec_unknown_chamber", "chamber byte = 30 (never assigned)");
  bad(
    "bad-checksum",
    patch(stored, -1, stored[stored.length - 1]! ^ 0xff),
    "codec_checksum_mismatch",
    "last CRC byte inverted",
    "high_entropy.fast.phi",
  );
  bad(
    "payload-flip",
    patch(stored, 20, stored[20]! ^ 0x01),
    "codec_checksum_mismatch",
    "one stored payload bit flipped",
    "high_entropy.fast.phi",
  );
  {
    // stored chamber declaring 4096 bytes but carrying 16
    const w = new ByteWriter();
    header(w, { chamber: chamberId("high_entropy"), declared: 4096, flags: 0 });
    w.block(new Uint8Array(0));
    w.bytes(new Uint8Array(16).fill(7));
    w.u32le(crc32(new Uint8Array(16).fill(7)));
    bad(
      "length-over-data",
      w.finish(),
      "codec_corrupt",
      "hand-built: stored chamber, declared length 4096, 16 payload bytes",
      "hand-built",
    );
  }
  {
    // 100 MiB declared by a 20-byte container: above the 1,000,000 expansion ratio
    const w = new ByteWriter();
    header(w, { chamber: chamberId("zrw"), declared: 100 * 1024 * 1024 });
    w.block(new Uint8Array(0));
    w.bytes(Uint8Array.of(0, 0));
    w.u32le(0);
    bad(
      "ratio-bomb",
      w.finish(),
      "codec_ratio_exceeded",
      "hand-built: zrw, declared 100 MiB, 2-byte payload",
      "hand-built",
    );
  }
  {
    const w = new ByteWriter();
    header(w, { chamber: chamberId("zrw"), declared: 300 * 1024 * 1024 });
    w.block(new Uint8Array(0));
    w.bytes(Uint8Array.of(0, 0));
    w.u32le(0);
    bad("too-large", w.finish(), "codec_too_large", "hand-built: declared 300 MiB (cap 256 MiB)", "hand-built");
  }
  {
    // chunked frame: one stored chunk of 16 bytes, then a stray byte before the CRC
    const data = new Uint8Array(16).fill(9);
    const w = new ByteWriter();
    header(w, { chamber: 0xff, flags: 0x04, declared: 16 });
    w.uvarint(1);
    w.byte(chamberId("high_entropy"));
    w.uvarint(16);
    w.block(new Uint8Array(0));
    w.block(data);
    w.byte(0xaa);
    w.u32le(crc32(data));
    bad(
      "trailing-bytes",
      w.finish(),
      "codec_trailing_bytes",
      "hand-built: chunked frame with a byte after the last chunk",
      "hand-built",
    );
  }
  {
    // chunked frame whose chunk lengths do not add up to the declared length
    const data = new Uint8Array(16).fill(3);
    const w = new ByteWriter();
    header(w, { chamber: 0xff, flags: 0x04, declared: 32 });
    w.uvarint(1);
    w.byte(chamberId("high_entropy"));
    w.uvarint(16);
    w.block(new Uint8Array(0));
    w.block(data);
    w.u32le(crc32(data));
    bad(
      "chunk-sum",
      w.finish(),
      "codec_corrupt",
      "hand-built: chunked frame declaring 32 bytes, one 16-byte chunk",
      "hand-built",
    );
  }
  bad(
    "bare-unknown-chamber",
    Uint8Array.of((2 << 5) | 30, 4, 0, 0, 0, 0, 0),
    "codec_unknown_chamber",
    "hand-built bare stream, chamber 30",
    "hand-built",
  );
  out.push({
    file: "bad.stream-truncated.phis",
    bytes: stream.subarray(0, stream.length - 10),
    entry: {
      kind: "malformed-stream",
      error: "codec_truncated",
      derived_from: "stream.fast.phis",
      mutation: "last 10 bytes cut",
    },
  });
  return out;
}

async function verify(p: Planned): Promise<void> {
  const e = p.entry;
  if (e.kind === "malformed" || e.kind === "malformed-stream") {
    const got = await codeOf(e.kind === "malformed" ? decompress(p.bytes) : decodeStream(p.bytes));
    if (got !== e.error) throw new Error(`${p.file}: expected ${e.error}, got ${got}`);
    return;
  }
  const decoded = e.kind === "stream" ? await decodeStream(p.bytes) : await decompress(p.bytes);
  if (sha256(decoded) !== e.decoded_sha256) throw new Error(`${p.file}: does not decode to its input`);
  if (e.kind === "container") {
    const i = inspect(p.bytes);
    if (i.level !== e.level) throw new Error(`${p.file}: level ${i.level}, expected ${e.level}`);
    if (e.form === "framed" && i.chambers[0] !== e.chamber) throw new Error(`${p.file}: chamber ${i.chambers[0]}`);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--new-release");
  const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
  const release = at >= 0 ? args[at + 1] : pkg.version;
  if (!release || !/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(release))
    throw new Error("usage: freeze-containers [--new-release <name>]");
  const manifestFile = path.join(ROOT, MANIFEST_PATH);
  const manifest: Manifest = existsSync(manifestFile)
    ? (JSON.parse(readFileSync(manifestFile, "utf8")) as Manifest)
    : {
        description: "frozen codec containers; see docs/codec-format.md (Compatibility: frozen containers)",
        releases: {},
      };
  const dir = path.join(FROZEN, release);
  if (manifest.releases[release] || existsSync(dir)) {
    throw new Error(
      `release ${release} is already frozen in ${path.relative(ROOT, dir)}; frozen files are never rewritten. ` +
        "Pass --new-release <name> to freeze the current codec's output as a new release.",
    );
  }
  const maxOnly = args.includes("--max-only");
  const planned = (await plan()).filter(
    (p) => !maxOnly || (p.entry.kind !== "malformed" && p.entry.kind !== "malformed-stream" && MAX_ONLY.test(p.file)),
  );
  for (const p of planned) await verify(p);
  mkdirSync(dir, { recursive: false });
  const files: Record<string, FrozenEntry & { container_sha256: string; container_length: number }> = {};
  for (const p of planned) {
    writeFileSync(path.join(dir, p.file), p.bytes, { flag: "wx" });
    files[p.file] = { ...p.entry, container_sha256: sha256(p.bytes), container_length: p.bytes.length };
  }
  manifest.releases[release] = { codec_version: CODEC_VERSION, levels: [...LEVELS] as Level[], files };
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  // in the repository's format (Biome puts short arrays on one line), so that lint passes as written
  const biome = spawnSync(process.execPath, [
    path.join(ROOT, "node_modules/@biomejs/biome/bin/biome"),
    "format",
    "--write",
    manifestFile,
  ]);
  if (biome.status !== 0) console.warn(`format ${MANIFEST_PATH} with \`npx biome format --write\` before committing`);
  const total = planned.reduce((s, p) => s + p.bytes.length, 0);
  console.log(`froze ${planned.length} files (${total} bytes) into ${path.relative(ROOT, dir)}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});

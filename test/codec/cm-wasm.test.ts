import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SPLIT_FROM, text } from "../../src/codec/chambers/text/index.js";
import {
  type CmModel,
  cmDecode,
  cmDecodeJs,
  cmDecodeOffThread,
  cmEncode,
  cmEncodeAll,
  cmEncodeJs,
} from "../../src/codec/entropy/cm.js";
import {
  POOL_SIZE,
  poolState,
  RETIRE_BYTES,
  RETIRE_IDLE_MS,
  RETIRE_NOW_BYTES,
  terminatePool,
} from "../../src/codec/entropy/cm-pool.js";
import { SPLIT_MIN, segmentJobs, splitPoint, writeSegments } from "../../src/codec/entropy/cm-segments.js";
import { MODEL_LIMIT } from "../../src/codec/entropy/cm-tables.js";
import { cmDecodeWasm, cmEncodeWasm } from "../../src/codec/entropy/cm-wasm.js";
import { ByteWriter } from "../../src/codec/format/varint.js";
import { CodecError } from "../../src/codec/index.js";
import { fuzzRuns } from "../support/fuzz.js";
import { rng, utf8 } from "./helpers.js";

const hex = (a: Uint8Array): string => Buffer.from(a).toString("hex");

/** a 0-terminated value stream and its column ends, as the JSON chamber hands them to the model */
function columns(values: string[][]): { data: Uint8Array; colEnds: Uint32Array } {
  const parts: string[] = [];
  const ends: number[] = [];
  for (const col of values) {
    for (const v of col) parts.push(`${v}\0`);
    ends.push(parts.length);
  }
  return { data: utf8(parts.join("")), colEnds: Uint32Array.from(ends) };
}

describe("context-mixing model: WebAssembly build = TypeScript reference", () => {
  it("same bits on random, repetitive and text inputs, and both decoders invert it", () => {
    const inputs = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }),
      fc.string({ maxLength: 1500 }).map(utf8),
      fc
        .tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 80 }))
        .map(([unit, k]) => Uint8Array.from({ length: unit.length * k }, (_, i) => unit[i % unit.length]!)),
    );
    fc.assert(
      fc.property(inputs, fc.constantFrom<CmModel>(1, 2), (input, model) => {
        const w = cmEncodeWasm(input, null, 0, MODEL_LIMIT[model]);
        expect(w).not.toBeNull();
        expect(hex(w!)).toBe(hex(cmEncodeJs(input, null, 0, model)));
        expect(hex(cmDecodeWasm(w!, input.length, null, null, MODEL_LIMIT[model])!)).toBe(hex(input));
        expect(hex(cmDecodeJs(w!, input.length, null, null, model))).toBe(hex(input));
      }),
      { numRuns: fuzzRuns(80) },
    );
  });

  it("same bits with column contexts (JSON values)", () => {
    const r = rng(7);
    const { data, colEnds } = columns([
      Array.from({ length: 300 }, (_, i) => `id-${i}`),
      Array.from({ length: 300 }, () => (r() * 1000).toFixed(2)),
      Array.from({ length: 300 }, () => (r() < 0.5 ? "true" : "false")),
    ]);
    for (const model of [1, 2] as const) {
      const w = cmEncode(data, colEnds, 0, model);
      expect(hex(w)).toBe(hex(cmEncodeJs(data, colEnds, 0, model)));
      expect(hex(cmDecode(w, data.length, colEnds, null, model))).toBe(hex(data));
    }
  });

  it("same bits across the host's 64 KiB slices (state carried between calls)", () => {
    const r = rng(3);
    const words = ["lab", "phi", "codec", "model", "mixing", "context", "the", "of", "and"];
    const text = Array.from({ length: 40000 }, () => words[Math.floor(r() * words.length)]).join(" ");
    const input = utf8(text);
    expect(input.length).toBeGreaterThan(3 * 65536);
    const w = cmEncode(input, null, 0, 2);
    expect(hex(w)).toBe(hex(cmEncodeJs(input, null, 0, 2)));
    expect(hex(cmDecode(w, input.length, null, null, 2))).toBe(hex(input));
  });

  it("model 2 (counter limit 30) codes a different stream than model 1, and each decodes only as itself", () => {
    const input = utf8("# readme\n\nInstall with npm. ".repeat(40) + "function f(x) { return x + 1; }\n".repeat(40));
    const m1 = cmEncode(input, null, 0, 1);
    const m2 = cmEncode(input, null, 0, 2);
    expect(hex(m1)).not.toBe(hex(m2));
    expect(hex(cmDecode(m2, input.length, null, null, 2))).toBe(hex(input));
    let wrong = "";
    try {
      wrong = hex(cmDecode(m2, input.length, null, null, 1));
    } catch {
      wrong = "error";
    }
    expect(wrong).not.toBe(hex(input));
  });

  it("a truncated stream is codec_corrupt in both builds, never wrong bytes", () => {
    const input = utf8("a truncated context-mixing stream must not decode. ".repeat(200));
    const w = cmEncode(input);
    const cut = w.subarray(0, w.length >> 1);
    for (const decode of [() => cmDecode(cut, input.length), () => cmDecodeJs(cut, input.length)]) {
      let code = "ok";
      try {
        decode();
      } catch (e) {
        code = e instanceof CodecError ? e.code : String(e);
      }
      expect(code).toBe("codec_corrupt");
    }
  });

  it("the committed model.wasm is what `npm run build:wasm` builds from model.as.ts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "labphi-wasm-"));
    const out = join(dir, "model.wasm");
    const src = new URL("../../src/codec/entropy/cm-wasm/", import.meta.url);
    const asc = new URL("../../node_modules/.bin/asc", import.meta.url);
    await promisify(execFile)(asc.pathname, [
      `${src.pathname}model.as.ts`,
      "-O3",
      "--runtime",
      "stub",
      "--noAssert",
      "-o",
      out,
    ]);
    expect(hex(readFileSync(out))).toBe(hex(readFileSync(new URL("model.wasm", src))));
  }, 60_000);
});

describe("segments and the worker pool", () => {
  const words = ["lab", "phi", "codec", "model", "mixing", "context", "the", "of", "and", "segment", "prime"];
  const prose = (bytes: number, seed: number): Uint8Array => {
    const r = rng(seed);
    const parts: string[] = [];
    let len = 0;
    while (len < bytes) {
      const w = words[Math.floor(r() * words.length)]!;
      parts.push(w);
      len += w.length + 1;
    }
    return utf8(parts.join(" ").slice(0, bytes));
  };

  it("jobs coded at once on the pool give the reference model's bits, priming included", async () => {
    const data = prose(120_000, 11);
    const retired = poolState().retired;
    const jobs = [
      { input: data.subarray(0, 70_000), colEnds: null, primeLen: 0, model: 2 as const },
      { input: data.subarray(40_000), colEnds: null, primeLen: 30_000, model: 2 as const },
    ];
    const [a, b] = await cmEncodeAll(jobs);
    expect(hex(a!)).toBe(hex(cmEncodeJs(jobs[0]!.input, null, 0, 2)));
    expect(hex(b!)).toBe(hex(cmEncodeJs(jobs[1]!.input, null, 30_000, 2)));
    // the primed segment decodes only with its prefix, in both builds
    const prefix = data.subarray(40_000, 70_000);
    expect(hex(await cmDecodeOffThread(b!, 50_000, null, prefix, 2))).toBe(hex(data.subarray(70_000)));
    expect(hex(cmDecodeJs(b!, 50_000, null, prefix, 2))).toBe(hex(data.subarray(70_000)));
    const state = poolState();
    // workers ran them (model 2's tables take more than RETIRE_BYTES: those end once idle)
    expect(state.workers + state.retired - retired).toBeGreaterThan(0);
    expect(state.workers).toBeLessThanOrEqual(POOL_SIZE);
    expect(state.busy + state.queued + state.dead).toBe(0);
  });

  it("the caller's thread stays free while the pool codes and decodes (timers keep firing)", async () => {
    const data = prose(200_000, 13);
    let ticks = 0;
    const tick = (): void => {
      ticks++;
      if (running) setImmediate(tick);
    };
    let running = true;
    setImmediate(tick);
    const [coded] = await cmEncodeAll([{ input: data, colEnds: null, primeLen: 0, model: 2 }]);
    const encodeTicks = ticks;
    const back = await cmDecodeOffThread(coded!, data.length, null, null, 2);
    running = false;
    // coded in this thread, the loop would not turn until the job ended: at most one tick
    expect(encodeTicks).toBeGreaterThan(20);
    expect(ticks - encodeTicks).toBeGreaterThan(20);
    expect(hex(back)).toBe(hex(data));
    expect(hex(coded!)).toBe(hex(cmEncode(data, null, 0, 2)));
  });

  it("jobs whose workers stop mid-way finish in the caller's thread with the same bits; new jobs start new workers", async () => {
    const data = prose(150_000, 29);
    const jobs = [0, 1].map((k) => ({
      input: data.subarray(k * 10_000),
      colEnds: null,
      primeLen: 0,
      model: 2 as const,
    }));
    const coding = cmEncodeAll(jobs);
    await new Promise((res) => setTimeout(res, 30)); // both jobs are out on workers
    expect(poolState().busy).toBeGreaterThan(0);
    await terminatePool();
    const [a, b] = await coding;
    expect(hex(a!)).toBe(hex(cmEncode(jobs[0]!.input, null, 0, 2)));
    expect(hex(b!)).toBe(hex(cmEncode(jobs[1]!.input, null, 0, 2)));
    expect(poolState()).toMatchObject({ busy: 0, queued: 0, dead: 0 });
    const { workers, retired } = poolState();
    expect(workers).toBe(0);
    const back = await cmDecodeOffThread(a!, jobs[0]!.input.length, null, null, 2);
    expect(hex(back)).toBe(hex(jobs[0]!.input));
    // a new worker decoded it (and, its tables being large, ended after)
    expect(poolState().workers + poolState().retired - retired).toBeGreaterThan(0);
  });

  it("a worker whose job needed a large model ends once idle (its memory goes with it), at once above 64 MiB; small jobs keep theirs; later jobs start fresh workers", async () => {
    await terminatePool();
    // memory of a fresh instance (tables sized by the input): model 10 on 1.1 MB 117 MiB (2^22
    // slots per context), model 7 on 300 KB 57 MiB (2^21), on 20 KB 15 MiB
    const large = prose(1_100_000, 31);
    const medium = prose(300_000, 41);
    const small = prose(20_000, 37);
    const before = poolState().retired;
    const [a] = await cmEncodeAll([{ input: small, colEnds: null, primeLen: 0, model: 7 }]);
    await new Promise((res) => setTimeout(res, RETIRE_IDLE_MS + 200));
    expect(poolState()).toMatchObject({ workers: 1, retired: before });
    const [b] = await cmEncodeAll([{ input: large, colEnds: null, primeLen: 0, model: 10 }]);
    // the reply came from a worker that then had nothing to do: it is gone at once
    expect(poolState()).toMatchObject({ workers: 0, busy: 0, queued: 0, dead: 0, retired: before + 1 });
    // what a retired worker coded, a fresh worker decodes
    expect(hex(await cmDecodeOffThread(b!, large.length, null, null, 10))).toBe(hex(large));
    expect(poolState()).toMatchObject({ workers: 0, dead: 0, retired: before + 2 });
    // a medium model stays while work may follow, and ends after RETIRE_IDLE_MS without any
    const [c] = await cmEncodeAll([{ input: medium, colEnds: null, primeLen: 0, model: 7 }]);
    expect(poolState()).toMatchObject({ workers: 1, retired: before + 2 });
    expect(hex(await cmDecodeOffThread(a!, small.length, null, null, 7))).toBe(hex(small));
    expect(poolState()).toMatchObject({ workers: 1, retired: before + 2 });
    await new Promise((res) => setTimeout(res, RETIRE_IDLE_MS + 200));
    expect(poolState()).toMatchObject({ workers: 0, dead: 0, retired: before + 3 });
    expect(hex(await cmDecodeOffThread(c!, medium.length, null, null, 7))).toBe(hex(medium));
    expect(RETIRE_BYTES).toBeLessThan(57 << 20);
    expect(RETIRE_BYTES).toBeGreaterThan(15 << 20);
    expect(RETIRE_NOW_BYTES).toBeLessThan(117 << 20);
    expect(RETIRE_NOW_BYTES).toBeGreaterThan(57 << 20);
  }, 60_000);

  it("a truncated stream decoded on the pool is codec_corrupt", async () => {
    const input = prose(60_000, 17);
    const [w] = await cmEncodeAll([{ input, colEnds: null, primeLen: 0, model: 2 }]);
    const cut = w!.subarray(0, w!.length >> 1);
    const code = await cmDecodeOffThread(cut, input.length, null, null, 2).then(
      () => "ok",
      (e) => (e instanceof CodecError ? e.code : String(e)),
    );
    expect(code).toBe("codec_corrupt");
    expect(poolState().dead).toBe(0);
  });

  it("decoding only the head of a stream gives the head of the full decode, in both builds", async () => {
    const data = prose(90_000, 19);
    const [w] = await cmEncodeAll([{ input: data, colEnds: null, primeLen: 0, model: 2 }]);
    const full = cmDecode(w!, data.length, null, null, 2);
    expect(hex(cmDecode(w!, data.length, null, null, 2, 30_000))).toBe(hex(full.subarray(0, 30_000)));
    expect(hex(cmDecodeJs(w!, data.length, null, null, 2, 30_000))).toBe(hex(full.subarray(0, 30_000)));
    // sized for a shorter input, the model predicts differently: the head is not what was coded
    let short = "";
    try {
      short = hex(cmDecode(w!, 30_000, null, null, 2));
    } catch (e) {
      short = e instanceof CodecError ? e.code : String(e);
    }
    expect(short).not.toBe(hex(full.subarray(0, 30_000)));
  });

  it("two-segment streams primed by the adjacent bytes (layout 4, earlier versions) still decode", async () => {
    const data = prose(SPLIT_MIN + 3000, 23);
    const cut = splitPoint(data.length);
    const [a, b] = await cmEncodeAll(segmentJobs(data, cut, 2, "adjacent"));
    const payload = writeSegments(data.length, cut, a!, b!);
    const ctx = { maxOutputBytes: 1 << 28, maxModelOutputBytes: 1 << 26 };
    expect(hex(await text.decode(Uint8Array.of(4, 0), payload, data.length, ctx))).toBe(hex(data));
  }, 60_000);

  it("text of 1 MiB up to 8 MiB is one stream with 2^22 slots per context (layout 20, model 10), two segments from 8 MiB (layout 15); head-primed segments of earlier releases still decode, and bad ones are refused", async () => {
    const big = prose(SPLIT_MIN + 5000, 5);
    const enc = await text.encode(big, { level: "max", dataClass: "text" });
    expect(enc!.params[0]).toBe(20);
    const ctx = { maxOutputBytes: 1 << 28, maxModelOutputBytes: 1 << 26 };
    expect(hex(await text.decode(enc!.params, enc!.payload, big.length, ctx))).toBe(hex(big));
    // the stream is model 10's, and no larger than the two segments that earlier releases wrote
    expect(hex(enc!.payload)).toBe(hex(cmEncode(big, null, 0, 10)));
    const cut = splitPoint(big.length);
    const [a, b] = await cmEncodeAll(segmentJobs(big, cut, 7, "head"));
    const layout15 = writeSegments(big.length, cut, a!, b!);
    expect(enc!.payload.length).toBeLessThan(layout15.length);
    expect(hex(await text.decode(Uint8Array.of(15, 0), layout15, big.length, ctx))).toBe(hex(big));
    // a wrong segment length is refused, never decoded into other bytes
    const bad = layout15.slice();
    const at = bad.indexOf(2) + 1; // first segment length, low byte
    bad[at] = bad[at]! ^ 1;
    const codes: string[] = [];
    try {
      await text.decode(Uint8Array.of(15, 0), bad, big.length, ctx);
      codes.push("ok");
    } catch (e) {
      codes.push(e instanceof CodecError ? e.code : String(e));
    }
    // more than two segments are refused before any decoding (each would train on the prime again)
    const three = new ByteWriter(16);
    for (const v of [1000, 3, 1000, 1000, big.length - 2000]) three.uvarint(v);
    try {
      await text.decode(Uint8Array.of(15, 0), three.finish(), big.length, ctx);
      codes.push("ok");
    } catch (e) {
      codes.push(e instanceof CodecError ? e.code : String(e));
    }
    expect(codes).toEqual(["codec_corrupt", "codec_corrupt"]);
    // CSV-like input: text (20) or record (22) profile by the trial
    const csv = await text.encode(big, { level: "max", dataClass: "csv" });
    expect([20, 22]).toContain(csv!.params[0]);
    // from SPLIT_FROM (8 MiB, where every level uses every core) prose is two head-primed segments
    // of model 7 (layout 15), coded and decoded on two threads
    const huge = prose(SPLIT_FROM + 3000, 6);
    const two = await text.encode(huge, { level: "max", dataClass: "text" });
    expect([...two!.params]).toEqual([15, 0]);
    expect(hex(await text.decode(two!.params, two!.payload, huge.length, ctx))).toBe(hex(huge));
    // two head-primed model-3 and model-4 segments (layouts 7 and 9, written by earlier releases) still decode
    for (const [layout, model] of [
      [7, 3],
      [9, 4],
    ] as const) {
      const [a, b] = await cmEncodeAll(segmentJobs(big, cut, model, "head"));
      const old = writeSegments(big.length, cut, a!, b!);
      expect(hex(await text.decode(Uint8Array.of(layout, 0), old, big.length, ctx))).toBe(hex(big));
    }
  }, 120_000);

  it("models 10-12 equal models 7-9 on inputs of at most 1 MiB and differ above (2^22 slots per context)", () => {
    // many distinct contexts (where prose's few would fit either table without a collision)
    const r = rng(8);
    const large = Uint8Array.from({ length: (1 << 20) + 4096 }, () => 97 + Math.floor(r() * 20));
    const small = large.subarray(0, 1 << 20);
    // the three profiles share the table sizing: the text profile at the 1 MiB edge, the others below it
    expect(hex(cmEncode(small, null, 0, 10))).toBe(hex(cmEncode(small, null, 0, 7)));
    for (const [a, b] of [
      [8, 11],
      [9, 12],
    ] as const)
      expect(hex(cmEncode(small.subarray(0, 1 << 16), null, 0, b))).toBe(
        hex(cmEncode(small.subarray(0, 1 << 16), null, 0, a)),
      );
    const m10 = cmEncode(large, null, 0, 10);
    expect(hex(m10)).not.toBe(hex(cmEncode(large, null, 0, 7)));
    expect(hex(cmDecode(m10, large.length, null, null, 10))).toBe(hex(large));
    // the frozen containers are too small to tell models 10-12 from 7-9: this pins model 10's bits
    expect(createHash("sha256").update(m10).digest("hex")).toBe(
      "9441de486cf1d8d9abceae3c76ce6731402d1f9029552a42b55cecb5e54aa291",
    );
  }, 60_000);
});

/**
 * The text chamber codes a binary input whose profile found records of 2, 4 or 8 bytes in byte
 * lanes when its trial says so (params[1] = the stride; chambers/text/index.ts LANE_STRIDES):
 * tables such as gconv/GB18030.so (78,358 → 41,187 B).
 */
import { describe, expect, it } from "vitest";
import { text } from "../../src/codec/chambers/text/index.js";
import { compressWithReport, decompress, inspect, profile } from "../../src/codec/index.js";
import { generate } from "./frozen/inputs.js";
import { codeOf, rng, utf8 } from "./helpers.js";

const ctx = { maxModelOutputBytes: 1 << 30 } as never;

/** the params of a framed one-block container: CF 86 | version | flags | chamber | len | params len | params */
function framedParams(c: Uint8Array): Uint8Array {
  let at = 5;
  const uvarint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const b = c[at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  };
  uvarint(); // original length
  const n = uvarint();
  return c.subarray(at, at + n);
}

/** a table of 16-bit code points (test/codec/frozen/inputs.ts "table16") */
const table16 = (n: number, seed: number): Uint8Array => generate({ name: "table16", seed, n });

describe("text chamber: byte lanes", () => {
  it("a 16-bit table is coded in lanes of 2, smaller than its bytes as they are, and decodes", async () => {
    const t = table16(40_000, 1);
    const p = profile(t);
    expect(p.data_class).toBe("binary");
    expect(p.feats.stride).toBe(2);
    const lanes = (await text.encode(t, { level: "max", dataClass: "binary", stride: 2 }))!;
    const bytes = (await text.encode(t, { level: "max", dataClass: "binary" }))!;
    expect(lanes.params[1]).toBe(2);
    expect(bytes.params[1]).toBe(0);
    expect(lanes.payload.length).toBeLessThan(0.85 * bytes.payload.length);
    expect(Buffer.from(await text.decode(lanes.params, lanes.payload, t.length, ctx)).equals(Buffer.from(t))).toBe(
      true,
    );
    const rep = await compressWithReport(t, { level: "max" });
    expect(rep.chamber).toBe("text");
    expect(inspect(rep.container).chambers).toEqual(["text"]);
    expect([...framedParams(rep.container)]).toEqual([...lanes.params]);
    expect(Buffer.from(await decompress(rep.container)).equals(Buffer.from(t))).toBe(true);
  });

  it("text is never put in lanes, whatever stride is given", async () => {
    const words = ["lanes", "of", "bytes", "and", "text"];
    const r = rng(2);
    const s = utf8(Array.from({ length: 3000 }, () => words[Math.floor(r() * words.length)]).join(" "));
    const e = (await text.encode(s, { level: "max", dataClass: "text", stride: 2 }))!;
    expect(e.params[1]).toBe(0);
  });

  it("the decoder refuses a filter that is neither x86 nor a lane stride", async () => {
    const t = table16(2000, 3);
    const e = (await text.encode(t, { level: "max", dataClass: "binary", stride: 2 }))!;
    for (const filter of [3, 5, 16, 255])
      expect(await codeOf(text.decode(Uint8Array.of(e.params[0]!, filter), e.payload, t.length, ctx))).toBe(
        "codec_bad_params",
      );
  });
});

/**
 * json_residual's strided columns (issue #24: mesh.json at max within 3 % of zpaq -m5): a long
 * array whose values repeat with a period (x, y, z; u, v; the six corners of double-sided
 * triangles) is cut into sub-columns, value i of the column going to sub-column i mod stride, and
 * the strides are listed in the payload behind a third parameter byte (params [s, v, 1]). Documents
 * without such columns keep the two-byte parameters earlier releases read.
 */
import { describe, expect, it } from "vitest";
import { chooseStrides, jsonResidual } from "../../src/codec/chambers/json/index.js";
import { columnsOf, splitJson } from "../../src/codec/chambers/json/split.js";
import { ByteReader, ByteWriter } from "../../src/codec/format/varint.js";
import { compressWithReport, decompress, inspect } from "../../src/codec/index.js";
import { codeOf, rng, utf8 } from "./helpers.js";

const ctx = { maxModelOutputBytes: 1 << 30 } as never;

/** a mesh like corpus/json/mesh.json: positions (x, y, z), texture coordinates (u, v), double-sided triangles */
function mesh(vertices: number, seed: number): Uint8Array {
  const r = rng(seed);
  const positions: number[] = [];
  const uv: number[] = [];
  const indices: number[] = [];
  for (let i = 0; i < vertices; i++) {
    positions.push(
      Number((-0.06 + r() * 0.02).toFixed(9)),
      Number((2.3 + r() * 0.1).toFixed(9)),
      Number((r() * 0.1).toFixed(9)),
    );
    uv.push(Number((r() * 0.1).toFixed(6)), Number((0.9 + r() * 0.1).toFixed(6)));
  }
  for (let t = 0; t + 2 < vertices; t++) indices.push(t, t + 1, t + 2, t + 2, t + 1, t);
  return utf8(JSON.stringify({ name: "mesh", positions, tex0: uv, indices }).replace(/,/g, ", "));
}

/** the payload's stride table: where it starts and ends, and its (column, stride) pairs */
function strideTable(payload: Uint8Array): { start: number; end: number; pairs: [number, number][] } {
  const r = new ByteReader(payload);
  r.uvarintMax(1 << 30, "s");
  r.uvarintMax(1 << 30, "b");
  const start = r.pos;
  const n = r.uvarintMax(1 << 30, "n");
  const pairs: [number, number][] = [];
  for (let k = 0; k < n; k++) pairs.push([r.uvarintMax(1 << 30, "c"), r.uvarintMax(1 << 30, "k")]);
  return { start, end: r.pos, pairs };
}

function withTable(payload: Uint8Array, table: number[]): Uint8Array {
  const { start, end } = strideTable(payload);
  const w = new ByteWriter(payload.length + 16);
  w.bytes(payload.subarray(0, start));
  for (const v of table) w.uvarint(v);
  w.bytes(payload.subarray(end));
  return w.finish();
}

describe("json_residual: strided columns", () => {
  const doc = mesh(700, 1);

  it("picks the period of each long column: 3 for x, y, z; 2 for u, v; 6 for double-sided triangles", () => {
    const split = splitJson(doc)!;
    const cols = columnsOf(split.skeleton)!;
    const strides = chooseStrides(split.values, cols.column, cols.columns);
    // columns in document order: name, positions, tex0, indices
    expect([...strides]).toEqual([1, 3, 2, 6]);
  });

  it("codes them behind params [s, v, 1] and rebuilds the document byte for byte (backends and context mixing)", async () => {
    for (const level of ["balanced", "max"] as const) {
      const e = (await jsonResidual.encode(doc, { level, dataClass: "json" }))!;
      expect(e.params.length).toBe(3);
      expect(e.params[2]).toBe(1);
      expect(strideTable(e.payload).pairs).toEqual([
        [1, 3],
        [2, 2],
        [3, 6],
      ]);
      expect(Buffer.from(await jsonResidual.decode(e.params, e.payload, doc.length, ctx))).toEqual(Buffer.from(doc));
    }
    const rep = await compressWithReport(doc, { level: "max" });
    expect(rep.chamber).toBe("json_residual");
    expect(Buffer.from(await decompress(rep.container))).toEqual(Buffer.from(doc));
  });

  it("documents without long periodic columns keep the two parameter bytes of earlier releases", async () => {
    const records = utf8(JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ id: i, ok: i % 3 === 0 }))));
    const e = (await jsonResidual.encode(records, { level: "balanced", dataClass: "json" }))!;
    expect(e.params.length).toBe(2);
    expect(Buffer.from(await jsonResidual.decode(e.params, e.payload, records.length, ctx))).toEqual(
      Buffer.from(records),
    );
  });

  it("a bad third byte or stride table is refused with a codec error, not a crash", async () => {
    const e = (await jsonResidual.encode(doc, { level: "balanced", dataClass: "json" }))!;
    const dec = (params: number[], payload: Uint8Array) =>
      codeOf(jsonResidual.decode(Uint8Array.from(params), payload, doc.length, ctx));
    const [s, v] = [e.params[0]!, e.params[1]!];
    expect(await dec([s, v, 2], e.payload)).toBe("codec_bad_params");
    expect(await dec([s, v, 1, 0], e.payload)).toBe("codec_bad_params");
    expect(await dec([s, v, 1], withTable(e.payload, [1, 1, 1]))).toBe("codec_corrupt"); // stride 1
    expect(await dec([s, v, 1], withTable(e.payload, [1, 9, 3]))).toBe("codec_corrupt"); // no column 9
    expect(await dec([s, v, 1], withTable(e.payload, [2, 1, 3, 1, 2]))).toBe("codec_corrupt"); // column twice
    expect(await dec([s, v, 1], withTable(e.payload, [0]))).toBe("codec_corrupt"); // flag, empty table
    expect(await dec([s, v, 1], withTable(e.payload, [1, 1, 1000]))).toBe("codec_corrupt"); // stride too large
    // a wrong but well-formed stride rebuilds other bytes or none: never the document, never a crash
    const wrong = await jsonResidual
      .decode(Uint8Array.from(e.params), withTable(e.payload, [1, 1, 2]), doc.length, ctx)
      .then((b) => Buffer.compare(Buffer.from(b), Buffer.from(doc)) !== 0)
      .catch(() => true);
    expect(wrong).toBe(true);
  });
});

describe("json_residual: a frozen container with strided columns (format of issue #24)", () => {
  // written while this release was built: compress(mesh(120, 2), { level: "balanced", chamber:
  // "json_residual" }): params [2, 2, 1] (zstd -19 streams, strided columns 1:3, 2:2, 3:6). Later
  // releases must keep decoding it byte for byte, whatever their encoder writes.
  const FROZEN =
    "z4YBAQTTTgMCAgGBH4pEAQMGTii1L/1ggQ4lAgD0AnsibmFtZSI6ASwgInBvc2l0aW9ucyI6WwIsIF0sICJ0ZXgwXSwgImluZGljZV19BAARuD+4AeT8I2dE5IoPg78bAyi1L/1gCiHdRwB6BkUdE8Cl0AEmYPh/jUwypSSljPzXugPLAccByAHFISF/D5odU5UxJ6RdJ3kmaPGdZIiXvZa2GtTTlIKPqM1IZSahkNex00ecYUmSa1ni3kG7HPHKLiV9SoikmbcYo8hNlHK3Ckpppoo+UuVpW0TTn/IjeT9k2hNhUozYYXhitpsiRZtZSVL7nMaTiRN5PjWmkEYn2AlVkfcQalDK9b0kpWhH1WgnKsskc0osNB2iUvp1cwlJPaSbFu9BGpe4VW1Q3lrM50Vp/ufa8kQbljyslUOmPi9vdTGV74ky9D9RIWEq6iecOdxZilGWqT8TjlmoDCLKF5QRn3OqmTnnLPkzqUQTImGL3SGrtejLLj7hyr/y8+KHaNpOaegZFus57qiyG6NaGfUiiZbEFHlrKRO2Qu7WrToUMcuV+I8XVROmeF1CJ3OMkZPyExSu12vECNIMN269tUfMXe72ND2tiZ7qVcbNTryPuRtxHT6VHMONFPlVJeUijhntIkPyj+feKNptkqHPKVreVfWZ16JMpZg6gjWWVbh2mqmVXGgyS7TRr0yLfiVjh2uPCW5ELN8oVYfVC9udSrp8ZU4ScraJkOJkNG6tKKJqxIWvg5Zh7aAof/y5+FO8GETovLKJGUiQk6qqMQhBCBgAEAiz1ag0+ZfXJWq0S2deHb3W4S30OTF8KhdtZiJsjOkZdyUiMQteyDPKGHdjQ1UimlI+52sSQeV61P38tdk/NWK9rb2tFmmKTcKuN2XhY4LFj+TrmG+3bHUqKpEhqgyrYq4WbqZ0sea+bEwVpKk8NrExzHrGaEXI5dpXUo+hjxXbOg6qNMYlThtSehxzDSlqNiI6auomX4pqRt6KRH6yOIZDklI41VLcuWmy2jIjP838/OR1OrG2MVHVT4tpqyInZIpS88MtZdydSi1zbn5mTq9GKCoOR5XIRLvDGktNi39EUcf3bFEu1HkFS8NOsPekSg7ShaTcZopEJE9BPyuERuyIaEh6kehll2VKZVCLk5fqtoilJf2P1ehl29dKqrydCC8vkSGpmRXKKlSZEVufcs6/NNMMeR8iodY63WvsQrhHiTILqU0k6CXzyMflUKVxh2U7ORZSligrrdlziVgjipHXa8Q9XeYibhvjCjmIP9WwKGaohqOYa+j6xyXa4UtdKy9SaZRNC6EpTsm4REqrzp9T7DlytDT6p2wah8b9XPeSqQgqKftxvRW5JrOR+rQxO2nSSZZS85Rrjbp3uxAdNDEimQdn0vnJmPRv6bwiJheLJ03rFKpg8dHVTIWUND4xnoyplEOmxMKpS5QWNDr2ccRpqvPy522I8ZNYGblYhOoF5/XIXFZX2c9bNZxJsWn4kkmJfjiZqd8UapDIfJRWJqa6/nVGlUzMcUinzoQfjkZG/cnT4kNIVrPDXyNaFFIUnFhlNis/FJKNzuBnVTGpc91RlZvCfjznslBRyUkuKcejOi3h1H1h0KPcqR2uepy2JHM/feTERhZbhzoiMzPWX1EnGckT1JuWj2W4NlwqWVmjnpKgqbhTwq08pATdL54PiaKZCs15rpGitSLeSFE4Ff+I5to6KQp3VuUhqUzcHA9F7GudXO60/uud22bsp3lHm+CHdJXjd1Z8uA2DNVFy+tXEX4+LakQTczmZkQbJM8SwdIg6RTI0nHEpNI4KH97Q6CIuLmLKWeOgCkU7Hldor7pl/UiFKCOO2bhDNGmGmMyoqVeLsKlsRcx81NHoaOlPlUetuJmy0pmbyrHPMjSy9opU5t5zso3h1IdDpYyoZNUaaWMcjqih3ZQ6ZCpiOV3siR4i32k0YWdRstRsQ8Xyr1GmZryERIbhVlrTS61+X+5HDeltFCMVVTREI1ZQSo6GyLV9tAVvoVvgFmYLsoVtIbZQsfBYoFhwLDQWGAsTCxILi4WIharwClTBFVqBFaaCVFiFqFAPf6AHP/SBD/MgD3uIh6JwCkTBFEqBFIaCUBiFoFAOdyAHO9SBDuMgDnMIh2p4AzW4oQ1smAZpWEM0FMMZiMEMZSDDMAjDGIKhJnwCTfCETuCEmSATNiEmlIRLIAmWUAmUMBJEwiSEhFr4Ai14oQtcmAVZ2EIsVHig4NDAMEHCQoSZOrY4IxLWnZd7lS+cnELa6Xhzt1XEzCimmTQVbm006fAlwo7ukqKtEm2U+zNTrlXiqLirXIPmQzZHNZnly2vumacZyeGJKyZyBXGWUknL1c6rongs6PGdwbYnR4Z8R4U4EvGS/L+ITaMSoTosJfVM9OfrUo6iBt+e86oIEUvo7vCvV3mfsWYzFc1YkvFq6D72kfauz1sugogvm4TKv4WzqziXUE8UG/7Diqh49ZL1lhFpyhwhKRXtLEuwcvoaJSOWtSNttaplci0sSgkN7VNEU6K7xBNWaz5NZ7djhPpNSI55X6L0/VSUOCGXkvrIkIo6pkmsq2+K2HuolVN9fr98TqMGdWRyVlMSntJU1lMoTr4MSpVLpOLNijrzl7gaVKIUrfJG2XlJEoJaqCIIICgwSMXW9585IsZJlMYSgKpx7f//vwFnIbdagLQlWi3AFqdtfdDatK3p29maieLIr5HJTD3kC8VyZkkc6FbaM0UWd21PG7RhB/AuL9E1GRsnbBHe0BlPx9Hk0wi7TMa7kYaQ38uQ3j7v1MInsAav/mYDZQkvkgIlqg3KgBJq50LgFvaJUW8b0/28NVGWCDlkNMdIeHDr87Zipb2BFAhYjoNnVpjXEptk5XWf52ZHbN5nUNLGDhETHucljQuhNfk1lTuAz4QGdqZE+iI+J0RWORQuRGxxBw+P7iAzxW8+PlIbzyo8kEoEl7uGnZ4M1gUqqRCOZIqBbvImpSP1gdD0OV4hgdLiKJZd5TC+D2SyNY1s0KIGfa3HiAFJ7bRggwg6nZTZ3AU/ZINEcXa3SF50uknZEH+wJoOG82Z4pfEiyxDmNkbQ79mUrDB1+hC+URpU6ZOXgeROdu4/7GWDkSPHCa6LE81qyaeXAWysV7MIyhS3mCDLxWpMy1Emr4d1C4I5v9QFyCaYNxdcfoR5mDcov3khKpTozz2ndJYdlZiDRmFttJpTYw==";
  it("decodes byte for byte, and its header says json_residual / balanced", async () => {
    const container = Buffer.from(FROZEN, "base64");
    const info = inspect(container);
    expect(info.level).toBe("balanced");
    expect(info.chambers).toEqual(["json_residual"]);
    expect(Buffer.from(await decompress(container))).toEqual(Buffer.from(mesh(120, 2)));
  });
});

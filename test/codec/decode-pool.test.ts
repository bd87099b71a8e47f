import { describe, expect, it } from "vitest";
import { poolState, RETIRE_IDLE_MS } from "../../src/codec/entropy/cm-pool.js";
import { CodecError, compressWithReport, decodePoolState, decompressOffThread } from "../../src/codec/index.js";
import { rng, utf8 } from "./helpers.js";

/**
 * The decode pool's workers (src/codec/decode-pool.ts) send their context-mixing streams to the
 * main thread's pool (entropy/cm-pool.ts), so a model's memory lives only in pool workers, which
 * end once idle after a large one.
 */
describe("decode workers and the context-mixing pool", () => {
  const words = ["lab", "phi", "codec", "model", "mixing", "context", "the", "of", "and", "decode", "pool"];
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
  const idle = () => new Promise((res) => setTimeout(res, RETIRE_IDLE_MS + 300));

  it("a decode worker's context-mixing stream is decoded on the pool (whose worker then ends), same bytes; a cut stream is codec_corrupt", async () => {
    const data = prose(400_000, 5);
    const { container, chamber } = await compressWithReport(data, { level: "max" });
    expect(chamber).toBe("text");
    await idle(); // the workers that compressed it with a large model have ended
    const before = poolState();
    const back = await decompressOffThread(container);
    expect(Buffer.from(back).equals(Buffer.from(data))).toBe(true);
    expect(decodePoolState().workers).toBeGreaterThan(0);
    // the model (2^21 slots per context: more than RETIRE_BYTES) ran in a pool worker, which ends
    // when idle; decoded in the decode worker's own thread, nothing would have reached the pool
    await idle();
    expect(poolState()).toMatchObject({ dead: 0, retired: before.retired + 1 });
    const cut = container.subarray(0, container.length - 2_000);
    const code = await decompressOffThread(cut).then(
      () => "decoded",
      (e) => (e instanceof CodecError ? e.code : String(e)),
    );
    expect(code).toMatch(/^codec_(corrupt|truncated)$/);
  }, 60_000);
});

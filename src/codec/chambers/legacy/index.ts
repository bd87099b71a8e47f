import { backendDecode, brotliAsync, gzipAsync } from "../../backends.js";
import { fail } from "../../errors.js";
import type { Chamber } from "../types.js";

/**
 * legacy: gzip or brotli streams from older clients. params: [0 gzip | 1 brotli].
 * The encoder produces gzip-9 or brotli-11 when asked (gzip at level fast, brotli otherwise).
 */
export const legacy: Chamber<"legacy"> = {
  name: "legacy",
  slowDecode: false,
  summary: "gzip or brotli streams (older clients)",
  accepts: () => true,
  async encode(input, ctx) {
    return ctx.level === "fast"
      ? { params: Uint8Array.of(0), payload: await gzipAsync(input, 9) }
      : { params: Uint8Array.of(1), payload: await brotliAsync(input, 11) };
  },
  async decode(params, payload, rawLen) {
    if (params.length !== 1 || params[0]! > 1) fail("codec_bad_params", "legacy expects [0 gzip | 1 brotli]");
    return backendDecode(params[0] === 0 ? 1 : 0, payload, rawLen);
  },
};

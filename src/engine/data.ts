import { Problem } from "../http/problem.js";

/**
 * `data` travels as UTF-8 text or base64. Text is encoded to UTF-8 exactly as given; a string that
 * UTF-8 cannot carry unchanged (a lone surrogate) is refused rather than rewritten. Base64 is
 * checked strictly (standard or URL-safe alphabet, optional padding, canonical final bits) so a
 * typo is a 400, never silently different bytes.
 */

export type Encoding = "utf8" | "base64";

const STD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decoded size of a base64 text without decoding it (for limit checks before allocating). */
export function base64Size(text: string): number {
  const t = text.replace(/\s+/g, "").replace(/=+$/, "");
  return Math.floor((t.length * 3) / 4);
}

export function decodeBase64(text: string, field = "data"): Uint8Array {
  const t = text.replace(/[\r\n\t ]+/g, "");
  if (!(STD.test(t) || URL_SAFE.test(t))) {
    throw new Problem(400, "bad_base64", `${field} is not base64 (standard or URL-safe alphabet).`);
  }
  const bare = t.replace(/=+$/, "");
  const padded = t.length !== bare.length;
  if (bare.length % 4 === 1 || (padded && t.length % 4 !== 0)) {
    throw new Problem(400, "bad_base64", `${field} has a base64 length that cannot be decoded.`);
  }
  const buf = Buffer.from(bare, "base64");
  const canonical = buf.toString("base64").replace(/=+$/, "");
  if (canonical !== bare.replace(/-/g, "+").replace(/_/g, "/")) {
    throw new Problem(400, "bad_base64", `${field} has non-canonical base64 final bits.`);
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

export function decodeText(text: string, field = "data"): Uint8Array {
  if (/[\uD800-\uDFFF]/u.test(text)) {
    throw new Problem(
      400,
      "data_not_utf8",
      `${field} contains an unpaired surrogate, which UTF-8 cannot carry unchanged; send the bytes as base64.`,
    );
  }
  const buf = Buffer.from(text, "utf8");
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Input bytes of a request's `data`, with its size checked against `limit` before decoding. */
export function decodeData(
  data: string,
  encoding: Encoding,
  limit: number,
  tooLarge: (bytes: number) => never,
): Uint8Array {
  const estimate = encoding === "base64" ? base64Size(data) : data.length;
  // A UTF-16 string of length L is at most 3L bytes of UTF-8 and at least L: check L first.
  if (estimate > limit) tooLarge(estimate);
  const bytes = encoding === "base64" ? decodeBase64(data) : decodeText(data);
  if (bytes.length > limit) tooLarge(bytes.length);
  return bytes;
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** Output bytes as the caller asked; utf8 only when they are valid UTF-8 (422 otherwise). */
export function encodeOutput(bytes: Uint8Array, encoding: Encoding): string {
  if (encoding === "base64") return toBase64(bytes);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new Problem(422, "output_not_utf8", "The decoded bytes are not valid UTF-8; ask for output_encoding base64.");
  }
}

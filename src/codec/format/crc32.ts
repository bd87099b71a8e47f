import zlib from "node:zlib";

/** CRC-32 (IEEE 802.3, reflected, as in gzip/zip/PNG), slicing-by-4. */
const T = new Int32Array(1024);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n]!;
  for (let k = 1; k < 4; k++) {
    c = T[c & 0xff]! ^ (c >>> 8);
    T[k * 256 + n] = c;
  }
}

const native = (zlib as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;

/** CRC-32 of data; node:zlib's native crc32 when present (Node ≥ 20.15), else the JS version */
export function crc32(data: Uint8Array, seed = 0): number {
  return native ? native(data, seed) >>> 0 : crc32js(data, seed);
}

export function crc32js(data: Uint8Array, seed = 0): number {
  let c = ~seed;
  let i = 0;
  const n = data.length;
  for (; i + 4 <= n; i += 4) {
    c ^= data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    c = T[768 + (c & 0xff)]! ^ T[512 + ((c >>> 8) & 0xff)]! ^ T[256 + ((c >>> 16) & 0xff)]! ^ T[c >>> 24]!;
  }
  for (; i < n; i++) c = T[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** Byte helpers of the codec demo (web/src/web-demo.ts): base64 both ways, comparison, counts. */

/** Bytes → standard base64, in chunks so large inputs never overflow the call stack. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) {
    binary += String.fromCharCode(...bytes.subarray(i, i + step));
  }
  return btoa(binary);
}

/** Bytes in an ordinary ArrayBuffer (what Web Crypto and Blob take). */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Standard base64 → bytes. */
export function fromBase64(text: string): Bytes {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Length of the base64 text of n bytes. */
export const base64Length = (n: number): number => Math.ceil(n / 3) * 4;

/** Index of the first differing byte, or -1 when both are identical (length included). */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** 12345 → "12,345" */
export const count = (n: number): string => n.toLocaleString("en-US");

/** 12345 → "12,345 bytes" (1 → "1 byte") */
export const bytesText = (n: number): string => `${count(n)} byte${n === 1 ? "" : "s"}`;

/** Headers of a job's output download: one byte range, and the representation digest. */

/** One `bytes=` range of a `total`-byte body: [start, end] inclusive, "unsatisfiable", or undefined (ignore: send all). */
export function parseRange(header: string | undefined, total: number): [number, number] | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  // Several ranges, other units or bad syntax: ignored (RFC 9110 allows answering 200 with everything).
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || total === 0) return "unsatisfiable";
    return [Math.max(0, total - suffix), total - 1];
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (end < start) return undefined;
  if (start >= total) return "unsatisfiable";
  return [start, Math.min(end, total - 1)];
}

/** `Repr-Digest` (RFC 9530) of a hex SHA-256: `sha-256=:<base64 of the 32 bytes>:`. */
export function reprDigest(sha256Hex: string): string {
  return `sha-256=:${Buffer.from(sha256Hex, "hex").toString("base64")}:`;
}

/**
 * x86 call/jump filter (E8/E9 rel32 → absolute), the classic BCJ idea in its simplest fully
 * reversible form: every E8/E9 byte at position i < n − 4 has its 4 operand bytes replaced by
 * (operand + i + 5) mod 2^32 and is then skipped; opcode bytes are never changed, so the decoder
 * makes the same skip decisions and subtracts. Repeated calls to one target become repeated bytes.
 */
export function x86Encode(b: Uint8Array): Uint8Array {
  const out = Uint8Array.prototype.slice.call(b);
  transform(out, 1);
  return out;
}

export function x86Decode(b: Uint8Array): Uint8Array {
  transform(b, -1);
  return b;
}

function transform(d: Uint8Array, dir: 1 | -1): void {
  const n = d.length;
  for (let i = 0; i + 4 < n; i++) {
    const op = d[i]!;
    if (op !== 0xe8 && op !== 0xe9) continue;
    const v = (d[i + 1]! | (d[i + 2]! << 8) | (d[i + 3]! << 16) | (d[i + 4]! << 24)) >>> 0;
    const w = (v + dir * (i + 5)) >>> 0;
    d[i + 1] = w & 0xff;
    d[i + 2] = (w >>> 8) & 0xff;
    d[i + 3] = (w >>> 16) & 0xff;
    d[i + 4] = w >>> 24;
    i += 4;
  }
}

/** ELF or PE/COFF executable signature */
export function isExecutable(b: Uint8Array): boolean {
  return (b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) || (b[0] === 0x4d && b[1] === 0x5a);
}

/**
 * An x86 or x86-64 executable: ELF whose e_machine (offset 18, little-endian ELF) is EM_386 (3) or
 * EM_X86_64 (62), or PE/COFF ("MZ"). The balanced level filters only these (a SPARC or big-endian
 * ELF has no E8/E9 rel32 calls to align, and the filter would only scramble its bytes).
 */
export function isX86Executable(b: Uint8Array): boolean {
  if (b.length < 20) return false;
  if (b[0] === 0x4d && b[1] === 0x5a) return true;
  if (!(b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) || b[5] !== 1) return false;
  const machine = b[18]! | (b[19]! << 8);
  return machine === 3 || machine === 62;
}

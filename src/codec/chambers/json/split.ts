/**
 * Reversible JSON split. The skeleton keeps structure, whitespace and keys verbatim; every
 * scalar value is replaced by a marker (0x01 string value, 0x02 number/literal) and its bytes
 * go to the value stream (string contents without the quotes), each value terminated by 0x00.
 * Inputs containing bytes 0x00–0x02, unterminated strings or unbalanced brackets are refused.
 * A sequence of top-level values (NDJSON) is accepted.
 */
export const STR = 1;
export const LIT = 2;

const isDelim = (c: number): boolean =>
  c === 0x20 ||
  c === 0x0a ||
  c === 0x0d ||
  c === 0x09 ||
  c === 0x2c ||
  c === 0x3a ||
  c === 0x5b ||
  c === 0x5d ||
  c === 0x7b ||
  c === 0x7d ||
  c === 0x22;

export interface Split {
  skeleton: Uint8Array;
  values: Uint8Array[];
}

function stringEnd(b: Uint8Array, i: number): number {
  // b[i] is the opening quote; returns index of the closing quote or -1
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j]!;
    if (c === 0x5c) j++;
    else if (c === 0x22) return j;
  }
  return -1;
}

export function splitJson(b: Uint8Array): Split | null {
  const skel = new Uint8Array(b.length);
  let sp = 0;
  const values: Uint8Array[] = [];
  const stack: number[] = []; // 0x7b object, 0x5b array
  let expectKey = false;
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    if (c <= 2) return null;
    if (c === 0x7b || c === 0x5b) {
      stack.push(c);
      expectKey = c === 0x7b;
      skel[sp++] = c;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      const top = stack.pop();
      if (top === undefined || (c === 0x7d) !== (top === 0x7b)) return null;
      expectKey = false;
      skel[sp++] = c;
      i++;
    } else if (c === 0x2c) {
      expectKey = stack[stack.length - 1] === 0x7b;
      skel[sp++] = c;
      i++;
    } else if (c === 0x3a) {
      expectKey = false;
      skel[sp++] = c;
      i++;
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      skel[sp++] = c;
      i++;
    } else if (c === 0x22) {
      const e = stringEnd(b, i);
      if (e < 0) return null;
      if (expectKey) {
        skel.set(b.subarray(i, e + 1), sp);
        sp += e + 1 - i;
      } else {
        skel[sp++] = STR;
        values.push(b.subarray(i + 1, e));
      }
      i = e + 1;
    } else {
      let e = i;
      while (e < b.length && !isDelim(b[e]!)) {
        if (b[e]! <= 2) return null;
        e++;
      }
      skel[sp++] = LIT;
      values.push(b.subarray(i, e));
      i = e;
    }
  }
  if (stack.length) return null;
  return { skeleton: skel.slice(0, sp), values };
}

/**
 * Walk a skeleton and call back once per marker with the column path id (document order of
 * first appearance). Path = parent path + ".key" for members, parent path + "[]" for elements.
 */
export function columnsOf(skel: Uint8Array): { column: Uint32Array; columns: number } | null {
  const ids = new Map<string, number>();
  const out: number[] = [];
  const pathStack: string[] = [""];
  const typeStack: number[] = [];
  let key = "";
  const dec = new TextDecoder();
  const idOf = (p: string): number => {
    let id = ids.get(p);
    if (id === undefined) {
      id = ids.size;
      ids.set(p, id);
    }
    return id;
  };
  const here = (): string => {
    const parent = pathStack[pathStack.length - 1]!;
    const t = typeStack[typeStack.length - 1];
    return t === 0x7b ? `${parent}.${key}` : t === 0x5b ? `${parent}[]` : parent;
  };
  let expectKey = false;
  for (let i = 0; i < skel.length; ) {
    const c = skel[i]!;
    if (c === STR || c === LIT) {
      out.push(idOf(here()));
      i++;
    } else if (c === 0x7b || c === 0x5b) {
      pathStack.push(here());
      typeStack.push(c);
      expectKey = c === 0x7b;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      pathStack.pop();
      typeStack.pop();
      expectKey = false;
      i++;
    } else if (c === 0x2c) {
      expectKey = typeStack[typeStack.length - 1] === 0x7b;
      i++;
    } else if (c === 0x3a) {
      expectKey = false;
      i++;
    } else if (c === 0x22 && expectKey) {
      const e = stringEnd(skel, i);
      if (e < 0) return null;
      key = dec.decode(skel.subarray(i + 1, e));
      i = e + 1;
    } else i++;
    if (pathStack.length === 0) return null;
  }
  return { column: Uint32Array.from(out), columns: ids.size };
}

/** Rebuild the original bytes from a skeleton and the values in document order. */
export function joinJson(skel: Uint8Array, values: Uint8Array[], total: number): Uint8Array | null {
  const out = new Uint8Array(total);
  let op = 0;
  let v = 0;
  for (let i = 0; i < skel.length; i++) {
    const c = skel[i]!;
    if (c === STR || c === LIT) {
      const val = values[v++];
      if (!val) return null;
      const need = val.length + (c === STR ? 2 : 0);
      if (op + need > total) return null;
      if (c === STR) out[op++] = 0x22;
      out.set(val, op);
      op += val.length;
      if (c === STR) out[op++] = 0x22;
    } else {
      if (op >= total) return null;
      out[op++] = c;
    }
  }
  if (op !== total || v !== values.length) return null;
  return out;
}

export interface ModelTables {
  stretch: Int16Array;
  squash: Int16Array;
  dt: Float64Array;
  apmRow: Uint16Array;
}
export class WasmOutOfMemory extends Error {}
export class WasmCorrupt extends Error {}
export function encode(
  module: object,
  tables: ModelTables,
  input: Uint8Array,
  colEnds: Uint32Array | null,
  primeLen: number,
  limit: number,
): Uint8Array | null;
export function decode(
  module: object,
  tables: ModelTables,
  payload: Uint8Array,
  rawLen: number,
  colEnds: Uint32Array | null,
  prefix: Uint8Array | null,
  limit: number,
  stop?: number,
): Uint8Array;
/** the largest linear memory (bytes) a call in this thread used since the last read, then 0 */
export function largestMemory(): number;

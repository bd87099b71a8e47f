export type Level = "fast" | "balanced" | "max";
export const LEVELS: readonly Level[] = ["fast", "balanced", "max"];

export const CHAMBER_NAMES = [
  "high_entropy",
  "general",
  "text",
  "json_keys",
  "json_residual",
  "zrw",
  "float",
  "delta",
  "zrw-v5",
  "zrw-v5-chunked",
  "zrw-v5-delta",
  "zrw-v5-stride8",
  "zrw-v5-stride16",
  "zrw-v5-stride32",
  "zrw-v5-dark-attractor",
  "zrw-v5-dark-detractor",
  "legacy",
] as const;
export type ChamberName = (typeof CHAMBER_NAMES)[number];
/** chamber id = index in CHAMBER_NAMES (stable, part of the format) */
export const chamberId = (name: ChamberName): number => CHAMBER_NAMES.indexOf(name);

/** chambers the router may choose for compression; the rest are produced only when asked */
export const COMPRESS_CHAMBERS: readonly ChamberName[] = [
  "zrw",
  "float",
  "delta",
  "text",
  "json_keys",
  "json_residual",
  "high_entropy",
  "general",
];

export interface EncodeCtx {
  level: Level;
  /** the router's data class for this input (chambers may tune to it); absent when forced */
  dataClass?: string;
  /** the profile's record stride (bytes; 0 = none): general tries byte-lane transposition by it */
  stride?: number;
}
export interface DecodeCtx {
  /** hard cap on any output or intermediate buffer */
  maxOutputBytes: number;
  /** cap on the output of context-mixing streams (they decode at ~0.5 MB/s): bounds decode time */
  maxModelOutputBytes: number;
}
export interface Encoded {
  params: Uint8Array;
  payload: Uint8Array;
}

export interface Chamber {
  readonly name: ChamberName;
  /** one-line description for docs and counsel */
  readonly summary: string;
  /** true when the chamber can encode this input at all (e.g. length a multiple of 4) */
  accepts(input: Uint8Array): boolean;
  /** encode or return null when the chamber does not apply after all */
  encode(input: Uint8Array, ctx: EncodeCtx): Promise<Encoded | null>;
  /** decode exactly rawLen bytes or throw a CodecError */
  decode(params: Uint8Array, payload: Uint8Array, rawLen: number, ctx: DecodeCtx): Promise<Uint8Array>;
}

export const EMPTY = new Uint8Array(0);

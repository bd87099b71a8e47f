export type Level = "fast" | "balanced" | "max";
export const LEVELS: readonly Level[] = ["fast", "balanced", "max"];

/**
 * The chamber list is stated once, in registry.ts (its entries: CHAMBER_LIST, COMPRESS_CHAMBERS…):
 * a chamber's id is its index there (stable, part of the format). Only the name type is re-exported
 * here, type-only, so the chamber modules (which import this file) do not import the registry at
 * run time.
 */
export type { ChamberName } from "./registry.js";

export interface EncodeCtx {
  level: Level;
  /** the router's data class for this input (chambers may tune to it); absent when forced */
  dataClass?: string;
  /** the profile's record stride (bytes; 0 = none): general tries byte-lane transposition by it */
  stride?: number;
  /**
   * the size (payload + params) of the smallest encoding another chamber already made of this
   * input: a chamber may give up (null) when a cheap estimate says it will not come close
   */
  toBeat?: number;
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

export interface Chamber<N extends string = string> {
  /** the chamber's name, a literal: the registry derives CHAMBER_NAMES and ChamberName from it */
  readonly name: N;
  /**
   * true when the chamber may decode with context mixing (level max): about as slow to decode as
   * to encode, so the engine caps its output over HTTP at the slow limit
   */
  readonly slowDecode: boolean;
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

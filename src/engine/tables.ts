/** Codec engine state: barrel per direction, per-chamber counts, and dataset prints. */

export type Direction = "compress" | "decompress";

export interface BarrelRow {
  direction: Direction;
  barrel: string;
  /** chamber of the last fire */
  chamber: string;
  /** bigint: a string on PostgreSQL, a number on SQLite */
  fires: number | string;
  rotates: number | string;
  updated_at: string;
}

export interface BarrelCountRow {
  direction: Direction;
  chamber: string;
  count: number | string;
}

/** A fingerprint of a compressed input, never the input: keyed hash, sizes, class, route. */
export interface PrintRow {
  /** prt_… */
  id: string;
  identity_id: string;
  /** dp_… keyed hash (HMAC-SHA256) of the input bytes */
  dataset_print_id: string;
  bytes: number | string;
  compressed_bytes: number | string;
  data_class: string;
  /** the data's path class from the profile (zrw, float, text, …): a property of the data */
  path: string;
  /** route label of the compression that recorded it, e.g. omni/text or classic/brotli-11 */
  label: string;
  level: string;
  at: string;
}

export interface EngineTables {
  engine_barrels: BarrelRow;
  engine_barrel_counts: BarrelCountRow;
  engine_prints: PrintRow;
}

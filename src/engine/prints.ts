import { createHmac, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { type DeclaredType, profile } from "../codec/index.js";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import type { Identity } from "../identity/service.js";
import { engineStore } from "./store.js";
import type { PrintRow } from "./tables.js";

/**
 * Prints: a fire leaves a fingerprint, not data. A compress by an identified caller records a
 * dataset_print_id (HMAC-SHA256 of the bytes under the print key), sizes, class, path and ratio.
 */

export interface Fingerprint {
  dataset_print_id: string;
  bytes: number;
  data_class: string;
  path: string;
}

export interface PrintOut extends Fingerprint {
  ratio: number;
  label: string;
  level: string;
  at: string;
}

export const ratioOf = (n: number, c: number): number => (c > 0 ? Math.round((n / c) * 10000) / 10000 : 0);

export class Prints {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly printKey: string,
  ) {}

  fingerprint(bytes: Uint8Array, declared?: DeclaredType): Fingerprint {
    const p = profile(bytes, declared);
    return { dataset_print_id: this.printId(bytes), bytes: bytes.length, data_class: p.data_class, path: p.path };
  }

  private printId(bytes: Uint8Array): string {
    return `dp_${createHmac("sha256", this.printKey).update(bytes).digest("hex").slice(0, 32)}`;
  }

  /** Records a print for an identified caller; null (nothing stored) without an identity. */
  async record(
    identity: Identity | null,
    bytes: Uint8Array,
    fp: { data_class: string; path: string },
    compressed: number,
    label: string,
    level: string,
  ): Promise<PrintOut | null> {
    if (!identity) return null;
    const row: PrintRow = {
      id: `prt_${randomBytes(12).toString("base64url")}`,
      identity_id: identity.id,
      dataset_print_id: this.printId(bytes),
      bytes: bytes.length,
      compressed_bytes: compressed,
      data_class: fp.data_class,
      path: fp.path,
      label,
      level,
      at: nowIso(),
    };
    await engineStore.insertPrint(this.db, row);
    return printOut(row);
  }

  async list(identity: Identity | null, page: { limit: number; offset: number }) {
    if (!identity) {
      throw new Problem(
        401,
        "identity_required",
        "Listing prints needs your identity token (Authorization: Bearer <token> or X-Identity-Token); get one at POST /api/join-work.",
        {},
        { "WWW-Authenticate": "Bearer" },
      );
    }
    const { total, items } = await engineStore.printsOf(this.db, identity.id, page);
    const next = page.offset + items.length;
    return {
      identity_id: identity.id,
      total,
      limit: page.limit,
      offset: page.offset,
      next_offset: next < total ? next : null,
      prints: items.map(printOut),
    };
  }
}

function printOut(row: PrintRow): PrintOut {
  const bytes = Number(row.bytes);
  return {
    dataset_print_id: row.dataset_print_id,
    bytes,
    data_class: row.data_class,
    path: row.path,
    ratio: ratioOf(bytes, Number(row.compressed_bytes)),
    label: row.label,
    level: row.level,
    at: row.at,
  };
}

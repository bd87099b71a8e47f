import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import type { Database } from "../../db/schema.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import type { X402Service } from "../../payments/x402/service.js";
import { seasonOf } from "../season.js";
import type { EntryRow } from "../tables.js";
import type { EntryWithOrder } from "./store.js";

export const ENTRY_SKU = "gao-entry";

export interface EntryDeps {
  config: Config;
  catalog: Catalog;
  orders: OrderService;
  x402: X402Service;
}

/** What every part of intents and entries shares: the database, the services and the clock. */
export interface EntryContext {
  readonly db: Kysely<Database>;
  readonly deps: EntryDeps;
  /** the service's clock (read at each call, through `OlympiadEntry`) */
  now(): Date;
}

/** The current season (at the service's clock). */
export function currentSeason(ctx: EntryContext) {
  return seasonOf(ctx.deps.config, ctx.now());
}

export function entryProduct(ctx: EntryContext): Product {
  return ctx.deps.catalog.resolve(ENTRY_SKU);
}

/** What an entry purchase pays for (the 402's challenges of both dialects are built from it). */
export function entryItemOf(ctx: EntryContext): PricedItem {
  return productItem(entryProduct(ctx), ctx.deps.x402.answers.resourceUrl());
}

export interface EntryView {
  entry_id: string;
  order_id: string;
  proof: EntryRow["proof"];
  entered_at: string;
}

export function entryView(e: EntryRow): EntryView {
  return { entry_id: e.id, order_id: e.order_id, proof: e.proof, entered_at: e.created_at };
}

export function stripStatus(e: EntryWithOrder): EntryRow {
  const { order_status: _s, ...row } = e;
  return row;
}

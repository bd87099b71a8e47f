import type { Kysely } from "kysely";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import type { Database } from "../../db/schema.js";
import { Problem } from "../../http/problem.js";
import type { OrderService } from "../../orders/service.js";
import { evmPublicClient } from "../x402/evm.js";
import { claimStore } from "./store.js";
import type { ClaimRow } from "./tables.js";

/** What every part of the manual rails (submission, chain check, decisions, views) works with. */
export interface ClaimContext {
  db: Kysely<Database>;
  orders: OrderService;
  catalog: Catalog;
  config: Config;
}

/** One claim by id, or 404 `claim_not_found`. */
export async function getClaim(ctx: ClaimContext, id: string): Promise<ClaimRow> {
  const row = await claimStore.byId(ctx.db, id);
  if (!row) throw new Problem(404, "claim_not_found", `No claim ${id}.`);
  return row;
}

/** A client of the Base RPC (10 s timeout), or undefined when BASE_RPC_URL is not set. */
export function baseClient(config: Config) {
  const rpc = config.x402.baseRpcUrl;
  return rpc ? evmPublicClient(config.x402.baseChainId, rpc, 10_000) : undefined;
}

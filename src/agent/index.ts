import type { ProductPurchaseBody } from "../payments/x402/answers.js";
import { Budget, type BudgetLimits } from "./budget.js";
import { type PaidAnswer, type PayContext, paidPost } from "./client.js";
import { type Recovered, recoverOrders } from "./recovery.js";
import { runSuite, type SuiteOptions, type SuiteResult } from "./suite.js";
import { type Chain, loadWallets, type WalletOptions } from "./wallets.js";

/**
 * The paying agent as a library (docs/agent-client.md):
 *
 *   const agent = await createAgent({ baseUrl, evmKey, budget: { perPaymentUnits: parseUsd("2") } });
 *   const { body } = await agent.buy("gao");   // order_id, access_url, transaction
 *   await agent.suite("data.bin", { op: "compress" });
 *   await agent.recover("base");
 *
 * One agent is one budget session: its session limit counts every payment it signs.
 */

export { Budget, BudgetError, parseUsd, usd } from "./budget.js";
export { AgentError } from "./client.js";
export type { Recovered, RecoveredOrder } from "./recovery.js";
export type { SuiteOptions, SuiteResult } from "./suite.js";
export type { Chain } from "./wallets.js";
export { WalletKeyError } from "./wallets.js";

export interface AgentOptions extends WalletOptions {
  /** the service, e.g. https://lab.example.com (default http://127.0.0.1:8080) */
  baseUrl?: string;
  budget?: BudgetLimits | Budget;
  /** pay on this chain only */
  network?: Chain;
  /** one line per step (default: silent) */
  log?: (line: string) => void;
  fetch?: typeof globalThis.fetch;
  sleep?: (ms: number) => Promise<void>;
  timeoutMs?: number;
  maxAttempts?: number;
}

/** What a paid product answers (the service's own type: one definition). */
export type ProductOrder = ProductPurchaseBody;

export interface Agent {
  readonly baseUrl: string;
  readonly budget: Budget;
  /** addresses of the loaded wallets */
  readonly wallets: { chain: Chain; address: string }[];
  buy(sku: string, extra?: { email?: string; note?: string }): Promise<PaidAnswer<ProductOrder>>;
  suite(file: string, opts?: SuiteOptions): Promise<SuiteResult>;
  recover(chain?: Chain): Promise<Recovered[]>;
}

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

export async function createAgent(opts: AgentOptions = {}): Promise<Agent> {
  const baseUrl = (opts.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  if (!/^https?:\/\//.test(baseUrl)) throw new RangeError(`baseUrl must be an http(s) URL: ${baseUrl}`);
  const wallets = await loadWallets(opts);
  const budget = opts.budget instanceof Budget ? opts.budget : new Budget(opts.budget);
  const ctx: PayContext = {
    budget,
    wallets,
    ...(opts.network ? { network: opts.network } : {}),
    log: opts.log ?? (() => {}),
    fetch: opts.fetch ?? globalThis.fetch,
    sleep: opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    timeoutMs: opts.timeoutMs ?? 60_000,
    maxAttempts: opts.maxAttempts ?? 12,
  };
  return {
    baseUrl,
    budget,
    wallets: wallets.map((w) => ({ chain: w.chain, address: w.address })),
    buy: async (sku, extra = {}) => {
      const r = await paidPost<ProductOrder>(ctx, `${baseUrl}/api/x402-products`, { sku, ...extra }, `buy ${sku}`);
      ctx.log(`order: ${r.body.order_id} (${r.body.sku}, ${r.body.amount_usd} USD via ${r.body.rail})`);
      ctx.log(`access: ${r.body.access_url}`);
      return r;
    },
    suite: (file, o) => runSuite(ctx, baseUrl, file, o),
    recover: (chain) => recoverOrders(ctx, baseUrl, chain),
  };
}

import { DEFAULT_MAX_AMOUNT_PER_PAYMENT } from "@x402/core/client";
import { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { CLIENT_COMPAT, centsToAtomic, MAX_TIMEOUT_SECONDS, USDC_DECIMALS, X402_HEADERS, x402Rails } from "./rails.js";
import { feePayerAddress, railExtra } from "./requirements.js";

/**
 * x402 facts for discovery documents (llms.txt, agents.json, /.well-known/x402, OpenAPI).
 * Pure and synchronous: derived from config + catalog, so every document says the same thing
 * as the 402 challenge itself.
 */

export const PAID_OPERATIONS = [
  {
    method: "POST",
    path: "/api/x402-products",
    summary: "Buy one SKU: 402 challenge, then retry with the payment proof → 200 { order_id, access_url }.",
    body: "{ sku, email?, note? } (note `agent:<id>` records the buying agent)",
    pricing: "fixed per SKU (catalog price in cents × 10,000 atomic USDC units)",
  },
  {
    method: "POST",
    path: "/api/x402-suite",
    summary:
      "Start a metered compression suite job: 402 metered quote, then retry with the payment proof → 200 { job_id }.",
    body: "{ product, dataClass, op, bytes, email? }",
    pricing: "metered per GB after the free cap (quoted in the 402)",
  },
] as const;

export const ATOMIC_UNITS_NOTE =
  'Amounts (`amount` in the 402 body and in PAYMENT-REQUIRED; the v1 body repeats it as `maxAmountRequired`) are USDC atomic units as decimal strings: USDC has 6 decimals on Base and Solana, so 1 cent = 10,000 units and 1.00 USD = "1000000". Never floats.';

/** The default per-payment cap of stock x402 v2 clients, read from @x402/core (e.g. "$1"). */
export const STOCK_CLIENT_CAP = String(DEFAULT_MAX_AMOUNT_PER_PAYMENT);

export const CLIENT_CAP_NOTE = `Stock x402 v2 clients (@x402/core x402Client, @x402/fetch) refuse to pay more than ${STOCK_CLIENT_CAP} per payment by default; an agent's operator must raise the cap (setSpendControls({ maxAmountPerPayment })) to buy SKUs priced above it.`;

export const PROOF_KINDS = {
  base: [
    "x402 exact: EIP-3009 transferWithAuthorization signature (v2 payload in PAYMENT-SIGNATURE or X-PAYMENT; v1 payload with network `base` in X-PAYMENT); we settle it on chain",
    'transaction hash: a confirmed plain USDC transfer of exactly the price to payTo, sent by the paying wallet itself, with that wallet\'s signature over the statement the 402 shows in `sign` (X-PAYMENT: {x402Version:2, accepted:{scheme:"exact", network}, payload:{transaction, signature}}); a bare hash proves nothing and gets 402 with what to sign',
  ],
  solana: [
    "x402 exact: base64 v0 transaction with ComputeBudget (at most the configured compute-unit limit and price) + SPL TransferChecked of exactly the price to payTo's USDC associated token account + Memo, partially signed (fee payer = extra.feePayer) or fully signed by the payer but never sent: a transaction already on chain is refused",
  ],
} as const;

export interface X402DiscoveryRail {
  id: string;
  chain: "solana" | "base";
  network: string;
  caip2: string;
  asset: string;
  payTo: string | null;
  decimals: number;
  /** Can verify and settle with the current settings (src/payments/readiness.ts). */
  configured: boolean;
  /** Settings still needed (empty when configured). */
  missing: string[];
  scheme: "exact";
  extra: Record<string, string>;
  proofs: readonly string[];
  note: string;
}

export interface X402Discovery {
  protocol: "x402";
  versions: number[];
  configured: boolean;
  headers: typeof X402_HEADERS & { note: string };
  rails: X402DiscoveryRail[];
  maxTimeoutSeconds: number;
  decimals: number;
  atomic_units: string;
  client_cap: string;
  client_compat: string;
  paid_operations: (typeof PAID_OPERATIONS)[number][];
  /** Per-SKU amount every configured rail asks for. */
  prices: { sku: string; amount_cents: number; amount_usd: string; max_amount_required: string }[];
  flow: string[];
}

/**
 * `served` (optional) filters the paid operations to those this instance routes, e.g.
 * `(m, p) => app.hasRoute({ method: m, url: p })`, so no document advertises a missing route.
 */
export function x402Discovery(
  config: Config,
  catalog: Catalog = new Catalog(),
  served?: (method: string, path: string) => boolean,
): X402Discovery {
  const feePayer = feePayerAddress(config.x402.svmFeePayerKey);
  const rails = x402Rails(config).map((rail) => ({
    id: rail.id,
    chain: rail.chain,
    network: rail.network,
    caip2: rail.caip2,
    asset: rail.asset,
    payTo: rail.payTo ?? null,
    decimals: rail.decimals,
    configured: rail.configured,
    missing: [...rail.missing],
    scheme: "exact" as const,
    extra: railExtra(rail, feePayer),
    proofs: PROOF_KINDS[rail.chain],
    note:
      rail.chain === "base"
        ? `USDC on Base (chain id ${config.x402.baseChainId}); EIP-712 domain name "USD Coin", version "2".`
        : feePayer
          ? `USDC on Solana mainnet; our fee payer ${feePayer} pays the network fee (extra.feePayer).`
          : "USDC on Solana mainnet; no fee payer is offered, so send a transaction fully signed by the payer (who pays the fee).",
  }));
  return {
    protocol: "x402",
    versions: [1, 2],
    configured: rails.some((r) => r.configured),
    headers: {
      ...X402_HEADERS,
      note: "Send the proof in PAYMENT-SIGNATURE (x402 v2) or X-PAYMENT (v1, or a v2 payload). The 402 carries the v1-style JSON body and the v2 PAYMENT-REQUIRED header; success carries PAYMENT-RESPONSE and X-PAYMENT-RESPONSE.",
    },
    rails,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    decimals: USDC_DECIMALS,
    atomic_units: ATOMIC_UNITS_NOTE,
    client_cap: CLIENT_CAP_NOTE,
    client_compat: CLIENT_COMPAT,
    paid_operations: served ? PAID_OPERATIONS.filter((op) => served(op.method, op.path)) : [...PAID_OPERATIONS],
    prices: catalog.list().map((p) => ({
      sku: p.sku,
      amount_cents: p.amountCents,
      amount_usd: p.amountUsd,
      max_amount_required: centsToAtomic(p.amountCents),
    })),
    flow: [
      "POST /api/x402-products { sku } without a payment header → 402 with accepts[] (one entry per configured rail) and PAYMENT-REQUIRED.",
      "Pick one entry and pay exactly amount of its asset to its payTo (x402 exact).",
      "Repeat the same request with the proof in PAYMENT-SIGNATURE or X-PAYMENT → 200 { order_id, access_url, … } once settled on chain; 202 + Retry-After while settlement is pending (retry the SAME proof, do not pay again).",
      "Send a payment identifier with the proof (the payment-identifier extension advertised in PAYMENT-REQUIRED, or an Idempotency-Key header) and keep it: a retry with the same one gets the order; without it a settled proof gets 409 and no order data, because everything in a settled proof is public on chain.",
      "Lost the answer? POST /api/orders/recover/challenge { chain, address }, sign the returned message with the paying wallet, POST /api/orders/recover { nonce, signature } → that wallet's orders.",
      "Open access_url (JSON for agents, HTML for browsers).",
    ],
  };
}

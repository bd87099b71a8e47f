import type { Config } from "../../config.js";
import { BITCOIN_MAINNET, baseCaip2, SOLANA_MAINNET } from "../networks.js";
import { railReadiness } from "../readiness.js";

export type ManualRailId = "crypto_manual_solana" | "crypto_manual_evm" | "crypto_manual_btc" | "wire_invoice_ach";

/** Rails a claim can be filed for (`POST /api/claims`). BTC is listed but only claimable when PAY_TO_BTC is set. */
export const CLAIM_RAILS = [
  "crypto_manual_solana",
  "crypto_manual_evm",
  "crypto_manual_btc",
  "wire_invoice_ach",
] as const;

export const WIRE_TERMS = "net-15";

/** One manual rail as the payments matrix shows it (pure function of the configuration). */
export interface ManualRail {
  id: ManualRailId;
  name: string;
  audience: ("humans" | "agents" | "enterprise")[];
  /**
   * Can take a claim that an operator can approve: pay-to address (crypto), CONTACT_EMAIL and
   * ADMIN_TOKEN (src/payments/readiness.ts).
   */
  configured: boolean;
  /** Settings still needed (empty when configured). */
  missing: string[];
  /** One sentence: what the payer does. */
  how: string;
  /** The endpoint that records a claim for this rail. */
  claim_endpoint: "POST /api/claims";
  /** mailto link to CONTACT_EMAIL (the claim id goes in the subject once a claim exists); null when unset. */
  claim: string | null;
  /** Where to send funds (crypto rails); null when unset or not applicable. */
  pay_to: string | null;
  network: string | null;
  asset_hint: string | null;
  terms: string | null;
}

function mailto(config: Config, subject: string): string | null {
  return config.contactEmail ? `mailto:${config.contactEmail}?subject=${encodeURIComponent(subject)}` : null;
}

/** The manual rails: crypto transfers claimed by transaction reference, and the wire/ACH invoice. */
export function manualRails(config: Config): ManualRail[] {
  const ready = railReadiness(config);
  return [
    {
      id: "crypto_manual_solana",
      name: "Manual crypto transfer on Solana (USDC or SOL)",
      audience: ["humans", "agents"],
      configured: ready.crypto_manual_solana.configured,
      missing: ready.crypto_manual_solana.missing,
      how: "Send the exact USD-equivalent in USDC or SOL to pay_to, then claim with POST /api/claims { sku, email, rail: 'crypto_manual_solana', tx: <signature> } (or e-mail the signature and sku); an operator approves and you receive the access URL.",
      claim_endpoint: "POST /api/claims",
      claim: mailto(config, "Solana claim"),
      pay_to: config.payTo.solana ?? null,
      network: SOLANA_MAINNET,
      asset_hint: `USDC (mint ${config.usdc.solana}) or SOL at the USD-equivalent`,
      terms: null,
    },
    {
      id: "crypto_manual_evm",
      name: "Manual crypto transfer on Base or another EVM chain (USDC or ETH)",
      audience: ["humans", "agents"],
      configured: ready.crypto_manual_evm.configured,
      missing: ready.crypto_manual_evm.missing,
      how: "Send the exact USD-equivalent in USDC or ETH to pay_to, then claim with POST /api/claims { sku, email, rail: 'crypto_manual_evm', tx: <0x transaction hash> } (or e-mail the hash and sku); an operator approves and you receive the access URL.",
      claim_endpoint: "POST /api/claims",
      claim: mailto(config, "EVM claim"),
      pay_to: config.payTo.base ?? null,
      network: baseCaip2(config.x402.baseChainId),
      asset_hint: `USDC (${config.usdc.base} on Base) or ETH at the USD-equivalent`,
      terms: null,
    },
    {
      id: "crypto_manual_btc",
      name: "Manual Bitcoin transfer",
      audience: ["humans"],
      configured: ready.crypto_manual_btc.configured,
      missing: ready.crypto_manual_btc.missing,
      how: "Send the exact USD-equivalent in BTC to pay_to, then claim with POST /api/claims { sku, email, rail: 'crypto_manual_btc', tx: <txid> }.",
      claim_endpoint: "POST /api/claims",
      claim: mailto(config, "BTC claim"),
      pay_to: config.payTo.btc ?? null,
      network: BITCOIN_MAINNET,
      asset_hint: "BTC at the USD-equivalent",
      terms: null,
    },
    {
      id: "wire_invoice_ach",
      name: "Wire / ACH invoice",
      audience: ["humans", "enterprise"],
      configured: ready.wire_invoice_ach.configured,
      missing: ready.wire_invoice_ach.missing,
      how: "Request an invoice with POST /api/claims { sku, email, rail: 'wire_invoice_ach', company, billing_address, currency } (or e-mail the same details); approved accounts are invoiced on net-15 terms and receive the access URL on approval.",
      claim_endpoint: "POST /api/claims",
      claim: mailto(config, "Invoice request"),
      pay_to: null,
      network: null,
      asset_hint: null,
      terms: WIRE_TERMS,
    },
  ];
}

import type { Config } from "../../config.js";
import { baseCaip2, networkNames, SOLANA_MAINNET } from "../networks.js";
import { railReadiness } from "../readiness.js";

/** USDC has 6 decimals on both rails: 1 cent = 10,000 atomic units. */
export const USDC_DECIMALS = 6;
export const UNITS_PER_CENT = 10_000n;

export function centsToAtomic(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`not integer cents: ${cents}`);
  return (BigInt(cents) * UNITS_PER_CENT).toString();
}

export const SOLANA_MAINNET_CAIP2 = SOLANA_MAINNET;

export type X402RailId = "x402_solana_usdc" | "x402_base_usdc";

/** One x402 rail as the catalog and the payments matrix describe it (spec: "Payment requirement"). */
export interface X402Rail {
  id: X402RailId;
  chain: "solana" | "base";
  /** CAIP-2 id shown in every body and document (src/payments/networks.ts); v1 bodies use `v1Name(network)`. */
  network: string;
  /** The same CAIP-2 id (kept as its own field: older clients read it). */
  caip2: string;
  asset: string;
  payTo: string | undefined;
  decimals: number;
  /** Can verify and settle with the current settings (src/payments/readiness.ts), not just "payTo is set". */
  configured: boolean;
  /** Settings still needed before this rail can settle (empty when configured). */
  missing: string[];
}

/**
 * The two agent rails, Solana first (the spec's `payment` is the first requirement).
 * `configured` / `missing` come from `railReadiness` (the one place that decides).
 */
export function x402Rails(config: Config): X402Rail[] {
  const ready = railReadiness(config);
  return [
    {
      id: "x402_solana_usdc",
      chain: "solana",
      network: SOLANA_MAINNET,
      caip2: SOLANA_MAINNET,
      asset: config.usdc.solana,
      payTo: config.payTo.solana,
      decimals: USDC_DECIMALS,
      configured: ready.x402_solana_usdc.configured,
      missing: ready.x402_solana_usdc.missing,
    },
    {
      id: "x402_base_usdc",
      chain: "base",
      network: baseCaip2(config.x402.baseChainId),
      caip2: baseCaip2(config.x402.baseChainId),
      asset: config.usdc.base,
      payTo: config.payTo.base,
      decimals: USDC_DECIMALS,
      configured: ready.x402_base_usdc.configured,
      missing: ready.x402_base_usdc.missing,
    },
  ];
}

/** The spec's payment-requirement record for one rail. */
export function requirementRecord(rail: X402Rail) {
  return {
    scheme: "exact" as const,
    network: rail.network,
    asset: rail.asset,
    payTo: rail.payTo ?? null,
    decimals: rail.decimals,
    chain: rail.chain,
    configured: rail.configured,
    missing: [...rail.missing],
  };
}

export const CLIENT_COMPAT =
  "x402 scheme exact. Solana: a serialized SPL TransferChecked transaction (partially signed for our fee payer, or fully signed). Base: an EIP-3009 transferWithAuthorization signature (x402 exact), or the hash of a confirmed USDC transfer to payTo. Send it in PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1/v2). Amounts are atomic units (6 decimals). Stock x402 v2 clients cap a payment at $1 unless their operator raises the cap.";

/** EIP-712 domain of USDC on Base mainnet (`name()`/`version()`; Base Sepolia says "USDC", which never verifies on mainnet). */
export const BASE_USDC_EIP712 = { name: "USD Coin", version: "2" } as const;

/** CAIP-2 ids, v1 names and older names that identify each rail inbound (src/payments/networks.ts). */
export const SOLANA_NETWORK_NAMES: readonly string[] = networkNames(SOLANA_MAINNET);
export function baseNetworkNames(chainId: number): string[] {
  return networkNames(baseCaip2(chainId));
}

/** How long a client's authorization may live (seconds), advertised as maxTimeoutSeconds. */
export const MAX_TIMEOUT_SECONDS = 300;

/** Header names of the x402 HTTP transport (both versions). */
export const X402_HEADERS = {
  paymentV2: "PAYMENT-SIGNATURE",
  paymentV1: "X-PAYMENT",
  required: "PAYMENT-REQUIRED",
  responseV2: "PAYMENT-RESPONSE",
  responseV1: "X-PAYMENT-RESPONSE",
} as const;

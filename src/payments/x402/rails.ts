import type { Config } from "../../config.js";

/** USDC has 6 decimals on both rails: 1 cent = 10,000 atomic units. */
export const USDC_DECIMALS = 6;
export const UNITS_PER_CENT = 10_000n;

export function centsToAtomic(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`not integer cents: ${cents}`);
  return (BigInt(cents) * UNITS_PER_CENT).toString();
}

export const SOLANA_MAINNET_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

export type X402RailId = "x402_solana_usdc" | "x402_base_usdc";

/** One x402 rail as the catalog and the payments matrix describe it (spec: "Payment requirement"). */
export interface X402Rail {
  id: X402RailId;
  chain: "solana" | "base";
  /** Spec network name shown in bodies: `solana-mainnet-beta` or `eip155:8453`. */
  network: string;
  /** CAIP-2 id used in the v2 PAYMENT-REQUIRED header. */
  caip2: string;
  asset: string;
  payTo: string | undefined;
  decimals: number;
  configured: boolean;
}

/** The two agent rails, Solana first (the spec's `payment` is the first requirement). */
export function x402Rails(config: Config): X402Rail[] {
  return [
    {
      id: "x402_solana_usdc",
      chain: "solana",
      network: "solana-mainnet-beta",
      caip2: SOLANA_MAINNET_CAIP2,
      asset: config.usdc.solana,
      payTo: config.payTo.solana,
      decimals: USDC_DECIMALS,
      configured: config.payTo.solana !== undefined,
    },
    {
      id: "x402_base_usdc",
      chain: "base",
      network: `eip155:${config.x402.baseChainId}`,
      caip2: `eip155:${config.x402.baseChainId}`,
      asset: config.usdc.base,
      payTo: config.payTo.base,
      decimals: USDC_DECIMALS,
      configured: config.payTo.base !== undefined,
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
  };
}

export const CLIENT_COMPAT =
  "x402 scheme exact. Solana: a serialized SPL TransferChecked transaction (partially signed for our fee payer, or fully signed). Base: an EIP-3009 transferWithAuthorization signature (x402 exact), or the hash of a confirmed USDC transfer to payTo. Send it in PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1/v2). Amounts are atomic units (6 decimals). Stock x402 v2 clients cap a payment at $1 unless their operator raises the cap.";

import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import type { Config } from "../../config.js";
import { v1Name } from "../networks.js";
import { BASE_USDC_EIP712, MAX_TIMEOUT_SECONDS, type X402Rail, x402Rails } from "./rails.js";

/**
 * Payment requirements (one per configured rail) for a product, in the two shapes
 * x402 uses: the spec/v1 `accepts[]` entry of the 402 body and the v2 requirements
 * carried base64 in PAYMENT-REQUIRED. Pure: derived from config + catalog only.
 */

export const NO_FEE_PAYER_NOTE =
  "No fee payer is offered here: send a transaction fully signed by the payer (the payer pays the network fee).";

/** The spec / v1 `accepts[]` entry. */
export interface AcceptEntry {
  scheme: "exact";
  /** The x402 v1 name (`base`, `solana`, …: this body says `x402Version: 1`); src/payments/networks.ts. */
  network: string;
  maxAmountRequired: string;
  amount: string;
  asset: string;
  payTo: string;
  resource: string;
  description: string;
  mimeType: string;
  maxTimeoutSeconds: number;
  extra: Record<string, string>;
  decimals: number;
  chain: "solana" | "base";
  outputSchema?: Record<string, unknown>;
}

/** The v2 PaymentRequirements (no extra keys beyond the x402 schema). */
export interface V2Requirements {
  scheme: "exact";
  network: `${string}:${string}`;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: Record<string, string>;
}

/** The Solana fee payer's address derived from X402_SVM_FEE_PAYER_KEY (64-byte secret: seed ‖ public key). */
export function feePayerAddress(secretBase58: string | undefined): string | undefined {
  if (!secretBase58) return undefined;
  const bytes = getBase58Encoder().encode(secretBase58);
  if (bytes.length !== 64) return undefined;
  return getBase58Decoder().decode(bytes.slice(32));
}

/** `extra` of a rail's requirement. `feePayer` may come from a hosted facilitator's /supported. */
export function railExtra(rail: X402Rail, feePayer: string | undefined): Record<string, string> {
  if (rail.chain === "base") return { ...BASE_USDC_EIP712 };
  return feePayer ? { feePayer } : {};
}

export interface RequirementContext {
  config: Config;
  /** Solana fee payer (in-process key or the hosted facilitator's). */
  feePayer: string | undefined;
  resource: string;
}

/**
 * The rails that can settle with the current settings (`configured`, decided in
 * src/payments/readiness.ts: Base = payTo + BASE_RPC_URL + facilitator key or URL; Solana = payTo +
 * SOLANA_RPC_URL + fee payer). A half-configured rail is left out of `accepts[]`.
 */
export function configuredRails(config: Config): (X402Rail & { payTo: string })[] {
  return x402Rails(config).filter((r): r is X402Rail & { payTo: string } => r.configured && r.payTo !== undefined);
}

export function acceptEntry(
  rail: X402Rail & { payTo: string },
  item: { amountUnits: string; description: string; resource: string },
  ctx: Omit<RequirementContext, "resource">,
): AcceptEntry {
  const amount = item.amountUnits;
  return {
    scheme: "exact",
    network: v1Name(rail.network),
    maxAmountRequired: amount,
    amount,
    asset: rail.asset,
    payTo: rail.payTo,
    resource: item.resource,
    description: `${item.description}${rail.chain === "solana" && !ctx.feePayer ? ` ${NO_FEE_PAYER_NOTE}` : ""}`,
    mimeType: "application/json",
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: railExtra(rail, ctx.feePayer),
    decimals: rail.decimals,
    chain: rail.chain,
  };
}

export function v2Requirements(
  rail: X402Rail & { payTo: string },
  amount: string,
  feePayer: string | undefined,
): V2Requirements {
  return {
    scheme: "exact",
    network: rail.caip2 as `${string}:${string}`,
    amount,
    asset: rail.asset,
    payTo: rail.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: railExtra(rail, feePayer),
  };
}

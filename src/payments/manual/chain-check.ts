import { checkTransferTx, evmPublicClient } from "../x402/evm.js";
import { centsToAtomic } from "../x402/rails.js";
import type { ClaimContext } from "./context.js";
import type { ClaimRow } from "./tables.js";

/** Advisory on-chain check of a claim's transaction (USDC to our address on Base). */
export interface ChainCheck {
  claim_id: string;
  /** ok: an exact USDC transfer to pay_to; pending: not (enough) confirmed; failed: see reason; unavailable: cannot check. */
  status: "ok" | "pending" | "failed" | "unavailable";
  reason: string | null;
  detail: string;
  network: string | null;
  expected_amount: string | null;
  asset: string | null;
  pay_to: string | null;
}

/** Manual transfers may be claimed days later: the age limit of an on-chain check. */
export const CLAIM_TX_MAX_AGE_SECONDS = 60 * 24 * 3600;

/**
 * Checks a claim's transaction on chain, for the operator before approving. Only USDC on Base
 * can be checked automatically (it reuses the x402 transaction-hash verification); an ETH payment
 * or another chain answers `failed`/`unavailable` and needs a manual look. Never throws for the
 * chain's answer or an unreachable RPC: those are statuses.
 */
export async function checkClaimOnChain(ctx: ClaimContext, claim: ClaimRow): Promise<ChainCheck> {
  const { config } = ctx;
  const id = claim.id;
  const payTo = config.payTo.base ?? null;
  const base = {
    claim_id: id,
    network: null as string | null,
    expected_amount: null as string | null,
    asset: null as string | null,
    pay_to: null as string | null,
  };
  if (claim.rail !== "crypto_manual_evm" || !claim.tx_ref) {
    return {
      ...base,
      status: "unavailable",
      reason: "not_checkable",
      detail: `Claims on ${claim.rail} are checked by hand.`,
    };
  }
  const rpc = config.x402.baseRpcUrl;
  if (!rpc || !payTo) {
    return {
      ...base,
      status: "unavailable",
      reason: "base_rpc_not_configured",
      detail: "BASE_RPC_URL and PAY_TO_BASE are needed to check Base transactions.",
    };
  }
  const chainId = config.x402.baseChainId;
  const q = {
    network: `eip155:${chainId}`,
    expected_amount: centsToAtomic(claim.amount_cents),
    asset: config.usdc.base,
    pay_to: payTo,
  };
  try {
    const check = await checkTransferTx(evmPublicClient(chainId, rpc, 10_000), {
      hash: claim.tx_ref as `0x${string}`,
      asset: q.asset,
      payTo,
      amount: q.expected_amount,
      minConfirmations: config.x402.minConfirmations,
      maxAgeSeconds: CLAIM_TX_MAX_AGE_SECONDS,
    });
    if (check.status === "ok") {
      return {
        claim_id: id,
        ...q,
        status: "ok",
        reason: null,
        detail: `Exact USDC transfer from ${check.from} to ${payTo} in block ${check.blockNumber}.`,
      };
    }
    if (check.status === "pending")
      return { claim_id: id, ...q, status: "pending", reason: null, detail: check.detail };
    return {
      claim_id: id,
      ...q,
      status: "failed",
      reason: check.reason,
      detail: `${check.detail} (A payment in ETH or on another chain cannot be checked here.)`,
    };
  } catch (err) {
    return {
      claim_id: id,
      ...q,
      status: "unavailable",
      reason: "rpc_error",
      detail: `The Base RPC could not be read: ${(err as Error).message.split("\n")[0]}`,
    };
  }
}

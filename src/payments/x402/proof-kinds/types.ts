import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import type { Kysely } from "kysely";
import type { Config } from "../../../config.js";
import type { Database } from "../../../db/schema.js";
import { unavailable } from "../../../http/problem.js";
import type { PricedItem } from "../../../orders/priced-item.js";
import type { Pending, X402Answers } from "../answers.js";
import type { ParsedProof } from "../proof.js";
import type { V2Requirements } from "../requirements.js";
import type { Settlement, SettleOutcome } from "../settlement.js";
import type { PaymentProofRow, ProofKind } from "../tables.js";

/**
 * One interface per proof kind (EIP-3009 authorization, Base transaction hash, Solana transaction),
 * chosen from a table (`index.ts`) as the codec picks a chamber: how a kind finds its ledger row
 * from the header alone, checks a proof locally and against the chain before anything is reserved,
 * settles it, and reads back what became of it for reconciliation. The exactly-once ledger, the
 * payer binding and the grant are the same for every kind (`../service.ts`).
 */

export interface KindEnv {
  db: Kysely<Database>;
  config: Config;
  settlement: Settlement;
  answers: X402Answers;
}

export interface PrepareCtx {
  item: PricedItem;
  requirements: V2Requirements;
}

export type Prepared =
  | { proofKey: string; payer: string | null; payload: unknown; expectedTx: string | null }
  | { pending: Pending }
  | { existing: PaymentProofRow };

export interface ProofKindHandler<P extends ParsedProof = ParsedProof> {
  readonly kind: ProofKind;
  /** The ledger row of this proof, found from the header alone (no chain access). */
  seen(proof: P, env: KindEnv): Promise<PaymentProofRow | undefined>;
  /** Local checks first (a proof that can never succeed gets a 4xx), then availability, then chain reads. */
  prepare(proof: P, ctx: PrepareCtx, env: KindEnv): Promise<Prepared>;
  /** Settles a reserved proof; every outcome classified, nothing thrown for a chain answer. */
  settle(row: PaymentProofRow, env: KindEnv): Promise<SettleOutcome>;
  /** What the chain says became of a proof (reconciliation); undefined when the chain cannot tell yet. */
  onChain(row: PaymentProofRow, env: KindEnv): Promise<SettleOutcome | undefined>;
  /** Whether a reconciler may settle again when the chain cannot tell (same payload; idempotent on chain). */
  mayResettle(env: KindEnv): boolean;
  /** A settlement reported failed is re-read on chain (EIP-3009: the nonce may have been used anyway). */
  readonly recheckFailures: boolean;
}

/** 503 when the settings or the upstream needed to settle this kind are missing (after the local checks). */
export function need(settlement: Settlement, kind: Parameters<Settlement["unavailable"]>[0]): void {
  const why = settlement.unavailable(kind);
  if (why) {
    throw unavailable(
      "settlement_unavailable",
      `Payments on this rail cannot be settled right now: ${why}. Nothing was charged; retry later.`,
      { retry_after: 30 },
    );
  }
}

/** verify + settle a stored x402 payload through the facilitator (in-process or hosted). */
export function settleStoredPayload(row: PaymentProofRow, env: KindEnv): Promise<SettleOutcome> {
  const payload = JSON.parse(row.payload) as Record<string, unknown>;
  const requirements = JSON.parse(row.requirements) as PaymentRequirements;
  const p: PaymentPayload = {
    x402Version: 2,
    accepted: payload.accepted as PaymentRequirements,
    payload: payload.payload as Record<string, unknown>,
  };
  return env.settlement.settleViaFacilitator(p, requirements);
}

/** A success outcome for a transaction we know landed. */
export function landed(row: PaymentProofRow, transaction: string, payer: string): SettleOutcome {
  return {
    status: "success",
    transaction,
    payer,
    response: { success: true, transaction, network: row.network as never, payer },
  };
}

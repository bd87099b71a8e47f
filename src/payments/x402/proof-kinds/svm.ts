import { conflict, unavailable } from "../../../http/problem.js";
import type { ParsedProof } from "../proof.js";
import { SOLANA_MAINNET_CAIP2 } from "../rails.js";
import type { SettleOutcome } from "../settlement.js";
import { proofStore } from "../store.js";
import {
  broadcastAndConfirm,
  checkSvmTransaction,
  confirmSignature,
  expectedSignature,
  signatureStatus,
  svmMessageHash,
} from "../svm.js";
import { landed, need, type ProofKindHandler, settleStoredPayload } from "./types.js";

type SvmProof = Extract<ParsedProof, { kind: "svm_tx" }>;

const keyOf = (messageHash: string) => `svm:${SOLANA_MAINNET_CAIP2.slice(7)}:${messageHash}`;

/**
 * Solana x402 `exact`: a TransferChecked transaction, partially signed for our fee payer (the
 * facilitator co-signs and sends) or fully signed by the payer (we send it). Only transactions we
 * send are proofs: one the cluster already knows is refused.
 */
export const svm: ProofKindHandler<SvmProof> = {
  kind: "svm_tx",
  recheckFailures: false,

  async seen(proof, env) {
    const hash = svmMessageHash(proof.transaction);
    return hash ? proofStore.get(env.db, keyOf(hash)) : undefined;
  },

  async prepare(proof, { item, requirements: req }, env) {
    const checked = await checkSvmTransaction(proof.transaction, req, env.settlement.feePayer(), {
      maxComputeUnits: env.config.x402.svmMaxComputeUnits,
      maxComputeUnitPrice: env.config.x402.svmMaxComputeUnitPrice,
    });
    if ("rejection" in checked) throw env.answers.refusal(item, checked.rejection);
    need(env.settlement, checked.tx.fullySigned ? "svm_full" : "svm_partial");
    const expectedTx = await expectedSignature(checked.tx, env.settlement.svmFeePayer);
    const proofKey = keyOf(checked.tx.messageHash);
    if (checked.tx.fullySigned && expectedTx) {
      // Only transactions we send: a signature the cluster already knows was sent by someone else
      // (read back from the chain, or the payer's own broadcast). Ours in flight has a ledger row.
      const url = env.config.x402.solanaRpcUrl;
      let known: Awaited<ReturnType<typeof signatureStatus>>;
      try {
        known = url ? await signatureStatus(url, expectedTx, env.settlement.rpcTimeoutMs) : null;
      } catch (err) {
        throw unavailable(
          "settlement_unavailable",
          `The Solana RPC could not be read: ${(err as Error).message.split("\n")[0]}. Nothing was charged; retry later.`,
          { retry_after: 30 },
        );
      }
      if (known) {
        const mine = await proofStore.get(env.db, proofKey);
        if (mine) return { existing: mine };
        throw conflict(
          "transaction_already_submitted",
          "This transaction is already known to the Solana network: a proof must be a signed transaction that only this service submits. Sign a new transfer and send it here unsent.",
        );
      }
    }
    return {
      proofKey,
      payer: checked.tx.payer,
      payload: {
        x402Version: 2,
        accepted: req,
        payload: { transaction: proof.transaction },
        fullySigned: checked.tx.fullySigned,
      },
      expectedTx: expectedTx ?? null,
    };
  },

  async settle(row, env): Promise<SettleOutcome> {
    const payload = JSON.parse(row.payload) as { fullySigned?: boolean; payload: { transaction: string } };
    if (payload.fullySigned !== true) return settleStoredPayload(row, env);
    // Fully signed by the payer: we simulate, send and confirm it ourselves.
    const url = env.config.x402.solanaRpcUrl;
    if (!url || !row.expected_tx) return { status: "unavailable", detail: "SOLANA_RPC_URL is not configured" };
    const b = await broadcastAndConfirm(
      url,
      payload.payload.transaction,
      row.expected_tx,
      env.settlement.settleTimeoutMs,
      env.settlement.rpcTimeoutMs,
    ).catch((err: unknown) => ({
      status: "pending" as const,
      signature: row.expected_tx ?? "",
      detail: String((err as Error).message),
    }));
    if (b.status === "success") return landed(row, b.signature, row.payer ?? "");
    if (b.status === "failed") {
      return {
        status: "failed",
        reason: b.reason,
        detail: b.detail,
        ...(b.signature ? { transaction: b.signature } : {}),
      };
    }
    return { status: "pending", transaction: b.signature, detail: b.detail };
  },

  /** The transaction id is known in advance: ask the cluster what became of it. */
  async onChain(row, env) {
    const url = env.config.x402.solanaRpcUrl;
    const sig = row.expected_tx;
    if (!url || !sig) return undefined;
    const st = await signatureStatus(url, sig, env.settlement.rpcTimeoutMs);
    if (!st) return undefined;
    const c = await confirmSignature(url, sig, 1_000, env.settlement.rpcTimeoutMs);
    if (c.status === "success") return landed(row, sig, row.payer ?? "");
    if (c.status === "failed") return { status: "failed", reason: c.reason, detail: c.detail, transaction: sig };
    return { status: "pending", transaction: sig, detail: c.detail };
  },

  mayResettle: () => true,
};

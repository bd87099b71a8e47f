import { conflict, unavailable } from "../../../http/problem.js";
import { checkTransferTx } from "../evm.js";
import type { ParsedProof } from "../proof.js";
import { proofStore } from "../store.js";
import { type TxHashProofSubject, verifyTxHashSignature } from "../tx-hash-proof.js";
import { landed, need, type ProofKindHandler } from "./types.js";

type TxHashProof = Extract<ParsedProof, { kind: "evm_tx" }>;

/**
 * Base transaction hash: a confirmed plain USDC transfer the payer sent itself, redeemable only with
 * the sender's signature over hash, resource and item (a hash alone is public). Nothing to settle.
 */
export const evmHash: ProofKindHandler<TxHashProof> = {
  kind: "evm_tx",
  recheckFailures: false,

  seen(proof, env) {
    return proofStore.byTxHashProof(env.db, proof.txHash);
  },

  async prepare(proof, { item, requirements: req }, env) {
    const chainId = env.config.x402.baseChainId;
    const subject: TxHashProofSubject = { hash: proof.txHash, chainId, resource: item.resource, item: item.ref };
    // A transaction hash is public: only its sender, signing for this purchase, may redeem it.
    if (!proof.signature) throw env.answers.signatureRequired(item, subject);
    // Our own settlements (EIP-3009, Solana), pending or done, are never someone's transfer proof.
    if (await proofStore.ownSettlement(env.db, proof.txHash)) {
      throw conflict(
        "own_settlement_transaction",
        "This transaction is one of this service's own settlements of an x402 payment; it belongs to that payment's buyer and is not a proof of payment.",
      );
    }
    need(env.settlement, "evm_tx");
    const client = env.settlement.evmClient;
    if (!client) throw unavailable("settlement_unavailable", "BASE_RPC_URL is not configured.");
    let check: Awaited<ReturnType<typeof checkTransferTx>>;
    let signed = false;
    try {
      check = await checkTransferTx(client, {
        hash: proof.txHash,
        asset: req.asset,
        payTo: req.payTo,
        amount: req.amount,
        minConfirmations: env.config.x402.minConfirmations,
        maxAgeSeconds: env.config.x402.txMaxAgeSeconds,
        plainTransferOnly: true,
      });
      if (check.status === "ok") signed = await verifyTxHashSignature(client, check.from, subject, proof.signature);
    } catch (err) {
      throw unavailable(
        "settlement_unavailable",
        `The Base RPC could not be read: ${(err as Error).message.split("\n")[0]}`,
      );
    }
    if (check.status === "pending") {
      return { pending: env.answers.pending("transaction_not_confirmed", check.detail, "unconfirmed") };
    }
    if (check.status === "failed") throw env.answers.refusal(item, check);
    if (!signed) {
      throw env.answers.signatureRequired(item, subject, {
        reason: "invalid_transaction_proof_signature",
        detail: `The signature is not by the transfer's sender ${check.from}. The sender signs the statement below (EIP-191 or EIP-712).`,
      });
    }
    return {
      proofKey: `evm:${chainId}:tx:${proof.txHash}:${check.logIndex}`,
      payer: check.from.toLowerCase(),
      payload: { txHash: proof.txHash, logIndex: check.logIndex },
      expectedTx: proof.txHash,
    };
  },

  // The transfer is already on chain and checked: settling is recording it.
  async settle(row) {
    return landed(row, row.expected_tx ?? "", row.payer ?? "");
  },

  async onChain(row) {
    return landed(row, row.expected_tx ?? "", row.payer ?? "");
  },

  mayResettle: () => true,
};

import { authorizationOutcome, balanceOf, checkTransferTx, precheckEip3009 } from "../evm.js";
import type { Eip3009Payload, ParsedProof } from "../proof.js";
import { MAX_TIMEOUT_SECONDS } from "../rails.js";
import type { V2Requirements } from "../requirements.js";
import type { SettleOutcome } from "../settlement.js";
import { proofStore } from "../store.js";
import type { PaymentProofRow } from "../tables.js";
import { type KindEnv, landed, need, type ProofKindHandler, settleStoredPayload } from "./types.js";

type Eip3009Proof = Extract<ParsedProof, { kind: "evm_eip3009" }>;

/** The on-chain uniqueness domain of an EIP-3009 authorization: token, authorizer, nonce. */
function keyOf(chainId: number, asset: string, from: string, nonce: string): string {
  return `evm:${chainId}:${asset.toLowerCase()}:${from.toLowerCase()}:${nonce.toLowerCase()}`;
}

/** Base x402 `exact`: an EIP-3009 transferWithAuthorization signature that a facilitator settles. */
export const eip3009: ProofKindHandler<Eip3009Proof> = {
  kind: "evm_eip3009",
  recheckFailures: true,

  seen(proof, env) {
    const a = proof.payload.authorization;
    return proofStore.get(env.db, keyOf(env.config.x402.baseChainId, env.config.usdc.base, a.from, a.nonce));
  },

  async prepare(proof, { item, requirements: req }, env) {
    const chainId = env.config.x402.baseChainId;
    const rejection = await precheckEip3009(proof.payload, req, chainId, proof.accepted, MAX_TIMEOUT_SECONDS);
    if (rejection) throw env.answers.refusal(item, rejection);
    need(env.settlement, "evm_eip3009");
    const client = env.settlement.evmClient;
    if (client) {
      const balance = await balanceOf(client, req.asset, proof.payload.authorization.from).catch(() => undefined);
      if (balance !== undefined && balance < BigInt(req.amount)) {
        throw env.answers.refusal(item, {
          reason: "insufficient_funds",
          detail: `The payer holds ${balance} atomic units, less than the price ${req.amount}.`,
        });
      }
    }
    const a = proof.payload.authorization;
    return {
      proofKey: keyOf(chainId, req.asset, a.from, a.nonce),
      payer: a.from.toLowerCase(),
      payload: { x402Version: 2, accepted: req, payload: proof.payload },
      expectedTx: null,
    };
  },

  settle: settleStoredPayload,

  /** Was the authorization's nonce used on chain, and by a transfer that paid us? */
  async onChain(row: PaymentProofRow, env: KindEnv): Promise<SettleOutcome | undefined> {
    const client = env.settlement.evmClient;
    if (!client) return undefined;
    const payload = JSON.parse(row.payload) as { payload: Eip3009Payload; accepted: V2Requirements };
    const req = JSON.parse(row.requirements) as V2Requirements;
    const a = payload.payload.authorization;
    const state = await authorizationOutcome(client, req.asset, a.from, a.nonce as `0x${string}`);
    if (!state.used) {
      if (BigInt(a.validBefore) <= BigInt(Math.floor(Date.now() / 1000))) {
        return {
          status: "failed",
          reason: "invalid_exact_evm_payload_authorization_valid_before",
          detail: "The authorization expired unused.",
        };
      }
      return undefined;
    }
    if (!state.tx)
      return { status: "pending", detail: "The authorization was used on chain but its transaction was not found." };
    const check = await checkTransferTx(client, {
      hash: state.tx,
      asset: req.asset,
      payTo: req.payTo,
      amount: req.amount,
      from: a.from,
      minConfirmations: 1,
      maxAgeSeconds: Number.MAX_SAFE_INTEGER,
    });
    if (check.status === "ok") return landed(row, state.tx, a.from);
    if (check.status === "pending") return { status: "pending", transaction: state.tx, detail: check.detail };
    return { status: "failed", reason: check.reason, detail: check.detail, transaction: state.tx };
  },

  mayResettle: (env) => env.settlement.unavailable("evm_eip3009") === undefined,
};

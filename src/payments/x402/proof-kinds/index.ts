import type { ParsedProof } from "../proof.js";
import type { ProofKind } from "../tables.js";
import { eip3009 } from "./eip3009.js";
import { evmHash } from "./evm-hash.js";
import { svm } from "./svm.js";
import type { ProofKindHandler } from "./types.js";

/** The proof kinds, chosen by the decoded proof's kind (one file each). */
export const PROOF_KINDS: { [K in ProofKind]: ProofKindHandler<Extract<ParsedProof, { kind: K }>> } = {
  evm_eip3009: eip3009,
  evm_tx: evmHash,
  svm_tx: svm,
};

/** The handler of a decoded proof, typed for it. */
export function kindOf<P extends ParsedProof>(proof: P): ProofKindHandler<P> {
  return PROOF_KINDS[proof.kind] as unknown as ProofKindHandler<P>;
}

/** The handler of a ledger row's kind (settlement and reconciliation work on stored rows). */
export function rowKind(kind: ProofKind): ProofKindHandler {
  return PROOF_KINDS[kind] as unknown as ProofKindHandler;
}

export type { KindEnv, PrepareCtx, Prepared, ProofKindHandler } from "./types.js";

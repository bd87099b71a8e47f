import { createHash } from "node:crypto";
import {
  type Address,
  address,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  type KeyPairSigner,
  type SignatureBytes,
  signBytes,
  verifySignature,
} from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import type { Rejection } from "./evm.js";
import type { V2Requirements } from "./requirements.js";

/**
 * Solana side: structural checks of an x402 `exact` transaction (v0 or legacy) against our
 * requirements, the deterministic transaction signature, and a plain HTTP JSON-RPC client that
 * broadcasts and confirms by polling getSignatureStatuses (no websocket subscription needed).
 */

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
export const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
export const MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
export const LIGHTHOUSE_PROGRAM = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95";
/** Reference bound: 5 lamports per compute unit = 5,000,000 micro-lamports (the setting cannot exceed it). */
export const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS = 5_000_000n;
/** Signatures a transaction our fee payer co-signs may require (each costs the fee payer 5,000 lamports). */
export const MAX_REQUIRED_SIGNATURES = 3;
export const LAMPORTS_PER_SIGNATURE = 5_000;

/** What a sale may cost our fee payer: compute-unit limit and price caps (configurable). */
export interface SvmFeeCaps {
  maxComputeUnits: number;
  maxComputeUnitPrice: number;
}

/** Worst case the fee payer pays for one sale under the caps, in lamports. */
export function worstFeeLamports(caps: SvmFeeCaps): number {
  return (
    MAX_REQUIRED_SIGNATURES * LAMPORTS_PER_SIGNATURE +
    Math.ceil((caps.maxComputeUnits * caps.maxComputeUnitPrice) / 1_000_000)
  );
}

export interface DecodedSvmTx {
  wire: Uint8Array;
  messageBytes: Uint8Array;
  feePayer: string;
  /** Signer address → signature (null when not yet signed). */
  signatures: Record<string, SignatureBytes | null>;
  fullySigned: boolean;
  /** Authority of the TransferChecked (the payer). */
  payer: string;
  /** sha256 of the message bytes: the replay key, whatever signatures are attached. */
  messageHash: string;
}

const reject = (reason: string, detail: string): { rejection: Rejection } => ({ rejection: { reason, detail } });

function u64le(bytes: Uint8Array, offset: number): bigint | undefined {
  if (bytes.length < offset + 8) return undefined;
  return new DataView(bytes.buffer, bytes.byteOffset + offset, 8).getBigUint64(0, true);
}

/**
 * Decodes and checks a Solana payment transaction. `feePayer` is our fee payer (if any):
 * a partially signed transaction must name it as fee payer; without one, only fully signed
 * transactions are accepted.
 */
export async function checkSvmTransaction(
  base64: string,
  req: V2Requirements,
  ourFeePayer: string | undefined,
  caps: SvmFeeCaps = { maxComputeUnits: 1_400_000, maxComputeUnitPrice: Number(MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS) },
): Promise<{ tx: DecodedSvmTx } | { rejection: Rejection }> {
  let wire: Uint8Array;
  let tx: ReturnType<ReturnType<typeof getTransactionDecoder>["decode"]>;
  let msg: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>["decode"]>;
  try {
    wire = new Uint8Array(getBase64Encoder().encode(base64));
    tx = getTransactionDecoder().decode(wire);
    msg = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  } catch {
    return reject(
      "invalid_exact_svm_payload_transaction_could_not_be_decoded",
      "The transaction could not be decoded.",
    );
  }
  if ("addressTableLookups" in msg && (msg.addressTableLookups?.length ?? 0) > 0) {
    return reject("invalid_exact_svm_payload_transaction", "Address lookup tables are not accepted.");
  }
  const accounts = msg.staticAccounts.map(String);
  const feePayer = accounts[0];
  if (!feePayer) return reject("invalid_exact_svm_payload_transaction", "The transaction has no accounts.");
  const ix = msg.instructions;
  if (ix.length < 3 || ix.length > 7) {
    return reject("invalid_exact_svm_payload_transaction_instructions_length", "Expected 3 to 7 instructions.");
  }
  const program = (i: number) => accounts[ix[i]?.programAddressIndex ?? -1];
  const data = (i: number) => (ix[i]?.data ?? new Uint8Array()) as Uint8Array;
  // x402 puts SetComputeUnitLimit first; @solana/mpp (MPP) puts SetComputeUnitPrice first. Both are
  // accepted in a fully signed transaction (we send it); a partially signed one goes to the x402
  // facilitator, which accepts only the x402 order (checked below, once the signatures are known).
  const swapped =
    program(0) === COMPUTE_BUDGET_PROGRAM &&
    data(0)[0] === 3 &&
    program(1) === COMPUTE_BUDGET_PROGRAM &&
    data(1)[0] === 2;
  const [limitAt, priceAt] = swapped ? [1, 0] : [0, 1];
  if (program(limitAt) !== COMPUTE_BUDGET_PROGRAM || data(limitAt)[0] !== 2 || data(limitAt).length !== 5) {
    return reject(
      "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction",
      "Instruction 1 must be ComputeBudget SetComputeUnitLimit.",
    );
  }
  const units = new DataView(data(limitAt).buffer, data(limitAt).byteOffset + 1, 4).getUint32(0, true);
  // The caps bound what our fee payer pays; a transaction the payer signs fully (and pays for) is not
  // held to them (MPP's @solana/mpp asks 200,000 units by default): checked once the signatures are known.
  let capRejection: { rejection: Rejection } | undefined;
  if (units > caps.maxComputeUnits) {
    capRejection = reject(
      "invalid_exact_svm_payload_transaction_instructions_compute_limit_too_high",
      `Compute unit limit ${units} exceeds this service's cap of ${caps.maxComputeUnits} units (at most ${caps.maxComputeUnitPrice} micro-lamports per unit).`,
    );
  }
  if (program(priceAt) !== COMPUTE_BUDGET_PROGRAM || data(priceAt)[0] !== 3) {
    return reject(
      "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction",
      "Instruction 2 must be ComputeBudget SetComputeUnitPrice.",
    );
  }
  const price = u64le(data(priceAt), 1);
  if (price === undefined) {
    return reject("invalid_exact_svm_payload_transaction_instructions_compute_price_instruction", "Bad compute price.");
  }
  const priceCap = BigInt(Math.min(caps.maxComputeUnitPrice, Number(MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS)));
  if (price > priceCap && !capRejection) {
    capRejection = reject(
      "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high",
      `Compute unit price ${price} micro-lamports exceeds this service's cap of ${priceCap} micro-lamports per unit (and at most ${caps.maxComputeUnits} units).`,
    );
  }
  const tokenProgram = program(2);
  const transfer = ix[2];
  if (
    !transfer ||
    (tokenProgram !== TOKEN_PROGRAM && tokenProgram !== TOKEN_2022_PROGRAM) ||
    data(2)[0] !== 12 ||
    (transfer.accountIndices?.length ?? 0) < 4
  ) {
    return reject("invalid_exact_svm_payload_no_transfer_instruction", "Instruction 3 must be an SPL TransferChecked.");
  }
  const [srcI, mintI, dstI, authI] = transfer.accountIndices ?? [];
  const mint = accounts[mintI ?? -1];
  const destination = accounts[dstI ?? -1];
  const authority = accounts[authI ?? -1];
  const source = accounts[srcI ?? -1];
  if (mint !== req.asset) return reject("invalid_exact_svm_payload_mint_mismatch", `The mint must be ${req.asset}.`);
  const [expectedAta] = await findAssociatedTokenPda({
    owner: address(req.payTo),
    mint: address(req.asset),
    tokenProgram: address(tokenProgram),
  });
  if (destination !== expectedAta) {
    return reject(
      "invalid_exact_svm_payload_recipient_mismatch",
      `The destination must be payTo's associated token account ${expectedAta}.`,
    );
  }
  const amount = u64le(data(2), 1);
  if (amount === undefined || amount !== BigInt(req.amount)) {
    return reject(
      "invalid_exact_svm_payload_amount_mismatch",
      `TransferChecked must move exactly ${req.amount} atomic units, got ${amount ?? "?"}.`,
    );
  }
  if (data(2)[9] !== 6) return reject("invalid_exact_svm_payload_transaction", "TransferChecked decimals must be 6.");
  for (let i = 3; i < ix.length; i++) {
    const p = program(i);
    if (p !== MEMO_PROGRAM && p !== LIGHTHOUSE_PROGRAM) {
      return reject(
        "invalid_exact_svm_payload_unknown_optional_instruction",
        `Instruction ${i + 1} (${p}) is not allowed; only Memo or Lighthouse may follow the transfer.`,
      );
    }
  }
  if (!authority || !source) return reject("invalid_exact_svm_payload_transaction", "Bad transfer accounts.");

  // Signatures: verify every present one; only our fee payer's may be missing.
  const signatures = tx.signatures as Record<string, SignatureBytes | null>;
  let missing: string[] = [];
  for (const [signer, sig] of Object.entries(signatures)) {
    if (!sig || sig.every((b) => b === 0)) {
      missing.push(signer);
      continue;
    }
    const key = await getPublicKeyFromAddress(address(signer));
    if (!(await verifySignature(key, sig, tx.messageBytes))) {
      return reject("invalid_exact_svm_payload_signature_invalid", `The signature of ${signer} is not valid.`);
    }
  }
  missing = missing.filter((s) => s !== undefined);
  const fullySigned = missing.length === 0;
  if (!fullySigned) {
    if (!ourFeePayer) {
      return reject(
        "invalid_exact_svm_payload_missing_fee_payer",
        "This service has no fee payer: send a transaction fully signed by the payer (who pays the network fee).",
      );
    }
    if (feePayer !== ourFeePayer) {
      return reject("invalid_exact_svm_fee_payer_mismatch", `The fee payer (account 0) must be ${ourFeePayer}.`);
    }
    if (capRejection) return capRejection;
    if (swapped) {
      return reject(
        "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction",
        "Instruction 1 must be ComputeBudget SetComputeUnitLimit in a transaction our fee payer co-signs.",
      );
    }
    if (missing.length !== 1 || missing[0] !== ourFeePayer) {
      return reject("invalid_exact_svm_payload_signature_invalid", "Every signer other than our fee payer must sign.");
    }
    if (Object.keys(signatures).length > MAX_REQUIRED_SIGNATURES) {
      return reject(
        "invalid_exact_svm_payload_too_many_signers",
        `At most ${MAX_REQUIRED_SIGNATURES} signatures (each one is paid by our fee payer).`,
      );
    }
    // The fee payer must not move funds or sign for the transfer.
    for (const instr of ix) {
      const touches = (instr.accountIndices ?? []).some((k) => accounts[k] === ourFeePayer);
      if (touches) {
        return reject(
          "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds",
          "Our fee payer may not appear in any instruction.",
        );
      }
    }
  } else if (ourFeePayer && authority === ourFeePayer) {
    return reject("invalid_exact_svm_payload_transaction_fee_payer_transferring_funds", "Bad transfer authority.");
  }
  return {
    tx: {
      wire,
      messageBytes: new Uint8Array(tx.messageBytes),
      feePayer,
      signatures,
      fullySigned,
      payer: authority,
      messageHash: createHash("sha256").update(new Uint8Array(tx.messageBytes)).digest("hex"),
    },
  };
}

/** sha256 of a base64 transaction's message bytes (the Solana proof key), or undefined if undecodable. */
export function svmMessageHash(base64: string): string | undefined {
  try {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(base64));
    return createHash("sha256").update(new Uint8Array(tx.messageBytes)).digest("hex");
  } catch {
    return undefined;
  }
}

/** The transaction id (base58 of the fee payer's signature) once we (or the payer) sign it. */
export async function expectedSignature(
  tx: DecodedSvmTx,
  feePayerSigner: KeyPairSigner | undefined,
): Promise<string | undefined> {
  const existing = tx.signatures[tx.feePayer];
  if (existing && !existing.every((b) => b === 0)) return getBase58Decoder().decode(existing);
  if (!feePayerSigner || feePayerSigner.address !== (tx.feePayer as Address)) return undefined;
  const sig = await signBytes(feePayerSigner.keyPair.privateKey, tx.messageBytes);
  return getBase58Decoder().decode(sig);
}

export class RpcError extends Error {
  constructor(
    message: string,
    readonly transport: boolean,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** Minimal JSON-RPC over HTTP POST. Transport errors are flagged (outcome unknown). */
export async function solanaRpc<T>(url: string, method: string, params: unknown[], timeoutMs: number): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new RpcError(`${method}: ${err instanceof Error ? err.message : String(err)}`, true);
  }
  if (!res.ok) throw new RpcError(`${method}: HTTP ${res.status}`, true);
  const json = (await res.json().catch(() => ({}))) as { result?: T; error?: { message?: string } };
  if (json.error) throw new RpcError(`${method}: ${json.error.message ?? "error"}`, false);
  return json.result as T;
}

export interface SignatureStatus {
  err: unknown;
  confirmationStatus?: string | null;
}

export async function signatureStatus(url: string, sig: string, timeoutMs: number): Promise<SignatureStatus | null> {
  const r = await solanaRpc<{ value: (SignatureStatus | null)[] }>(
    url,
    "getSignatureStatuses",
    [[sig], { searchTransactionHistory: true }],
    timeoutMs,
  );
  return r.value[0] ?? null;
}

export type BroadcastOutcome =
  | { status: "success"; signature: string }
  | { status: "failed"; reason: string; detail: string; signature?: string }
  | { status: "pending"; signature: string; detail: string };

/**
 * Simulates (with signature verification), sends, then confirms a fully signed transaction by
 * polling getSignatureStatuses until `confirmed`, or reports pending after `timeoutMs`.
 */
export async function broadcastAndConfirm(
  url: string,
  wireBase64: string,
  signature: string,
  timeoutMs: number,
  rpcTimeoutMs = 10_000,
): Promise<BroadcastOutcome> {
  const known = await signatureStatus(url, signature, rpcTimeoutMs).catch(() => null);
  if (!known) {
    const sim = await solanaRpc<{ value: { err: unknown; logs?: string[] } }>(
      url,
      "simulateTransaction",
      [wireBase64, { encoding: "base64", sigVerify: true, commitment: "confirmed" }],
      rpcTimeoutMs,
    );
    if (sim.value.err) {
      return {
        status: "failed",
        reason: "invalid_exact_svm_transaction_simulation_failed",
        detail: `Simulation failed: ${JSON.stringify(sim.value.err)}`,
      };
    }
    try {
      await solanaRpc<string>(
        url,
        "sendTransaction",
        [wireBase64, { encoding: "base64", skipPreflight: true, preflightCommitment: "confirmed" }],
        rpcTimeoutMs,
      );
    } catch (err) {
      if (err instanceof RpcError && !err.transport) {
        return { status: "failed", reason: "invalid_exact_svm_transaction_failed", detail: err.message, signature };
      }
      return { status: "pending", signature, detail: (err as Error).message };
    }
  }
  return confirmSignature(url, signature, timeoutMs, rpcTimeoutMs);
}

export async function confirmSignature(
  url: string,
  signature: string,
  timeoutMs: number,
  rpcTimeoutMs = 10_000,
): Promise<BroadcastOutcome> {
  const deadline = Date.now() + timeoutMs;
  let delay = 200;
  for (;;) {
    const st = await signatureStatus(url, signature, rpcTimeoutMs).catch(() => null);
    if (st && (st.confirmationStatus === "confirmed" || st.confirmationStatus === "finalized")) {
      if (st.err) {
        return {
          status: "failed",
          reason: "invalid_exact_svm_transaction_failed",
          detail: `Transaction failed on chain: ${JSON.stringify(st.err)}`,
          signature,
        };
      }
      return { status: "success", signature };
    }
    if (Date.now() + delay > deadline) return { status: "pending", signature, detail: "Not confirmed yet." };
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}

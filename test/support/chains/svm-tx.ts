import { randomBytes } from "node:crypto";
import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  type Instruction,
  type KeyPairSigner,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from "@solana-program/compute-budget";
import { getTransferCheckedInstruction } from "@solana-program/token";
import type { SvmChain } from "./svm.js";

const MEMO = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

export interface SvmTxOpts {
  amount?: bigint;
  mint?: Address;
  destination?: Address;
  extra?: Instruction[];
  microLamports?: bigint;
  units?: number;
  /** Fee payer address for a partially signed tx; omitted = the buyer pays and signs everything. */
  feePayer?: Address;
}

/** A hand-built x402 `exact` Solana transaction: compute budget, TransferChecked to the seller's ATA, memo. */
export async function buildSvmTx(
  chain: SvmChain,
  buyer: KeyPairSigner,
  seller: Address,
  o: SvmTxOpts = {},
): Promise<string> {
  const mint = o.mint ?? chain.mint;
  const transfer = getTransferCheckedInstruction({
    source: await chain.ata(buyer.address),
    mint,
    destination: o.destination ?? (await chain.ata(seller)),
    authority: buyer,
    amount: o.amount ?? 1_000_000n,
    decimals: 6,
  });
  const memo: Instruction = {
    programAddress: MEMO,
    accounts: [],
    data: new TextEncoder().encode(randomBytes(16).toString("hex")),
  };
  const blockhash = chain.svm.latestBlockhash();
  const msg = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(o.feePayer ? createNoopSigner(o.feePayer) : buyer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: blockhash as never, lastValidBlockHeight: 10_000_000n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        [
          getSetComputeUnitLimitInstruction({ units: o.units ?? 20_000 }),
          getSetComputeUnitPriceInstruction({ microLamports: o.microLamports ?? 1n }),
          transfer,
          memo,
          ...(o.extra ?? []),
        ],
        m,
      ),
  );
  const signed = o.feePayer
    ? await partiallySignTransactionMessageWithSigners(msg)
    : await signTransactionMessageWithSigners(msg);
  return getBase64EncodedWireTransaction(signed);
}

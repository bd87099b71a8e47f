import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type KeyPairSigner,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { RpcError, signatureStatus, solanaRpc } from "../payments/x402/svm.js";
import type { ChainRefunder, OnChain, SignedRefund } from "./chain.js";

/** USDC (the Solana rail's mint) has 6 decimals; TransferChecked states them. */
const USDC_DECIMALS = 6;

/**
 * Solana refunds: a TransferChecked of the rail's mint from the refund wallet's associated token
 * account to the payer's (created idempotently, at the refund wallet's expense), the refund wallet
 * paying the fee (REFUND_SVM_KEY). The transaction is bound to one blockhash: until that expires
 * (lastValidBlockHeight), the stored bytes are the only refund that may land.
 */
export class SvmRefunder implements ChainRefunder {
  private constructor(
    private readonly signer: KeyPairSigner,
    private readonly rpcUrl: string,
    private readonly timeoutMs: number,
  ) {}

  static async fromSecret(secretBase58: string, rpcUrl: string, timeoutMs: number): Promise<SvmRefunder> {
    const bytes = getBase58Encoder().encode(secretBase58);
    if (bytes.length !== 64) throw new Error("REFUND_SVM_KEY must decode to a 64-byte secret key");
    return new SvmRefunder(await createKeyPairSignerFromBytes(new Uint8Array(bytes)), rpcUrl, timeoutMs);
  }

  get address(): string {
    return this.signer.address;
  }

  async sign(to: string, mint: string, units: bigint): Promise<SignedRefund> {
    const owner = address(to);
    const mintAddress = address(mint);
    const ata = async (who: Address) =>
      (await findAssociatedTokenPda({ owner: who, mint: mintAddress, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
    const [source, destination] = [await ata(this.signer.address), await ata(owner)];
    const latest = await solanaRpc<{ value: { blockhash: string; lastValidBlockHeight: number } }>(
      this.rpcUrl,
      "getLatestBlockhash",
      [{ commitment: "confirmed" }],
      this.timeoutMs,
    );
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(this.signer, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          {
            blockhash: latest.value.blockhash as Blockhash,
            lastValidBlockHeight: BigInt(latest.value.lastValidBlockHeight),
          },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [
            getCreateAssociatedTokenIdempotentInstruction({
              payer: this.signer,
              ata: destination,
              owner,
              mint: mintAddress,
            }),
            getTransferCheckedInstruction({
              source,
              mint: mintAddress,
              destination,
              authority: this.signer,
              amount: units,
              decimals: USDC_DECIMALS,
            }),
          ],
          m,
        ),
    );
    const signed = await signTransactionMessageWithSigners(message);
    return {
      tx: getSignatureFromTransaction(signed),
      raw_tx: getBase64EncodedWireTransaction(signed),
      evm_nonce: null,
      valid_until: latest.value.lastValidBlockHeight,
    };
  }

  async broadcast(raw: string): Promise<void> {
    try {
      await solanaRpc<string>(
        this.rpcUrl,
        "sendTransaction",
        [raw, { encoding: "base64", skipPreflight: true, preflightCommitment: "confirmed" }],
        this.timeoutMs,
      );
    } catch (err) {
      // "already processed": the same signature landed; the status check decides
      if (err instanceof RpcError && /already been processed|AlreadyProcessed/i.test(err.message)) return;
      throw err;
    }
  }

  async status(signature: string, validUntil: number | null): Promise<OnChain> {
    const read = async (): Promise<OnChain | undefined> => {
      const st = await signatureStatus(this.rpcUrl, signature, this.timeoutMs);
      if (!st) return undefined;
      if (st.err) return "reverted";
      return st.confirmationStatus === "confirmed" || st.confirmationStatus === "finalized" ? "confirmed" : "pending";
    };
    const first = await read();
    if (first) return first;
    if (validUntil === null) return "pending";
    const height = await solanaRpc<number>(
      this.rpcUrl,
      "getBlockHeight",
      [{ commitment: "confirmed" }],
      this.timeoutMs,
    );
    if (height <= validUntil) return "pending";
    // Past lastValidBlockHeight the transaction can no longer be processed; read once more.
    return (await read()) ?? "dead";
  }
}

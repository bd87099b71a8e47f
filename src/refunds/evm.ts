import {
  encodeFunctionData,
  type Hex,
  keccak256,
  type PublicClient,
  parseAbi,
  TransactionReceiptNotFoundError,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { evmPublicClient } from "../payments/x402/evm.js";
import type { ChainRefunder, OnChain, SignedRefund } from "./chain.js";

const ERC20_TRANSFER = parseAbi(["function transfer(address to, uint256 value) returns (bool)"]);

/**
 * Base refunds: an ERC-20 `transfer` of the rail's USDC from the refund wallet (REFUND_EVM_KEY),
 * signed locally with an explicit nonce, so the stored bytes can be rebroadcast unchanged.
 */
export class EvmRefunder implements ChainRefunder {
  readonly address: `0x${string}`;
  private readonly account;
  private readonly client: PublicClient;

  constructor(
    key: `0x${string}`,
    private readonly chainId: number,
    rpcUrl: string,
    timeoutMs: number,
  ) {
    this.account = privateKeyToAccount(key);
    this.address = this.account.address;
    this.client = evmPublicClient(chainId, rpcUrl, timeoutMs);
  }

  async sign(to: string, asset: string, units: bigint, minNonce = 0): Promise<SignedRefund> {
    const data = encodeFunctionData({ abi: ERC20_TRANSFER, functionName: "transfer", args: [to as Hex, units] });
    const pending = await this.client.getTransactionCount({ address: this.address, blockTag: "pending" });
    const nonce = Math.max(pending, minNonce);
    // Fails (a revert) when the refund wallet lacks the tokens: nothing is signed then.
    const gas = await this.client.estimateGas({ account: this.address, to: asset as Hex, data });
    const fees = await this.client.estimateFeesPerGas();
    const raw = await this.account.signTransaction({
      type: "eip1559",
      chainId: this.chainId,
      to: asset as Hex,
      data,
      nonce,
      gas: (gas * 12n) / 10n,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return { tx: keccak256(raw), raw_tx: raw, evm_nonce: nonce, valid_until: null };
  }

  async broadcast(raw: string): Promise<void> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw as Hex });
    } catch (err) {
      // the same bytes already in the pool or mined: nothing new was sent
      if (/already known|known transaction|nonce too low|already imported/i.test(String((err as Error).message)))
        return;
      throw err;
    }
  }

  async status(tx: string, nonce: number | null): Promise<OnChain> {
    // "Not found" only when the node says so: an RPC failure must never read as "absent" (a
    // transaction taken for dead while it landed would be replaced: a second payment).
    const receipt = () =>
      this.client.getTransactionReceipt({ hash: tx as Hex }).catch((err: unknown) => {
        if (err instanceof TransactionReceiptNotFoundError) return null;
        throw err;
      });
    const r = await receipt();
    if (r) return r.status === "success" ? "confirmed" : "reverted";
    if (nonce === null) return "pending";
    const used = await this.client.getTransactionCount({ address: this.address, blockTag: "latest" });
    if (used <= nonce) return "pending";
    // The nonce is used: by ours (mined between the two reads) or by another transaction.
    const again = await receipt();
    if (again) return again.status === "success" ? "confirmed" : "reverted";
    return "dead";
  }
}

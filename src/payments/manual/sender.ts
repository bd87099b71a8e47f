import { address as solanaAddress } from "@solana/kit";
import { getAddress, isAddress, type PublicClient } from "viem";
import { badRequest } from "../../http/problem.js";
import { verifyWalletSignature } from "../wallet-signature.js";
import { solanaRpc } from "../x402/svm.js";

/**
 * Who sent a claimed transfer, and whether the claimant controls that wallet. A transaction
 * reference is public, so anyone can claim it: the operator approves the claim whose claimant
 * proved control of the sending wallet (a signature over `senderProofMessage`).
 */

export type SenderChain = "evm" | "solana";

export function senderChain(rail: string): SenderChain | undefined {
  if (rail === "crypto_manual_evm") return "evm";
  if (rail === "crypto_manual_solana") return "solana";
  return undefined;
}

/** What the sending wallet signs (EIP-191 personal_sign, or the UTF-8 bytes with ed25519). */
export function senderProofMessage(tx: string, sku: string): string {
  return `Lab Phi claim: I sent transaction ${tx} to pay for ${sku}`;
}

export function canonicalSender(chain: SenderChain, sender: string): string {
  if (chain === "evm") {
    if (!isAddress(sender, { strict: false })) throw badRequest("invalid_sender", "sender must be a 0x EVM address.");
    return getAddress(sender).toLowerCase();
  }
  try {
    return solanaAddress(sender);
  } catch {
    throw badRequest("invalid_sender", "sender must be a base58 Solana address.");
  }
}

/**
 * The sender read from the chain: on Base the sender of the USDC transfer to `payTo` (else the
 * transaction's sender, for ETH); on Solana the first signer (the paying wallet). Undefined when
 * the chain cannot be read or the transaction is unknown.
 */
export async function senderFromChain(
  chain: SenderChain,
  tx: string,
  q: { evmClient?: PublicClient | undefined; solanaRpcUrl?: string | undefined; usdc?: string; payTo?: string },
): Promise<string | undefined> {
  try {
    if (chain === "evm") {
      const client = q.evmClient;
      if (!client) return undefined;
      const hash = tx.toLowerCase() as `0x${string}`;
      const receipt = await client.getTransactionReceipt({ hash });
      const transferTopic = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
      for (const log of receipt.logs) {
        if (!q.usdc || log.address.toLowerCase() !== q.usdc.toLowerCase()) continue;
        if (log.topics[0] !== transferTopic || !log.topics[1] || !log.topics[2]) continue;
        const to = `0x${log.topics[2].slice(26)}`.toLowerCase();
        if (q.payTo && to !== q.payTo.toLowerCase()) continue;
        return `0x${log.topics[1].slice(26)}`.toLowerCase();
      }
      return receipt.from.toLowerCase();
    }
    if (!q.solanaRpcUrl) return undefined;
    const r = await solanaRpc<{ transaction?: { message?: { accountKeys?: unknown[] } } } | null>(
      q.solanaRpcUrl,
      "getTransaction",
      [tx, { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }],
      10_000,
    );
    const first = r?.transaction?.message?.accountKeys?.[0];
    return typeof first === "string" ? first : undefined;
  } catch {
    return undefined;
  }
}

/** True when `signature` is by `sender` over `message`; 400 when it cannot even be decoded. */
export function verifySenderSignature(
  chain: SenderChain,
  sender: string,
  message: string,
  signature: string,
  evmClient?: PublicClient,
): Promise<boolean> {
  return verifyWalletSignature(chain, sender, message, signature, { code: "invalid_sender_signature", evmClient });
}

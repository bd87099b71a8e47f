import { getAddress, type PublicClient } from "viem";

/**
 * A Base transaction hash is public the moment it is mined, so on its own it is a bearer token that
 * whoever presents it first could redeem. The proof is therefore the hash plus a signature by the
 * transfer's sender over the hash, the resource and the item bought (sku or quote), as EIP-191
 * `personal_sign` text or EIP-712 typed data. Verified through viem's public client, which handles
 * plain keys, ERC-1271 smart contract wallets and ERC-6492 (not yet deployed) wallets alike.
 */

export interface TxHashProofSubject {
  hash: `0x${string}`;
  chainId: number;
  /** The paid route, e.g. https://lab.example/api/x402-products. */
  resource: string;
  /** The sku (or quote id) this payment buys. */
  item: string;
}

/** The EIP-191 text the sender signs (personal_sign). */
export function txHashProofMessage(s: TxHashProofSubject): string {
  return [
    "Lab Phi payment proof",
    `I sent transaction ${s.hash.toLowerCase()} on eip155:${s.chainId}`,
    `to pay for ${s.item} at ${s.resource}`,
  ].join("\n");
}

export const TX_HASH_PROOF_TYPES = {
  TransactionProof: [
    { name: "transaction", type: "bytes32" },
    { name: "resource", type: "string" },
    { name: "item", type: "string" },
  ],
} as const;

/** The same statement as EIP-712 typed data. */
export function txHashProofTypedData(s: TxHashProofSubject) {
  return {
    domain: { name: "Lab Phi", version: "1", chainId: s.chainId },
    types: TX_HASH_PROOF_TYPES,
    primaryType: "TransactionProof" as const,
    message: { transaction: s.hash.toLowerCase() as `0x${string}`, resource: s.resource, item: s.item },
  };
}

/** What a client needs to sign, as shown in the 402 that asks for the signature. */
export function txHashProofRequest(s: TxHashProofSubject) {
  return {
    eip191_message: txHashProofMessage(s),
    eip712: txHashProofTypedData(s),
    send_as: {
      header: "X-PAYMENT",
      value:
        'base64 of {"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:<chain id>"},"payload":{"transaction":"<hash>","signature":"<signature>"}}',
    },
  };
}

/** True when `signer` signed the statement (EIP-191 first, then EIP-712). */
export async function verifyTxHashSignature(
  client: PublicClient,
  signer: string,
  s: TxHashProofSubject,
  signature: `0x${string}`,
): Promise<boolean> {
  const address = getAddress(signer);
  const asMessage = await client
    .verifyMessage({ address, message: txHashProofMessage(s), signature })
    .catch(() => false);
  if (asMessage) return true;
  const typed = txHashProofTypedData(s);
  return client
    .verifyTypedData({
      address,
      domain: typed.domain,
      types: typed.types,
      primaryType: typed.primaryType,
      message: typed.message,
      signature,
    })
    .catch(() => false);
}

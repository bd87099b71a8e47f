import { randomBytes } from "node:crypto";
import {
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  type KeyPairSigner,
} from "@solana/kit";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** A fresh EVM key and its address. */
export function newEvmKey(): { key: Hex; address: `0x${string}` } {
  const key = generatePrivateKey();
  return { key, address: privateKeyToAccount(key).address };
}

/**
 * A fresh Solana key pair with its secret in the usual base58 64-byte form (seed ‖ public key),
 * the X402_SVM_FEE_PAYER_KEY and LABPHI_AGENT_SVM_KEY format.
 */
export async function newSolanaKey(): Promise<{ signer: KeyPairSigner; secret: string }> {
  const seed = new Uint8Array(randomBytes(32));
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const pub = getAddressEncoder().encode(signer.address);
  const secret = getBase58Decoder().decode(new Uint8Array([...seed, ...pub]));
  return { signer, secret };
}

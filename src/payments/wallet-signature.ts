import {
  getBase58Encoder,
  getBase64Encoder,
  getPublicKeyFromAddress,
  type SignatureBytes,
  address as solanaAddress,
  verifySignature,
} from "@solana/kit";
import { getAddress, type PublicClient, verifyMessage } from "viem";
import { badRequest } from "../http/problem.js";

/**
 * Does a wallet's signature over a text message check out? EVM: EIP-191 personal_sign, through a
 * public client when one is given (then ERC-1271 smart wallets and ERC-6492 undeployed wallets
 * verify too), else by ecrecover (plain keys). Solana: ed25519 over the UTF-8 bytes, the signature
 * in base58 or base64. A signature that cannot even be decoded is a 400 with `code`.
 */
export async function verifyWalletSignature(
  chain: "evm" | "solana",
  signer: string,
  message: string,
  signature: string,
  opts: { code: string; evmClient?: PublicClient | undefined },
): Promise<boolean> {
  if (chain === "evm") {
    if (!/^0x[0-9a-fA-F]{2,8192}$/.test(signature)) {
      throw badRequest(opts.code, "The signature must be 0x-prefixed hex (EIP-191).");
    }
    const args = { address: getAddress(signer), message, signature: signature as `0x${string}` };
    return opts.evmClient
      ? opts.evmClient.verifyMessage(args).catch(() => false)
      : verifyMessage(args).catch(() => false);
  }
  let bytes: Uint8Array;
  try {
    bytes = /^[1-9A-HJ-NP-Za-km-z]{80,90}$/.test(signature)
      ? new Uint8Array(getBase58Encoder().encode(signature))
      : new Uint8Array(getBase64Encoder().encode(signature));
  } catch {
    throw badRequest(opts.code, "The signature must be base58 or base64 of 64 bytes (ed25519).");
  }
  if (bytes.length !== 64) throw badRequest(opts.code, "The signature must be 64 bytes (ed25519).");
  const key = await getPublicKeyFromAddress(solanaAddress(signer));
  return verifySignature(key, bytes as SignatureBytes, new TextEncoder().encode(message));
}

import { randomBytes } from "node:crypto";
import {
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  type KeyPairSigner,
} from "@solana/kit";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, SettleResponse } from "@x402/core/types";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** A Solana key pair plus its base58 64-byte secret (the X402_SVM_FEE_PAYER_KEY format). */
export async function solanaKey(): Promise<{ signer: KeyPairSigner; secret: string }> {
  const seed = new Uint8Array(randomBytes(32));
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const pub = getAddressEncoder().encode(signer.address);
  const secret = getBase58Decoder().decode(new Uint8Array([...seed, ...pub]));
  return { signer, secret };
}

export function evmKey(): { key: `0x${string}`; address: `0x${string}` } {
  const key = generatePrivateKey();
  return { key, address: privateKeyToAccount(key).address };
}

export function paymentRequired(headers: Record<string, unknown>): PaymentRequired {
  const h = headers["payment-required"];
  if (typeof h !== "string") throw new Error("no PAYMENT-REQUIRED header");
  return decodePaymentRequiredHeader(h);
}

export function paymentResponse(headers: Record<string, unknown>): SettleResponse {
  const h = headers["payment-response"];
  if (typeof h !== "string") throw new Error("no PAYMENT-RESPONSE header");
  return decodePaymentResponseHeader(h);
}

export const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64");

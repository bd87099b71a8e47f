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
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { txHashProofMessage } from "../../../src/payments/x402/tx-hash-proof.js";
import { appOn as appOnDatabase } from "../../support/app.js";

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

/** Builds the whole app on an existing database (to simulate a restart on the same data). */
/** The shared app fixture (test/support/app.ts) with the admin token these tests use. */
export async function appOn(db: Db, env: Record<string, string>): Promise<App> {
  return appOnDatabase(db, { ADMIN_TOKEN: "admin-token-0123456789", ...env });
}

export async function countRows(app: App, table: "orders" | "payment_proofs"): Promise<number> {
  const r = await app.services.db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A fresh x402 payment identifier (what a careful client keeps to prove it is the buyer). */
export function paymentId(): string {
  return `pay_${randomBytes(16).toString("hex")}`;
}

/**
 * A Base transaction-hash proof signed by the transfer's sender (EIP-191 over the statement the
 * service defines), as the X-PAYMENT value.
 */
export async function signedTxHeader(
  key: `0x${string}`,
  hash: `0x${string}`,
  sku: string,
  resource = "http://lab.test/api/x402-products",
): Promise<string> {
  const signature = await privateKeyToAccount(key).signMessage({
    message: txHashProofMessage({ hash, chainId: 8453, resource, item: sku }),
  });
  return b64json({
    x402Version: 2,
    accepted: { scheme: "exact", network: "eip155:8453" },
    payload: { transaction: hash, signature },
  });
}

/** Only what a stranger could read back from a successful purchase answer: no order data. */
export function expectNoOrderData(body: string): void {
  for (const field of ["order_id", "access_url", "license_key", "ord_", "/access/"]) {
    if (body.includes(field)) throw new Error(`answer leaks order data (${field}): ${body.slice(0, 300)}`);
  }
}

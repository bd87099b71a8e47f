import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from "jose";
import { RECEIPT_TYP } from "./service.js";

/**
 * Offline verification of a receipt against a JWKS (the service's /.well-known/jwks.json, or a
 * saved copy): what `labphi verify-receipt` runs, and what a buyer's own script does with jose.
 */

export type VerifyFailure =
  | "malformed"
  | "alg"
  | "typ"
  | "kid_missing"
  | "kid_unknown"
  | "bad_key"
  | "signature"
  | "payload";

export type VerifyResult =
  | { ok: true; kid: string; claims: Record<string, unknown> }
  | { ok: false; reason: VerifyFailure; message: string };

const fail = (reason: VerifyFailure, message: string): VerifyResult => ({ ok: false, reason, message });

/** The keys of a JWKS document, or a reason it is not one. */
export function jwksKeys(doc: unknown): JWK[] {
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error("is not a JWKS (no `keys` array)");
  return keys.filter((k): k is JWK => typeof k === "object" && k !== null);
}

export async function verifyReceipt(receipt: string, jwks: { keys: JWK[] }): Promise<VerifyResult> {
  const jws = receipt.trim();
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(jws)) {
    return fail("malformed", "not a compact JWS (three base64url parts separated by dots)");
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return fail("malformed", "the protected header is not base64url JSON");
  }
  if (header.alg !== "EdDSA" && header.alg !== "Ed25519") {
    return fail("alg", `alg is ${JSON.stringify(header.alg ?? null)}; a receipt is signed with EdDSA (Ed25519)`);
  }
  if (header.typ !== RECEIPT_TYP) {
    return fail("typ", `typ is ${JSON.stringify(header.typ ?? null)}, not ${RECEIPT_TYP}: not a Lab Phi receipt`);
  }
  if (typeof header.kid !== "string" || header.kid.length === 0) return fail("kid_missing", "the header has no kid");
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) return fail("kid_unknown", `no key with kid ${header.kid} in the JWKS`);
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string" || jwk.d !== undefined) {
    return fail("bad_key", `the JWKS key ${header.kid} is not an Ed25519 public key`);
  }
  let payload: Uint8Array;
  try {
    const key = await importJWK({ kty: "OKP", crv: "Ed25519", x: jwk.x }, "EdDSA");
    ({ payload } = await compactVerify(jws, key, { algorithms: ["EdDSA", "Ed25519"] }));
  } catch (err) {
    return fail("signature", `the signature does not verify with key ${header.kid} (${(err as Error).message})`);
  }
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    return fail("payload", "the signed payload is not JSON");
  }
  if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
    return fail("payload", "the signed payload is not a JSON object");
  }
  return { ok: true, kid: header.kid, claims: claims as Record<string, unknown> };
}

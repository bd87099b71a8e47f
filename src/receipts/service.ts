import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";

/**
 * Receipts signed by the service (docs/receipts.md): a compact JWS, EdDSA over Ed25519, whose
 * payload is the canonical JSON (RFC 8785: keys sorted, no white space) of claims built only from
 * stored facts. Ed25519 signatures are deterministic (RFC 8032), so the same facts give the same
 * receipt, byte for byte, on every read: nothing is stored, and a receipt can be rebuilt from the
 * order it names at any time (as long as the signing key is the same).
 */

/** What a receipt names. Built by `receiptFactsFromOrder` (src/receipts/facts.ts) or by a rail. */
export interface ReceiptFacts {
  item: {
    /** `product` (a catalog sku) or `quote` (a suite quote; later kinds as the order core names them). */
    kind: string;
    /** The sku, or the quote id. */
    ref: string;
    /** The sku recorded on the payment (`suite` for a quote). */
    sku: string;
    name: string;
  };
  /** The paid amount: an integer in the asset's atomic unit (USD: cents; USDC: 10^-6), decimal string. */
  amount: string;
  /** Decimals of `amount` (2 for USD, 6 for USDC). */
  decimals: number;
  /** `USD` (card, wire, manual transfers priced in USD) or `USDC` (x402, MPP). */
  currency: "USD" | "USDC";
  /** `USD`, or the token's contract address (EVM) or mint (Solana). */
  asset: string;
  /** CAIP-2 chain of the transaction (`eip155:8453`, `solana:5eykt…`), null off chain or when unknown. */
  network: string | null;
  /** The rail id (x402_base_usdc, card_checkout, crypto_manual_solana, …). */
  rail: string;
  /** On-chain transaction, Stripe payment intent, or the claimed reference; null when there is none. */
  transaction: string | null;
  /** The order this purchase created (null when it bought a job instead). */
  orderId: string | null;
  /** The suite job a quote's payment bought (null for an order). */
  jobId: string | null;
  /** The paying wallet, when the rail proves it; null otherwise. */
  payer: string | null;
  /** The public URL of what was bought (no secret in it). */
  resourceUrl: string;
  /** When the purchase completed (the order's created_at): ISO 8601. */
  issuedAt: string;
}

/** The JWS payload: the x402 offer-receipt receipt fields (version, network, resourceUrl, payer, issuedAt, transaction) and ours. */
export interface ReceiptClaims {
  version: 1;
  iss: string;
  iat: number;
  issuedAt: number;
  resourceUrl: string;
  network: string | null;
  payer: string | null;
  transaction: string | null;
  item: ReceiptFacts["item"];
  amount: string;
  decimals: number;
  currency: "USD" | "USDC";
  asset: string;
  rail: string;
  order_id: string | null;
  job_id: string | null;
}

/** The protected header's `typ`: a verifier checks it, so no other JWS of this key passes as a receipt. */
export const RECEIPT_TYP = "labphi-receipt+jwt";
export const RECEIPT_ALG = "EdDSA";
export const RECEIPT_VERSION = 1;

export interface PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

export interface Jwks {
  keys: PublicJwk[];
}

/** Canonical JSON (RFC 8785 for the values receipts hold: strings, safe integers, null, objects). */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new TypeError(`receipt claims hold integers only, got ${value}`);
    return String(value);
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  throw new TypeError(`cannot put a ${typeof value} in a receipt`);
}

const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The Ed25519 private key of RECEIPT_SIGNING_KEY: the base64url 32-byte seed (a JWK's `d`, 43
 * characters; what the secrets file holds) or a PKCS#8 PEM (`openssl genpkey -algorithm ed25519`).
 * Throws a one-line reason (never the key) when it is neither.
 */
export function parseSigningKey(text: string): KeyObject {
  const value = text.trim();
  if (value.startsWith("-----BEGIN")) {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: value.replace(/\\n/g, "\n"), format: "pem" });
    } catch {
      throw new Error("is not a readable PKCS#8 PEM private key");
    }
    if (key.asymmetricKeyType !== "ed25519") throw new Error(`is a ${key.asymmetricKeyType} key, not Ed25519`);
    return key;
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(value)) {
    throw new Error(
      "must be a base64url Ed25519 seed (43 characters, a JWK's `d`) or a PKCS#8 PEM (`openssl genpkey -algorithm ed25519`)",
    );
  }
  const seed = Buffer.from(value, "base64url");
  if (seed.length !== 32) throw new Error("must decode to 32 bytes");
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
}

/** An Ed25519 public key given as its base64url `x` (32 bytes), or a JWK/SPKI PEM: for retired keys. */
export function parsePublicKey(text: string): KeyObject {
  const value = text.trim();
  if (value.startsWith("-----BEGIN")) {
    let key: KeyObject;
    try {
      key = createPublicKey({ key: value.replace(/\\n/g, "\n"), format: "pem" });
    } catch {
      throw new Error("is not a readable SPKI PEM public key");
    }
    if (key.asymmetricKeyType !== "ed25519") throw new Error(`is a ${key.asymmetricKeyType} key, not Ed25519`);
    return key;
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(value))
    throw new Error("must be a base64url Ed25519 public key (43 characters, a JWK's `x`)");
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: value }, format: "jwk" });
}

/** RFC 7638 thumbprint of an Ed25519 public key (base64url SHA-256 of `{"crv","kty","x"}`). */
export function thumbprint(x: string): string {
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
}

export function publicJwk(key: KeyObject): PublicJwk {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  const { x } = pub.export({ format: "jwk" }) as { x?: string };
  if (!x) throw new Error("not an Ed25519 key");
  return { kty: "OKP", crv: "Ed25519", x, kid: thumbprint(x), alg: "EdDSA", use: "sig" };
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64url");

/** Signs receipts with the service key; publishes the public key(s). */
export class Receipts {
  private readonly current: PublicJwk;
  private readonly header: string;
  private readonly keys: Jwks;

  /**
   * @param signingKey the Ed25519 private key (parseSigningKey)
   * @param issuer BASE_URL: the `iss` claim
   * @param retired public keys of earlier signing keys, still published so old receipts verify
   */
  constructor(
    private readonly signingKey: KeyObject,
    private readonly issuer: string,
    retired: KeyObject[] = [],
  ) {
    if (signingKey.asymmetricKeyType !== "ed25519" || signingKey.type !== "private") {
      throw new Error("receipts: the signing key must be an Ed25519 private key");
    }
    this.current = publicJwk(signingKey);
    // A fixed member order, so the header (and the receipt) is the same bytes on every read.
    this.header = b64(JSON.stringify({ alg: RECEIPT_ALG, kid: this.current.kid, typ: RECEIPT_TYP }));
    const others = retired.map(publicJwk).filter((k) => k.kid !== this.current.kid);
    this.keys = { keys: [this.current, ...others.filter((k, i) => others.findIndex((o) => o.kid === k.kid) === i)] };
  }

  /** From the settings' text forms (RECEIPT_SIGNING_KEY or the secrets file; RECEIPT_RETIRED_KEYS). */
  static fromSettings(signingKey: string, issuer: string, retired: string[] = []): Receipts {
    return new Receipts(parseSigningKey(signingKey), issuer, retired.map(parsePublicKey));
  }

  /** The kid of the current key (its JWK thumbprint). */
  get kid(): string {
    return this.current.kid;
  }

  /** The claims a receipt of these facts carries. */
  claims(facts: ReceiptFacts): ReceiptClaims {
    const seconds = Date.parse(facts.issuedAt);
    if (!Number.isFinite(seconds)) throw new Error(`receipts: issuedAt is not a date: ${facts.issuedAt}`);
    if (!/^(0|[1-9][0-9]*)$/.test(facts.amount)) throw new Error(`receipts: amount must be an integer string`);
    if (!Number.isSafeInteger(facts.decimals) || facts.decimals < 0 || facts.decimals > 36) {
      throw new Error("receipts: decimals must be a small integer");
    }
    if ((facts.orderId === null) === (facts.jobId === null)) {
      throw new Error("receipts: exactly one of orderId and jobId");
    }
    const iat = Math.floor(seconds / 1000);
    return {
      version: RECEIPT_VERSION,
      iss: this.issuer,
      iat,
      issuedAt: iat,
      resourceUrl: facts.resourceUrl,
      network: facts.network,
      payer: facts.payer,
      transaction: facts.transaction,
      item: { kind: facts.item.kind, ref: facts.item.ref, sku: facts.item.sku, name: facts.item.name },
      amount: facts.amount,
      decimals: facts.decimals,
      currency: facts.currency,
      asset: facts.asset,
      rail: facts.rail,
      order_id: facts.orderId,
      job_id: facts.jobId,
    };
  }

  /** The receipt (compact JWS) of these facts: the same facts give the same bytes. */
  sign(facts: ReceiptFacts): string {
    const input = `${this.header}.${b64(canonicalJson(this.claims(facts)))}`;
    const signature = sign(null, Buffer.from(input, "ascii"), this.signingKey).toString("base64url");
    return `${input}.${signature}`;
  }

  /** The public keys (the current one first): GET /.well-known/jwks.json. Never a private part. */
  jwks(): Jwks {
    return { keys: this.keys.keys.map((k) => ({ ...k })) };
  }
}

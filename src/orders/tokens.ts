import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * Access tokens are derived, never stored: token = HMAC(secret, order id), so an
 * idempotent replay of a purchase can answer the same access URL, while the database
 * only holds SHA-256(token). Without the secret a database dump opens nothing.
 */
export function accessToken(secret: string, orderId: string): string {
  return createHmac("sha256", secret).update(`access:v1:${orderId}`).digest("base64url");
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function newOrderId(): string {
  return `ord_${randomBytes(12).toString("base64url")}`;
}

const LICENSE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** Licence key: product prefix + four groups of random characters, e.g. ZRWPRO-7K2Q-…. */
export function newLicenseKey(sku: string): string {
  const prefix = sku
    .replace(/[^a-z0-9]/gi, "")
    .toUpperCase()
    .slice(0, 10);
  const bytes = randomBytes(20);
  const groups: string[] = [];
  for (let g = 0; g < 4; g++) {
    let s = "";
    for (let i = 0; i < 5; i++) s += LICENSE_ALPHABET[(bytes[g * 5 + i] ?? 0) % LICENSE_ALPHABET.length];
    groups.push(s);
  }
  return `${prefix}-${groups.join("-")}`;
}

import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { countToday, type DailyBudget } from "../db/ip-daily.js";
import type { Database } from "../db/schema.js";
import { clientIpHash } from "../http/client-ip.js";
import { Problem } from "../http/problem.js";
import { identityStore } from "./store.js";
import type { IdentityRow } from "./tables.js";

/**
 * Freemium identities (POST /api/join-work). A caller gives a name, one sentence of intent and a
 * seed phrase of exactly 33 UTF-8 bytes, and gets a random server-issued token with an expiry.
 *
 * Stored: the name, the intent, HMAC-SHA256(key, token) and SHA-256(salt ‖ seed) with a random
 * per-identity salt. Never stored: the token, the seed phrase. The salted seed digest lets the
 * holder of the seed renew the token (POST /api/join-work/renew) and serves nothing else.
 *
 * Issuing is limited per client IP per UTC day (IDENTITY_ISSUE_PER_IP_PER_DAY, default 3; on top of
 * the per-minute rate limit): an identity carries 100 GB of free suite volume a month, so fresh
 * identities must not be free for the asking. The count lives in the database
 * (`ip_daily_counts`, scope `join-work`: src/db/ip-daily.ts, incremented in the transaction that
 * inserts the identity), so it holds across instances sharing one PostgreSQL. Over it: 429
 * `identity_daily_limit` with Retry-After (seconds to the next UTC midnight). Renewing is not issuing.
 */

export const SEED_BYTES = 33;
export const TOKEN_PREFIX = "lpi_";
const TOKEN_RE = /^lpi_[A-Za-z0-9_-]{43}$/;

export interface Identity {
  id: string;
  name: string;
  expires_at: string;
}

export interface IssuedToken {
  identity_id: string;
  token: string;
  token_type: "Bearer";
  expires_at: string;
  access: "freemium";
}

export interface JoinInput {
  name: string;
  intent: string;
  seed: string;
}

export interface IdentityLimits {
  /** identities issued per client IP (an IPv6 /64) per UTC day; 0: no daily limit */
  perIpPerDay: number;
}

export class IdentityService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly tokenKey: string,
    private readonly ttlDays: number,
    private readonly now: () => Date = () => new Date(),
    private readonly limits: IdentityLimits = { perIpPerDay: 0 },
  ) {}

  /** The daily budget of identities per client IP (IDENTITY_ISSUE_PER_IP_PER_DAY). */
  private budget(): DailyBudget {
    return {
      scope: "join-work",
      limit: this.limits.perIpPerDay,
      code: "identity_daily_limit",
      message: (limit) =>
        `At most ${limit} identities are issued per IP per day (UTC); try again after midnight UTC, or renew an identity you have with POST /api/join-work/renew.`,
    };
  }

  private tokenHash(token: string): string {
    return createHmac("sha256", this.tokenKey).update(token, "utf8").digest("hex");
  }

  private expiry(from: Date): string {
    return new Date(from.getTime() + this.ttlDays * 86_400_000).toISOString();
  }

  /**
   * Issues an identity. `client.ip` (the route passes `request.ip`) is counted against the daily
   * limit; without it (callers inside the service) nothing is counted.
   */
  async join(input: JoinInput, client: { ip?: string | null } = {}): Promise<IssuedToken> {
    const name = cleanLine(input.name, "name", 1, 80);
    const intent = cleanIntent(input.intent);
    const seed = checkSeed(input.seed);
    const salt = randomBytes(16).toString("hex");
    const token = newToken();
    const at = this.now();
    const row: IdentityRow = {
      id: `idn_${randomBytes(12).toString("base64url")}`,
      name,
      intent,
      seed_salt: salt,
      seed_sha256: seedDigest(salt, seed),
      token_hash: this.tokenHash(token),
      expires_at: this.expiry(at),
      created_at: at.toISOString(),
      updated_at: at.toISOString(),
    };
    const ip = client.ip?.trim();
    if (this.limits.perIpPerDay > 0 && ip) {
      await this.db.transaction().execute(async (trx) => {
        await countToday(trx, this.budget(), clientIpHash(this.tokenKey, ip), at);
        await identityStore.insert(trx, row);
      });
    } else {
      await identityStore.insert(this.db, row);
    }
    return { identity_id: row.id, token, token_type: "Bearer", expires_at: row.expires_at, access: "freemium" };
  }

  /** A new token for the holder of the seed phrase; the previous token stops working. */
  async renew(identityId: string, seedPhrase: string): Promise<IssuedToken> {
    const seed = checkSeed(seedPhrase);
    const row = await identityStore.byId(this.db, identityId);
    const denied = new Problem(403, "identity_seed_mismatch", "No identity with this id and seed phrase.");
    if (!row) throw denied;
    const expected = Buffer.from(row.seed_sha256, "hex");
    const given = Buffer.from(seedDigest(row.seed_salt, seed), "hex");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw denied;
    const token = newToken();
    const at = this.now();
    const expires_at = this.expiry(at);
    const ok = await identityStore.replaceToken(this.db, row.id, row.token_hash, {
      token_hash: this.tokenHash(token),
      expires_at,
      updated_at: at.toISOString(),
    });
    if (!ok) throw new Problem(409, "identity_renew_conflict", "The token was renewed concurrently; try again.");
    return { identity_id: row.id, token, token_type: "Bearer", expires_at, access: "freemium" };
  }

  /** The identity of a presented token; 401 problems for a malformed, unknown or expired one. */
  async verify(token: string): Promise<Identity> {
    if (!TOKEN_RE.test(token)) {
      throw new Problem(
        401,
        "identity_token_invalid",
        "The identity token is not one this service issued.",
        {},
        {
          "WWW-Authenticate": 'Bearer error="invalid_token"',
        },
      );
    }
    const row = await identityStore.byTokenHash(this.db, this.tokenHash(token));
    if (!row) {
      throw new Problem(
        401,
        "identity_token_invalid",
        "The identity token is unknown or was replaced.",
        {},
        {
          "WWW-Authenticate": 'Bearer error="invalid_token"',
        },
      );
    }
    if (row.expires_at <= this.now().toISOString()) {
      throw new Problem(
        401,
        "identity_token_expired",
        "The identity token has expired; renew it with POST /api/join-work/renew.",
        { expired_at: row.expires_at },
        { "WWW-Authenticate": 'Bearer error="invalid_token", error_description="expired"' },
      );
    }
    return { id: row.id, name: row.name, expires_at: row.expires_at };
  }

  /**
   * The caller's identity from `Authorization: Bearer <token>` or `X-Identity-Token`, or null when
   * neither is sent. A presented token must be valid (401 otherwise); another Authorization scheme
   * is ignored.
   */
  async fromHeaders(headers: Record<string, string | string[] | undefined>): Promise<Identity | null> {
    const token = presentedToken(headers);
    return token === null ? null : this.verify(token);
  }
}

export function presentedToken(headers: Record<string, string | string[] | undefined>): string | null {
  const x = headers["x-identity-token"];
  if (typeof x === "string" && x.trim() !== "") return x.trim();
  const auth = headers.authorization;
  if (typeof auth === "string") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1] as string;
  }
  return null;
}

const newToken = (): string => `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;

const seedDigest = (salt: string, seed: string): string =>
  createHash("sha256").update(Buffer.from(salt, "hex")).update(seed, "utf8").digest("hex");

function checkSeed(seed: string): string {
  if (!wellFormed(seed)) {
    throw new Problem(400, "seed_not_utf8", "The seed phrase must be well-formed Unicode (it is measured in UTF-8).");
  }
  const n = Buffer.byteLength(seed, "utf8");
  if (n !== SEED_BYTES) {
    throw new Problem(
      400,
      "seed_length",
      `The seed phrase must be exactly ${SEED_BYTES} bytes in UTF-8; this one is ${n}.`,
      { bytes: n, required_bytes: SEED_BYTES },
    );
  }
  return seed;
}

/** No lone surrogates (with the u flag a pair is one code point, so only lone halves match). */
const wellFormed = (s: string): boolean => !/[\uD800-\uDFFF]/u.test(s);

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

function cleanLine(value: string, field: string, min: number, max: number): string {
  const v = value.trim();
  if (!wellFormed(v) || CONTROL.test(v)) {
    throw new Problem(400, `${field}_invalid`, `The ${field} must be one line of text without control characters.`);
  }
  if (v.length < min || v.length > max) {
    throw new Problem(400, `${field}_invalid`, `The ${field} must be ${min} to ${max} characters.`);
  }
  return v;
}

/** One sentence: one line of 8–280 characters with no sentence end followed by a new capitalised sentence. */
function cleanIntent(value: string): string {
  const v = cleanLine(value, "intent", 8, 280);
  if (/[.!?…]\s+\p{Lu}/u.test(v)) {
    throw new Problem(400, "intent_invalid", "The intent must be one sentence.");
  }
  return v;
}

import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import { LEVELS, type Level } from "../../codec/index.js";
import type { Executor } from "../../db/executor.js";
import type { Database } from "../../db/schema.js";
import { clientIpHash, dayOf } from "../../http/client-ip.js";
import { Problem } from "../../http/problem.js";
import { VERSIONS } from "../../versions.js";
import { checkCallbackUrl } from "../../webhooks/targets.js";
import { FREE_CAP_BYTES, MAX_JOB_BYTES_NUMBER, type PriceTier, priceJob, usdOfUnits } from "../pricing.js";
import { jobStore } from "../store.js";
import type { QuoteRow } from "../tables.js";
import { DEFAULT_SUITE_LEVEL, estimateSeconds, estimatesByLevel, levelNote, type SuiteOp } from "../throughput.js";
import { dayBounds, periodBounds, periodOf, UsageLedger } from "../usage.js";
import { type QuoteView, SUITE_DATA_CLASSES, SUITE_OPS, SUITE_PRODUCTS, type SuiteRequest } from "./schemas.js";
import { quoteStore } from "./store.js";

/**
 * Suite quotes: the priced, persisted offer every suite payment is built from (the 402 challenge,
 * the card checkout) and every paid retry must match. A quote has an id (`qt_…`), an expiry
 * (SUITE_QUOTE_TTL_SECONDS), and buys at most one job. The free cap belongs to the caller, not to
 * the job (issue #21): for a join-work identity the free part is what is left of its 100 GB this
 * calendar month (UTC): the usage ledger's total for the month plus the free bytes of its jobs
 * bought this month whose usage is not recorded yet. An anonymous caller gets what is left of its
 * IP's allowance for the UTC day (SUITE_ANON_FREE_BYTES_PER_DAY, default 1 GB; 0: none): the free
 * bytes of the quotes from that IP that bought a job today. No identity and no IP: nothing free.
 * The IP is kept only as a keyed hash (`client_ip_hash`, src/http/client-ip.ts).
 */

export const PAY_X402 = "POST /api/x402-suite with the same body";
export const PAY_CARD = "POST /api/ppp-checkout { quote_id }";

export interface QuoteOptions {
  /** lifetime of an open quote */
  ttlSeconds: number;
  /** free bytes per client IP per UTC day for callers without an identity (default 1 GB; 0: none) */
  anonFreeBytesPerDay?: bigint | number;
  /** key of the client IP hash (default: a random key of this process) */
  ipKey?: string;
  /**
   * Checks a request's callback_url (https, public addresses: src/webhooks/targets.ts) and answers
   * its normalized form, or throws 400 callback_url_refused. Default: the strict check with the
   * system resolver.
   */
  checkCallback?: (url: string) => Promise<string>;
}

/** Default anonymous allowance: 1 GB (10^9 bytes) per IP per UTC day. */
export const ANON_FREE_BYTES_PER_DAY = 1_000_000_000n;

/** The client of a request, as the free allowances count it (the route passes `request.ip`). */
export interface QuoteClient {
  ip?: string | null | undefined;
}

const n = (v: number | string | bigint): number => Number(v);

export class QuoteService {
  /** The usage ledger the free cap reads (the job runner records into it). */
  readonly usage: UsageLedger;
  private readonly anonPerDay: bigint;
  private readonly ipKey: string;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: QuoteOptions,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.usage = new UsageLedger(db, now);
    this.anonPerDay = BigInt(options.anonFreeBytesPerDay ?? ANON_FREE_BYTES_PER_DAY);
    this.ipKey = options.ipKey ?? randomBytes(32).toString("base64url");
  }

  /** The stored form of a client IP (keyed hash of the IPv4 address or IPv6 /64); null without one. */
  ipHash(client: QuoteClient | undefined): string | null {
    const ip = client?.ip?.trim();
    return ip ? clientIpHash(this.ipKey, ip) : null;
  }

  /**
   * What is left of an anonymous client IP's free allowance today (UTC): the allowance minus the
   * free bytes of its anonymous quotes created today that bought a job (paid or used).
   */
  async anonFreeRemaining(ipHash: string, db: Executor = this.db, excludeQuoteId?: string): Promise<bigint> {
    if (this.anonPerDay <= 0n) return 0n;
    const { start, end } = dayBounds(dayOf(this.now()));
    const held = await quoteStore.anonFreeBytes(db, ipHash, start, end, excludeQuoteId);
    const left = this.anonPerDay - held;
    return left > 0n ? left : 0n;
  }

  /** The free bytes a caller has left: its identity's month, else its IP's day, else none. */
  private async callerFreeRemaining(
    identityId: string | null,
    ipHash: string | null,
    db: Executor,
    excludeQuoteId?: string,
  ): Promise<bigint> {
    if (identityId !== null) return this.freeRemaining(identityId, db, excludeQuoteId);
    if (ipHash !== null) return this.anonFreeRemaining(ipHash, db, excludeQuoteId);
    return 0n;
  }

  /**
   * What is left of an identity's free cap in the current calendar month (UTC): 100 GB minus its
   * recorded usage minus the free bytes held by its jobs not yet recorded (never below 0).
   */
  async freeRemaining(identityId: string, db: Executor = this.db, excludeQuoteId?: string): Promise<bigint> {
    const period = periodOf(this.now());
    const { start, end } = periodBounds(period);
    const used = await this.usage.monthTotal(identityId, period, "suite_bytes", db);
    const held = await quoteStore.reservedFreeBytes(db, identityId, start, end, excludeQuoteId);
    const left = FREE_CAP_BYTES - used - held;
    return left > 0n ? left : 0n;
  }

  /**
   * Prices a request and persists it as an open quote. `identity`: the verified join-work identity,
   * if any; `client`: the request's client (its IP), which the anonymous allowance counts.
   */
  async quote(input: SuiteRequest, identity: { id: string } | null, client?: QuoteClient): Promise<QuoteView> {
    checkRequest(input);
    const callbackUrl = input.callback_url === undefined ? null : await this.checkCallback(input.callback_url);
    const level: Level = input.level ?? DEFAULT_SUITE_LEVEL;
    const ipHash = this.ipHash(client);
    const remaining = await this.callerFreeRemaining(identity?.id ?? null, ipHash, this.db);
    const price = priceJob({ bytes: input.bytes, freeRemainingBytes: remaining });
    const at = this.now();
    const row: QuoteRow = {
      id: `qt_${randomBytes(16).toString("base64url")}`,
      product: input.product,
      data_class: input.dataClass,
      op: input.op,
      level,
      bytes: input.bytes,
      billable_bytes: price.billable_bytes.toString(),
      free_bytes: price.free_bytes.toString(),
      amount_units: price.amount_units.toString(),
      amount_cents: price.amount_cents,
      tiers: JSON.stringify(price.tiers),
      identity_id: identity?.id ?? null,
      client_ip_hash: ipHash,
      email: input.email ?? null,
      callback_url: callbackUrl,
      state: "open",
      job_id: null,
      created_at: at.toISOString(),
      expires_at: new Date(at.getTime() + this.options.ttlSeconds * 1000).toISOString(),
    };
    await jobStore.insertQuote(this.db, row);
    return this.view(row, identity ? remaining : null);
  }

  /** A request's callback URL, checked: its normalized form (400 callback_url_refused). */
  checkCallback(url: string): Promise<string> {
    return this.options.checkCallback
      ? this.options.checkCallback(url)
      : checkCallbackUrl(url, { allowPrivate: false });
  }

  /**
   * POST /api/ppp-checkout with a callback_url: the open quote takes it (checked first); a quote
   * already paid keeps its own (409 `quote_mismatch` when they differ).
   */
  async setCallback(quote: QuoteRow, url: string, db: Executor = this.db): Promise<QuoteRow> {
    const checked = await this.checkCallback(url);
    if ((quote.callback_url ?? null) === checked) return quote;
    if (quote.state === "open" && (await quoteStore.setCallback(db, quote.id, checked))) {
      return { ...quote, callback_url: checked };
    }
    throw new Problem(409, "quote_mismatch", `Quote ${quote.id} was paid with another callback_url.`, {
      quote_id: quote.id,
      fields: ["callback_url"],
    });
  }

  /** A quote by id (404 `quote_not_found`); an open quote past its expiry is marked expired first. */
  async get(id: string, db: Executor = this.db): Promise<QuoteRow> {
    const row = await jobStore.quote(db, id);
    if (!row) throw new Problem(404, "quote_not_found", `No quote ${id}; ask for one with POST /api/ppp-quote.`);
    if (row.state === "open" && isPast(row.expires_at, this.now())) {
      await jobStore.quoteTransition(db, id, ["open"], "expired");
      return (await jobStore.quote(db, id)) ?? { ...row, state: "expired" };
    }
    return row;
  }

  /**
   * The quote when it can still be paid or turn into its job: open and not expired, or already
   * paid. 404 `quote_not_found`, 410 `quote_expired`, 409 `quote_already_used` (it bought a job).
   */
  async payable(id: string, db: Executor = this.db): Promise<QuoteRow> {
    const row = await this.get(id, db);
    if (row.state === "expired") {
      throw new Problem(
        410,
        "quote_expired",
        `Quote ${id} expired at ${row.expires_at}; ask for a new one with POST /api/ppp-quote.`,
        { quote_id: id, expired_at: row.expires_at },
      );
    }
    if (row.state === "used") {
      throw new Problem(409, "quote_already_used", `Quote ${id} has already bought a job.`, {
        quote_id: id,
        job_id: row.job_id,
      });
    }
    return row;
  }

  /**
   * A paid retry (or a checkout) must ask for exactly what was quoted: 409 `quote_mismatch` naming
   * the fields that differ. Amounts are never taken from the client.
   */
  assertMatches(quote: QuoteRow, request: SuiteRequest): void {
    const asked = {
      product: request.product,
      dataClass: request.dataClass,
      op: request.op,
      level: request.level ?? DEFAULT_SUITE_LEVEL,
      bytes: request.bytes,
      callback_url: normalUrl(request.callback_url),
    };
    const quoted = {
      product: quote.product,
      dataClass: quote.data_class,
      op: quote.op,
      level: quote.level,
      bytes: n(quote.bytes),
      callback_url: quote.callback_url ?? null,
    };
    const differ = (Object.keys(asked) as (keyof typeof asked)[]).filter((k) => asked[k] !== quoted[k]);
    if (differ.length > 0) {
      throw new Problem(
        409,
        "quote_mismatch",
        `The request differs from quote ${quote.id} in ${differ.join(", ")}; send the quoted request or ask for a new quote.`,
        { quote_id: quote.id, fields: differ },
      );
    }
  }

  /**
   * Before a quote with free bytes buys its job (inside the transaction that creates it, under
   * `lockFreeAdmission`): its caller (the identity's month, else the IP's day) must still have that
   * much free volume left, counting everything else it used or holds since (another quote may have
   * bought a job meanwhile). 409 `quote_free_cap_changed` otherwise: ask for a new quote. An
   * anonymous quote without a client IP (made before IPs were kept) has nothing left.
   */
  async recheckFreeCap(quote: QuoteRow, db: Executor = this.db): Promise<void> {
    const free = BigInt(String(quote.free_bytes));
    if (free === 0n) return;
    const left = await this.callerFreeRemaining(quote.identity_id, quote.client_ip_hash ?? null, db, quote.id);
    if (left < free) {
      const whose = quote.identity_id === null ? "IP's free allowance left today" : "identity's free cap left";
      throw new Problem(
        409,
        "quote_free_cap_changed",
        `The ${whose} (${left} bytes) no longer covers the ${free} free bytes of quote ${quote.id}; ask for a new quote.`,
        { quote_id: quote.id, free_bytes: n(free), free_cap_remaining_bytes: n(left) },
      );
    }
  }

  /** The wire view of a quote; `freeRemaining`: the identity's free cap left when it was made (null without one). */
  view(row: QuoteRow, freeRemaining: bigint | null): QuoteView {
    const bytes = n(row.bytes);
    const free = n(row.free_bytes);
    const level = (LEVELS as readonly string[]).includes(row.level) ? (row.level as Level) : DEFAULT_SUITE_LEVEL;
    const op = row.op as SuiteOp;
    const left = freeRemaining === null ? null : n(freeRemaining);
    return {
      quote_id: row.id,
      state: row.state,
      created_at: row.created_at,
      expires_at: row.expires_at,
      product: row.product,
      dataClass: row.data_class,
      op: row.op,
      level: row.level,
      bytes,
      billable_bytes: n(row.billable_bytes),
      free_bytes: free,
      free_cap_remaining_bytes: left,
      free_cap_remaining_after_bytes: left === null ? null : Math.max(0, left - free),
      free_cap_period: row.identity_id === null ? null : periodOf(new Date(row.created_at)),
      amount_units: row.amount_units,
      amount_usd: usdOf(row.amount_units),
      amount_cents: row.amount_cents,
      currency: "usd",
      free: row.amount_units === "0",
      tiers: JSON.parse(row.tiers) as PriceTier[],
      estimate: {
        seconds: estimateSeconds(bytes, op, level),
        level_note: levelNote(level),
        by_level: estimatesByLevel(bytes, op),
      },
      pay: { x402: PAY_X402, card: PAY_CARD },
      pricing_model: VERSIONS.suitePricingModel,
      callback_url: row.callback_url ?? null,
    };
  }
}

/** A callback URL as stored (URL-normalized); null when absent or not a URL. */
export function normalUrl(url: string | undefined | null): string | null {
  if (url === undefined || url === null) return null;
  try {
    const u = new URL(url);
    u.hash = "";
    return u.href;
  } catch {
    return null;
  }
}

const usdOf = (units: string): string => usdOfUnits(BigInt(units));

const isPast = (iso: string, now: Date): boolean => iso <= now.toISOString();

/** The request rules again, for callers that do not come through the route schema (400 problems). */
function checkRequest(input: SuiteRequest): void {
  const bad = (field: string, rule: string) =>
    new Problem(400, "quote_request_invalid", `Invalid ${field}: ${rule}.`, { field });
  if (!(SUITE_PRODUCTS as readonly string[]).includes(input.product))
    throw bad("product", `one of ${SUITE_PRODUCTS.join(", ")}`);
  if (!(SUITE_DATA_CLASSES as readonly string[]).includes(input.dataClass))
    throw bad("dataClass", `one of ${SUITE_DATA_CLASSES.join(", ")}`);
  if (!(SUITE_OPS as readonly string[]).includes(input.op)) throw bad("op", `one of ${SUITE_OPS.join(", ")}`);
  if (input.level !== undefined && !(LEVELS as readonly string[]).includes(input.level))
    throw bad("level", `one of ${LEVELS.join(", ")}`);
  if (!Number.isSafeInteger(input.bytes) || input.bytes < 1 || input.bytes > MAX_JOB_BYTES_NUMBER)
    throw bad("bytes", `an integer from 1 to ${MAX_JOB_BYTES_NUMBER}`);
}

import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { type PricedItem, quoteItem } from "../orders/priced-item.js";
import type { CardService, CheckoutResult } from "../payments/card/service.js";
import type { VerifiedCredential } from "../payments/mpp/service.js";
import type { BuyerSecrets, Challenge, PurchaseOutcome, X402Service } from "../payments/x402/service.js";
import {
  callerOfQuote,
  DEFAULT_FREE_LIMITS,
  FreeAdmission,
  type FreeLimits,
  lockFreeAdmission,
} from "./free-admission.js";
import type { QuoteView, SuiteRequest } from "./quotes/schemas.js";
import { normalUrl, type QuoteClient, type QuoteService } from "./quotes/service.js";
import type { JobService } from "./service.js";
import { jobStore } from "./store.js";
import type { QuoteRow } from "./tables.js";

/**
 * Buying a suite job: every request is priced by a persisted quote; within the free cap the job
 * starts at once, above it the quote is paid through the one payment core (x402 here, card
 * checkout in payments/card), whose grant creates the job exactly once.
 *
 * A free job is created in one transaction under `lockFreeAdmission` (a PostgreSQL advisory lock;
 * SQLite serializes writers): the caller's free volume is re-checked there (its identity's month,
 * else its IP's day) and admission applies (src/jobs/free-admission.ts: queued and running free
 * jobs per caller, queued free bytes of all callers), so concurrent requests, on one instance or
 * many sharing a database, never go past them.
 */

export const SUITE_RESOURCE_PATH = "/api/x402-suite";

export interface SuitePurchaseRequest extends SuiteRequest {
  /** The quote to pay (from the 402 or POST /api/ppp-quote); without it, the request is quoted again. */
  quote_id?: string | null | undefined;
}

export interface FreeJob {
  job_id: string;
  job_token: string;
  quote_id: string;
  status_url: string;
  upload_url: string;
  upload_tus: string;
  output_url: string;
  amount_units: "0";
  quote: QuoteView;
  /** with a callback_url: the secret its events are signed with (whsec_…, src/webhooks/signing.ts) */
  webhook_secret?: string;
}

export interface SuitePurchaseOptions {
  /** admission of free jobs (defaults: 1 running and 3 queued per caller, 20 GB queued in all) */
  limits?: FreeLimits;
  /** the clock of admission (tests) */
  now?: () => Date;
}

export type SuiteOutcome =
  | { kind: "free"; body: FreeJob }
  | { kind: "quote_challenge"; challenge: Challenge; quote: QuoteView; item: PricedItem }
  | PurchaseOutcome;

export class SuitePurchase {
  private readonly admission: FreeAdmission;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly quotes: QuoteService,
    private readonly jobs: JobService,
    private readonly payments: X402Service,
    private readonly card: CardService,
    private readonly baseUrl: string,
    options: SuitePurchaseOptions = {},
  ) {
    this.admission = new FreeAdmission(options.limits ?? DEFAULT_FREE_LIMITS, options.now);
  }

  /**
   * POST /api/ppp-checkout: a hosted card checkout for a quote (the human path). The amount is the
   * quote's, rounded up to the cent; the job is created when the payment lands (webhook or the
   * success page), once.
   */
  async checkout(
    quoteId: string,
    email: string | undefined,
    callbackUrl?: string | undefined,
  ): Promise<CheckoutResult & { quote_id: string }> {
    let quote = await this.quotes.payable(quoteId);
    // a callback_url given here is checked (400 callback_url_refused) and kept with the open quote
    if (callbackUrl !== undefined) quote = await this.quotes.setCallback(quote, callbackUrl);
    if (quote.amount_units === "0") {
      throw new Problem(
        409,
        "quote_is_free",
        `Quote ${quote.id} is within the free cap: nothing to pay. Start it with POST /api/x402-suite (same request, no payment).`,
        { quote_id: quote.id },
      );
    }
    // Its free part must still be the caller's before a checkout is made for the rest.
    if (quote.state === "open") await this.quotes.recheckFreeCap(quote);
    const to = email ?? quote.email;
    if (!to) throw new Problem(400, "email_required", "A card checkout needs an e-mail address for the receipt.");
    const session = await this.card.createItemCheckout(quoteItem(quote, this.resource()), to);
    return { ...session, quote_id: quote.id };
  }

  /** The priced item of a quote (for the MPP challenges of a refusal that names it). */
  async itemOfQuote(quoteId: string): Promise<PricedItem> {
    return quoteItem(await this.quotes.get(quoteId), this.resource());
  }

  private resource(): string {
    return `${this.baseUrl}${SUITE_RESOURCE_PATH}`;
  }

  /**
   * POST /api/x402-suite: free → the job at once; unpaid → 402 with the quote; paid → the job.
   * `client`: the request's client IP (the anonymous free allowance and admission count it).
   */
  async x402(
    input: SuitePurchaseRequest,
    payment: string | VerifiedCredential | undefined,
    identity: { id: string } | null,
    secrets: BuyerSecrets = {},
    client: QuoteClient = {},
  ): Promise<SuiteOutcome> {
    if (payment === undefined) {
      // A free quote whose caller's free volume was taken meanwhile (a concurrent request) is
      // quoted again: the new quote is a 402, or free for what is left.
      for (let attempt = 1; ; attempt++) {
        const view = await this.quotes.quote(stripQuoteId(input), identity, client);
        const quote = await this.quotes.get(view.quote_id);
        if (!view.free) {
          const item = quoteItem(quote, this.resource());
          return { kind: "quote_challenge", challenge: this.payments.challengeFor(item), quote: view, item };
        }
        try {
          return { kind: "free", body: await this.startFree(quote, view) };
        } catch (err) {
          if (attempt < 3 && err instanceof Problem && err.code === "quote_free_cap_changed") continue;
          throw err;
        }
      }
    }
    // A retry of a proof already in the ledger pays the quote it was reserved for.
    const mpp = typeof payment === "string" ? undefined : payment;
    const known = mpp
      ? await this.payments.itemOfParsedProof(mpp.proof)
      : await this.payments.itemOfProof(payment as string);
    // A new MPP credential pays the quote its challenge was issued for (HMAC-bound), unless the body names one.
    const bound = mpp?.bound?.kind === "quote" && !input.quote_id ? mpp.bound.ref : undefined;
    const quote =
      known?.kind === "quote" && known.ref
        ? await this.quotes.get(known.ref)
        : await this.quoteFor(bound ? { ...input, quote_id: bound } : input, identity, client);
    if (known?.kind === "quote") this.quotes.assertMatches(quote, input);
    if (quote.amount_units === "0") {
      throw new Problem(
        409,
        "quote_is_free",
        `Quote ${quote.id} is within the free cap: nothing to pay. Send the request without a payment header to start the job.`,
        { quote_id: quote.id },
      );
    }
    // Its free part must still be the caller's before anything is charged (409, nothing paid).
    if (quote.state === "open") await this.quotes.recheckFreeCap(quote);
    const item = quoteItem(quote, this.resource());
    if (mpp) return mpp.buy(item, { email: input.email ?? null }, secrets);
    return this.payments.buy(item, { email: input.email ?? null }, payment as string, secrets);
  }

  /**
   * The quote a paid retry pays: the one it names, else the newest open quote of the same request
   * and identity (what a stock client's retry of the same body means), else a fresh one priced now.
   */
  private async quoteFor(
    input: SuitePurchaseRequest,
    identity: { id: string } | null,
    client: QuoteClient,
  ): Promise<QuoteRow> {
    if (input.quote_id) {
      const quote = await this.quotes.payable(input.quote_id);
      this.quotes.assertMatches(quote, input);
      if ((quote.identity_id ?? null) !== (identity?.id ?? null)) {
        throw new Problem(409, "quote_mismatch", "This quote was made for another identity.", {
          quote_id: quote.id,
          fields: ["identity"],
        });
      }
      return quote;
    }
    const open = await jobStore.latestOpenQuote(this.db, {
      product: input.product,
      data_class: input.dataClass,
      op: input.op,
      level: input.level ?? "fast",
      bytes: input.bytes,
      identity_id: identity?.id ?? null,
      now: new Date().toISOString(),
      callback_url: normalUrl(input.callback_url),
    });
    // An anonymous quote is the one of the same client IP (its free part is that IP's).
    if (open && (identity !== null || (open.client_ip_hash ?? null) === this.quotes.ipHash(client))) return open;
    const view = await this.quotes.quote(stripQuoteId(input), identity, client);
    return this.quotes.get(view.quote_id);
  }

  /**
   * A quote within its caller's free volume starts its job at once: under the free-admission lock,
   * the free volume is re-checked and admission applied in the transaction that creates the job
   * (429 `free_jobs_limit`, 503 `free_tier_busy`, 409 `quote_free_cap_changed`; the quote stays open).
   */
  private async startFree(quote: QuoteRow, view: QuoteView): Promise<FreeJob> {
    const job = await this.db.transaction().execute(async (trx) => {
      await lockFreeAdmission(trx);
      await this.quotes.recheckFreeCap(quote, trx);
      await this.admission.admit(trx, callerOfQuote(quote), BigInt(String(quote.bytes)));
      return (await this.jobs.createFromQuote(quote, { by: "free", ref: null }, trx)).job;
    });
    const links = this.jobs.links(job.id);
    const secret = await this.jobs.webhookSecretOf(job.id);
    return {
      job_id: job.id,
      job_token: this.jobs.tokenFor(job.id),
      quote_id: quote.id,
      status_url: links.self,
      upload_url: links.input,
      upload_tus: links.upload_tus,
      output_url: links.output,
      amount_units: "0",
      quote: { ...view, state: "used" },
      ...(secret ? { webhook_secret: secret } : {}),
    };
  }
}

function stripQuoteId(input: SuitePurchaseRequest): SuiteRequest {
  const { quote_id: _q, ...rest } = input;
  return rest;
}

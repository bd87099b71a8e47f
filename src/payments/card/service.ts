import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { isUniqueViolation, nowIso } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { Problem } from "../../http/problem.js";
import type { JobService } from "../../jobs/service.js";
import type { PricedItem } from "../../orders/priced-item.js";
import type { Granted, OrderService, OrderView } from "../../orders/service.js";
import { cardReadiness, checkoutPaymentMethods } from "./rails.js";
import { cardStore } from "./store.js";
import { idOf, type Stripe, StripeSdk } from "./stripe.js";
import type { CardSessionRow, CardSessionStatus, WebhookEventRow } from "./tables.js";

/** A retried POST /api/checkout for the same (sku, email) inside this window returns the same session. */
export const CHECKOUT_REUSE_WINDOW_MS = 10 * 60 * 1000;

const STATUS_REREAD_MS = 2_000;
const STATUS_UNKNOWN_REREAD_MS = 30_000;

export const SESSION_ID = /^cs_[A-Za-z0-9_]{1,250}$/;

/** The proof key of a card order: one Checkout Session → at most one order. */
export const sessionProofKey = (sessionId: string) => `stripe:session:${sessionId}`;

const PAID_EVENTS = new Set(["checkout.session.completed", "checkout.session.async_payment_succeeded"]);
const SESSION_EVENTS = new Set([...PAID_EVENTS, "checkout.session.async_payment_failed", "checkout.session.expired"]);

export interface CheckoutResult {
  url: string;
  session_id: string;
  /** true when a retried request got the session created moments ago. */
  reused: boolean;
}

export interface SessionStatus {
  session_id: string;
  sku: string;
  rail: string;
  status: CardSessionStatus;
  amount_cents: number;
  order: OrderView | null;
  access_url: string | null;
  /** A paid suite quote's job: its id, token and where to upload (null for products). */
  job: { job_id: string; job_token: string; status_url: string; upload_url: string; output_url: string } | null;
  /** Why an unpaid completed session waits (bank debits settle in days). */
  pending_reason: string | null;
}

export interface WebhookResult {
  event_id: string;
  type: string;
  /** The event id had been received before. */
  duplicate: boolean;
  /** true when this delivery did the handling; false when it answers the stored outcome of an earlier one. */
  handled: boolean;
  outcome: string;
}

/**
 * The card rails: hosted Checkout Sessions, static payment links and the signed webhook.
 * Every paid session ends in `OrderService.grant` with proof key `stripe:session:<cs_id>`,
 * after re-reading the session from Stripe and checking amount, currency and sku.
 */
export class CardService {
  private readonly skuByLinkId = new Map<string, string>();
  /** When the public status route last re-read each session from Stripe (bounds Stripe calls per session). */
  private readonly lastRead = new Map<string, number>();
  /** Jobs answer paid quote sessions (set by the composition root). */
  jobs: Pick<JobService, "tokenFor" | "links"> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly orders: OrderService,
    private readonly catalog: Catalog,
    private readonly config: Config,
    private readonly stripe: Stripe | undefined,
  ) {
    for (const [sku, linkId] of Object.entries(config.paymentLinkIds)) this.skuByLinkId.set(linkId, sku);
  }

  private requireStripe(): Stripe {
    if (!this.stripe) {
      throw new Problem(
        503,
        "card_rails_not_configured",
        "Card payments are not configured on this server (STRIPE_SECRET_KEY is not set). Use another rail: see GET /api/payments.",
        { configured: false, alternatives: ["POST /api/claims", "POST /api/x402-products"] },
      );
    }
    return this.stripe;
  }

  /** Creates (or, for a retry inside the window, reuses) a hosted Checkout Session. */
  async createCheckout(input: {
    sku: string;
    email: string;
    rail?: string | null | undefined;
  }): Promise<CheckoutResult> {
    const rail = input.rail ?? "stripe";
    if (rail !== "stripe") {
      throw new Problem(400, "unsupported_rail", `POST /api/checkout only takes rail "stripe", not "${rail}".`, {
        rail,
        supported: ["stripe"],
        hint: "Manual crypto and wire: POST /api/claims. Agents: POST /api/x402-products.",
      });
    }
    const email = input.email.trim();
    if (!isEmail(email)) throw new Problem(400, "invalid_email", "email must be a valid e-mail address.");
    const product = this.catalog.resolve(input.sku);
    const ready = cardReadiness(this.config).checkout;
    if (!ready.configured) {
      throw new Problem(
        503,
        "card_rails_not_configured",
        `Card checkout is not configured on this server (missing ${ready.missing.join(", ")}). Use another rail: see GET /api/payments.`,
        {
          configured: false,
          missing: { card_checkout: ready.missing },
          alternatives: ["POST /api/claims", "POST /api/x402-products"],
        },
      );
    }
    const window = Math.floor(Date.now() / CHECKOUT_REUSE_WINDOW_MS);
    return this.openSession(this.sessionParams(product, email), {
      requestKey: `checkout:${product.sku}:${sha256(email.toLowerCase()).slice(0, 32)}:${window}`,
      sku: product.sku,
      email,
      amountCents: product.amountCents,
      item: { kind: "product", ref: product.sku },
    });
  }

  /**
   * Creates a hosted Checkout Session (or answers the open one of the same request key) and records
   * it. Same request and parameters in the same window → same idempotency key → Stripe replays it.
   */
  private async openSession(
    params: Stripe.Checkout.SessionCreateParams,
    r: {
      requestKey: string;
      sku: string;
      email: string;
      amountCents: number;
      item: { kind: "product" | "quote"; ref: string };
    },
  ): Promise<CheckoutResult> {
    const stripe = this.requireStripe();
    const reuse = await cardStore.openSessionByRequestKey(this.db, r.requestKey);
    if (reuse?.url) return { url: reuse.url, session_id: reuse.id, reused: true };
    const idempotencyKey = `labphi:${sha256(`${r.requestKey}|${JSON.stringify(params)}`)}`;
    let session: Stripe.Checkout.Session;
    try {
      session = await stripe.checkout.sessions.create(params, { idempotencyKey });
    } catch (err) {
      throw stripeProblem(err, "creating the checkout session");
    }
    if (!session.url) throw new Problem(502, "stripe_bad_response", "Stripe answered a session without a URL.");
    const at = nowIso();
    const fresh = await cardStore.insertSessionIfAbsent(this.db, {
      id: session.id,
      rail: "card_checkout",
      sku: r.sku,
      email: r.email,
      amount_cents: r.amountCents,
      currency: "usd",
      payment_link_id: null,
      payment_intent_id: idOf(session.payment_intent),
      status: "open",
      url: session.url,
      request_key: r.requestKey,
      order_id: null,
      refunded_at: null,
      note: null,
      created_at: at,
      updated_at: at,
      item_kind: r.item.kind,
      item_ref: r.item.ref,
      job_id: null,
    });
    return { url: session.url, session_id: session.id, reused: !fresh };
  }

  /**
   * A hosted Checkout Session for a priced item other than a catalog product (a suite quote): the
   * amount is the item's, never the client's; the job is created once, when the payment lands
   * (webhook or success-page read), through the order core.
   */
  async createItemCheckout(item: PricedItem, email: string): Promise<CheckoutResult> {
    if (!isEmail(email.trim())) throw new Problem(400, "invalid_email", "email must be a valid e-mail address.");
    const ready = cardReadiness(this.config).checkout;
    if (!ready.configured) {
      throw new Problem(
        503,
        "card_rails_not_configured",
        `Card checkout is not configured on this server (missing ${ready.missing.join(", ")}). Pay with x402: POST /api/x402-suite.`,
        { configured: false, missing: { card_checkout: ready.missing }, alternatives: ["POST /api/x402-suite"] },
      );
    }
    const base = this.config.baseUrl;
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: "payment",
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: "usd",
            unit_amount: item.amountCents,
            product_data: {
              name: item.name,
              description: item.description,
              metadata: { item_kind: item.kind, item_ref: item.ref },
            },
          },
        },
      ],
      customer_email: email.trim(),
      // A suite quote's buyer comes back to the jobs pages: /jobs/paid shows the job and its token.
      success_url: `${base}/jobs/paid?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${base}/jobs?checkout=cancelled`,
      metadata: { sku: item.sku, item_kind: item.kind, item_ref: item.ref, email: email.trim(), source: "labphi" },
      payment_intent_data: { metadata: { item_kind: item.kind, item_ref: item.ref, source: "labphi" } },
    };
    return this.openSession(params, {
      requestKey: `checkout:${item.kind}:${item.ref}`,
      sku: item.sku,
      email: email.trim(),
      amountCents: item.amountCents,
      item: { kind: item.kind, ref: item.ref },
    });
  }

  /** A quote session read from Stripe: checked against our row (amount, currency, mode), then its job granted once. */
  private async syncQuoteSession(
    s: Stripe.Checkout.Session,
    local: CardSessionRow,
  ): Promise<{ outcome: string; session?: CardSessionRow }> {
    const at = nowIso();
    const mismatch =
      s.mode !== "payment"
        ? `mode ${s.mode}`
        : (s.currency ?? "").toLowerCase() !== "usd"
          ? `currency ${s.currency}`
          : s.amount_total !== local.amount_cents
            ? `amount ${s.amount_total} != ${local.amount_cents}`
            : s.metadata?.item_ref && s.metadata.item_ref !== local.item_ref
              ? "quote changed"
              : undefined;
    if (mismatch) {
      const changed = await cardStore.transition(this.db, s.id, ["open", "awaiting_payment"], {
        status: "mismatch",
        note: mismatch,
        updated_at: at,
      });
      if (changed) await this.orders.audit("stripe", "card.session_mismatch", s.id, { note: mismatch });
      return { outcome: `mismatch:${mismatch}` };
    }
    const paid = s.status === "complete" && (s.payment_status === "paid" || s.payment_status === "no_payment_required");
    if (!paid) {
      if (s.status === "expired") {
        await cardStore.transition(this.db, s.id, ["open", "awaiting_payment"], { status: "expired", updated_at: at });
        return { outcome: "expired", session: await cardStore.session(this.db, s.id) };
      }
      return { outcome: "open", session: await cardStore.session(this.db, s.id) };
    }
    const pi = idOf(s.payment_intent);
    const result = await this.db.transaction().execute(async (trx) => {
      const job = await this.orders.grantQuote(
        { proofKey: sessionProofKey(s.id), quoteId: local.item_ref ?? "", rail: "card_checkout" },
        trx,
      );
      await cardStore.transition(trx, s.id, ["open", "awaiting_payment", "failed", "expired"], {
        status: "paid",
        job_id: job.jobId,
        payment_intent_id: pi,
        updated_at: at,
      });
      return job;
    });
    return {
      outcome: result.created ? "granted" : "already_granted",
      session: await cardStore.session(this.db, s.id),
    };
  }

  /** The Checkout Session parameters for one product (mode payment, catalog price in USD). */
  sessionParams(product: Product, email: string): Stripe.Checkout.SessionCreateParams {
    const base = this.config.baseUrl;
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: "payment",
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: "usd",
            unit_amount: product.amountCents,
            product_data: { name: product.name, description: product.blurb, metadata: { sku: product.sku } },
          },
        },
      ],
      customer_email: email,
      success_url: `${base}/pay/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${base}/pay/cancel?sku=${encodeURIComponent(product.sku)}`,
      metadata: { sku: product.sku, email, source: "labphi" },
      payment_intent_data: { metadata: { sku: product.sku, source: "labphi" } },
    };
    const methods = checkoutPaymentMethods(this.config);
    if (methods.mode === "allow_list") {
      params.allowed_payment_method_types =
        methods.methods as Stripe.Checkout.SessionCreateParams.AllowedPaymentMethodType[];
    }
    return params;
  }

  /**
   * Verifies and handles one webhook delivery. Bad or missing signature → 400 and nothing is
   * recorded. Events are stored by id: a delivery of an already processed event does nothing.
   */
  async receiveWebhook(raw: Buffer, signature: string | undefined): Promise<WebhookResult> {
    const secret = this.config.stripe.webhookSecret;
    if (!secret) {
      throw new Problem(
        503,
        "stripe_webhook_not_configured",
        "Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET is not set): no event can be verified.",
        { missing: { stripe_webhook: ["STRIPE_WEBHOOK_SECRET"] } },
      );
    }
    // The signature is checked first, with the static helper (no API key needed): a bad or
    // missing signature is always 400, whatever else is missing; only a signed event can get 503.
    if (!signature) throw new Problem(400, "missing_signature", "The Stripe-Signature header is required.");
    let event: Stripe.Event;
    try {
      event = StripeSdk.webhooks.constructEvent(raw, signature, secret);
    } catch {
      throw new Problem(400, "bad_signature", "The Stripe-Signature does not verify for this body.");
    }
    if (!this.stripe) {
      throw new Problem(
        503,
        "stripe_webhook_not_configured",
        "This event is signed correctly, but it cannot be handled: STRIPE_SECRET_KEY is not set (sessions are re-read from Stripe). Stripe delivers it again later.",
        { missing: { stripe_webhook: ["STRIPE_SECRET_KEY"] } },
      );
    }
    const object = (event.data?.object ?? {}) as { id?: unknown };
    const row: WebhookEventRow = {
      id: event.id,
      provider: "stripe",
      type: event.type,
      object_id: typeof object.id === "string" ? object.id : null,
      livemode: event.livemode ? 1 : 0,
      payload_sha256: sha256(raw),
      received_at: nowIso(),
      processed_at: null,
      outcome: null,
      attempts: 1,
    };
    const { row: stored, fresh } = await cardStore.recordEvent(this.db, row);
    if (!fresh && stored.processed_at !== null) {
      return {
        event_id: event.id,
        type: event.type,
        duplicate: true,
        handled: false,
        outcome: stored.outcome ?? "processed",
      };
    }
    let outcome: string;
    try {
      outcome = await this.dispatch(event.type, row.object_id);
    } catch (err) {
      const problem = err instanceof Problem ? err : stripeProblem(err, "handling the event");
      await cardStore.noteEventError(this.db, event.id, `error:${problem.code}`);
      throw problem; // non-2xx: Stripe delivers the event again later
    }
    await cardStore.finishEvent(this.db, event.id, outcome, nowIso());
    return { event_id: event.id, type: event.type, duplicate: !fresh, handled: true, outcome };
  }

  private async dispatch(type: string, objectId: string | null): Promise<string> {
    if (SESSION_EVENTS.has(type)) {
      if (!objectId || !SESSION_ID.test(objectId)) return "ignored:no_session_id";
      return (await this.syncSession(objectId, type)).outcome;
    }
    if (type === "charge.refunded") {
      if (!objectId) return "ignored:no_charge_id";
      return this.chargeRefunded(objectId);
    }
    if (type === "charge.dispute.created") {
      if (!objectId) return "ignored:no_dispute_id";
      return this.disputeCreated(objectId);
    }
    return "ignored:unhandled_type";
  }

  /**
   * Re-reads a session from Stripe and moves our record to the state Stripe reports. Called from
   * the webhook and from the success page; safe to run concurrently and repeatedly.
   * `eventType` only matters for a failed bank debit (Stripe's session then looks like a pending one).
   */
  async syncSession(
    sessionId: string,
    eventType?: string,
  ): Promise<{ outcome: string; session?: CardSessionRow; granted?: Granted }> {
    const stripe = this.requireStripe();
    let s: Stripe.Checkout.Session;
    try {
      s = await stripe.checkout.sessions.retrieve(sessionId);
    } catch (err) {
      if (isStripeNotFound(err)) return { outcome: "ignored:unknown_session" };
      throw stripeProblem(err, "reading the checkout session");
    }
    const local = await cardStore.session(this.db, s.id);
    if (local?.item_kind === "quote") return this.syncQuoteSession(s, local);
    if (!local && s.metadata?.source === "labphi" && s.metadata.item_kind === "quote") {
      return { outcome: "ignored:unknown_quote_session" };
    }
    const linkId = idOf(s.payment_link);
    let sku: string | undefined;
    let rail: string;
    if (local) {
      sku = local.sku;
      rail = local.rail;
    } else if (linkId) {
      sku = this.skuByLinkId.get(linkId);
      rail = "card_payment_link";
      if (!sku) return { outcome: "ignored:unknown_payment_link" };
    } else if (s.metadata?.source === "labphi" && s.metadata.sku) {
      sku = s.metadata.sku; // created by us, local row lost before it was written
      rail = "card_checkout";
    } else {
      return { outcome: "ignored:not_ours" };
    }

    const product = this.catalog.find(sku);
    const mismatch = this.mismatch(s, product, local, linkId);
    const at = nowIso();
    const email = s.customer_details?.email ?? s.customer_email ?? s.metadata?.email ?? local?.email ?? null;
    const pi = idOf(s.payment_intent);
    if (!local) {
      await cardStore.insertSessionIfAbsent(this.db, {
        id: s.id,
        rail,
        sku,
        email,
        amount_cents: s.amount_total ?? 0,
        currency: s.currency ?? "usd",
        payment_link_id: linkId,
        payment_intent_id: pi,
        status: "open",
        url: null,
        request_key: null,
        order_id: null,
        refunded_at: null,
        note: null,
        created_at: at,
        updated_at: at,
        item_kind: "product",
        item_ref: sku,
        job_id: null,
      });
    }
    if (mismatch || !product) {
      const note = mismatch ?? "unknown sku";
      const changed = await cardStore.transition(this.db, s.id, ["open", "awaiting_payment"], {
        status: "mismatch",
        note,
        updated_at: at,
      });
      if (changed) await this.orders.audit("stripe", "card.session_mismatch", s.id, { note, sku });
      return { outcome: `mismatch:${note}` };
    }

    const paid = s.status === "complete" && (s.payment_status === "paid" || s.payment_status === "no_payment_required");
    if (paid) {
      const granted = await this.grantSession(s, product, rail, email, pi, linkId);
      if (pi) {
        const refund = await cardStore.refund(this.db, pi);
        if (refund?.full) {
          await this.orders.revoke(granted.order.id, "stripe", `charge ${refund.charge_id} refunded`, "refunded");
          await cardStore.markRefunded(this.db, s.id, at);
        }
      }
      return {
        outcome: granted.created ? "granted" : "already_granted",
        session: await cardStore.session(this.db, s.id),
        granted,
      };
    }
    const settle = async (
      from: CardSessionStatus[],
      set: Parameters<typeof cardStore.transition>[3],
      outcome: string,
    ): Promise<{ outcome: string; session?: CardSessionRow }> => {
      const changed = await cardStore.transition(this.db, s.id, from, set);
      const after = await cardStore.session(this.db, s.id);
      // A stale or repeated trigger leaves a settled session as it is, and says so.
      return { outcome: changed || after?.status === set.status ? outcome : `stale:${after?.status}`, session: after };
    };
    if (s.status === "expired") {
      return settle(["open", "awaiting_payment"], { status: "expired", updated_at: at }, "expired");
    }
    if (eventType === "checkout.session.async_payment_failed" && s.payment_status === "unpaid") {
      return settle(
        ["open", "awaiting_payment"],
        { status: "failed", note: "the delayed payment failed", updated_at: at },
        "failed",
      );
    }
    if (s.status === "complete" && s.payment_status === "unpaid") {
      return settle(
        ["open"],
        { status: "awaiting_payment", payment_intent_id: pi, updated_at: at },
        "awaiting_payment",
      );
    }
    return { outcome: "open", session: await cardStore.session(this.db, s.id) };
  }

  /** Why a session must not be granted (amount, currency, sku), or undefined when it checks out. */
  private mismatch(
    s: Stripe.Checkout.Session,
    product: Product | undefined,
    local: CardSessionRow | undefined,
    linkId: string | null,
  ): string | undefined {
    if (!product) return "unknown sku";
    if (s.mode !== "payment") return `mode ${s.mode}`;
    if ((s.currency ?? "").toLowerCase() !== "usd") return `currency ${s.currency}`;
    if (s.amount_total !== product.amountCents) return `amount ${s.amount_total} != ${product.amountCents}`;
    if (local && s.metadata?.sku && s.metadata.sku !== local.sku) return `sku ${s.metadata.sku} != ${local.sku}`;
    if (local?.payment_link_id && linkId !== local.payment_link_id) return "payment link changed";
    return undefined;
  }

  private async grantSession(
    s: Stripe.Checkout.Session,
    product: Product,
    rail: string,
    email: string | null,
    pi: string | null,
    linkId: string | null,
  ): Promise<Granted> {
    const run = () =>
      this.db.transaction().execute(async (trx) => {
        const granted = await this.orders.grant(
          {
            proofKey: sessionProofKey(s.id),
            sku: product.sku,
            rail,
            amountCents: s.amount_total ?? product.amountCents,
            currency: "usd",
            transactionRef: pi,
            email,
            meta: { stripe_session: s.id, payment_link: linkId, livemode: s.livemode },
          },
          trx,
        );
        await cardStore.transition(trx, s.id, ["open", "awaiting_payment", "failed", "expired"], {
          status: "paid",
          order_id: granted.order.id,
          payment_intent_id: pi,
          email,
          updated_at: nowIso(),
        });
        return granted;
      });
    try {
      return await run();
    } catch (err) {
      if (isUniqueViolation(err)) return run(); // a concurrent delivery won: the retry reads its order
      throw err;
    }
  }

  /** `charge.refunded`: a full refund revokes the entitlement (now, or when the payment event lands later). */
  private async chargeRefunded(chargeId: string): Promise<string> {
    const stripe = this.requireStripe();
    let charge: Stripe.Charge;
    try {
      charge = await stripe.charges.retrieve(chargeId);
    } catch (err) {
      if (isStripeNotFound(err)) return "ignored:unknown_charge";
      throw stripeProblem(err, "reading the charge");
    }
    const pi = idOf(charge.payment_intent);
    if (!pi) return "ignored:no_payment_intent";
    const at = nowIso();
    await cardStore.recordRefund(this.db, {
      payment_intent_id: pi,
      charge_id: charge.id,
      amount_refunded_cents: charge.amount_refunded,
      full: charge.refunded ? 1 : 0,
      seen_at: at,
    });
    if (!charge.refunded) return "partial_refund";
    const sessions = await cardStore.sessionsByPaymentIntent(this.db, pi);
    let revoked = 0;
    for (const session of sessions) {
      if (!session.order_id) continue;
      await this.orders.revoke(session.order_id, "stripe", `charge ${charge.id} refunded`, "refunded");
      await cardStore.markRefunded(this.db, session.id, at);
      revoked++;
    }
    return revoked > 0 ? "refunded" : "refund_recorded";
  }

  /**
   * `charge.dispute.created` (a chargeback): the dispute is re-read and the order it is about is
   * revoked; the operator can see it in the audit log. Without an order yet, only the audit entry.
   */
  private async disputeCreated(disputeId: string): Promise<string> {
    const stripe = this.requireStripe();
    let dispute: Stripe.Dispute;
    try {
      dispute = await stripe.disputes.retrieve(disputeId);
    } catch (err) {
      if (isStripeNotFound(err)) return "ignored:unknown_dispute";
      throw stripeProblem(err, "reading the dispute");
    }
    const pi = idOf(dispute.payment_intent);
    if (!pi) return "ignored:no_payment_intent";
    const sessions = await cardStore.sessionsByPaymentIntent(this.db, pi);
    let revoked = 0;
    for (const session of sessions) {
      if (!session.order_id) continue;
      await this.orders.revoke(session.order_id, "stripe", `dispute ${dispute.id} (${dispute.reason})`);
      revoked++;
    }
    await this.orders.audit("stripe", "card.dispute", dispute.id, {
      payment_intent: pi,
      reason: dispute.reason,
      amount_cents: dispute.amount,
      orders_revoked: revoked,
    });
    return revoked > 0 ? "revoked" : "dispute_recorded";
  }

  /** What the success page and `GET /api/checkout/:id` show; re-reads Stripe until the session is settled. */
  async status(sessionId: string): Promise<SessionStatus> {
    if (!SESSION_ID.test(sessionId)) throw new Problem(400, "invalid_session_id", "session_id must look like cs_….");
    let local = await cardStore.session(this.db, sessionId);
    if ((!local || local.status === "open" || local.status === "awaiting_payment") && this.mayRead(sessionId, !local)) {
      local = (await this.syncSession(sessionId)).session ?? local;
    }
    if (!local) throw new Problem(404, "session_not_found", `No checkout session ${sessionId} is known here.`);
    let order: OrderView | null = null;
    let accessUrl: string | null = null;
    if (local.order_id) {
      const row = await this.orders.get(local.order_id);
      order = this.orders.view(row);
      accessUrl = this.orders.accessUrl(row.id);
    }
    let job: SessionStatus["job"] = null;
    if (local.job_id && this.jobs) {
      const links = this.jobs.links(local.job_id);
      job = {
        job_id: local.job_id,
        job_token: this.jobs.tokenFor(local.job_id),
        status_url: links.self,
        upload_url: links.input,
        output_url: links.output,
      };
    }
    return {
      session_id: local.id,
      sku: local.sku,
      rail: local.rail,
      status: local.status,
      amount_cents: local.amount_cents,
      order,
      access_url: accessUrl,
      job,
      pending_reason:
        local.status === "awaiting_payment"
          ? "The payment method settles later (for example a US bank debit, which takes up to 4 business days). Access is granted when the payment succeeds; this page shows it then."
          : null,
    };
  }

  /**
   * The status route is public: re-read a session from Stripe at most every 2 s, and an id we
   * do not know at most every 30 s, so random ids cannot turn into a stream of Stripe calls.
   */
  private mayRead(sessionId: string, unknown: boolean): boolean {
    if (!this.stripe) return false;
    const now = Date.now();
    const last = this.lastRead.get(sessionId);
    if (last !== undefined && now - last < (unknown ? STATUS_UNKNOWN_REREAD_MS : STATUS_REREAD_MS)) return false;
    if (this.lastRead.size >= 10_000) this.lastRead.clear();
    this.lastRead.set(sessionId, now);
    return true;
  }

  listEvents(q: { limit: number; offset: number; type?: string; search?: string; unprocessed?: boolean }) {
    return cardStore.listEvents(this.db, q);
  }
}

export function isEmail(value: string): boolean {
  return value.length <= 254 && /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[A-Za-z]{2,}$/.test(value);
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function isStripeNotFound(err: unknown): boolean {
  const e = err as { type?: string; statusCode?: number; code?: string };
  return e?.statusCode === 404 || e?.code === "resource_missing";
}

/** Stripe trouble → 502 (Stripe said no) or 503 (Stripe unreachable). Never leaks the key. */
function stripeProblem(err: unknown, doing: string): Problem {
  if (err instanceof Problem) return err;
  const e = err as { type?: string; statusCode?: number; message?: string; code?: string };
  if (e?.type === "StripeConnectionError" || e?.statusCode === undefined) {
    return new Problem(
      503,
      "stripe_unavailable",
      `Stripe could not be reached while ${doing}; try again.`,
      {},
      {
        "Retry-After": "5",
      },
    );
  }
  return new Problem(502, "stripe_error", `Stripe answered ${e.statusCode} while ${doing}.`, {
    stripe_code: e.code ?? null,
  });
}

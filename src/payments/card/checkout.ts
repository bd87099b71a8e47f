import type { Product } from "../../catalog/service.js";
import { nowIso } from "../../db/database.js";
import { Problem } from "../../http/problem.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import type { OrderView } from "../../orders/service.js";
import { type CardContext, isEmail, requireStripe, SESSION_ID, sha256, stripeProblem } from "./context.js";
import { cardReadiness, checkoutPaymentMethods } from "./rails.js";
import { cardStore } from "./store.js";
import { idOf, type Stripe } from "./stripe.js";
import type { CardSessionRow, CardSessionStatus } from "./tables.js";

/** A retried POST /api/checkout for the same (sku, email) inside this window returns the same session. */
export const CHECKOUT_REUSE_WINDOW_MS = 10 * 60 * 1000;

const STATUS_REREAD_MS = 2_000;
const STATUS_UNKNOWN_REREAD_MS = 30_000;

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
  job: {
    job_id: string;
    job_token: string;
    status_url: string;
    upload_url: string;
    output_url: string;
    /** with a callback_url: the job's webhook secret (whsec_…) */
    webhook_secret?: string;
  } | null;
  /** Why an unpaid completed session waits (bank debits settle in days). */
  pending_reason: string | null;
  /** The signed receipt of the paid order or job (null until paid). */
  receipt: string | null;
}

/**
 * Card checkout: opens hosted Checkout Sessions for a catalog product or a priced item (a suite
 * quote), and answers a session's status (re-reading Stripe through `sync` while it is unsettled).
 * Paying and granting happen in session-sync.ts.
 */
export class CardCheckout {
  /** When the public status route last re-read each session from Stripe (bounds Stripe calls per session). */
  private readonly lastRead = new Map<string, number>();

  constructor(
    private readonly ctx: CardContext,
    private readonly sync: (sessionId: string) => Promise<{ session?: CardSessionRow }>,
  ) {}

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
    const product = this.ctx.catalog.resolve(input.sku);
    const ready = cardReadiness(this.ctx.config).checkout;
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
      item: productItem(product, `${this.ctx.config.baseUrl}/api/checkout`),
    });
  }

  /**
   * A hosted Checkout Session for a priced item other than a catalog product (a suite quote): the
   * amount is the item's, never the client's; the job is created once, when the payment lands
   * (webhook or success-page read), through the order core.
   */
  async createItemCheckout(item: PricedItem, email: string): Promise<CheckoutResult> {
    if (!isEmail(email.trim())) throw new Problem(400, "invalid_email", "email must be a valid e-mail address.");
    const ready = cardReadiness(this.ctx.config).checkout;
    if (!ready.configured) {
      throw new Problem(
        503,
        "card_rails_not_configured",
        `Card checkout is not configured on this server (missing ${ready.missing.join(", ")}). Pay with x402: POST /api/x402-suite.`,
        { configured: false, missing: { card_checkout: ready.missing }, alternatives: ["POST /api/x402-suite"] },
      );
    }
    const base = this.ctx.config.baseUrl;
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: "payment",
      line_items: oneLine(item.amountCents, item.name, item.description, { item_kind: item.kind, item_ref: item.ref }),
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
      item,
    });
  }

  /** The Checkout Session parameters for one product (mode payment, catalog price in USD). */
  sessionParams(product: Product, email: string): Stripe.Checkout.SessionCreateParams {
    const base = this.ctx.config.baseUrl;
    const params: Stripe.Checkout.SessionCreateParams = {
      mode: "payment",
      line_items: oneLine(product.amountCents, product.name, product.blurb, { sku: product.sku }),
      customer_email: email,
      success_url: `${base}/pay/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${base}/pay/cancel?sku=${encodeURIComponent(product.sku)}`,
      metadata: { sku: product.sku, email, source: "labphi" },
      payment_intent_data: { metadata: { sku: product.sku, source: "labphi" } },
    };
    const methods = checkoutPaymentMethods(this.ctx.config);
    if (methods.mode === "allow_list") {
      params.allowed_payment_method_types =
        methods.methods as Stripe.Checkout.SessionCreateParams.AllowedPaymentMethodType[];
    }
    return params;
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
      /** What the session pays for: stored with it and handed to the order core when it is paid. */
      item: PricedItem;
    },
  ): Promise<CheckoutResult> {
    const stripe = requireStripe(this.ctx);
    const db = this.ctx.db;
    const reuse = await cardStore.openSessionByRequestKey(db, r.requestKey);
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
    const fresh = await cardStore.insertSessionIfAbsent(db, {
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
      item: JSON.stringify(r.item),
      job_id: null,
    });
    return { url: session.url, session_id: session.id, reused: !fresh };
  }

  /** What the success page and `GET /api/checkout/:id` show; re-reads Stripe until the session is settled. */
  async status(sessionId: string): Promise<SessionStatus> {
    if (!SESSION_ID.test(sessionId)) throw new Problem(400, "invalid_session_id", "session_id must look like cs_….");
    const { db, orders } = this.ctx;
    let local = await cardStore.session(db, sessionId);
    if ((!local || local.status === "open" || local.status === "awaiting_payment") && this.mayRead(sessionId, !local)) {
      local = (await this.sync(sessionId)).session ?? local;
    }
    if (!local) throw new Problem(404, "session_not_found", `No checkout session ${sessionId} is known here.`);
    let order: OrderView | null = null;
    let accessUrl: string | null = null;
    let receipt: string | null = null;
    if (local.order_id) {
      const row = await orders.get(local.order_id);
      order = orders.view(row);
      accessUrl = orders.accessUrl(row.id);
      const v = await orders.fulfilmentView("product", row.id);
      receipt = typeof v.receipt === "string" ? v.receipt : null;
    }
    let job: SessionStatus["job"] = null;
    if (local.job_id) {
      // What the quote's fulfiller shows of its job (the order core's table; card never knows jobs).
      const v = await orders.fulfilmentView("quote", local.job_id);
      job = {
        job_id: String(v.job_id),
        job_token: String(v.job_token),
        status_url: String(v.status_url),
        upload_url: String(v.upload_url),
        output_url: String(v.output_url),
        ...(typeof v.webhook_secret === "string" ? { webhook_secret: v.webhook_secret } : {}),
      };
      receipt = typeof v.receipt === "string" ? v.receipt : null;
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
      receipt,
    };
  }

  /**
   * The status route is public: re-read a session from Stripe at most every 2 s, and an id we
   * do not know at most every 30 s, so random ids cannot turn into a stream of Stripe calls.
   */
  private mayRead(sessionId: string, unknown: boolean): boolean {
    if (!this.ctx.stripe) return false;
    const now = Date.now();
    const last = this.lastRead.get(sessionId);
    if (last !== undefined && now - last < (unknown ? STATUS_UNKNOWN_REREAD_MS : STATUS_REREAD_MS)) return false;
    if (this.lastRead.size >= 10_000) this.lastRead.clear();
    this.lastRead.set(sessionId, now);
    return true;
  }
}

/** One line item at a price we set (integer cents, USD): the only amount a session can charge. */
function oneLine(
  amountCents: number,
  name: string,
  description: string,
  metadata: Record<string, string>,
): Stripe.Checkout.SessionCreateParams.LineItem[] {
  return [
    {
      quantity: 1,
      price_data: { currency: "usd", unit_amount: amountCents, product_data: { name, description, metadata } },
    },
  ];
}

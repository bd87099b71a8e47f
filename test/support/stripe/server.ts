import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";

/**
 * A local HTTP server standing in for the parts of Stripe's API the service uses
 * (Checkout Sessions, Charges, Disputes, Refunds), reached by the real `stripe` SDK through its
 * host/port/protocol settings (STRIPE_API_BASE). Stateful: tests move sessions through
 * payment, expiry and refunds, then deliver webhooks signed with the SDK's
 * `webhooks.generateTestHeaderString`. It also serves a minimal hosted-checkout page
 * (GET /c/pay/<id>) so a browser can complete a purchase end to end.
 * No request leaves the machine.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface StandInSession {
  id: string;
  object: "checkout.session";
  mode: string;
  status: "open" | "complete" | "expired";
  payment_status: "paid" | "unpaid" | "no_payment_required";
  amount_total: number;
  currency: string;
  metadata: Record<string, string>;
  customer_email: string | null;
  customer_details: { email: string | null } | null;
  payment_intent: string | null;
  payment_link: string | null;
  livemode: boolean;
  success_url: string | null;
  cancel_url: string | null;
  url: string | null;
  allowed_payment_method_types: string[] | null;
  line_items_input: unknown;
  created: number;
}

export interface StandInCharge {
  id: string;
  object: "charge";
  amount: number;
  amount_refunded: number;
  refunded: boolean;
  payment_intent: string;
  currency: string;
}

export interface StandInDispute {
  id: string;
  object: "dispute";
  amount: number;
  charge: string;
  payment_intent: string;
  reason: string;
  status: string;
  currency: string;
}

export interface StandInRefund {
  id: string;
  object: "refund";
  amount: number;
  charge: string;
  payment_intent: string;
  currency: string;
  status: "succeeded" | "pending";
  reason: string | null;
  metadata: Record<string, string>;
  created: number;
}

/** A signed event as Stripe would POST it to the webhook endpoint. */
export interface SignedEvent {
  type: string;
  payload: string;
  header: string;
  id: string;
}

const rid = (prefix: string) => `${prefix}_test_${randomBytes(12).toString("hex")}`;

/** Parses Stripe's form encoding (`a[b][0][c]=v`) into nested objects and arrays. */
export function parseStripeForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const parts = rawKey.split(/\[|\]\[|\]/).filter((p, i) => i === 0 || p !== "");
    let node: Record<string, unknown> | unknown[] = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const key = part === "" ? String((node as unknown[]).length) : part;
      const container = node as Record<string, unknown>;
      if (last) {
        container[key] = value;
        return;
      }
      const nextIsIndex = /^\d*$/.test(parts[i + 1] ?? "");
      if (container[key] === undefined) container[key] = nextIsIndex ? [] : {};
      node = container[key] as Record<string, unknown>;
    });
  }
  return root;
}

export class StripeStandIn {
  readonly secretKey = `sk_test_${randomBytes(12).toString("hex")}`;
  readonly webhookSecret = `whsec_${randomBytes(16).toString("hex")}`;
  readonly sessions = new Map<string, StandInSession>();
  readonly charges = new Map<string, StandInCharge>();
  readonly disputes = new Map<string, StandInDispute>();
  readonly refunds = new Map<string, StandInRefund>();
  /** Events Stripe sent because of an API call (e.g. `POST /v1/refunds`), in order; tests deliver them. */
  readonly sent: SignedEvent[] = [];
  /** The status a refund created through the API gets (`pending`: a bank debit, settled later). */
  refundStatus: StandInRefund["status"] = "succeeded";
  readonly requests: RecordedRequest[] = [];
  private readonly idempotent = new Map<string, { params: string; status: number; body: string }>();
  private failures: number[] = [];
  private server?: http.Server;
  private readonly sdk = new Stripe("sk_test_signing_only");
  port = 0;

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Environment for the service under test. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      STRIPE_SECRET_KEY: this.secretKey,
      STRIPE_WEBHOOK_SECRET: this.webhookSecret,
      STRIPE_API_BASE: this.base,
      ...extra,
    };
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.handle(req, Buffer.concat(chunks).toString("utf8"), res));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** The next `n` API calls answer with this HTTP status (e.g. 500) before normal service resumes. */
  failNext(status: number, n = 1): void {
    for (let i = 0; i < n; i++) this.failures.push(status);
  }

  private json(res: http.ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "request-id": rid("req") });
    res.end(text);
  }

  private notFound(res: http.ServerResponse, what: string): void {
    this.json(res, 404, {
      error: { type: "invalid_request_error", code: "resource_missing", message: `No such ${what}` },
    });
  }

  private handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): unknown {
    const url = new URL(req.url ?? "/", this.base);
    const path = url.pathname;

    // The hosted checkout page a browser lands on, and its "pay" button.
    const page = /^\/c\/pay\/(cs_test_[a-f0-9]+)$/.exec(path);
    if (page?.[1]) return this.checkoutPage(req, res, page[1], url);

    const body = raw ? parseStripeForm(raw) : Object.fromEntries(url.searchParams);
    const idem = req.headers["idempotency-key"];
    this.requests.push({
      method: req.method ?? "GET",
      path,
      idempotencyKey: typeof idem === "string" ? idem : undefined,
      authorization: req.headers.authorization,
      body,
    });
    if (req.headers.authorization !== `Bearer ${this.secretKey}`) {
      return this.json(res, 401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
    }
    const failure = this.failures.shift();
    if (failure !== undefined) {
      return this.json(res, failure, { error: { type: "api_error", message: "stand-in injected failure" } });
    }

    const key = typeof idem === "string" ? idem : undefined;
    if (req.method === "POST" && path === "/v1/checkout/sessions") {
      return this.idempotently(res, key, `${path}\n${raw}`, () => ({
        status: 200,
        body: this.sessionJson(this.createSession(body)),
      }));
    }
    if (req.method === "POST" && path === "/v1/refunds") {
      return this.idempotently(res, key, `${path}\n${raw}`, () => this.createRefund(body));
    }
    const refundMatch = /^\/v1\/refunds\/([^/]+)$/.exec(path);
    if (req.method === "GET" && refundMatch?.[1]) {
      const r = this.refunds.get(refundMatch[1]);
      return r ? this.json(res, 200, r) : this.notFound(res, "refund");
    }
    const sessionMatch = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (req.method === "GET" && sessionMatch?.[1]) {
      const s = this.sessions.get(sessionMatch[1]);
      return s ? this.json(res, 200, this.sessionJson(s)) : this.notFound(res, "checkout.session");
    }
    const disputeMatch = /^\/v1\/disputes\/([^/]+)$/.exec(path);
    if (req.method === "GET" && disputeMatch?.[1]) {
      const d = this.disputes.get(disputeMatch[1]);
      return d ? this.json(res, 200, d) : this.notFound(res, "dispute");
    }
    const chargeMatch = /^\/v1\/charges\/([^/]+)$/.exec(path);
    if (req.method === "GET" && chargeMatch?.[1]) {
      const c = this.charges.get(chargeMatch[1]);
      return c ? this.json(res, 200, c) : this.notFound(res, "charge");
    }
    return this.json(res, 404, {
      error: { type: "invalid_request_error", message: `Unrecognized request URL (${path})` },
    });
  }

  /**
   * Stripe's idempotent requests: the first answer to a key is stored (errors included) and replayed
   * with `Idempotent-Replayed: true`; the same key with other parameters or on another endpoint is a
   * 400 `idempotency_error`. Nothing runs twice.
   */
  private idempotently(
    res: http.ServerResponse,
    key: string | undefined,
    params: string,
    run: () => { status: number; body: unknown },
  ): void {
    if (key) {
      const seen = this.idempotent.get(key);
      if (seen) {
        if (seen.params !== params) {
          this.json(res, 400, {
            error: {
              type: "idempotency_error",
              message:
                "Keys for idempotent requests can only be used with the same parameters they were first used with.",
            },
          });
          return;
        }
        res.writeHead(seen.status, { "content-type": "application/json", "idempotent-replayed": "true" });
        res.end(seen.body);
        return;
      }
    }
    const out = run();
    const text = JSON.stringify(out.body);
    if (key) this.idempotent.set(key, { params, status: out.status, body: text });
    res.writeHead(out.status, { "content-type": "application/json" });
    res.end(text);
  }

  /**
   * `POST /v1/refunds` by `payment_intent` or `charge`, for `amount` (default: what is left). As
   * Stripe does: the charge's `amount_refunded` / `refunded` move at once (pending refunds count), a
   * fully refunded charge answers 400 `charge_already_refunded`, more than is left 400
   * `amount_too_large`; and Stripe sends `refund.created` and `charge.refunded` (in `sent`).
   */
  private createRefund(p: Record<string, unknown>): { status: number; body: unknown } {
    const invalid = (code: string, message: string, param?: string) => ({
      status: code === "resource_missing" ? 404 : 400,
      body: { error: { type: "invalid_request_error", code, message, ...(param ? { param } : {}) } },
    });
    const pi = typeof p.payment_intent === "string" ? p.payment_intent : undefined;
    const chargeId = typeof p.charge === "string" ? p.charge : undefined;
    if (!pi && !chargeId) return invalid("parameter_missing", "One of charge or payment_intent is required.");
    const charge = chargeId
      ? this.charges.get(chargeId)
      : [...this.charges.values()].find((c) => c.payment_intent === pi);
    if (!charge) {
      return chargeId
        ? invalid("resource_missing", `No such charge: '${chargeId}'`, "charge")
        : invalid("resource_missing", `No such payment_intent: '${pi}'`, "payment_intent");
    }
    if (charge.refunded) {
      return invalid("charge_already_refunded", `Charge ${charge.id} has already been refunded.`);
    }
    const left = charge.amount - charge.amount_refunded;
    const amount = p.amount === undefined ? left : Number(p.amount);
    if (!Number.isSafeInteger(amount) || amount <= 0) return invalid("parameter_invalid_integer", "Invalid amount.");
    if (amount > left) {
      return invalid(
        "amount_too_large",
        `Refund amount ($${(amount / 100).toFixed(2)}) is greater than unrefunded amount on charge ($${(left / 100).toFixed(2)})`,
        "amount",
      );
    }
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount;
    const refund: StandInRefund = {
      id: rid("re"),
      object: "refund",
      amount,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      currency: charge.currency,
      status: this.refundStatus,
      reason: typeof p.reason === "string" ? p.reason : null,
      metadata: (p.metadata ?? {}) as Record<string, string>,
      created: Math.floor(Date.now() / 1000),
    };
    this.refunds.set(refund.id, refund);
    this.send("refund.created", { ...refund });
    this.send("charge.refunded", { ...charge });
    return { status: 200, body: refund };
  }

  private send(type: string, object: unknown): void {
    this.sent.push({ type, ...this.event(type, object) });
  }

  /** The events Stripe sent (optionally of one type), removed from `sent`. */
  takeEvents(type?: string): SignedEvent[] {
    const taken = this.sent.filter((e) => type === undefined || e.type === type);
    for (const e of taken) this.sent.splice(this.sent.indexOf(e), 1);
    return taken;
  }

  private createSession(p: Record<string, unknown>): StandInSession {
    const items = (p.line_items ?? []) as {
      quantity?: string;
      price_data?: { unit_amount?: string; currency?: string };
    }[];
    const amount = items.reduce(
      (sum, li) => sum + Number(li.price_data?.unit_amount ?? 0) * Number(li.quantity ?? 1),
      0,
    );
    const id = rid("cs");
    const session: StandInSession = {
      id,
      object: "checkout.session",
      mode: String(p.mode ?? "payment"),
      status: "open",
      payment_status: "unpaid",
      amount_total: amount,
      currency: String(items[0]?.price_data?.currency ?? "usd"),
      metadata: (p.metadata ?? {}) as Record<string, string>,
      customer_email: typeof p.customer_email === "string" ? p.customer_email : null,
      customer_details: null,
      payment_intent: null,
      payment_link: null,
      livemode: false,
      success_url: typeof p.success_url === "string" ? p.success_url : null,
      cancel_url: typeof p.cancel_url === "string" ? p.cancel_url : null,
      url: `${this.base}/c/pay/${id}`,
      allowed_payment_method_types: Array.isArray(p.allowed_payment_method_types)
        ? (p.allowed_payment_method_types as string[])
        : null,
      line_items_input: items,
      created: Math.floor(Date.now() / 1000),
    };
    this.sessions.set(id, session);
    return session;
  }

  private sessionJson(s: StandInSession) {
    const { line_items_input: _l, ...rest } = s;
    return rest;
  }

  private checkoutPage(req: http.IncomingMessage, res: http.ServerResponse, id: string, url: URL): unknown {
    const s = this.sessions.get(id);
    if (!s) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("no such session");
      return;
    }
    if (req.method === "POST" || url.searchParams.get("action") === "pay") {
      this.pay(id);
      const target = (s.success_url ?? "/").replace("{CHECKOUT_SESSION_ID}", id);
      res.writeHead(303, { location: target });
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(
      `<!doctype html><title>Stand-in checkout</title><h1>Pay ${s.amount_total} ${s.currency}</h1><form method="post"><button id="pay" type="submit">Pay</button></form><a id="cancel" href="${s.cancel_url ?? "/"}">Cancel</a>`,
    );
  }

  // --- what a buyer or Stripe does to a session -----------------------------------------

  /** The buyer pays by card: complete + paid, with a payment intent and a charge. */
  pay(id: string, opts: { email?: string } = {}): StandInSession {
    return this.complete(id, "paid", opts);
  }

  /** The buyer completes with a delayed method (bank debit): complete + unpaid. */
  completeUnpaid(id: string, opts: { email?: string } = {}): StandInSession {
    return this.complete(id, "unpaid", opts);
  }

  private complete(id: string, paymentStatus: "paid" | "unpaid", opts: { email?: string }): StandInSession {
    const s = this.must(id);
    s.status = "complete";
    s.payment_status = paymentStatus;
    s.customer_details = { email: opts.email ?? s.customer_details?.email ?? s.customer_email };
    if (!s.payment_intent) {
      s.payment_intent = rid("pi");
      const charge: StandInCharge = {
        id: rid("ch"),
        object: "charge",
        amount: s.amount_total,
        amount_refunded: 0,
        refunded: false,
        payment_intent: s.payment_intent,
        currency: s.currency,
      };
      this.charges.set(charge.id, charge);
    }
    return s;
  }

  /** The delayed payment settles. */
  settle(id: string): StandInSession {
    const s = this.must(id);
    s.payment_status = "paid";
    return s;
  }

  expire(id: string): StandInSession {
    const s = this.must(id);
    s.status = "expired";
    return s;
  }

  /** A payment link purchase: Stripe creates the session itself (no metadata of ours). */
  paymentLinkSession(linkId: string, amountCents: number, email: string, currency = "usd"): StandInSession {
    const id = rid("cs");
    const s: StandInSession = {
      id,
      object: "checkout.session",
      mode: "payment",
      status: "open",
      payment_status: "unpaid",
      amount_total: amountCents,
      currency,
      metadata: {},
      customer_email: null,
      customer_details: { email },
      payment_intent: null,
      payment_link: linkId,
      livemode: false,
      success_url: null,
      cancel_url: null,
      url: null,
      allowed_payment_method_types: null,
      line_items_input: [],
      created: Math.floor(Date.now() / 1000),
    };
    this.sessions.set(id, s);
    return s;
  }

  /** Refunds the session's charge (fully by default); returns the charge. */
  refund(sessionId: string, amountCents?: number): StandInCharge {
    const s = this.must(sessionId);
    const charge = [...this.charges.values()].find((c) => c.payment_intent === s.payment_intent);
    if (!charge) throw new Error(`session ${sessionId} has no charge`);
    charge.amount_refunded = Math.min(charge.amount, (charge.amount_refunded ?? 0) + (amountCents ?? charge.amount));
    charge.refunded = charge.amount_refunded === charge.amount;
    return charge;
  }

  /** The card holder disputes the session's charge (a chargeback). */
  dispute(sessionId: string, reason = "fraudulent"): StandInDispute {
    const s = this.must(sessionId);
    const charge = [...this.charges.values()].find((c) => c.payment_intent === s.payment_intent);
    if (!charge) throw new Error(`session ${sessionId} has no charge`);
    const d: StandInDispute = {
      id: rid("dp"),
      object: "dispute",
      amount: charge.amount,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      reason,
      status: "needs_response",
      currency: charge.currency,
    };
    this.disputes.set(d.id, d);
    return d;
  }

  private must(id: string): StandInSession {
    const s = this.sessions.get(id);
    if (!s) throw new Error(`stand-in: no session ${id}`);
    return s;
  }

  // --- webhooks ----------------------------------------------------------------------------

  /** A Stripe event for an object, serialized and signed like Stripe does. */
  event(type: string, object: unknown, opts: { id?: string; secret?: string; timestamp?: number } = {}) {
    const payload = JSON.stringify({
      id: opts.id ?? rid("evt"),
      object: "event",
      api_version: "2026-10-28.endive",
      created: Math.floor(Date.now() / 1000),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object },
    });
    const header = this.sdk.webhooks.generateTestHeaderString({
      payload,
      secret: opts.secret ?? this.webhookSecret,
      ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
    });
    return { payload, header, id: (JSON.parse(payload) as { id: string }).id };
  }

  /** A session event carrying a snapshot of the session as it is now. */
  sessionEvent(type: string, sessionId: string, opts: { id?: string; secret?: string } = {}) {
    return this.event(type, this.sessionJson(this.must(sessionId)), opts);
  }

  chargeEvent(type: string, charge: StandInCharge, opts: { id?: string } = {}) {
    return this.event(type, { ...charge }, opts);
  }
}

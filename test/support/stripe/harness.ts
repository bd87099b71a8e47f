import { type TestApp, testApp } from "../app.js";
import type { Engine } from "../databases.js";
import { StripeStandIn } from "./server.js";

export const ADMIN_TOKEN = "admin-token-for-tests-0123456789";

export interface CardHarness extends TestApp {
  stripe: StripeStandIn;
  /** POST /api/checkout; returns the parsed answer and status. */
  checkout(sku: string, email?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Delivers a signed webhook (payload + header as produced by the stand-in). */
  deliver(evt: { payload: string; header: string }): Promise<{ status: number; body: Record<string, unknown> }>;
  admin(
    method: "GET" | "POST",
    url: string,
    payload?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  countOrders(): Promise<number>;
}

/** The whole app on a fresh database, its Stripe SDK pointed at a local stand-in. */
export async function cardHarness(engine: Engine, env: Record<string, string> = {}): Promise<CardHarness> {
  const stripe = await new StripeStandIn().start();
  const t = await testApp(engine, { ADMIN_TOKEN, ...stripe.env(env) });
  const parse = (body: string) => (body ? (JSON.parse(body) as Record<string, unknown>) : {});
  return {
    ...t,
    stripe,
    async checkout(sku, email = "buyer@example.com") {
      const r = await t.app.inject({ method: "POST", url: "/api/checkout", payload: { sku, email } });
      return { status: r.statusCode, body: parse(r.body) };
    },
    async deliver(evt) {
      const r = await t.app.inject({
        method: "POST",
        url: "/api/stripe/webhook",
        payload: evt.payload,
        headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": evt.header },
      });
      return { status: r.statusCode, body: parse(r.body) };
    },
    async admin(method, url, payload) {
      const r = await t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "x-operator": "tester" },
        ...(payload !== undefined ? { payload: payload as object } : {}),
      });
      return { status: r.statusCode, body: parse(r.body) };
    },
    async countOrders() {
      const row = await t.app.services.db.kysely
        .selectFrom("orders")
        .select((eb) => eb.fn.countAll<number | string>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async close() {
      await t.close();
      await stripe.stop();
    },
  };
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../support/databases.js";
import { type CardHarness, cardHarness } from "../support/stripe/harness.js";

/** The human path: a suite quote paid by card (Stripe stand-in); the job is created once, when the payment lands. */
describe.each(ENGINES)("suite quotes paid by card — %s", (engine) => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness(engine);
  });
  afterAll(async () => h.close());

  const quote = async (bytes: number, ip = "127.0.0.1") => {
    const r = await h.app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      remoteAddress: ip,
      payload: { product: "auto", dataClass: "text", op: "compress", bytes },
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as { quote_id: string; amount_cents: number; amount_units: string };
  };
  const checkout = (quote_id: string, email = "human@example.com") =>
    h.app.inject({ method: "POST", url: "/api/ppp-checkout", payload: { quote_id, email } });

  it("charges the quote's amount rounded up to the cent, and creates the job once across deliveries", async () => {
    // anonymous: 1 GB of the IP's day is free (issue #21; it was 100 GB per job), so
    // 149 GB + 1 byte billable → 100 GB × 0.05 + 49,001 MB × 0.00004 = 6,960,040 units → 697 cents
    const q = await quote(150_000_000_000 + 1);
    expect(q.amount_units).toBe("6960040");
    expect(q.amount_cents).toBe(697);
    const c = await checkout(q.quote_id);
    expect(c.statusCode, c.body).toBe(200);
    const sessionId = c.json().session_id as string;
    const created = h.stripe.requests.find((r) => r.method === "POST" && r.path === "/v1/checkout/sessions");
    expect(JSON.stringify(created)).toContain("697");
    h.stripe.pay(sessionId);
    const first = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", sessionId));
    expect(first.body).toMatchObject({ outcome: "granted" });
    const again = await h.deliver(h.stripe.sessionEvent("checkout.session.async_payment_succeeded", sessionId));
    expect(again.status).toBe(200);
    const jobs = await h.app.services.db.kysely
      .selectFrom("jobs")
      .selectAll()
      .where("quote_id", "=", q.quote_id)
      .execute();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ paid_by: "card_checkout", state: "awaiting_input" });
    const status = (await h.app.inject({ method: "GET", url: `/api/checkout/${sessionId}` })).json();
    expect(status.status).toBe("paid");
    expect(status.job.job_id).toBe(jobs[0]?.id);
    expect(status.job.job_token).toMatch(/^jt_/);
    expect(await h.countOrders()).toBe(0);
  });

  it("refuses a free quote (409), an unknown one (404), and a used one (409)", async () => {
    // from an IP whose day is untouched (the paid quote above used 127.0.0.1's free GB)
    const free = await quote(1_000_000, "192.0.2.10");
    expect((await checkout(free.quote_id)).json().code).toBe("quote_is_free");
    expect((await checkout("qt_nope_nope_nope_nope")).statusCode).toBe(404);
    const q = await quote(100_000_000_000 + 1);
    const c = await checkout(q.quote_id);
    h.stripe.pay(c.json().session_id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", c.json().session_id));
    const used = await checkout(q.quote_id);
    expect(used.statusCode).toBe(409);
    expect(used.json().code).toBe("quote_already_used");
  });
});

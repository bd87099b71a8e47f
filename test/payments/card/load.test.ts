import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINES } from "../../support/databases.js";
import { type CardHarness, cardHarness } from "../../support/stripe/harness.js";

const SESSIONS = 60;

/**
 * Many purchases at once: every session paid, each delivered as two different events plus a
 * duplicate, all in flight together. Exactly one order per session; the time is printed
 * (`npx vitest run test/payments/card/load.test.ts`) for the report, not asserted.
 */
describe.each(ENGINES)("webhook under concurrent load on %s", (engine) => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness(engine);
  });
  afterAll(async () => h.close());

  it(`${SESSIONS} paid sessions × 3 deliveries in flight together → ${SESSIONS} orders`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const r = await h.checkout("gao-entry", `load${i}@example.com`);
      ids.push(r.body.session_id as string);
      h.stripe.pay(ids[i] as string);
    }
    const deliveries = ids.flatMap((id) => {
      const completed = h.stripe.sessionEvent("checkout.session.completed", id);
      return [completed, completed, h.stripe.sessionEvent("checkout.session.async_payment_succeeded", id)];
    });
    const started = performance.now();
    const results = await Promise.all(deliveries.map((d) => h.deliver(d)));
    const ms = performance.now() - started;
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.handled === true && r.body.outcome === "granted")).toHaveLength(SESSIONS);
    expect(await h.countOrders()).toBe(SESSIONS);
    console.log(
      `[load ${engine}] ${deliveries.length} webhook deliveries (${SESSIONS} sessions) in ${ms.toFixed(0)} ms: ${(
        (deliveries.length / ms) * 1000
      ).toFixed(0)} deliveries/s including signature check, Stripe re-read and grant`,
    );
  }, 60_000);
});

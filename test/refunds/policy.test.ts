import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmKey, paymentRequired } from "../payments/x402/helpers.js";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

/** Every 402 advertises the refund terms (extensions.refund) while buyer requests are on. */
describe("refund terms in the 402", () => {
  let on: TestApp;
  let off: TestApp;
  const payTo = evmKey().address;
  beforeAll(async () => {
    on = await testApp("sqlite", { PAY_TO_BASE: payTo, ...BASE_SETTLEMENT, REFUND_AUTO_APPROVE_HOURS: "2" });
    off = await testApp("sqlite", { PAY_TO_BASE: payTo, ...BASE_SETTLEMENT, REFUND_WINDOW_HOURS: "0" });
  });
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  const challenge = (t: TestApp) =>
    t.app.inject({ method: "POST", url: "/api/x402-products", payload: { sku: "gao" } });

  it("names the window, the auto-approval and where the payer signs a request", async () => {
    const r = await challenge(on);
    expect(r.statusCode).toBe(402);
    const refund = paymentRequired(r.headers).extensions?.refund as { info: Record<string, unknown> };
    expect(refund.info).toMatchObject({
      policy: "payer-signed-request",
      windowSeconds: 72 * 3600,
      autoApproveSeconds: 2 * 3600,
      refundTo: "payer",
      signature: { eip155: "eip191", solana: "ed25519" },
    });
    expect(String(refund.info.request)).toMatch(/\/api\/orders\/\{order_id\}\/refund-request$/);
  });

  it("is absent when buyer requests are off (REFUND_WINDOW_HOURS=0)", async () => {
    const r = await challenge(off);
    expect(r.statusCode).toBe(402);
    expect(paymentRequired(r.headers).extensions?.refund).toBeUndefined();
  });
});

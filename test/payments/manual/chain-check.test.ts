import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../../support/app.js";
import { type EvmChain, startAnvil } from "../../support/chains/evm.js";
import { grantProduct } from "../../support/orders.js";

const ADMIN = "chain-check-admin-token-0123456789";
const PAY_TO = "0x5555555555555555555555555555555555555555" as const;

describe("operator chain check of an EVM claim (real local chain: anvil + USDC-like token)", () => {
  let chain: EvmChain;
  let t: TestApp;
  beforeAll(async () => {
    chain = await startAnvil();
    t = await testApp("sqlite", {
      ADMIN_TOKEN: ADMIN,
      CONTACT_EMAIL: "ops@lab.test",
      PAY_TO_BASE: PAY_TO,
      BASE_RPC_URL: chain.rpcUrl,
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  const pay = async (amount: bigint) => {
    const buyer = await chain.newBuyer(amount);
    return chain.transfer(buyer.key, PAY_TO, amount);
  };
  const claim = async (tx: string, sku = "zrw-n00b") =>
    (
      await t.app.inject({
        method: "POST",
        url: "/api/claims",
        payload: { sku, email: "chain@example.com", rail: "crypto_manual_evm", tx },
      })
    ).json().claim_id as string;
  const admin = (url: string) =>
    t.app.inject({ method: "POST", url, payload: {}, headers: { authorization: `Bearer ${ADMIN}` } });

  it("confirms an exact USDC transfer to pay_to, and refuses wrong amounts and unknown hashes", async () => {
    const exact = await claim(await pay(79_000_000n)); // zrw-n00b: 7900 cents = 79 USDC
    const ok = (await admin(`/api/admin/claims/${exact}/check`)).json();
    expect(ok).toMatchObject({ status: "ok", expected_amount: "79000000", pay_to: PAY_TO, network: "eip155:8453" });

    const short = await claim(await pay(78_000_000n));
    const bad = (await admin(`/api/admin/claims/${short}/check`)).json();
    expect(bad).toMatchObject({ status: "failed", reason: "invalid_transfer_amount_mismatch" });

    const ghost = await claim(`0x${"9".repeat(64)}`);
    expect((await admin(`/api/admin/claims/${ghost}/check`)).json()).toMatchObject({
      status: "failed",
      reason: "invalid_transaction_not_found",
    });

    const wire = (
      await t.app.inject({
        method: "POST",
        url: "/api/claims",
        payload: {
          sku: "consulting",
          email: "w@example.com",
          rail: "wire_invoice_ach",
          company: "ACME",
          billing_address: "1 Road",
        },
      })
    ).json().claim_id as string;
    expect((await admin(`/api/admin/claims/${wire}/check`)).json()).toMatchObject({
      status: "unavailable",
      reason: "not_checkable",
    });
    expect((await admin("/api/admin/claims/clm_nope/check")).statusCode).toBe(404);
  });

  it("refuses to approve a claim whose transaction meanwhile paid an order on another rail", async () => {
    const tx = await pay(79_000_000n);
    const id = await claim(tx);
    await grantProduct(t.app.services.orders, {
      proofKey: `evm:8453:tx:${tx}:0`,
      sku: "zrw-n00b",
      rail: "x402_base_usdc",
      amountCents: 7900,
      transactionRef: tx,
      payment: { chain: "evm", tx },
    });
    const r = await admin(`/api/admin/claims/${id}/approve`);
    expect(r.statusCode).toBe(409);
    expect(r.json().code).toBe("tx_already_used");
    const claimRow = (await t.app.inject({ method: "GET", url: `/api/claims/${id}` })).json();
    expect(claimRow.state).toBe("submitted");
  });
});

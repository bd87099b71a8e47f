import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { appOn, paymentRequired } from "../../payments/x402/helpers.js";
import { testApp } from "../../support/app.js";
import { type BothChains, startBothChains } from "../../support/chains/both.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";
import { type CardHarness, cardHarness } from "../../support/stripe/harness.js";

/**
 * Paid entry: the season gate, the 402 guidance, an entry paid by card (access token), an entry
 * paid by x402 inside the call (Base and Solana, stock clients), one order one participant, and a
 * revoked or refunded order withdrawing the entry.
 */

const YEAR = new Date().getUTCFullYear();
/** Registration open since the season's first day. */
const OPEN = { OLYMPIAD_SEASON_YEAR: String(YEAR), OLYMPIAD_REGISTRATION_OPENS: `${YEAR}-01-01` };

type Registered = { participant_id: string; participant_token: string };

function client(app: () => App) {
  const act = (payload: Record<string, unknown>, token?: string, headers: Record<string, string> = {}) =>
    app().inject({
      method: "POST",
      url: "/api/olympiad",
      payload,
      headers: { ...headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    });
  let n = 0;
  const register = async (who: "agent_self" | "human_for_self" = "agent_self"): Promise<Registered> => {
    n += 1;
    const tag = randomBytes(4).toString("hex");
    const r = await act(
      who === "agent_self"
        ? { action: "register", who, name: `Agent ${n}`, agent_id: `agent-${tag}` }
        : { action: "register", who, name: `Human ${n}`, email: `h${tag}@example.com` },
    );
    expect(r.statusCode, r.body).toBe(201);
    return r.json();
  };
  const me = async (token: string) => {
    const r = await app().inject({
      method: "GET",
      url: "/api/olympiad/me",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };
  return { act, register, me };
}

describe.each(ENGINES)("olympiad entry: season gate (%s)", (engine) => {
  it("before open registration: register and intent work, enter answers 409 with the date", async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const t = await testApp(engine, { OLYMPIAD_SEASON_YEAR: String(YEAR), OLYMPIAD_REGISTRATION_OPENS: tomorrow });
    try {
      const c = client(() => t.app);
      const p = await c.register();
      expect((await c.act({ action: "intent" }, p.participant_token)).json()).toMatchObject({
        registration_open: false,
        registration_opens: tomorrow,
      });
      const r = await c.act({ action: "enter", access_token: "a".repeat(43) }, p.participant_token);
      expect(r.statusCode).toBe(409);
      expect(r.json()).toMatchObject({ code: "registration_not_open", registration_opens: tomorrow });
      expect(r.json().detail).toContain(tomorrow);
    } finally {
      await t.close();
    }
  });

  it("without any rail: 402 with the checkout link and the configured rails (none)", async () => {
    const t = await testApp(engine, OPEN);
    try {
      const c = client(() => t.app);
      const p = await c.register();
      const r = await c.act({ action: "enter" }, p.participant_token);
      expect(r.statusCode).toBe(402);
      expect(r.json()).toMatchObject({
        code: "entry_payment_required",
        sku: "gao-entry",
        amount_cents: 100,
        checkout_url: "http://lab.test/pay?sku=gao-entry",
        recover_url: "http://lab.test/api/orders/recover/challenge",
        rails_configured: [],
      });
      expect(r.json().accepts).toBeUndefined();
      expect(r.json().detail).toContain("x402 is not configured");
      const both = await c.act(
        { action: "enter", access_token: "a".repeat(43), access_url: "http://lab.test/access/x" },
        p.participant_token,
      );
      expect(both.statusCode).toBe(400);
      expect(both.json().code).toBe("entry_proof_ambiguous");
      const badUrl = await c.act({ action: "enter", access_url: "http://lab.test/orders/1" }, p.participant_token);
      expect(badUrl.json().code).toBe("invalid_access_url");
      const badToken = await c.act({ action: "enter", access_token: "no spaces allowed" }, p.participant_token);
      expect(badToken.json().code).toBe("invalid_access_token");
    } finally {
      await t.close();
    }
  });
});

describe.each(ENGINES)("olympiad entry paid by card (%s)", (engine) => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness(engine, OPEN);
  });
  afterAll(async () => h?.close());
  const c = client(() => h.app);

  /** A paid card checkout of `sku`: its order id and access token. */
  const buyByCard = async (sku = "gao-entry") => {
    const r = await h.checkout(sku, `card${randomBytes(3).toString("hex")}@example.com`);
    expect(r.status).toBe(200);
    const id = r.body.session_id as string;
    h.stripe.pay(id);
    expect((await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id))).body.outcome).toBe("granted");
    const s = (await h.app.inject({ method: "GET", url: `/api/checkout/${id}` })).json();
    const url = s.access_url as string;
    return { orderId: s.order.order_id as string, url, token: url.split("/access/")[1] as string };
  };

  it("without proof: 402 with the checkout link; card is a configured rail", async () => {
    const p = await c.register("human_for_self");
    const r = await c.act({ action: "enter" }, p.participant_token);
    expect(r.statusCode).toBe(402);
    expect(r.json().rails_configured).toContain("card_checkout");
    expect(r.json().how.join(" ")).toContain("/pay?sku=gao-entry");
  });

  it("enters with the access token of a paid card order; a retry is idempotent; the order enters one participant", async () => {
    const order = await buyByCard();
    const p = await c.register("human_for_self");
    const r = await c.act({ action: "enter", access_token: order.token }, p.participant_token);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({
      action: "enter",
      participant_id: p.participant_id,
      season_id: String(YEAR),
      entered: true,
      created: true,
      entry: { order_id: order.orderId, proof: "access_token" },
    });
    expect(r.json().purchase).toBeUndefined();
    const again = await c.act({ action: "enter", access_url: order.url }, p.participant_token);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ created: false, entry: { entry_id: r.json().entry.entry_id } });
    expect((await c.me(p.participant_token)).entry).toMatchObject({
      entered: true,
      withdrawn: false,
      entry: { order_id: order.orderId, order_status: "active" },
    });
    expect(await h.app.services.olympiadEntry.enteredIds()).toContain(p.participant_id);

    const other = await c.register();
    const stolen = await c.act({ action: "enter", access_token: order.token }, other.participant_token);
    expect(stolen.statusCode).toBe(409);
    expect(stolen.json().code).toBe("entry_order_used");
    expect((await c.me(other.participant_token)).entry.entered).toBe(false);
    // an order id alone is no proof
    const byId = await c.act({ action: "enter", access_token: order.orderId }, other.participant_token);
    expect(byId.statusCode).toBe(404);
    expect(byId.json().code).toBe("access_not_found");
    // one entry per participant and season
    const second = await buyByCard();
    const twice = await c.act({ action: "enter", access_token: second.token }, p.participant_token);
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe("already_entered");
    const audit = await h.app.services.db.kysely
      .selectFrom("audit_log")
      .selectAll()
      .where("action", "=", "olympiad.entered")
      .where("subject", "=", order.orderId)
      .execute();
    expect(audit).toHaveLength(1);
  });

  it("an order of another product is not an entry", async () => {
    const order = await buyByCard("zrw-pro");
    const p = await c.register();
    const r = await c.act({ action: "enter", access_token: order.token }, p.participant_token);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ code: "entry_wrong_product", sku: "zrw-pro" });
  });

  it("a revoked order withdraws the entry; its token no longer enters; a new order enters again", async () => {
    const order = await buyByCard();
    const p = await c.register("human_for_self");
    expect((await c.act({ action: "enter", access_token: order.token }, p.participant_token)).statusCode).toBe(200);
    // a team member's entered flag follows the order too
    const created = await c.act({ action: "team", op: "create", name: `Card ${engine}` }, p.participant_token);
    expect(created.json().team).toMatchObject({ entered_members: 1, members: [{ entered: true }] });

    const revoked = await h.admin("POST", `/api/admin/orders/${order.orderId}/revoke`, { reason: "chargeback" });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const state = (await c.me(p.participant_token)).entry;
    expect(state).toMatchObject({ entered: false, withdrawn: true, entry: { order_status: "revoked" } });
    expect(await h.app.services.olympiadEntry.enteredIds()).not.toContain(p.participant_id);
    expect(await h.app.services.olympiadEntry.isEntered(p.participant_id)).toBe(false);
    expect((await c.me(p.participant_token)).team).toMatchObject({ entered_members: 0 });

    const reuse = await c.act({ action: "enter", access_token: order.token }, p.participant_token);
    expect(reuse.statusCode).toBe(410);
    expect(reuse.json().code).toBe("access_revoked");

    const fresh = await buyByCard();
    const back = await c.act({ action: "enter", access_token: fresh.token }, p.participant_token);
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({ created: true, entry: { order_id: fresh.orderId } });
    expect((await c.me(p.participant_token)).entry).toMatchObject({ entered: true, withdrawn: false });
    const rows = await h.app.services.db.kysely
      .selectFrom("olympiad_entries")
      .selectAll()
      .where("participant_id", "=", p.participant_id)
      .execute();
    expect(rows).toHaveLength(1);

    // a refund withdraws it the same way
    const refunded = await h.admin("POST", `/api/admin/orders/${fresh.orderId}/refunded`, { reason: "refund" });
    expect(refunded.status).toBe(200);
    expect((await c.me(p.participant_token)).entry).toMatchObject({
      entered: false,
      withdrawn: true,
      entry: { order_status: "refunded" },
    });
  });
});

describe("olympiad entry paid by x402 inside the call", () => {
  let chains: BothChains;
  beforeAll(async () => {
    chains = await startBothChains();
  });
  afterAll(async () => chains?.stop());

  describe.each(ENGINES)("%s", (engine) => {
    let db: Db;
    let app: App;
    beforeAll(async () => {
      db = (await freshDatabase(engine)).db;
      app = await appOn(db, chains.env(OPEN));
    });
    afterAll(async () => {
      await app?.close();
      await db?.close();
    });
    const c = client(() => app);

    it("without proof: the x402 challenge for gao-entry plus the checkout link", async () => {
      const p = await c.register();
      const r = await c.act({ action: "enter" }, p.participant_token);
      expect(r.statusCode).toBe(402);
      const body = r.json();
      expect(body).toMatchObject({ x402Version: 1, code: "entry_payment_required", checkout_url: expect.any(String) });
      expect(body.accepts.map((a: { maxAmountRequired: string }) => a.maxAmountRequired)).toEqual([
        "1000000",
        "1000000",
      ]);
      expect(body.accepts[0].resource).toBe("http://lab.test/api/x402-products");
      expect(body.rails_configured).toEqual(expect.arrayContaining(["x402_base_usdc", "x402_solana_usdc"]));
      const required = paymentRequired(r.headers);
      expect(required.accepts.map((a) => a.amount)).toEqual(["1000000", "1000000"]);
    });

    it("Base: a stock client pays in the enter call; the entry holds the order; a retry is idempotent", async () => {
      const p = await c.register();
      const challenge = await c.act({ action: "enter" }, p.participant_token);
      const buyer = await chains.evm.newBuyer(3_000_000n);
      const x = new x402Client().register(
        "eip155:*",
        new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyer.key), chains.evm.publicClient as never)),
      );
      const header = encodePaymentSignatureHeader(await x.createPaymentPayload(paymentRequired(challenge.headers)));
      const idem = `idem-${randomBytes(8).toString("hex")}`;
      const paid = await c.act({ action: "enter" }, p.participant_token, {
        "PAYMENT-SIGNATURE": header,
        "Idempotency-Key": idem,
      });
      expect(paid.statusCode, paid.body).toBe(200);
      const body = paid.json();
      expect(body).toMatchObject({
        entered: true,
        created: true,
        entry: { proof: "x402" },
        purchase: { sku: "gao-entry", amount_usd: "1.00", rail: "x402_base_usdc" },
      });
      expect(body.entry.order_id).toBe(body.purchase.order_id);
      expect(paid.headers["payment-response"]).toBeDefined();
      expect(await chains.evm.balanceOf(buyer.address)).toBe(2_000_000n);
      const order = await db.kysely
        .selectFrom("orders")
        .selectAll()
        .where("id", "=", body.purchase.order_id)
        .executeTakeFirstOrThrow();
      const row = await db.kysely
        .selectFrom("olympiad_participants")
        .selectAll()
        .where("id", "=", p.participant_id)
        .executeTakeFirstOrThrow();
      expect(order).toMatchObject({ sku: "gao-entry", status: "active", agent_id: row.agent_id });

      const again = await c.act({ action: "enter" }, p.participant_token, {
        "PAYMENT-SIGNATURE": header,
        "Idempotency-Key": idem,
      });
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json()).toMatchObject({ created: false, entry: { order_id: body.purchase.order_id } });
      expect(await chains.evm.balanceOf(buyer.address)).toBe(2_000_000n);

      // the same payment does not enter anyone else
      const other = await c.register();
      const replay = await c.act({ action: "enter" }, other.participant_token, { "PAYMENT-SIGNATURE": header });
      expect(replay.statusCode).toBe(409);
      expect((await c.me(other.participant_token)).entry.entered).toBe(false);
      // the purchase's access token is the order: held by p, used
      const token = (body.purchase.access_url as string).split("/access/")[1];
      const byToken = await c.act({ action: "enter", access_token: token }, other.participant_token);
      expect(byToken.json().code).toBe("entry_order_used");

      // entered already: a new payment is refused before anything is settled
      const next = await c.act({ action: "enter" }, p.participant_token);
      expect(next.statusCode).toBe(200);
      expect(next.json()).toMatchObject({ created: false, entry: { order_id: body.purchase.order_id } });
      const fresh = encodePaymentSignatureHeader(await x.createPaymentPayload(paymentRequired(challenge.headers)));
      const paidTwice = await c.act({ action: "enter" }, p.participant_token, { "PAYMENT-SIGNATURE": fresh });
      expect(paidTwice.statusCode).toBe(409);
      expect(paidTwice.json().code).toBe("already_entered");
      expect(await chains.evm.balanceOf(buyer.address)).toBe(2_000_000n);

      // revoking the x402 order withdraws the entry
      const revoked = await app.inject({
        method: "POST",
        url: `/api/admin/orders/${body.purchase.order_id}/revoke`,
        headers: { authorization: "Bearer admin-token-0123456789" },
        payload: { reason: "test" },
      });
      expect(revoked.statusCode, revoked.body).toBe(200);
      expect((await c.me(p.participant_token)).entry).toMatchObject({ entered: false, withdrawn: true });
    });

    it("Solana: a human pays in the enter call and is entered; no agent id on the order", async () => {
      const p = await c.register("human_for_self");
      const challenge = await c.act({ action: "enter" }, p.participant_token);
      const buyer = await chains.svm.newFunded(2_000_000n);
      const x = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chains.svm.rpcUrl }));
      const header = encodePaymentSignatureHeader(await x.createPaymentPayload(paymentRequired(challenge.headers)));
      const paid = await c.act({ action: "enter" }, p.participant_token, {
        "PAYMENT-SIGNATURE": header,
        "Idempotency-Key": `idem-${randomBytes(8).toString("hex")}`,
      });
      expect(paid.statusCode, paid.body).toBe(200);
      expect(paid.json()).toMatchObject({ entered: true, purchase: { rail: "x402_solana_usdc" } });
      expect(await chains.svm.usdcBalance(buyer.address)).toBe(1_000_000n);
      const order = await db.kysely
        .selectFrom("orders")
        .selectAll()
        .where("id", "=", paid.json().purchase.order_id)
        .executeTakeFirstOrThrow();
      expect(order.agent_id).toBeNull();
      expect((await c.me(p.participant_token)).entry).toMatchObject({ entered: true, entry: { proof: "x402" } });
    });

    it("a settlement still pending → 202 + Retry-After as x402 answers it; the retry with the same proof enters", async () => {
      const slow = await appOn(db, chains.env({ ...OPEN, X402_SETTLE_TIMEOUT_SECONDS: "1" }));
      try {
        const s = client(() => slow);
        const p = await s.register();
        const challenge = await s.act({ action: "enter" }, p.participant_token);
        const buyer = await chains.evm.newBuyer(1_000_000n);
        const x = new x402Client().register(
          "eip155:*",
          new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyer.key), chains.evm.publicClient as never)),
        );
        const header = encodePaymentSignatureHeader(await x.createPaymentPayload(paymentRequired(challenge.headers)));
        const headers = { "PAYMENT-SIGNATURE": header, "Idempotency-Key": `idem-${randomBytes(8).toString("hex")}` };
        await chains.evm.setAutomine(false);
        try {
          const pending = await s.act({ action: "enter" }, p.participant_token, headers);
          expect(pending.statusCode, pending.body).toBe(202);
          expect(pending.headers["retry-after"]).toBe("5");
          expect(pending.json()).toMatchObject({ status: 202, code: "payment_settlement_pending", retry_after: 5 });
          expect((await s.me(p.participant_token)).entry.entered).toBe(false);
        } finally {
          await chains.evm.setAutomine(true);
        }
        await chains.evm.mine(1);
        const done = await s.act({ action: "enter" }, p.participant_token, headers);
        expect(done.statusCode, done.body).toBe(200);
        expect(done.json()).toMatchObject({ entered: true, created: true, entry: { proof: "x402" } });
        expect(await chains.evm.balanceOf(buyer.address)).toBe(0n);
      } finally {
        await slow.close();
      }
    });

    it("a malformed payment header is the x402 400, and an access token with a header is ambiguous", async () => {
      const p = await c.register();
      const bad = await c.act({ action: "enter" }, p.participant_token, { "X-PAYMENT": "not-base64-json" });
      expect(bad.statusCode).toBe(400);
      const both = await c.act({ action: "enter", access_token: "a".repeat(43) }, p.participant_token, {
        "X-PAYMENT": "eyJ4IjoxfQ",
      });
      expect(both.statusCode).toBe(400);
      expect(both.json().code).toBe("entry_proof_ambiguous");
    });
  });
});

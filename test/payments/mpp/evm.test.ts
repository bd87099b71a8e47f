import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { Challenge, Credential, Receipt } from "mppx";
import { evm, Mppx } from "mppx/client";
import { validate } from "mppx/discovery";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { type EvmChain, startAnvil } from "../../support/chains/evm.js";
import { freshDatabase } from "../../support/databases.js";
import { appOn, b64json, countRows, evmKey, expectNoOrderData } from "../x402/helpers.js";

/** A response body read loosely (the assertions check its shape). */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely
type Json = Record<string, any>;
const jsonOf = async (r: Response): Promise<Json> => (await r.json()) as Json;

/**
 * MPP beside x402 on Base (anvil, chain 8453, the EIP-3009 USDC at the mainnet address): mppx's own
 * client (`mppx/client` with its `evm` charge method) against the app over real HTTP, no code of
 * ours in its path; the stock x402 client for the cross-dialect cases.
 */

let chain: EvmChain;
let gasKey: Hex;
const seller = evmKey().address;
const USDC_DOMAIN = { name: "USD Coin", version: "2" };

beforeAll(async () => {
  chain = await startAnvil();
  gasKey = (await chain.newBuyer(0n)).key;
});
afterAll(async () => chain?.stop());

const env = () => ({
  PAY_TO_BASE: seller,
  BASE_RPC_URL: chain.rpcUrl,
  X402_EVM_FACILITATOR_KEY: gasKey,
  CONTACT_EMAIL: "ops@lab.test",
});

const idem = () => `idem_${randomBytes(16).toString("hex")}`;

/** mppx's client over a viem local account: pays `evm` challenges, nothing else. */
function mppClient(key: Hex) {
  return Mppx.create({
    polyfill: false,
    methods: [evm.charge({ account: privateKeyToAccount(key), authorization: USDC_DOMAIN })],
  });
}

/** The stock x402 v2 client (for the cross-dialect replays). */
function x402ClientOf(key: Hex) {
  return new x402Client().register(
    "eip155:*",
    new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(key), chain.publicClient as never)),
  );
}

describe("MPP on Base (mppx evm client, anvil)", () => {
  let app: App;
  let db: Db;
  let base: string;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, env());
    await app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const products = () => `${base}/api/x402-products`;
  const json = { "content-type": "application/json" };
  const unpaid = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(products(), { method: "POST", headers: { ...json, ...headers }, body: JSON.stringify(body) });

  it("an unpaid request gets both dialects in one 402: x402 (PAYMENT-REQUIRED + body, as before) and MPP challenges", async () => {
    const res = await unpaid({ sku: "gao-entry" });
    expect(res.status).toBe(402);
    const x402 = decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "");
    expect(x402.accepts[0]).toMatchObject({ amount: "1000000", payTo: seller });
    const body = await jsonOf(res);
    expect(body.x402Version).toBe(1);
    expect(body.accepts[0]).toMatchObject({ maxAmountRequired: "1000000", payTo: seller });
    const challenges = Challenge.fromResponseList(res);
    expect(challenges.map((c) => `${c.method}/${c.intent}`)).toEqual(["evm/charge"]);
    const c = challenges[0] as Challenge.Challenge;
    expect(c.realm).toBe("http://lab.test");
    expect(c.request).toMatchObject({
      amount: "1000000",
      recipient: seller,
      currency: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      methodDetails: { chainId: 8453, credentialTypes: ["authorization"], decimals: 6 },
    });
    expect(Date.parse(c.expires ?? "")).toBeGreaterThan(Date.now() + 200_000);
    expect(c.header).toBeUndefined();
  });

  it("mppx's client buys a product: 200 with the x402 body plus Payment-Receipt; the transfer moves once", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const before = await chain.balanceOf(seller);
    const key = idem();
    const res = await mppClient(buyer.key).fetch(products(), {
      method: "POST",
      headers: { ...json, "Idempotency-Key": key },
      body: JSON.stringify({ sku: "gao-entry" }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ sku: "gao-entry", amount_usd: "1.00", rail: "x402_base_usdc" });
    expect(body.order_id).toMatch(/^ord_/);
    const receipt = Receipt.fromResponse(res);
    expect(receipt).toMatchObject({ method: "evm", status: "success", reference: body.transaction });
    expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
    const proof = await db.kysely
      .selectFrom("payment_proofs")
      .selectAll()
      .where("order_id", "=", body.order_id)
      .executeTakeFirstOrThrow();
    expect(proof.kind).toBe("evm_eip3009");
    expect(proof.state).toBe("granted");
  });

  it("an MPP-paid transfer replayed: by its buyer (Idempotency-Key) the same order; without it 409; as x402 409; balances move once", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const key = idem();
    const challenge = await unpaid({ sku: "gao" });
    const credential = await mppClient(buyer.key).createCredential(challenge);
    const pay = (headers: Record<string, string>) =>
      fetch(products(), { method: "POST", headers: { ...json, ...headers }, body: JSON.stringify({ sku: "gao" }) });
    const first = await pay({ Authorization: credential, "Idempotency-Key": key });
    expect(first.status, await first.clone().text()).toBe(200);
    const order = (await jsonOf(first)).order_id;
    const transfers = await chain.transfersTo(seller);
    const orders = await countRows(app, "orders");

    const again = await pay({ "Payment-Authorization": credential, "Idempotency-Key": key });
    expect(again.status).toBe(200);
    expect((await jsonOf(again)).order_id).toBe(order);
    expect(again.headers.get("payment-receipt")).toBeTruthy();

    const stranger = await pay({ Authorization: credential });
    expect(stranger.status).toBe(409);
    const sb = await stranger.text();
    expect(JSON.parse(sb).code).toBe("payment_already_redeemed");
    expectNoOrderData(sb);

    // the same authorization presented as x402 (what anyone can rebuild from the chain)
    const { payload } = Credential.deserialize(credential) as { payload: Record<string, string> };
    const { signature, type: _t, ...authorization } = payload;
    const asX402 = b64json({
      x402Version: 2,
      accepted: {
        scheme: "exact",
        network: "eip155:8453",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        payTo: seller,
        amount: "1000000",
        maxTimeoutSeconds: 300,
        extra: USDC_DOMAIN,
      },
      payload: { signature, authorization },
    });
    const x = await pay({ "PAYMENT-SIGNATURE": asX402 });
    expect(x.status).toBe(409);
    expect((await jsonOf(x)).code).toBe("payment_already_redeemed");
    expect(await chain.transfersTo(seller)).toBe(transfers);
    expect(await countRows(app, "orders")).toBe(orders);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
  });

  it("20 concurrent requests with one MPP credential → one order, one transfer; CORS lets browsers send and read MPP headers", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const key = idem();
    const credential = await mppClient(buyer.key).createCredential(await unpaid({ sku: "gao" }));
    const transfers = await chain.transfersTo(seller);
    const orders = await countRows(app, "orders");
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(products(), {
          method: "POST",
          headers: { ...json, "Payment-Authorization": credential, "Idempotency-Key": key },
          body: JSON.stringify({ sku: "gao" }),
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 202)).toEqual([]);
    const ids = new Set(
      await Promise.all(results.filter((r) => r.status === 200).map(async (r) => (await jsonOf(r)).order_id)),
    );
    expect(ids.size).toBe(1);
    expect(await countRows(app, "orders")).toBe(orders + 1);
    expect(await chain.transfersTo(seller)).toBe(transfers + 1);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);

    const pre = await fetch(products(), {
      method: "OPTIONS",
      headers: {
        origin: "https://agent.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "payment-authorization,accept-payment,idempotency-key",
      },
    });
    const allowed = (pre.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    expect(allowed).toContain("payment-authorization");
    expect(allowed).toContain("accept-payment");
    const cors = await unpaid({ sku: "gao" }, { origin: "https://agent.example" });
    const exposed = cors.headers.get("access-control-expose-headers") ?? "";
    expect(exposed).toContain("WWW-Authenticate");
    expect(exposed).toContain("Payment-Receipt");
  });

  it("an x402-paid authorization presented in an MPP credential (genuine fresh challenge) → 409, nothing moves", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const challenge = await unpaid({ sku: "gao" });
    const header = encodePaymentSignatureHeader(
      await x402ClientOf(buyer.key).createPaymentPayload(
        decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? ""),
      ),
    );
    const paid = await fetch(products(), {
      method: "POST",
      headers: { ...json, "PAYMENT-SIGNATURE": header },
      body: JSON.stringify({ sku: "gao" }),
    });
    expect(paid.status).toBe(200);
    const transfers = await chain.transfersTo(seller);
    // wrap the now-public authorization into a credential for a genuine, fresh MPP challenge
    const fresh = Challenge.fromResponseList(await unpaid({ sku: "gao" }))[0] as Challenge.Challenge;
    const x = JSON.parse(Buffer.from(header, "base64").toString()).payload;
    const credential = Credential.serialize({
      challenge: fresh,
      payload: { type: "authorization", ...x.authorization, signature: x.signature },
    });
    const res = await fetch(products(), {
      method: "POST",
      headers: { ...json, Authorization: credential },
      body: JSON.stringify({ sku: "gao" }),
    });
    expect(res.status).toBe(409);
    expect((await jsonOf(res)).code).toBe("payment_already_redeemed");
    expect(await chain.transfersTo(seller)).toBe(transfers);
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
  });

  describe("tampered credentials are refused before anything moves", () => {
    async function credentialFor(sku: string, key: Hex) {
      return mppClient(key).createCredential(await unpaid({ sku }));
    }
    async function refused(credential: string, code: string, sku = "gao") {
      const transfers = await chain.transfersTo(seller);
      const proofs = await countRows(app, "payment_proofs");
      const res = await fetch(products(), {
        method: "POST",
        headers: { ...json, Authorization: credential },
        body: JSON.stringify({ sku }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(402);
      expect(JSON.parse(text).code).toBe(code);
      // a refusal carries fresh challenges of both dialects
      expect(res.headers.get("payment-required")).toBeTruthy();
      expect(Challenge.fromResponseList(res).length).toBe(1);
      expect(await chain.transfersTo(seller)).toBe(transfers);
      expect(await countRows(app, "payment_proofs")).toBe(proofs);
    }
    const edit = (
      credential: string,
      f: (c: { challenge: Challenge.Challenge; payload: Record<string, unknown> }) => void,
    ) => {
      const c = Credential.deserialize(credential) as {
        challenge: Challenge.Challenge;
        payload: Record<string, unknown>;
      };
      f(c);
      return Credential.serialize(c as never);
    };

    it("changed amount (in the challenge echo: the HMAC id no longer matches; in the payload: mpp_amount_mismatch)", async () => {
      const buyer = await chain.newBuyer(5_000_000n);
      const cred = await credentialFor("gao", buyer.key);
      await refused(
        edit(cred, (c) => {
          c.challenge.request = { ...c.challenge.request, amount: "1" };
        }),
        "mpp_challenge_invalid",
      );
      await refused(
        edit(cred, (c) => {
          c.payload.value = "1";
        }),
        "mpp_amount_mismatch",
      );
    });

    it("changed recipient (echo → mpp_challenge_invalid; payload → mpp_recipient_mismatch)", async () => {
      const buyer = await chain.newBuyer(5_000_000n);
      const cred = await credentialFor("gao", buyer.key);
      const thief = evmKey().address;
      await refused(
        edit(cred, (c) => {
          c.challenge.request = { ...c.challenge.request, recipient: thief };
        }),
        "mpp_challenge_invalid",
      );
      await refused(
        edit(cred, (c) => {
          c.payload.to = thief;
        }),
        "mpp_recipient_mismatch",
      );
    });

    it("forged challenge id, a challenge for another product, an expired challenge", async () => {
      const buyer = await chain.newBuyer(5_000_000n);
      const cred = await credentialFor("gao", buyer.key);
      await refused(
        edit(cred, (c) => {
          c.challenge.id = Buffer.from(randomBytes(32)).toString("base64url");
        }),
        "mpp_challenge_invalid",
      );
      // a genuine challenge for gao-entry (1 USD) presented for sponsor (29 USD)
      await refused(cred, "mpp_challenge_mismatch", "sponsor");
      // the same credential once its challenge has expired (the service's clock moved 301 s)
      const mpp = app.services.mpp;
      const clock = mpp.now;
      mpp.now = () => new Date(Date.now() + 301_000);
      try {
        await refused(cred, "mpp_challenge_expired");
      } finally {
        mpp.now = clock;
      }
      // untouched and in time, it still buys
      const ok = await fetch(products(), {
        method: "POST",
        headers: { ...json, Authorization: cred },
        body: JSON.stringify({ sku: "gao" }),
      });
      expect(ok.status, await ok.clone().text()).toBe(200);
    });

    it("a credential that is not one: 402 mpp_credential_malformed; both dialects at once: 400", async () => {
      await refused("Payment not-base64-json!!", "mpp_credential_malformed");
      // hostile shapes: never a 500
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      for (const value of [
        "Payment e30",
        `Payment ${b64({ challenge: null, payload: {} })}`,
        `Payment ${b64({ challenge: { id: "x", realm: "r", method: "evm", intent: "charge", request: "e30" } })}`,
        `Payment ${b64([1, 2])}`,
        `Payment ${"A".repeat(17_000)}`,
        "Payment    ",
      ]) {
        const res = await fetch(products(), {
          method: "POST",
          headers: { ...json, Authorization: value },
          body: JSON.stringify({ sku: "gao" }),
        });
        expect([400, 402, 431], `${value.slice(0, 40)} → ${res.status}`).toContain(res.status);
      }
      const res = await fetch(products(), {
        method: "POST",
        headers: { ...json, Authorization: "Payment abc", "PAYMENT-SIGNATURE": b64json({ x402Version: 2 }) },
        body: JSON.stringify({ sku: "gao" }),
      });
      expect(res.status).toBe(400);
      expect((await jsonOf(res)).code).toBe("payment_dialect_ambiguous");
    });
  });

  it("discovery: /openapi.json passes mppx's discovery validator with MPP offers; llms.txt, pricing.md and the agent card name both dialects", async () => {
    const doc = await jsonOf(await fetch(`${base}/openapi.json`));
    expect(validate(doc).filter((e) => e.severity === "error")).toEqual([]);
    const info = doc.paths["/api/x402-products"].post["x-payment-info"];
    expect(info.offers).toEqual([
      expect.objectContaining({
        method: "evm",
        intent: "charge",
        currency: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        amount: null,
      }),
    ]);
    expect(info.protocols).toEqual([{ x402: expect.objectContaining({ version: 2 }) }]);
    for (const path of ["/llms.txt", "/pricing.md"]) {
      expect(await (await fetch(`${base}${path}`)).text()).toContain("WWW-Authenticate: Payment");
    }
    const card = await jsonOf(await fetch(`${base}/.well-known/agent-card.json`));
    expect(JSON.stringify(card.capabilities.extensions)).toContain("WWW-Authenticate: Payment");
  });

  it("the stock x402 client still buys unchanged (no Payment-Receipt on an x402 answer)", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const challenge = await unpaid({ sku: "gao-entry" });
    const header = encodePaymentSignatureHeader(
      await x402ClientOf(buyer.key).createPaymentPayload(
        decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? ""),
      ),
    );
    const res = await fetch(products(), {
      method: "POST",
      headers: { ...json, "PAYMENT-SIGNATURE": header },
      body: JSON.stringify({ sku: "gao-entry" }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get("payment-response")).toBeTruthy();
    expect(res.headers.get("payment-receipt")).toBeNull();
    expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
  });
});

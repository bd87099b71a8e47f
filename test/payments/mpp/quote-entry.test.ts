import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Challenge, Receipt } from "mppx";
import { evm as evmMethod, Mppx } from "mppx/client";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { type BothChains, startBothChains } from "../../support/chains/both.js";
import { freshDatabase } from "../../support/databases.js";
import { appOn, countRows } from "../x402/helpers.js";

/** A response body read loosely (the assertions check its shape). */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are read loosely
type Json = Record<string, any>;
const jsonOf = async (r: Response): Promise<Json> => (await r.json()) as Json;

import { solana } from "@solana/mpp/client";

/**
 * MPP on the other paid routes, with MPP's own clients over real HTTP on both local ledgers: a suite
 * quote (POST /api/x402-suite) bought with mppx's evm method and with @solana/mpp, and an olympiad
 * entry (POST /api/olympiad, whose Authorization is the participant's bearer token: the challenge
 * names Payment-Authorization and the mppx client sends the credential there).
 */

const YEAR = new Date().getUTCFullYear();
const OPEN = { OLYMPIAD_SEASON_YEAR: String(YEAR), OLYMPIAD_REGISTRATION_OPENS: `${YEAR}-01-01` };
/** 1 MB from an anonymous caller without free allowance: the minimum paid job, 0.05 USD = 50,000 units. */
const MIN_PAID = { product: "auto", dataClass: "text", op: "compress", bytes: 1_000_000 };
const json = { "content-type": "application/json" };
const idem = () => `idem_${randomBytes(16).toString("hex")}`;

let chains: BothChains;
let app: App;
let db: Db;
let base: string;

beforeAll(async () => {
  chains = await startBothChains();
  db = (await freshDatabase("sqlite")).db;
  app = await appOn(db, chains.env({ SUITE_ANON_FREE_BYTES_PER_DAY: "0", ...OPEN }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  await chains?.stop();
});

const evmClient = (key: `0x${string}`) =>
  Mppx.create({
    polyfill: false,
    methods: [
      evmMethod.charge({ account: privateKeyToAccount(key), authorization: { name: "USD Coin", version: "2" } }),
    ],
  });

describe("MPP: suite quotes", () => {
  it("an unpaid quote request: 402 with the quote in x402 (accepts) and MPP (both methods, the quote's amount)", async () => {
    const res = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: json,
      body: JSON.stringify(MIN_PAID),
    });
    expect(res.status).toBe(402);
    const body = await jsonOf(res);
    expect(body.quote.amount_units).toBe("50000");
    expect(body.accepts.map((a: { maxAmountRequired: string }) => a.maxAmountRequired)).toEqual(["50000", "50000"]);
    const challenges = Challenge.fromResponseList(res);
    expect(challenges.map((c) => c.method)).toEqual(["evm", "solana"]);
    expect(challenges.map((c) => c.request.amount)).toEqual(["50000", "50000"]);
    // the probe (empty body) gets both dialects too
    const probe = await fetch(`${base}/api/x402-suite`, { method: "POST" });
    expect(probe.status).toBe(402);
    expect(probe.headers.get("payment-required")).toBeTruthy();
    expect(Challenge.fromResponseList(probe).length).toBe(2);
  });

  it("mppx (evm) buys a suite quote: 200 with the job and Payment-Receipt; the quote's amount moves once", async () => {
    const buyer = await chains.evm.newBuyer(1_000_000n);
    const before = await chains.evm.balanceOf(chains.evmSeller);
    const res = await evmClient(buyer.key).fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: { ...json, "Idempotency-Key": idem() },
      body: JSON.stringify(MIN_PAID),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await jsonOf(res);
    expect(body.job_id).toMatch(/^job_/);
    expect(body).toMatchObject({ amount_units: "50000", rail: "x402_base_usdc" });
    expect(Receipt.fromResponse(res)).toMatchObject({ method: "evm", reference: body.transaction });
    expect(await chains.evm.balanceOf(chains.evmSeller)).toBe(before + 50_000n);
    expect(await chains.evm.balanceOf(buyer.address)).toBe(950_000n);
    const job = await db.kysely.selectFrom("jobs").selectAll().where("id", "=", body.job_id).executeTakeFirstOrThrow();
    expect(job.quote_id).toBe(body.quote_id);
  });

  it("@solana/mpp buys a suite quote: 200 with the job; the seller's USDC rises by the quote once", async () => {
    const buyer = await chains.svm.newFunded(1_000_000n);
    const before = await chains.svm.usdcBalance(chains.solSeller.address);
    const landed = chains.svm.landed();
    const client = Mppx.create({
      polyfill: false,
      methods: [solana.charge({ signer: buyer, rpcUrl: chains.svm.rpcUrl })],
    });
    const res = await client.fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: { ...json, "Idempotency-Key": idem() },
      body: JSON.stringify(MIN_PAID),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ amount_units: "50000", rail: "x402_solana_usdc" });
    expect(Receipt.fromResponse(res)).toMatchObject({ method: "solana", reference: body.transaction });
    expect(await chains.svm.usdcBalance(chains.solSeller.address)).toBe(before + 50_000n);
    expect(await chains.svm.usdcBalance(buyer.address)).toBe(950_000n);
    expect(chains.svm.landed()).toBe(landed + 1);
  });

  it("a paid quote's credential replayed: its buyer gets the same job, a stranger 409, as x402 409; one transfer", async () => {
    const buyer = await chains.evm.newBuyer(1_000_000n);
    const key = idem();
    const first402 = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: json,
      body: JSON.stringify(MIN_PAID),
    });
    const credential = await evmClient(buyer.key).createCredential(first402);
    const pay = (headers: Record<string, string>) =>
      fetch(`${base}/api/x402-suite`, {
        method: "POST",
        headers: { ...json, ...headers },
        body: JSON.stringify(MIN_PAID),
      });
    const paid = await pay({ Authorization: credential, "Idempotency-Key": key });
    expect(paid.status, await paid.clone().text()).toBe(200);
    const job = (await jsonOf(paid)).job_id;
    const transfers = await chains.evm.transfersTo(chains.evmSeller);
    const again = await pay({ Authorization: credential, "Idempotency-Key": key });
    expect((await jsonOf(again)).job_id).toBe(job);
    const stranger = await pay({ Authorization: credential });
    expect(stranger.status).toBe(409);
    expect((await jsonOf(stranger)).code).toBe("payment_already_redeemed");
    expect(await chains.evm.transfersTo(chains.evmSeller)).toBe(transfers);
    expect(await chains.evm.balanceOf(buyer.address)).toBe(950_000n);
  });

  it("a credential for one quote cannot pay another (mpp_challenge_mismatch), nothing moves", async () => {
    const buyer = await chains.evm.newBuyer(1_000_000n);
    const first = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: json,
      body: JSON.stringify(MIN_PAID),
    });
    const credential = await evmClient(buyer.key).createCredential(first);
    const other = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ ...MIN_PAID, bytes: 2_000_000 }),
    });
    const otherQuote = (await jsonOf(other)).quote.quote_id;
    const transfers = await chains.evm.transfersTo(chains.evmSeller);
    const res = await fetch(`${base}/api/x402-suite`, {
      method: "POST",
      headers: { ...json, Authorization: credential },
      body: JSON.stringify({ ...MIN_PAID, bytes: 2_000_000, quote_id: otherQuote }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(402);
    expect(JSON.parse(text).code).toBe("mpp_challenge_mismatch");
    expect(Challenge.fromResponseList(res).length).toBe(2);
    expect(await chains.evm.transfersTo(chains.evmSeller)).toBe(transfers);
  });
});

describe("MPP: olympiad entry (Authorization carries the participant token)", () => {
  const act = (payload: unknown, token: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/olympiad`, {
      method: "POST",
      headers: { ...json, authorization: `Bearer ${token}`, ...headers },
      body: JSON.stringify(payload),
    });

  async function registered(): Promise<string> {
    const r = await fetch(`${base}/api/olympiad`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        action: "register",
        who: "agent_self",
        name: "Agent M",
        agent_id: `agent-${randomBytes(4).toString("hex")}`,
      }),
    });
    expect(r.status, await r.clone().text()).toBe(201);
    return (await jsonOf(r)).participant_token;
  }

  it("enter without proof: 402 guidance with x402 and MPP challenges naming Payment-Authorization", async () => {
    const token = await registered();
    const res = await act({ action: "enter" }, token);
    expect(res.status).toBe(402);
    const body = await jsonOf(res);
    expect(body.code).toBe("entry_payment_required");
    expect(res.headers.get("payment-required")).toBeTruthy();
    const challenges = Challenge.fromResponseList(res);
    expect(challenges.map((c) => c.method)).toEqual(["evm", "solana"]);
    for (const c of challenges) {
      expect(c.header).toBe("Payment-Authorization");
      expect(c.request.amount).toBe("1000000");
    }
  });

  it("mppx pays the entry in Payment-Authorization beside the bearer token: entered, with the order and a receipt", async () => {
    const token = await registered();
    const buyer = await chains.evm.newBuyer(5_000_000n);
    const before = await chains.evm.balanceOf(chains.evmSeller);
    const orders = await countRows(app, "orders");
    const res = await evmClient(buyer.key).fetch(`${base}/api/olympiad`, {
      method: "POST",
      headers: { ...json, authorization: `Bearer ${token}`, "Idempotency-Key": idem() },
      body: JSON.stringify({ action: "enter" }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ action: "enter", entered: true, created: true });
    expect(body.entry.proof).toBe("x402");
    expect(body.purchase.sku).toBe("gao-entry");
    expect(Receipt.fromResponse(res)).toMatchObject({ method: "evm", reference: body.purchase.transaction });
    expect(await chains.evm.balanceOf(chains.evmSeller)).toBe(before + 1_000_000n);
    expect(await countRows(app, "orders")).toBe(orders + 1);
  });
});

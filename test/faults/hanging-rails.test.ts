import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { ExactSvmScheme as SvmFacilitatorScheme } from "@x402/svm/exact/facilitator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import { b64json, countRows, paymentId, paymentRequired, solanaKey } from "../payments/x402/helpers.js";
import { testApp } from "../support/app.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { buildSvmTx } from "../support/chains/svm-tx.js";

/**
 * Issue #14 "Faults": a Solana RPC or an x402 facilitator that hangs (accepts, never answers),
 * answers 500, or answers garbage. Paid routes fail closed within a bounded time
 * (X402_SETTLE_TIMEOUT_SECONDS = T: verification ≤ T, settlement ≤ T + 2 s; docs/reliability.md):
 * a 503 or a 202 pending problem, never an order, never a transfer, never a hang.
 */

const T = 2; // X402_SETTLE_TIMEOUT_SECONDS for these tests
const RPC_S = 1; // X402_RPC_TIMEOUT_SECONDS for these tests
const SLACK_MS = 4_000; // a loaded 2-core machine; the bound itself is T (verify) or T + 2 s (settle)
type Mode = "ok" | "hang" | "500" | "garbage";

let chain: SvmChain;
let feePayer: { signer: KeyPairSigner; secret: string };
let seller: KeyPairSigner;

interface Bad {
  url: string;
  modes: { rpc: Mode; verify: Mode; settle: Mode };
  stop(): Promise<void>;
}

/**
 * One loopback server playing both a Solana RPC (POST /) and a hosted facilitator (/supported,
 * /verify, /settle; "ok" = the real x402 facilitator on the LiteSVM ledger), misbehaving on demand.
 */
async function badServer(facilitator: x402Facilitator): Promise<Bad> {
  const sockets = new Set<Socket>();
  const modes: Bad["modes"] = { rpc: "hang", verify: "ok", settle: "ok" };
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => {
      raw += String(d);
    });
    req.on("end", async () => {
      const send = (status: number, body: string, type = "application/json") => {
        res.writeHead(status, { "content-type": type });
        res.end(body);
      };
      const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));
      if (req.method === "GET" && req.url === "/supported") return send(200, json(facilitator.getSupported()));
      const mode = req.url === "/verify" ? modes.verify : req.url === "/settle" ? modes.settle : modes.rpc;
      if (mode === "hang") return; // accepted, never answered
      if (mode === "500") return send(500, json({ error: "internal" }));
      if (mode === "garbage") return send(200, "<html>\u0000\u0001 not json {{", "text/html");
      try {
        const body = JSON.parse(raw || "{}");
        const out =
          req.url === "/verify"
            ? await facilitator.verify(body.paymentPayload, body.paymentRequirements)
            : await facilitator.settle(body.paymentPayload, body.paymentRequirements);
        send(200, json(out));
      } catch (err) {
        send(500, json({ error: String(err) }));
      }
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    modes,
    stop: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

let bad: Bad;
beforeAll(async () => {
  chain = await startLiteSvm();
  feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n);
  const real = new x402Facilitator().register(
    "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" as never,
    new SvmFacilitatorScheme(toFacilitatorSvmSigner(feePayer.signer, { defaultRpcUrl: chain.rpcUrl })),
  );
  bad = await badServer(real);
});
afterAll(async () => {
  await bad?.stop();
  await chain?.stop();
});

const post = (app: App, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: "/api/x402-products", headers, payload: { sku: "gao" } });

/** The stock client's payment (its RPC is the real ledger): a transaction our fee payer completes. */
async function stockHeader(app: App, buyer: KeyPairSigner): Promise<string> {
  const challenge = await post(app);
  expect(challenge.statusCode).toBe(402);
  const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
  client.registerExtension(paymentIdentifierClientExtension(paymentId()) as never);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
}

/** A transaction the buyer signed completely (its own fee payer): the service sends it itself over the RPC. */
async function fullySignedHeader(_app: App, buyer: KeyPairSigner): Promise<string> {
  return b64json({
    x402Version: 2,
    accepted: {
      scheme: "exact",
      network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      amount: "1000000",
      asset: chain.mint,
      payTo: seller.address,
      maxTimeoutSeconds: 300,
      extra: { feePayer: feePayer.signer.address },
    },
    payload: { transaction: await buildSvmTx(chain, buyer, seller.address) },
  });
}

/** Pays and times the service's answer. */
async function payAndTime(app: App, sign = stockHeader) {
  const buyer = await chain.newFunded(5_000_000n);
  const header = await sign(app, buyer);
  const landed = chain.landed();
  const orders = await countRows(app, "orders");
  const started = performance.now();
  const res = await post(app, { "PAYMENT-SIGNATURE": header });
  const ms = performance.now() - started;
  // fail closed: a problem, no order, no transfer, the buyer's money where it was
  expect([202, 503], res.body).toContain(res.statusCode);
  if (res.statusCode === 503) expect(res.headers["content-type"]).toMatch(/application\/problem\+json/);
  else expect(res.headers["retry-after"]).toMatch(/^\d+$/);
  expect(res.json().order_id).toBeUndefined();
  expect(await countRows(app, "orders")).toBe(orders);
  expect(chain.landed()).toBe(landed);
  expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
  console.log(`${expect.getState().currentTestName}: ${res.statusCode} ${res.json().code} in ${ms.toFixed(0)} ms`);
  return { status: res.statusCode, code: res.json().code as string, ms };
}

describe("the Solana RPC hangs or errors (in-process facilitator, our fee payer)", () => {
  let app: App;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await testApp("sqlite", {
      PAY_TO_SOLANA: seller.address,
      SOLANA_RPC_URL: bad.url,
      X402_SVM_FEE_PAYER_KEY: feePayer.secret,
      X402_SETTLE_TIMEOUT_SECONDS: String(T),
      X402_RPC_TIMEOUT_SECONDS: String(RPC_S),
    }));
  });
  afterAll(async () => close?.());

  it.each(["hang", "500", "garbage"] as const)(
    "RPC %s, a fully signed transaction → 503 settlement_unavailable within X402_RPC_TIMEOUT_SECONDS",
    async (mode) => {
      bad.modes.rpc = mode;
      const r = await payAndTime(app, fullySignedHeader);
      expect(r).toMatchObject({ status: 503, code: "settlement_unavailable" });
      expect(r.ms).toBeLessThan(RPC_S * 1000 + SLACK_MS);
      if (mode === "hang") expect(r.ms).toBeGreaterThanOrEqual(RPC_S * 1000 - 50);
    },
  );

  it.each(["hang", "500", "garbage"] as const)("RPC %s → 503 settlement_unavailable within T", async (mode) => {
    bad.modes.rpc = mode;
    const r = await payAndTime(app);
    expect(r).toMatchObject({ status: 503, code: "settlement_unavailable" });
    expect(r.ms).toBeLessThan(T * 1000 + SLACK_MS);
    if (mode === "hang") expect(r.ms).toBeGreaterThanOrEqual(T * 1000 - 50); // the timeout ended it
  });
});

describe("a hosted facilitator (X402_FACILITATOR_URL) hangs or errors", () => {
  let app: App;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await testApp("sqlite", {
      PAY_TO_SOLANA: seller.address,
      SOLANA_RPC_URL: chain.rpcUrl,
      X402_FACILITATOR_URL: bad.url,
      X402_SETTLE_TIMEOUT_SECONDS: String(T),
    }));
  });
  afterAll(async () => close?.());

  it.each(["hang", "500", "garbage"] as const)("/verify %s → 503 within T", async (mode) => {
    Object.assign(bad.modes, { verify: mode, settle: "ok" });
    const r = await payAndTime(app);
    expect(r).toMatchObject({ status: 503, code: "settlement_unavailable" });
    expect(r.ms).toBeLessThan(T * 1000 + SLACK_MS);
  });

  it.each(["hang", "500", "garbage"] as const)(
    "/settle %s (verified) → 503 or 202 pending within T + 2 s, nothing granted",
    async (mode) => {
      Object.assign(bad.modes, { verify: "ok", settle: mode });
      const r = await payAndTime(app);
      expect(["settlement_unavailable", "payment_settlement_pending"]).toContain(r.code);
      expect(r.ms).toBeLessThan(T * 1000 + 2_000 + SLACK_MS);
      if (mode === "hang") expect(r).toMatchObject({ status: 202, code: "payment_settlement_pending" });
    },
  );
});

import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { appOn, paymentRequired, solanaKey } from "../payments/x402/helpers.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { freshDatabase } from "../support/databases.js";

/** The value of one sample line of the Prometheus text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe("Prometheus metrics of settlements, the job queue and admission control", () => {
  let chain: SvmChain;
  let app: App;
  let db: Db;
  let seller: KeyPairSigner;
  const scrape = async () => (await app.inject({ method: "GET", url: "/metrics" })).body;

  beforeAll(async () => {
    chain = await startLiteSvm();
    const feePayer = await solanaKey();
    chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
    seller = await generateKeyPairSigner();
    await chain.setUsdc(seller.address, 0n);
    ({ db } = await freshDatabase("sqlite"));
    app = await appOn(db, {
      PAY_TO_SOLANA: seller.address,
      SOLANA_RPC_URL: chain.rpcUrl,
      X402_SVM_FEE_PAYER_KEY: feePayer.secret,
      JOB_WORKER_IN_SERVICE: "false", // jobs stay queued: the queue gauges have something to show
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_CODEC_PER_MINUTE: "1",
    });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await chain?.stop();
  });

  it("a settled x402 purchase is timed by rail and outcome; pending proofs are a gauge", async () => {
    expect(sample(await scrape(), "labphi_settlements_pending", { state: "pending_unknown" })).toBe(0);
    const buyer = await chain.newFunded(5_000_000n);
    const challenge = await app.inject({ method: "POST", url: "/api/x402-products", payload: { sku: "gao-entry" } });
    const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
    const header = encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
    const paid = await app.inject({
      method: "POST",
      url: "/api/x402-products",
      payload: { sku: "gao-entry" },
      headers: { "PAYMENT-SIGNATURE": header },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    const text = await scrape();
    const rail = paid.json().rail as string;
    expect(sample(text, "labphi_settlement_duration_seconds_count", { rail, outcome: "success" })).toBe(1);
    expect(sample(text, "labphi_settlement_duration_seconds_sum", { rail, outcome: "success" })).toBeGreaterThan(0);
    expect(sample(text, "labphi_settlements_pending", { state: "settling" })).toBe(0);

    // failures are counted by reason (an observed event, as the service emits after each attempt)
    for (const observe of app.services.x402.settlementObservers) {
      observe({ rail, kind: "svm_tx", outcome: "failed", reason: "insufficient_funds", seconds: 0.2, source: "live" });
    }
    expect(sample(await scrape(), "labphi_settlement_failures_total", { rail, reason: "insufficient_funds" })).toBe(1);
  });

  it("queued suite jobs show as queue depth and age", async () => {
    const body = { product: "auto", dataClass: "text", op: "compress", bytes: 5 };
    const job = await app.inject({ method: "POST", url: "/api/x402-suite", payload: body });
    expect(job.statusCode, job.body).toBe(200);
    const { job_id, job_token } = job.json();
    const put = await app.inject({
      method: "PUT",
      url: `/api/jobs/${job_id}/input`,
      headers: { authorization: `Bearer ${job_token}`, "content-type": "application/octet-stream" },
      payload: Buffer.from("hello"),
    });
    expect(put.statusCode, put.body).toBeLessThan(300);
    await new Promise((r) => setTimeout(r, 1100));
    const text = await scrape();
    expect(sample(text, "labphi_job_queue_depth", { kind: "job", state: "queued" })).toBe(1);
    expect(sample(text, "labphi_job_queue_oldest_seconds")).toBeGreaterThanOrEqual(1);
  });

  it("rate-limited and capacity refusals are counted as admission rejections, by code", async () => {
    const codec = () =>
      app.inject({
        method: "POST",
        url: "/api/compress",
        payload: Buffer.from("abc"),
        headers: { "content-type": "application/octet-stream" },
      });
    await codec();
    const limited = await codec();
    expect(limited.statusCode).toBe(429);
    const text = await scrape();
    expect(sample(text, "labphi_admission_rejections_total", { code: "rate_limited" })).toBe(1);
    expect(sample(text, "labphi_problems_total", { status: "429", code: "rate_limited" })).toBe(1);
  });
});

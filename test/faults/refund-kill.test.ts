import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { KeyPairSigner } from "@solana/kit";
import { generateKeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solanaKey } from "../payments/x402/helpers.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { healthy, readDb, type Service, spawnService } from "./service.js";

/**
 * Issue #22 item 4: the service (`node bin/labphi.mjs serve`, SQLite, Solana on LiteSVM) is killed
 * with SIGKILL during an operator refund — after the signed transaction is stored but before it is
 * broadcast, and after it is broadcast but before that is recorded (LABPHI_CRASH_AT) — then
 * restarted on the same DATA_DIR: the start-up reconciliation finishes the refund, the payer gets
 * the amount back exactly once, and the refund wallet pays exactly once.
 */

const PRICE = 1_000_000n;
const TOKEN = "admin-token-0123456789";
let chain: SvmChain;
let feePayer: { signer: KeyPairSigner; secret: string };
let refundWallet: { signer: KeyPairSigner; secret: string };
let seller: KeyPairSigner;
let dataDir: string;
const running: Service[] = [];

beforeAll(async () => {
  chain = await startLiteSvm();
  feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  refundWallet = await solanaKey();
  chain.svm.airdrop(refundWallet.signer.address, 10_000_000_000n as never);
  await chain.setUsdc(refundWallet.signer.address, 50_000_000n);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-faults-refund-"));
});
afterAll(async () => {
  for (const s of running) await s.kill();
  await chain?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function serve(extra: Record<string, string> = {}): Promise<Service> {
  const s = spawnService({
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOKEN,
    PAY_TO_SOLANA: seller.address,
    SOLANA_RPC_URL: chain.rpcUrl,
    X402_SVM_FEE_PAYER_KEY: feePayer.secret,
    REFUND_SVM_KEY: refundWallet.secret,
    X402_SETTLE_TIMEOUT_SECONDS: "5",
    ...extra,
  });
  running.push(s);
  await healthy(s);
  return s;
}

const buyRequest = (s: Service, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/api/x402-products`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify({ sku: "gao" }),
    signal: AbortSignal.timeout(30_000),
  });

async function buy(s: Service, buyer: KeyPairSigner): Promise<string> {
  const challenge = await buyRequest(s);
  expect(challenge.status).toBe(402);
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
  const header = encodePaymentSignatureHeader(await client.createPaymentPayload(required));
  const res = await buyRequest(s, { "PAYMENT-SIGNATURE": header });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { order_id: string }).order_id;
}

const refundOf = (orderId: string) =>
  readDb(dataDir, (db) => db.prepare("select state, tx, raw_tx from refunds where order_id = ?").get(orderId)) as
    | { state: string; tx: string | null; raw_tx: string | null }
    | undefined;

describe("SIGKILL during a refund (real service process, SQLite, Solana on LiteSVM)", () => {
  it.each([
    ["refund_before_broadcast", 0],
    ["refund_after_broadcast", 1],
  ] as const)(
    "killed at %s: after a restart the refund is done with exactly one transfer",
    async (point, landedAtCrash) => {
      const buyer = await chain.newFunded(5_000_000n);
      const s1 = await serve({ LABPHI_CRASH_AT: point });
      const orderId = await buy(s1, buyer);
      const wallet = await chain.usdcBalance(refundWallet.signer.address);
      const landed = chain.landed();
      const answer = await fetch(`${s1.url}/api/admin/orders/${orderId}/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(30_000),
      }).then(
        (r) => `HTTP ${r.status}`,
        () => "no answer",
      );
      expect((await s1.exited).signal, s1.output()).toBe("SIGKILL");
      expect(s1.output()).toContain(`crash point ${point} reached`);
      expect(answer).toBe("no answer");
      expect(chain.landed()).toBe(landed + landedAtCrash);
      const left = refundOf(orderId);
      expect(left?.state).toBe("signed");
      expect(left?.raw_tx).toMatch(/\S/);

      const s2 = await serve(); // start-up reconciliation
      try {
        const end = Date.now() + 20_000;
        while (refundOf(orderId)?.state !== "done" && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
        const done = refundOf(orderId);
        expect(done?.state).toBe("done");
        expect(done?.tx).toBe(left?.tx); // the stored transaction, not a new one
        expect(chain.landed()).toBe(landed + 1);
        expect(await chain.usdcBalance(buyer.address)).toBe(5_000_000n);
        expect(await chain.usdcBalance(refundWallet.signer.address)).toBe(wallet - PRICE);
        const again = await fetch(`${s2.url}/api/admin/orders/${orderId}/refund`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: "{}",
        });
        expect(again.status).toBe(409);
        expect(chain.landed()).toBe(landed + 1);
      } finally {
        await s2.kill();
      }
    },
    120_000,
  );
});

import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired } from "@x402/core/types";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/http/types.js";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import { countRows, paymentId, solanaKey } from "../payments/x402/helpers.js";
import { appOn } from "../support/app.js";
import { type SvmChain, startLiteSvm } from "../support/chains/svm.js";
import { freshDatabase } from "../support/databases.js";
import { httpClient, type McpClient, problemCode } from "./helpers.js";

/** `buy` paid on Solana (LiteSVM at the mainnet USDC mint) through /mcp, by the stock @x402/svm client. */

const SOL_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

let chain: SvmChain;
let seller: KeyPairSigner;
let app: App;
let closeDb: () => Promise<void>;
let client: McpClient;

beforeAll(async () => {
  chain = await startLiteSvm();
  const feePayer = await solanaKey();
  chain.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  seller = await generateKeyPairSigner();
  await chain.setUsdc(seller.address, 0n); // the seller's USDC account must exist beforehand
  const { db, dataDir } = await freshDatabase("sqlite");
  closeDb = () => db.close();
  app = await appOn(db, {
    DATA_DIR: dataDir,
    PAY_TO_SOLANA: seller.address,
    SOLANA_RPC_URL: chain.rpcUrl,
    X402_SVM_FEE_PAYER_KEY: feePayer.secret,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  client = await httpClient("v1", `http://127.0.0.1:${address.port}/mcp`);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await app?.close();
  await closeDb?.();
  await chain?.stop();
});

describe("buy on Solana over the x402 MCP transport", () => {
  it("pays with the stock SVM client; a retry with the identifier repeats the order; a stripped replay is refused", async () => {
    const buyer = await chain.newFunded(3_000_000n);
    const unpaid = await client.call("buy", { sku: "gao-entry" });
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    expect(required.accepts.map((a) => a.network)).toContain(SOL_CAIP2);

    const pay = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: chain.rpcUrl }));
    pay.registerExtension(paymentIdentifierClientExtension(paymentId()) as never);
    const payload = await pay.createPaymentPayload(required);
    const paid = await client.call("buy", { sku: "gao-entry" }, { "x402/payment": payload });
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ sku: "gao-entry", rail: "x402_solana_usdc", created: true });
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, network: SOL_CAIP2 });
    expect(await chain.usdcBalance(seller.address)).toBe(1_000_000n);
    expect(await chain.usdcBalance(buyer.address)).toBe(2_000_000n);

    const again = await client.call("buy", { sku: "gao-entry" }, { "x402/payment": payload });
    expect(again.structuredContent).toMatchObject({ order_id: paid.structuredContent?.order_id, created: false });
    const { extensions: _x, ...stripped } = payload;
    expect(problemCode(await client.call("buy", { sku: "gao-entry" }, { "x402/payment": stripped }))).toBe(
      "payment_already_redeemed",
    );
    expect(await countRows(app, "orders")).toBe(1);
    expect(await chain.usdcBalance(seller.address)).toBe(1_000_000n);
  }, 60_000);
});

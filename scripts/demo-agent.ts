/**
 * npm run demo:agent — an agent buys `gao-entry` over x402 on both rails, end to end, offline:
 * starts a local Base chain (anvil, chain id 8453, our EIP-3009 USDC at the mainnet address)
 * and a local Solana runtime (LiteSVM behind JSON-RPC, USDC at the mainnet mint), starts the
 * service on a loopback port with SQLite, funds a buyer on each chain, then shows every step:
 * 402 challenge → payment built by the stock x402 v2 client → 200 order → access page, and
 * finally the replayed proof being refused.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateKeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { generatePaymentId } from "@x402/extensions/payment-identifier";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { openDatabase } from "../src/db/database.js";
import { migrateToLatest } from "../src/db/migrate.js";
import { paymentIdentifierClientExtension } from "../src/payments/x402/buyer.js";
import { solanaKey } from "../test/payments/x402/helpers.js";
import { freePort, startAnvil } from "../test/support/chains/evm.js";
import { startLiteSvm } from "../test/support/chains/svm.js";

const SKU = "gao-entry";
const line = (s = "") => process.stdout.write(`${s}\n`);
const step = (n: string, s: string) => line(`\n  ${n}  ${s}`);
const show = (label: string, v: unknown) =>
  line(`      ${label}: ${typeof v === "string" ? v : JSON.stringify(v, null, 2).replace(/\n/g, "\n      ")}`);

async function main() {
  line("Lab Phi — agent purchase over x402, both rails (local chains, nothing leaves this machine)");
  const anvil = await startAnvil();
  const svm = await startLiteSvm();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-demo-"));
  try {
    // --- ledgers and keys ---------------------------------------------------------------
    const sellerBase = privateKeyToAccount((await anvil.newBuyer(0n)).key).address;
    const gas = await anvil.newBuyer(0n);
    const buyerBase = await anvil.newBuyer(5_000_000n);
    const feePayer = await solanaKey();
    svm.svm.airdrop(feePayer.signer.address, 5_000_000_000n as never);
    const sellerSol = await generateKeyPairSigner();
    await svm.setUsdc(sellerSol.address, 0n);
    const buyerSol = await svm.newFunded(5_000_000n);
    line(
      `  Base   (anvil ${anvil.rpcUrl}, chain ${anvil.chainId}): USDC ${anvil.usdc}; buyer ${buyerBase.address} holds 5.000000 USDC`,
    );
    line(`  Solana (LiteSVM ${svm.rpcUrl}): USDC mint ${svm.mint}; buyer ${buyerSol.address} holds 5.000000 USDC`);

    // --- the service, configured only through the environment names --------------------
    const port = await freePort();
    const config = loadConfig({
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      PAY_TO_BASE: sellerBase,
      BASE_RPC_URL: anvil.rpcUrl,
      X402_EVM_FACILITATOR_KEY: gas.key,
      PAY_TO_SOLANA: sellerSol.address,
      SOLANA_RPC_URL: svm.rpcUrl,
      X402_SVM_FEE_PAYER_KEY: feePayer.secret,
      CONTACT_EMAIL: "ops@demo.invalid",
      ADMIN_TOKEN: "demo-admin-token-0123456789",
    });
    const db = openDatabase(config);
    await migrateToLatest(db);
    const app = await buildApp({ config, db });
    const address = await app.listen({ port, host: "127.0.0.1" });
    line(`  service: ${address} (SQLite in ${dataDir})`);
    const url = `${address}/api/x402-products`;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });

    const rails = [
      {
        name: "Base USDC (EIP-3009 exact)",
        client: new x402Client().register(
          "eip155:*",
          new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyerBase.key), anvil.publicClient as never)),
        ),
        balance: async () => `${await anvil.balanceOf(sellerBase)} units at payTo`,
      },
      {
        name: "Solana USDC (exact, partially signed for our fee payer)",
        client: new x402Client().register("solana:*", new ExactSvmScheme(buyerSol, { rpcUrl: svm.rpcUrl })),
        balance: async () => `${await svm.usdcBalance(sellerSol.address)} units at payTo's USDC account`,
      },
    ];

    for (const rail of rails) {
      line(`\n== ${rail.name} ==`);
      const body = { sku: SKU, note: "agent:demo-bot" };
      step("1.", `POST /api/x402-products ${JSON.stringify(body)} without payment`);
      const challenge = await post(body);
      const accepts = (
        (await challenge.json()) as { accepts: { network: string; maxAmountRequired: string; payTo: string }[] }
      ).accepts;
      show("status", String(challenge.status));
      show(
        "accepts",
        accepts.map((a) => `${a.network}: pay ${a.maxAmountRequired} units to ${a.payTo}`),
      );
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");

      step("2.", "the stock x402 v2 client builds the payment from PAYMENT-REQUIRED, with a payment identifier");
      // The identifier never goes on chain: it is what proves this agent is the buyer on a retry.
      const id = generatePaymentId();
      rail.client.registerExtension(paymentIdentifierClientExtension(id) as never);
      const payload = await rail.client.createPaymentPayload(required);
      show("chosen", `${payload.accepted.network}, amount ${payload.accepted.amount}, payment id ${id}`);
      const header = encodePaymentSignatureHeader(payload);

      step("3.", "POST again with PAYMENT-SIGNATURE → verified, settled on chain, order granted");
      const paid = await post(body, { "PAYMENT-SIGNATURE": header });
      const order = (await paid.json()) as { order_id: string; access_url: string; transaction: string };
      show("status", String(paid.status));
      show("order", order);
      const receipt = decodePaymentResponseHeader(paid.headers.get("payment-response") ?? "");
      show("PAYMENT-RESPONSE", {
        success: receipt.success,
        transaction: receipt.transaction,
        network: receipt.network,
      });
      show("seller", await rail.balance());

      step("4.", "GET access_url");
      const accessPath = new URL(order.access_url).pathname;
      const access = await fetch(`${address}${accessPath}`);
      const entitlement = (await access.json()) as { grants: string; order: { agent_id: string | null } };
      show("status", String(access.status));
      show("grants", `${entitlement.grants} (agent_id ${entitlement.order.agent_id})`);

      step("5.", "replay the same proof for another sku");
      const replay = await post({ sku: "sponsor" }, { "PAYMENT-SIGNATURE": header });
      const refusal = (await replay.json()) as { code: string; detail: string };
      show("status", `${replay.status} ${refusal.code}`);
      const same = await post(body, { "PAYMENT-SIGNATURE": header });
      show(
        "same proof and payment id again",
        `${same.status}, order ${((await same.json()) as { order_id: string }).order_id} (idempotent, no second transfer)`,
      );
      step("6.", "a stranger replays the settled proof rebuilt from public chain data (no payment id)");
      const decoded = JSON.parse(Buffer.from(header, "base64").toString()) as Record<string, unknown>;
      delete decoded.extensions;
      const stranger = await post(body, {
        "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(decoded)).toString("base64"),
      });
      const strangerBody = (await stranger.json()) as { code: string; order_id?: string };
      show(
        "status",
        `${stranger.status} ${strangerBody.code} (order data: ${strangerBody.order_id ? "LEAKED" : "none"})`,
      );
    }
    await app.close();
    await db.close();
    line(
      "\nDone: one order per rail, each after an on-chain settlement; replays answered only to the buyer (its payment id), refused to anyone else.",
    );
  } finally {
    await anvil.stop();
    await svm.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);

import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Credential } from "mppx";
import { evm } from "mppx/client";
import { McpClient } from "mppx/mcp/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { type EvmChain, startAnvil } from "../../support/chains/evm.js";
import { freshDatabase } from "../../support/databases.js";
import { appOn, countRows, evmKey } from "../x402/helpers.js";

/**
 * MPP over MCP beside the x402 MCP transport: the `buy` tool's payment-required answer carries
 * MPP's challenges in `_meta["org.paymentauth/payment-required"]` next to x402's PaymentRequired, and
 * mppx's own MCP client wrapper (`McpClient.wrap` over the MCP SDK client, with mppx's `evm` method)
 * pays and retries with the credential in `_meta["org.paymentauth/credential"]`; no code of ours in
 * the client's path.
 */

// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Json = Record<string, any>;

let chain: EvmChain;
let gasKey: Hex;
const seller = evmKey().address;

let app: App;
let db: Db;
let url: string;

beforeAll(async () => {
  chain = await startAnvil();
  gasKey = (await chain.newBuyer(0n)).key;
  db = (await freshDatabase("sqlite")).db;
  app = await appOn(db, { PAY_TO_BASE: seller, BASE_RPC_URL: chain.rpcUrl, X402_EVM_FACILITATOR_KEY: gasKey });
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await app?.close();
  await db?.close();
  await chain?.stop();
});

async function mcpClient() {
  const client = new Client({ name: "mpp-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

const method = (key: Hex) =>
  evm.charge({ account: privateKeyToAccount(key), authorization: { name: "USD Coin", version: "2" } });

describe("MPP over MCP (the buy tool)", () => {
  it("unpaid: the x402 payment-required tool error, plus MPP challenges in _meta", async () => {
    const client = await mcpClient();
    try {
      const r = (await client.callTool({ name: "buy", arguments: { sku: "gao-entry" } })) as Json;
      expect(r.isError).toBe(true);
      expect(r.structuredContent.x402Version).toBe(2);
      expect(r.structuredContent.accepts[0]).toMatchObject({ amount: "1000000", payTo: seller });
      const mpp = r._meta["org.paymentauth/payment-required"];
      expect(mpp.httpStatus).toBe(402);
      expect(mpp.challenges.map((c: Json) => c.method)).toEqual(["evm"]);
      expect(mpp.challenges[0].request).toMatchObject({ amount: "1000000", recipient: seller });
    } finally {
      await client.close();
    }
  });

  it("mppx's MCP client pays with its evm method: the order, the receipt in _meta, the transfer once; a replay without the key refused", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const before = await chain.balanceOf(seller);
    const orders = await countRows(app, "orders");
    const sent: Json[] = [];
    const client = await mcpClient();
    const original = client.callTool.bind(client);
    // observe what the wrapper sends (the credential it attaches), without changing it
    client.callTool = ((params: Json, ...rest: unknown[]) => {
      sent.push(params);
      return (original as (...a: unknown[]) => unknown)(params, ...rest);
    }) as typeof client.callTool;
    try {
      const paying = McpClient.wrap(client as never, { methods: [method(buyer.key)] }) as unknown as {
        callTool(p: Json): Promise<Json>;
      };
      const key = `idem_${randomBytes(16).toString("hex")}`;
      const r = await paying.callTool({ name: "buy", arguments: { sku: "gao-entry", idempotency_key: key } });
      expect(r.isError ?? false, JSON.stringify(r).slice(0, 400)).toBe(false);
      expect(r.structuredContent).toMatchObject({ sku: "gao-entry", rail: "x402_base_usdc", created: true });
      expect(r.receipt).toMatchObject({ method: "evm", status: "success", reference: r.structuredContent.transaction });
      expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
      expect(await countRows(app, "orders")).toBe(orders + 1);

      // the credential as sent, replayed by the plain client: with its key the same order, without 409
      const paid = sent.find((p) => p._meta?.["org.paymentauth/credential"]);
      expect(paid).toBeDefined();
      const credential = paid?._meta["org.paymentauth/credential"];
      expect(() => Credential.serialize(credential)).not.toThrow();
      const again = (await original({
        name: "buy",
        arguments: { sku: "gao-entry", idempotency_key: key },
        _meta: { "org.paymentauth/credential": credential },
      })) as Json;
      expect(again.structuredContent.order_id).toBe(r.structuredContent.order_id);
      expect(again.structuredContent.created).toBe(false);
      const stranger = (await original({
        name: "buy",
        arguments: { sku: "gao-entry" },
        _meta: { "org.paymentauth/credential": credential },
      })) as Json;
      expect(stranger.isError).toBe(true);
      expect(JSON.stringify(stranger)).toContain("payment_already_redeemed");
      expect(JSON.stringify(stranger)).not.toContain(r.structuredContent.order_id);
      expect(await chain.balanceOf(buyer.address)).toBe(4_000_000n);
    } finally {
      await client.close();
    }
  });

  it("a tampered credential over MCP: refused with its code and fresh challenges of both dialects", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const client = await mcpClient();
    try {
      const first = (await client.callTool({ name: "buy", arguments: { sku: "gao-entry" } })) as Json;
      const challenge = first._meta["org.paymentauth/payment-required"].challenges[0];
      const signed = Credential.deserialize(await method(buyer.key).createCredential({ challenge } as never));
      const tampered = {
        ...signed,
        challenge: { ...signed.challenge, request: { ...signed.challenge.request, amount: "1" } },
      };
      const r = (await client.callTool({
        name: "buy",
        arguments: { sku: "gao-entry" },
        _meta: { "org.paymentauth/credential": tampered },
      })) as Json;
      expect(r.isError).toBe(true);
      expect(r.structuredContent.code).toBe("mpp_challenge_invalid");
      expect(r.structuredContent.x402Version).toBe(2);
      expect(r._meta["org.paymentauth/payment-required"].challenges).toHaveLength(1);
      expect(await chain.balanceOf(buyer.address)).toBe(5_000_000n);
    } finally {
      await client.close();
    }
  });
});

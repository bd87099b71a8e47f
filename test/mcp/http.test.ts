import { randomBytes } from "node:crypto";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/http/types.js";
import { countRows, evmKey, paymentId } from "../payments/x402/helpers.js";
import { appOn } from "../support/app.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { freshDatabase } from "../support/databases.js";
import { httpClient, type McpClient, payEvm, problemCode, TOOLS, type ToolResult } from "./helpers.js";

/**
 * /mcp over streamable HTTP, through both SDK generations' clients, on a real app listening on a
 * loopback port, with a real local Base (anvil at chain id 8453, EIP-3009 USDC at the mainnet
 * address) paid by the stock @x402 client.
 */

let chain: EvmChain;
let app: App;
let url: string;
let closeDb: () => Promise<void>;
const seller = evmKey().address;

beforeAll(async () => {
  chain = await startAnvil();
  const gasKey = (await chain.newBuyer(0n)).key;
  const { db, dataDir } = await freshDatabase("sqlite");
  closeDb = () => db.close();
  app = await appOn(db, {
    DATA_DIR: dataDir,
    PAY_TO_BASE: seller,
    BASE_RPC_URL: chain.rpcUrl,
    X402_EVM_FACILITATOR_KEY: gasKey,
    CONTACT_EMAIL: "ops@lab.test",
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  url = `http://127.0.0.1:${address.port}/mcp`;
}, 60_000);

afterAll(async () => {
  await app?.close();
  await closeDb?.();
  await chain?.stop();
});

const text = (r: ToolResult, i = 0) => r.content[i]?.text ?? "";

describe.each(["v1", "v2"] as const)("MCP over HTTP, %s client", (generation) => {
  let client: McpClient;
  beforeAll(async () => {
    client = await httpClient(generation, url);
  });
  afterAll(async () => client?.close());

  it("lists every tool, each with an output schema", async () => {
    const tools = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) expect(t.outputSchema, t.name).toBeTruthy();
  });

  it("compresses and decompresses back to the same bytes; profiles and benches", async () => {
    const input = "timestamp,value\n".concat(
      Array.from({ length: 200 }, (_, i) => `${1700000000 + i},${(i * 7) % 13}`).join("\n"),
    );
    const c = await client.call("compress", { data: input, level: "fast" });
    expect(c.isError).toBeFalsy();
    const sc = c.structuredContent as { data: string; original_bytes: number; compressed_bytes: number };
    expect(sc.original_bytes).toBe(Buffer.byteLength(input));
    expect(sc.compressed_bytes).toBeLessThan(sc.original_bytes);
    const d = await client.call("decompress", { data: sc.data, output_encoding: "utf8" });
    expect(d.isError).toBeFalsy();
    expect(d.structuredContent?.data).toBe(input);

    const p = await client.call("profile", { data: input });
    expect(p.isError).toBeFalsy();
    expect(p.structuredContent).toMatchObject({ op: "profile" });
    expect(typeof p.structuredContent?.data_class).toBe("string");

    const b = await client.call("bench", { data: input.slice(0, 2000), level: "fast" });
    expect(b.isError).toBeFalsy();
    expect(b.structuredContent).toMatchObject({ op: "bench", ok: true });
    const methods = ((b.structuredContent?.methods ?? []) as { method: string }[]).map((m) => m.method);
    expect(methods).toEqual(expect.arrayContaining(["gzip-9", "brotli-11"]));
  });

  it("answers the catalog, the payments matrix and a suite quote", async () => {
    const cat = await client.call("catalog", {});
    expect(cat.isError).toBeFalsy();
    const products = cat.structuredContent?.products as { sku: string; amount_cents: number }[];
    expect(products.map((p) => p.sku)).toContain("gao-entry");
    expect(JSON.parse(text(cat))).toEqual(cat.structuredContent);

    const one = await client.call("catalog", { sku: "gao-entry" });
    expect(((one.structuredContent?.products ?? []) as unknown[]).length).toBe(1);

    const pay = await client.call("payments", { sku: "gao-entry" });
    expect(pay.isError).toBeFalsy();
    expect(JSON.stringify(pay.structuredContent)).toContain("x402_base_usdc");

    const q = await client.call("quote_suite", {
      product: "auto",
      dataClass: "text",
      op: "compress",
      bytes: 5_000_000,
    });
    expect(q.isError).toBeFalsy();
    expect(q.structuredContent).toMatchObject({ state: "open", bytes: 5_000_000, currency: "usd" });
    // no identity: the free part comes from this address's daily allowance, as over HTTP (issue #21)
    expect(q.structuredContent).toMatchObject({ free: true, amount_units: "0", free_bytes: 5_000_000 });
  });

  it("registers, votes on a proposal made through the services, and reads a job's status", async () => {
    const s = app.services;
    // Voting and proposing need standing (issue #21 item 4): here the public community's, a
    // join-work identity bound at registration.
    const joined = (name: string) =>
      s.identities.join({
        name,
        intent: "I want to vote on the games.",
        seed: randomBytes(33).toString("base64").slice(0, 33),
      });
    const reg = await client.call("olympiad_register", {
      who: "agent_self",
      name: `Agent ${generation}`,
      agent_id: `mcp-test-${generation}-${Date.now()}`,
      identity_token: (await joined(`Agent ${generation}`)).token,
    });
    expect(reg.isError, JSON.stringify(reg.content)).toBeFalsy();
    const token = reg.structuredContent?.participant_token as string;
    expect(token).toMatch(/\S{20,}/);

    const proposer = await s.participants.register(
      { who: "human_for_self", name: "Proposer" },
      (await joined(`Proposer ${generation}`)).identity_id,
    );
    const row = await s.participants.authenticate(proposer.participant_token);
    const { proposal } = await s.governance.propose(row, {
      action: "propose",
      kind: "new_games",
      title: "Add a game",
      body: "A new event for the season.",
    });
    const vote = await client.call("olympiad_vote", {
      participant_token: token,
      proposal_id: proposal.proposal_id,
      choice: "yes",
    });
    expect(vote.isError, JSON.stringify(vote.content)).toBeFalsy();
    expect(vote.structuredContent).toMatchObject({ action: "vote", proposal_id: proposal.proposal_id, choice: "yes" });

    const badVote = await client.call("olympiad_vote", {
      participant_token: "par_not-a-real-token",
      proposal_id: proposal.proposal_id,
      choice: "no",
    });
    expect(problemCode(badVote)).toBe("participant_token_invalid");

    const view = await s.quotes.quote({ product: "auto", dataClass: "text", op: "compress", bytes: 1000 }, null);
    const quote = await s.quotes.get(view.quote_id);
    const { job, token: jobToken } = await s.jobs.createFromQuote(quote, { by: "free", ref: null });
    const st = await client.call("job_status", { job_id: job.id, job_token: jobToken });
    expect(st.isError).toBeFalsy();
    expect(st.structuredContent).toMatchObject({ job_id: job.id, state: "awaiting_input", bytes_quoted: 1000 });
    const wrong = await client.call("job_status", { job_id: job.id, job_token: `${jobToken}x` });
    expect(problemCode(wrong)).toBe("job_token_invalid");
    // once the retention sweep deleted its data, the job answers job_expired here as over HTTP (410)
    await s.db.kysely
      .updateTable("jobs")
      .set({ state: "done", finished_at: "2026-01-01T00:00:00.000Z", expired_at: "2026-01-04T00:00:00.000Z" })
      .where("id", "=", job.id)
      .execute();
    expect(problemCode(await client.call("job_status", { job_id: job.id, job_token: jobToken }))).toBe("job_expired");
  });

  it("answers bad input with a tool error carrying the problem code", async () => {
    expect(problemCode(await client.call("catalog", { sku: "no-such-thing" }))).toBe("unknown_sku");
    expect(problemCode(await client.call("buy", { sku: "no-such-thing" }))).toBe("unknown_sku");
    expect(
      problemCode(await client.call("decompress", { data: Buffer.from("not a container").toString("base64") })),
    ).toMatch(/^codec_/);
    expect(
      problemCode(
        await client.call("quote_suite", {
          product: "auto",
          dataClass: "text",
          op: "compress",
          bytes: 10,
          identity: "bogus",
        }),
      ),
    ).toMatch(/identity/);
    // Arguments that break the input schema: the SDK's own tool error (no call reaches the services).
    const bad = await client.call("compress", { data: 42 });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/valid/i);
  });

  it("sells through the x402 MCP transport: requirements, payment, replay, tamper", async () => {
    const buyer = await chain.newBuyer(5_000_000n);
    const before = await chain.balanceOf(seller);
    const args = { sku: "gao-entry", note: `agent:mcp-${generation}` };

    // 1. Unpaid: a tool error whose structured content is the x402 PaymentRequired.
    const unpaid = await client.call("buy", args);
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    expect(required.x402Version).toBe(2);
    expect(required.accepts[0]).toMatchObject({
      scheme: "exact",
      network: "eip155:8453",
      amount: "1000000",
      payTo: seller,
    });
    // content[0].text is exactly JSON.stringify(structuredContent) (x402 transports-v2/mcp.md)
    expect(text(unpaid)).toBe(JSON.stringify(unpaid.structuredContent));
    expect(text(unpaid, 1)).toContain("http://lab.test/pay?sku=gao-entry");
    expect(required.extensions?.["payment-identifier"]).toBeTruthy();

    // 2. Paid with the stock client (payment identifier inside the payload): the order and the settlement.
    const id = paymentId();
    const payload = await payEvm(chain, buyer.key as Hex, required, id);
    const orders0 = await countRows(app, "orders");
    const paid = await client.call("buy", args, { "x402/payment": payload });
    expect(paid.isError, text(paid)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ sku: "gao-entry", amount_usd: "1.00", created: true });
    const orderId = paid.structuredContent?.order_id as string;
    expect(orderId).toMatch(/^ord_/);
    const settle = paid._meta?.["x402/payment-response"] as {
      success: boolean;
      transaction: string;
      network: string;
      payer: string;
    };
    expect(settle).toMatchObject({ success: true, network: "eip155:8453" });
    expect(settle.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settle.payer.toLowerCase()).toBe(buyer.address.toLowerCase());
    expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
    expect(await countRows(app, "orders")).toBe(orders0 + 1);

    // 3. The same payment with its identifier: the same order, nothing charged again.
    const again = await client.call("buy", args, { "x402/payment": payload });
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ order_id: orderId, created: false });

    // 4. Replayed without the identifier (what anyone reading the chain could send): refused, no order data.
    const { extensions: _e, ...stripped } = payload as PaymentPayload & { extensions?: unknown };
    const replay = await client.call("buy", args, { "x402/payment": stripped });
    expect(problemCode(replay)).toBe("payment_already_redeemed");
    expect(JSON.stringify(replay)).not.toContain(orderId);

    // 4b. One ledger with the HTTP route: the same payment sent to POST /api/x402-products is the
    // same order with its identifier, and refused without it.
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64");
    const viaHttp = await app.inject({
      method: "POST",
      url: "/api/x402-products",
      headers: { "PAYMENT-SIGNATURE": b64(payload) },
      payload: args,
    });
    expect(viaHttp.statusCode, viaHttp.body).toBe(200);
    expect(viaHttp.json().order_id).toBe(orderId);
    const strippedHttp = await app.inject({
      method: "POST",
      url: "/api/x402-products",
      headers: { "PAYMENT-SIGNATURE": b64(stripped) },
      payload: args,
    });
    expect(strippedHttp.statusCode).toBe(409);
    expect(strippedHttp.json().code).toBe("payment_already_redeemed");

    // 5. Tampered: the signed amount changed. Refused with the reason and the requirements; nothing charged.
    const fresh = await payEvm(chain, buyer.key as Hex, required, paymentId());
    const p = fresh.payload as { authorization: { value: string } };
    const tampered = { ...fresh, payload: { ...p, authorization: { ...p.authorization, value: "1" } } };
    const refused = await client.call("buy", args, { "x402/payment": tampered });
    expect(refused.isError).toBe(true);
    expect(problemCode(refused)).toBe("invalid_exact_evm_payload_authorization_value_mismatch");
    // The refusal still carries the unchanged requirements (an x402 client can pay again).
    expect(refused.structuredContent).toMatchObject({ x402Version: 2, accepts: required.accepts });
    expect(text(refused, 1)).toContain("Payment refused");
    // A bad signature too.
    const f2 = await payEvm(chain, buyer.key as Hex, required, paymentId());
    const p2 = f2.payload as { signature: string };
    const badSig = { ...f2, payload: { ...p2, signature: `${p2.signature.slice(0, -4)}0000` } };
    const refused2 = await client.call("buy", args, { "x402/payment": badSig });
    expect(problemCode(refused2)).toBe("invalid_exact_evm_signature");

    // 6. A payload that is not an object.
    expect(problemCode(await client.call("buy", args, { "x402/payment": "nope" }))).toBe("invalid_payment");
    const huge = { ...fresh, padding: "x".repeat(20_000) };
    expect(problemCode(await client.call("buy", args, { "x402/payment": huge }))).toBe("payment_header_too_large");
    const partial = await client.call("buy", args, { "x402/payment": { x402Version: 2 } });
    expect(problemCode(partial)).toBe("invalid_payload");

    expect(await countRows(app, "orders")).toBe(orders0 + 1);
    expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
  }, 60_000);

  it("reads the catalog, olympiad record and standings resources", async () => {
    const cat = (await client.readResource("labphi://catalog")) as { products: unknown[] };
    expect(cat.products.length).toBeGreaterThan(0);
    const rec = (await client.readResource("labphi://olympiad/record")) as Record<string, unknown>;
    expect(Object.keys(rec).length).toBeGreaterThan(0);
    const st = (await client.readResource("labphi://olympiad/standings")) as { season: string };
    expect(typeof st.season).toBe("string");
  });
});

describe("the DNS-rebinding guard on /mcp", () => {
  const init = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  };
  const post = (headers: Record<string, string>) =>
    app.inject({
      method: "POST",
      url: "/mcp",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      payload: init,
    });

  it("refuses a foreign Host or Origin with a 403 problem, accepts BASE_URL's host and loopback", async () => {
    for (const host of ["evil.example", "evil.example:80", "lab.test.evil.example"]) {
      const res = await post({ host });
      expect(res.statusCode, host).toBe(403);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(res.json().code).toBe("mcp_host_not_allowed");
    }
    const foreign = await post({ host: "localhost", origin: "http://evil.example" });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json().code).toBe("mcp_origin_not_allowed");
    expect((await post({ host: "lab.test" })).statusCode).toBe(200);
    expect((await post({ host: "127.0.0.1:8080", origin: "http://localhost:3000" })).statusCode).toBe(200);
    expect((await post({ host: "[::1]:3000" })).statusCode).toBe(200);
  });

  it("answers the transport's own refusals as problems that keep the JSON-RPC error", async () => {
    const get = await app.inject({ method: "GET", url: "/mcp", headers: { accept: "text/event-stream" } });
    expect(get.statusCode).toBe(405);
    expect(get.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(get.json()).toMatchObject({ code: "method_not_allowed", jsonrpc: "2.0", error: { code: -32000 } });
    const notRpc = await app.inject({
      method: "POST",
      url: "/mcp",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      payload: { hello: "world" },
    });
    expect(notRpc.statusCode).toBe(400);
    expect(notRpc.json().code).toBe("mcp_bad_request");
  });
});

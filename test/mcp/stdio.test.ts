import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { PaymentRequired } from "@x402/core/types";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmKey, paymentId } from "../payments/x402/helpers.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { type McpClient, payEvm, problemCode, stdioClient, TOOLS } from "./helpers.js";

/**
 * `labphi mcp` over stdio (the real launcher, bin/labphi.mjs, in a child process on a temporary
 * DATA_DIR), through both SDK generations' clients, selling on a local Base (anvil).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const LAUNCHER = path.join(root, "bin", "labphi.mjs");

let chain: EvmChain;
let dataDir: string;
let env: Record<string, string>;
const seller = evmKey().address;

beforeAll(async () => {
  chain = await startAnvil();
  const gasKey = (await chain.newBuyer(0n)).key;
  dataDir = mkdtempSync(path.join(tmpdir(), "labphi-mcp-"));
  env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? dataDir,
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    BASE_URL: "http://lab.test",
    DATA_DIR: dataDir,
    PAY_TO_BASE: seller,
    BASE_RPC_URL: chain.rpcUrl,
    X402_EVM_FACILITATOR_KEY: gasKey,
    CONTACT_EMAIL: "ops@lab.test",
  };
}, 60_000);

afterAll(async () => {
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.each(["v1", "v2"] as const)("labphi mcp over stdio, %s client", (generation) => {
  let client: McpClient;
  beforeAll(async () => {
    client = await stdioClient(generation, process.execPath, [LAUNCHER, "mcp"], env);
  }, 120_000);
  afterAll(async () => client?.close());

  it("lists every tool and round-trips compress → decompress", async () => {
    expect((await client.listTools()).map((t) => t.name).sort()).toEqual(TOOLS);
    const input = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 31) % 7)).toString("base64");
    const c = await client.call("compress", { data: input, encoding: "base64", level: "fast" });
    expect(c.isError).toBeFalsy();
    const d = await client.call("decompress", { data: c.structuredContent?.data as string });
    expect(d.structuredContent?.data).toBe(input);
    const cat = await client.call("catalog", { sku: "gao-entry" });
    expect(cat.structuredContent?.count).toBe(1);
  });

  it("registers a participant; refuses a vote on an unknown proposal with its code", async () => {
    const reg = await client.call("olympiad_register", {
      who: "agent_self",
      name: "Stdio agent",
      agent_id: `stdio-${generation}-${Date.now()}`,
    });
    expect(reg.isError).toBeFalsy();
    const vote = await client.call("olympiad_vote", {
      participant_token: reg.structuredContent?.participant_token as string,
      proposal_id: "prop_does_not_exist",
      choice: "yes",
    });
    expect(problemCode(vote)).toBe("proposal_not_found");
  });

  it("sells gao-entry over the x402 MCP transport on the local Base", async () => {
    const buyer = await chain.newBuyer(2_000_000n);
    const before = await chain.balanceOf(seller);
    const unpaid = await client.call("buy", { sku: "gao-entry" });
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    const payload = await payEvm(chain, buyer.key as Hex, required, paymentId());
    const paid = await client.call("buy", { sku: "gao-entry" }, { "x402/payment": payload });
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ sku: "gao-entry", created: true });
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, network: "eip155:8453" });
    expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
    const again = await client.call("buy", { sku: "gao-entry" }, { "x402/payment": payload });
    expect(again.structuredContent?.order_id).toBe(paid.structuredContent?.order_id);
    expect(await chain.balanceOf(seller)).toBe(before + 1_000_000n);
  }, 60_000);
});

describe("labphi mcp --help", () => {
  it("prints its help; an extra argument is a usage error", () => {
    const help = spawnSync(process.execPath, [LAUNCHER, "mcp", "--help"], { env, encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: labphi mcp");
    const bad = spawnSync(process.execPath, [LAUNCHER, "mcp", "extra"], { env, encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unexpected argument extra");
  });
});

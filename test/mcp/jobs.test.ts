import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { PaymentRequired } from "@x402/core/types";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import { openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";
import type { App } from "../../src/http/types.js";
import { evmKey, paymentId } from "../payments/x402/helpers.js";
import { appOn } from "../support/app.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { onFreePort } from "../support/ports.js";
import { httpClient, type McpClient, payEvm, problemCode, stdioClient, type ToolResult } from "./helpers.js";

/**
 * Suite jobs over MCP (issue #23 item 3), with the official clients of both SDK generations, over
 * streamable HTTP and over stdio (`labphi mcp` in a child process beside the web service, on the
 * same DATA_DIR): a free job (an identity's cap) and a paid job (x402 on a local Base, anvil) from
 * the quote to a verified download. The bytes go over HTTP, as the tools say: PUT with the job
 * token, then GET; the output's SHA-256 is checked and it decompresses back to the input with the
 * codec library. Also: cancel through the tool, a bad token as a problem with its stable code, and
 * no job token in any log line.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const LAUNCHER = path.join(root, "bin", "labphi.mjs");

let chain: EvmChain;
let app: App;
let base: string;
let dataDir: string;
let closeDb: () => Promise<void>;
let gasKey: string;
const seller = evmKey().address;
const logLines: string[] = [];
/** what the `labphi mcp` children wrote to stderr (their log lines) */
const stdioLog: string[] = [];
const tokensSeen = new Set<string>();

beforeAll(async () => {
  chain = await startAnvil();
  gasKey = (await chain.newBuyer(0n)).key;
  dataDir = mkdtempSync(path.join(tmpdir(), "labphi-mcp-jobs-"));
  const db = openDatabase({ dataDir });
  await migrateToLatest(db);
  closeDb = () => db.close();
  // the app's BASE_URL names its port: a free one, another when another process took it first
  ({ app, base } = await onFreePort(async (port) => {
    const url = `http://127.0.0.1:${port}`;
    const built = await appOn(
      db,
      {
        BASE_URL: url,
        DATA_DIR: dataDir,
        LOG_LEVEL: "debug",
        PAY_TO_BASE: seller,
        BASE_RPC_URL: chain.rpcUrl,
        X402_EVM_FACILITATOR_KEY: gasKey,
        CONTACT_EMAIL: "ops@lab.test",
        JOB_WORKER_IN_SERVICE: "true",
        JOB_SEGMENT_BYTES: String(64 * 1024),
        // nothing is free for an address: the anonymous job is a paid one
        SUITE_ANON_FREE_BYTES_PER_DAY: "0",
      },
      { logStream: { write: (line: string) => void logLines.push(line) } },
    );
    try {
      await built.listen({ port, host: "127.0.0.1" });
    } catch (err) {
      await built.close();
      throw err;
    }
    return { app: built, base: url };
  }));
}, 60_000);

afterAll(async () => {
  await app?.close();
  await closeDb?.();
  await chain?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Text records the codec compresses well (a few segments of 64 KiB). */
function records(n: number): Buffer {
  const lines: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const line = `2026-11-27T15:${String(i % 60).padStart(2, "0")}:00Z job=${i % 11} bytes=${(i * 7919) % 100_003}\n`;
    lines.push(line);
    len += line.length;
  }
  return Buffer.from(lines.join("")).subarray(0, n);
}

/** One HTTP request on its own connection (no keep-alive left for the app's close to wait on). */
function request(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; body: Buffer; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent: false, headers: body ? { ...headers, "content-length": String(body.length) } : headers },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), headers: res.headers });
          req.destroy();
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

interface HttpRequestSpec {
  method: string;
  url: string;
  headers: Record<string, string>;
}

const ok = (r: ToolResult, what: string) => {
  expect(r.isError, `${what}: ${JSON.stringify(r.content).slice(0, 500)}`).toBeFalsy();
  return r.structuredContent as Record<string, unknown>;
};

/** From a bought job to its verified output: upload with the tool's request, follow, download, check. */
async function runToVerifiedDownload(client: McpClient, job: { job_id: string; job_token: string }, data: Buffer) {
  const ids = { job_id: job.job_id, job_token: job.job_token };
  const up = ok(await client.call("job_upload", ids), "job_upload");
  const put = up.put as HttpRequestSpec;
  expect(put).toMatchObject({ method: "PUT", url: `${base}/api/jobs/${job.job_id}/input` });
  expect(put.headers.Authorization).toBe(`Bearer ${job.job_token}`);
  expect((up.tus as HttpRequestSpec).url).toBe(`${base}/api/jobs/uploads`);
  expect(up.max_bytes).toBe(data.length);
  const sent = await request(put.method, put.url, put.headers, data);
  expect(sent.status, sent.body.toString()).toBe(200);

  let view: Record<string, unknown> = {};
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
    view = ok(await client.call("job_status", ids), "job_status");
    if (view.state === "done" || view.state === "failed") break;
  }
  expect(view).toMatchObject({ job_id: job.job_id, state: "done", bytes_in: data.length });

  const dl = ok(await client.call("job_download", ids), "job_download");
  const get = dl.get as HttpRequestSpec;
  expect(get.url).toBe(`${base}/api/jobs/${job.job_id}/output`);
  const out = await request(get.method, get.url, get.headers);
  expect(out.status).toBe(200);
  expect(out.body.length).toBe(dl.bytes);
  expect(sha256(out.body)).toBe(dl.sha256);
  expect(view.output_sha256).toBe(dl.sha256);
  expect(out.headers["repr-digest"]).toBe(dl.repr_digest);
  const parts: Buffer[] = [];
  for await (const c of Readable.from([out.body]).pipe(decompressStream())) parts.push(c as Buffer);
  const restored = Buffer.concat(parts);
  expect(restored.length).toBe(data.length);
  expect(restored.equals(data)).toBe(true);
}

async function identityToken(name: string): Promise<string> {
  const joined = await app.services.identities.join({
    name,
    intent: "I run suite jobs from an agent.",
    seed: randomBytes(33).toString("base64").slice(0, 33),
  });
  return joined.token;
}

const request3 = (bytes: number) => ({ product: "auto", dataClass: "text", op: "compress", bytes }) as const;

/** The checks every transport and generation runs. */
function jobScenarios(label: string, connect: () => Promise<McpClient>) {
  describe(label, () => {
    let client: McpClient;
    beforeAll(async () => {
      client = await connect();
    }, 120_000);
    afterAll(async () => client?.close());

    it("a free job (an identity's cap): quote, buy, upload, follow, verified download", async () => {
      const identity = await identityToken(`free ${label}`);
      const data = records(3 * 64 * 1024 + 321);
      const q = ok(await client.call("quote_suite", { ...request3(data.length), identity }), "quote_suite");
      expect(q).toMatchObject({ free: true, amount_units: "0", bytes: data.length });
      const bought = ok(await client.call("buy_suite", { ...request3(data.length), identity }), "buy_suite");
      expect(bought).toMatchObject({ amount_units: "0" });
      expect(bought.job_id).toMatch(/^job_/);
      expect(bought.job_token).toMatch(/^jt_/);
      tokensSeen.add(bought.job_token as string);
      await runToVerifiedDownload(client, bought as { job_id: string; job_token: string }, data);
    }, 90_000);

    it("a paid job: PaymentRequired, x402 payment on the local Base, the job, verified download", async () => {
      const buyer = await chain.newBuyer(5_000_000n);
      const before = await chain.balanceOf(seller);
      const data = records(2 * 64 * 1024 + 99);
      const args = request3(data.length);
      const unpaid = await client.call("buy_suite", args);
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as unknown as PaymentRequired & { quote: { quote_id: string } };
      expect(required.x402Version).toBe(2);
      expect(required.accepts[0]).toMatchObject({ scheme: "exact", network: "eip155:8453", payTo: seller });
      expect(required.quote.quote_id).toMatch(/^q/);
      // the x402 MCP binding: content[0].text is exactly the structured content as JSON
      expect(unpaid.content[0]?.text).toBe(JSON.stringify(unpaid.structuredContent));
      expect(unpaid.content[1]?.text).toContain("/api/ppp-checkout");
      const amount = BigInt(required.accepts[0]?.amount ?? "0");
      expect(amount).toBeGreaterThan(0n);

      // a payment that is not a PaymentPayload object, or one that cannot be decoded: refused, nothing charged
      expect(problemCode(await client.call("buy_suite", args, { "x402/payment": "nope" }))).toBe("invalid_payment");
      // as `buy` answers it over MCP (docs/errors.md: 400 over MCP): the decode error's code
      const undecodable = await client.call("buy_suite", args, { "x402/payment": { x402Version: 2 } });
      expect(problemCode(undecodable)).toBe("invalid_payload");
      expect(await chain.balanceOf(seller)).toBe(before);

      const payload = await payEvm(chain, buyer.key as Hex, required, paymentId());
      const paid = await client.call("buy_suite", args, { "x402/payment": payload });
      const job = ok(paid, "buy_suite paid");
      expect(job).toMatchObject({ amount_units: String(amount), quote_id: required.quote.quote_id, created: true });
      expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true, network: "eip155:8453" });
      expect(await chain.balanceOf(seller)).toBe(before + amount);
      tokensSeen.add(job.job_token as string);

      // the same payment again: the same job, nothing charged twice
      const again = ok(await client.call("buy_suite", args, { "x402/payment": payload }), "buy_suite again");
      expect(again).toMatchObject({ job_id: job.job_id, created: false });
      expect(await chain.balanceOf(seller)).toBe(before + amount);

      await runToVerifiedDownload(client, job as { job_id: string; job_token: string }, data);
    }, 120_000);

    it("cancels a job through the tool; a bad token is a problem with a stable code", async () => {
      const identity = await identityToken(`cancel ${label}`);
      const bought = ok(await client.call("buy_suite", { ...request3(100_000), identity }), "buy_suite");
      const ids = { job_id: bought.job_id as string, job_token: bought.job_token as string };
      tokensSeen.add(ids.job_token);
      const wrong = { job_id: ids.job_id, job_token: `${ids.job_token.slice(0, -2)}xx` };
      for (const tool of ["job_status", "job_upload", "job_cancel", "job_download"]) {
        const r = await client.call(tool, wrong);
        expect(problemCode(r), tool).toBe("job_token_invalid");
        expect(JSON.stringify(r), tool).not.toContain(ids.job_token);
      }
      expect(problemCode(await client.call("job_download", ids))).toBe("job_not_done");
      // a webhook target on a private address is refused over MCP as over HTTP (callback_url, issue #23 item 1)
      const refused = await client.call("buy_suite", {
        ...request3(100_000),
        identity,
        callback_url: "https://127.0.0.1/hooks",
      });
      expect(problemCode(refused)).toBe("callback_url_refused");

      const cancelled = ok(await client.call("job_cancel", ids), "job_cancel");
      expect(cancelled).toMatchObject({ job_id: ids.job_id, state: "cancelled" });
      expect(ok(await client.call("job_status", ids), "job_status")).toMatchObject({ state: "cancelled" });
      // no more input: the tool answers the code the HTTP PUT answers for this job
      const put = await request(
        "PUT",
        `${base}/api/jobs/${ids.job_id}/input`,
        { authorization: `Bearer ${ids.job_token}`, "content-type": "application/octet-stream" },
        Buffer.from("late bytes"),
      );
      expect(put.status).toBeGreaterThanOrEqual(400);
      const routeCode = JSON.parse(put.body.toString("utf8")).code as string;
      expect(["job_input_closed", "job_cancelled"]).toContain(routeCode);
      expect(problemCode(await client.call("job_upload", ids))).toBe(routeCode);
    }, 60_000);
  });
}

for (const generation of ["v1", "v2"] as const) {
  jobScenarios(`over HTTP, ${generation} client`, () => httpClient(generation, `${base}/mcp`));
}

for (const generation of ["v1", "v2"] as const) {
  jobScenarios(`over stdio (labphi mcp beside the web service), ${generation} client`, () =>
    stdioClient(
      generation,
      process.execPath,
      [LAUNCHER, "mcp"],
      {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dataDir,
        NODE_ENV: "test",
        LOG_LEVEL: "debug",
        BASE_URL: base,
        DATA_DIR: dataDir,
        PAY_TO_BASE: seller,
        BASE_RPC_URL: chain.rpcUrl,
        X402_EVM_FACILITATOR_KEY: gasKey,
        CONTACT_EMAIL: "ops@lab.test",
        SUITE_ANON_FREE_BYTES_PER_DAY: "0",
      },
      (chunk) => stdioLog.push(chunk),
    ),
  );
}

/** A v2 (2.x) client at a given revision that records every raw JSON-RPC answer it receives. */
async function recordingClient(revision: "2025" | "2026-07-28", extension: boolean) {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const answers: Record<string, unknown>[] = [];
  const recording = async (url: string | URL, init?: RequestInit) => {
    const res = await fetch(url, init);
    const text = (await res.clone().text()).trim();
    const json = text.startsWith("{")
      ? text
      : text
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .at(-1);
    if (json) answers.push(JSON.parse(json) as Record<string, unknown>);
    return res;
  };
  const client = new Client(
    { name: "labphi-binding-tests", version: "1.0.0" },
    {
      ...(revision === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
      ...(extension ? { capabilities: { extensions: { "org.x402/payment": {} } } } : {}),
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { fetch: recording as never }));
  const lastResult = () => (answers.at(-1)?.result ?? {}) as Record<string, unknown>;
  return { client, lastResult };
}

describe("the x402 MCP bindings, by client revision (docs/mcp.md)", () => {
  const args = request3(1000);

  it("2025-era clients: the tool-result binding, no resultType", async () => {
    const { client, lastResult } = await recordingClient("2025", true);
    const r = (await client.callTool({ name: "buy_suite", arguments: args })) as ToolResult;
    const raw = lastResult();
    expect(raw.resultType).toBeUndefined();
    expect(raw.isError).toBe(true);
    expect((raw.structuredContent as { x402Version?: number }).x402Version).toBe(2);
    expect((raw.content as { text: string }[])[0]?.text).toBe(JSON.stringify(raw.structuredContent));
    expect(r.structuredContent).toEqual(raw.structuredContent);
    await client.close();
  });

  it("2026-07-28 without the extension: the tool-result binding with resultType complete; paying works", async () => {
    const { client, lastResult } = await recordingClient("2026-07-28", false);
    const unpaid = (await client.callTool({ name: "buy_suite", arguments: args })) as ToolResult;
    const raw = lastResult();
    expect(raw.resultType).toBe("complete");
    expect(raw.paymentRequired).toBeUndefined();
    expect(raw.isError).toBe(true);
    expect((raw.content as { text: string }[])[0]?.text).toBe(JSON.stringify(raw.structuredContent));
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    expect(required.x402Version).toBe(2);

    const buyer = await chain.newBuyer(1_000_000n);
    const payload = await payEvm(chain, buyer.key as Hex, required, paymentId());
    const paid = (await client.callTool({
      name: "buy_suite",
      arguments: args,
      _meta: { "x402/payment": payload },
    })) as ToolResult;
    expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy();
    expect(lastResult().resultType).toBe("complete");
    expect(paid._meta?.["x402/payment-response"]).toMatchObject({ success: true });
    tokensSeen.add(paid.structuredContent?.job_token as string);
    await client.close();
  }, 60_000);

  it("2026-07-28 advertising org.x402/payment: resultType payment_required with result.paymentRequired", async () => {
    const { client, lastResult } = await recordingClient("2026-07-28", true);
    for (const [name, a] of [
      ["buy_suite", args],
      ["buy", { sku: "gao-entry" }],
    ] as const) {
      // the official 2.x client does not implement the extension: it refuses the result kind
      const err = await client.callTool({ name, arguments: a }).then(
        () => undefined,
        (e: unknown) => e as { code?: string; data?: { resultType?: string } },
      );
      expect(err?.code, name).toBe("UNSUPPORTED_RESULT_TYPE");
      expect(err?.data?.resultType).toBe("payment_required");
      const raw = lastResult();
      expect(raw.resultType, name).toBe("payment_required");
      const required = raw.paymentRequired as PaymentRequired;
      expect(required.x402Version).toBe(2);
      expect(required.accepts[0]).toMatchObject({ scheme: "exact", network: "eip155:8453", payTo: seller });
      expect(required).toEqual(raw.structuredContent);
    }
    // a success is an ordinary complete result
    const cat = (await client.callTool({ name: "catalog", arguments: { sku: "gao-entry" } })) as ToolResult;
    expect(cat.isError).toBeFalsy();
    expect(lastResult().resultType).toBe("complete");
    await client.close();
  });
});

describe("a paid job over MPP's MCP transport (mppx's own client)", () => {
  it("mppx pays buy_suite's challenge with its evm method: the job, the receipt, one transfer; verified download", async () => {
    const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
    const { McpClient: MppMcpClient } = await import("mppx/mcp/client");
    const { evm } = await import("mppx/client");
    const { privateKeyToAccount } = await import("viem/accounts");
    const buyer = await chain.newBuyer(5_000_000n);
    const before = await chain.balanceOf(seller);
    const sdk = new Client({ name: "mpp-suite-test", version: "1.0.0" });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    const data = records(64 * 1024 + 5);
    try {
      const paying = MppMcpClient.wrap(sdk as never, {
        methods: [
          evm.charge({
            account: privateKeyToAccount(buyer.key as Hex),
            authorization: { name: "USD Coin", version: "2" },
          }),
        ],
      }) as unknown as { callTool(p: Record<string, unknown>): Promise<Record<string, unknown>> };
      const r = (await paying.callTool({ name: "buy_suite", arguments: request3(data.length) })) as {
        isError?: boolean;
        structuredContent: Record<string, unknown>;
        receipt?: Record<string, unknown>;
      };
      expect(r.isError ?? false, JSON.stringify(r).slice(0, 400)).toBe(false);
      const job = r.structuredContent;
      expect(job).toMatchObject({ created: true });
      expect(job.job_token).toMatch(/^jt_/);
      tokensSeen.add(job.job_token as string);
      const amount = BigInt(job.amount_units as string);
      expect(amount).toBeGreaterThan(0n);
      expect(r.receipt).toMatchObject({ method: "evm", status: "success" });
      expect(await chain.balanceOf(seller)).toBe(before + amount);
      const tools = await httpClient("v2", `${base}/mcp`);
      try {
        await runToVerifiedDownload(tools, job as { job_id: string; job_token: string }, data);
      } finally {
        await tools.close();
      }
    } finally {
      await sdk.close();
    }
  }, 90_000);
});

describe("job tokens and logs", () => {
  it("no log line of the web service or of labphi mcp carries a job token used in a tool call", () => {
    expect(tokensSeen.size).toBeGreaterThanOrEqual(6);
    expect(logLines.length).toBeGreaterThan(10);
    const all = logLines.join("") + stdioLog.join("");
    // the children's logs were captured (their paid purchases are logged)
    expect(stdioLog.join("")).toContain("x402 purchase fulfilled");
    for (const token of tokensSeen) expect(all.includes(token), "a job token in the logs").toBe(false);
    // the logs did see the tool calls' requests and the job routes the tokens were sent to
    expect(all).toContain("/mcp");
    expect(all).toContain("/input");
    expect(all).toContain("/output");
  });
});

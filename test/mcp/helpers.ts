import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { paymentIdentifierClientExtension } from "../../src/payments/x402/buyer.js";
import type { EvmChain } from "../support/chains/evm.js";

/** One MCP client of either SDK generation, reduced to what the tests call. */
export interface McpClient {
  generation: "v1" | "v2";
  listTools(): Promise<{ name: string; outputSchema?: unknown }[]>;
  call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<ToolResult>;
  readResource(uri: string): Promise<unknown>;
  close(): Promise<void>;
}

export interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
  _meta?: Record<string, unknown>;
}

type AnyClient = {
  listTools(): Promise<{ tools: { name: string; outputSchema?: unknown }[] }>;
  callTool(p: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> }): Promise<unknown>;
  readResource(p: { uri: string }): Promise<{ contents: { text?: string }[] }>;
  close(): Promise<void>;
};

function wrap(generation: "v1" | "v2", client: AnyClient): McpClient {
  return {
    generation,
    listTools: async () => (await client.listTools()).tools,
    call: async (name, args, meta) =>
      (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as ToolResult,
    readResource: async (uri) => JSON.parse((await client.readResource({ uri })).contents[0]?.text ?? "null"),
    close: () => client.close(),
  };
}

const INFO = { name: "labphi-tests", version: "1.0.0" };

export async function httpClient(generation: "v1" | "v2", url: string): Promise<McpClient> {
  if (generation === "v1") {
    const client = new ClientV1(INFO);
    await client.connect(new HttpV1(new URL(url)));
    return wrap("v1", client as unknown as AnyClient);
  }
  const client = new ClientV2(INFO);
  await client.connect(new HttpV2(new URL(url)));
  return wrap("v2", client as unknown as AnyClient);
}

export async function stdioClient(
  generation: "v1" | "v2",
  command: string,
  args: string[],
  env: Record<string, string>,
  /** receives the child's stderr (its log lines) */
  onStderr?: (chunk: string) => void,
): Promise<McpClient> {
  const params = { command, args, env, stderr: "pipe" as const };
  const listen = (transport: { stderr: { on(e: "data", f: (c: Buffer) => void): unknown } | null }) => {
    if (onStderr) transport.stderr?.on("data", (c: Buffer) => onStderr(c.toString("utf8")));
    return transport;
  };
  if (generation === "v1") {
    const client = new ClientV1(INFO);
    await client.connect(listen(new StdioV1(params)) as StdioV1);
    return wrap("v1", client as unknown as AnyClient);
  }
  const client = new ClientV2(INFO);
  await client.connect(listen(new StdioV2(params)) as StdioV2);
  return wrap("v2", client as unknown as AnyClient);
}

/** The stock x402 v2 client (x402Client + ExactEvmScheme over a viem account), with a payment identifier. */
export async function payEvm(
  chain: EvmChain,
  key: Hex,
  required: PaymentRequired,
  paymentId?: string,
): Promise<PaymentPayload> {
  const client = new x402Client().register(
    "eip155:*",
    new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(key), chain.publicClient as never)),
  );
  if (paymentId) client.registerExtension(paymentIdentifierClientExtension(paymentId) as never);
  return client.createPaymentPayload(required);
}

/** The tool error's problem code (structured content), failing loudly when the result is not an error. */
export function problemCode(result: ToolResult): string {
  if (!result.isError) throw new Error(`expected a tool error, got ${JSON.stringify(result).slice(0, 300)}`);
  const code = result.structuredContent?.code;
  if (typeof code !== "string") throw new Error(`no problem code in ${JSON.stringify(result).slice(0, 300)}`);
  return code;
}

export const TOOLS = [
  "bench",
  "buy",
  "buy_suite",
  "catalog",
  "compress",
  "decompress",
  "job_cancel",
  "job_download",
  "job_status",
  "job_upload",
  "olympiad_register",
  "olympiad_submit",
  "olympiad_vote",
  "payments",
  "profile",
  "quote_suite",
];

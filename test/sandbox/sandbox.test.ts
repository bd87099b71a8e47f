import { type ChildProcess, execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { address } from "@solana/kit";
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { createPublicClient, erc20Abi, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRODUCTS } from "../../src/catalog/products.js";
import { runCli } from "../../src/cli/main.js";
import { SANDBOX_SKU } from "../../src/sandbox/banner.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const run = promisify(execFile);
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const SOLANA_USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  url: string;
  env: Record<string, string>;
  dataDir: string;
}

/** `labphi sandbox --port 0` as a real process; resolves once it prints `ready: URL`. */
async function startSandboxProcess(): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "sandbox", "--port", "0"], {
    cwd: root,
    env: { ...process.env, NODE_ENV: "development" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += String(d);
  });
  child.stderr?.on("data", (d) => {
    err += String(d);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox not ready in 90 s: ${err}`)), 90_000);
    child.stdout?.on("data", () => {
      const m = /^ready: (\S+)$/m.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited early (${code}): ${err}`));
    });
  });
  const env: Record<string, string> = {};
  for (const m of out.matchAll(/^ {2}export ([A-Z0-9_]+)=(\S+)$/gm)) env[m[1] as string] = m[2] as string;
  const dataDir = /SQLite in (\S+),/.exec(out)?.[1] ?? "";
  return { child, stdout: () => out, stderr: () => err, url, env, dataDir };
}

describe("labphi sandbox (a real process: local ledgers, the service, a funded buyer)", () => {
  let sb: Started;
  const price = BigInt((PRODUCTS.find((p) => p.sku === SANDBOX_SKU)?.amountCents ?? 0) * 10_000);

  beforeAll(async () => {
    sb = await startSandboxProcess();
  }, 120_000);
  afterAll(() => {
    if (sb?.child.exitCode === null) sb.child.kill("SIGKILL");
  });

  const evmBalance = async (who: `0x${string}`) =>
    createPublicClient({ transport: http(sb.env.LABPHI_AGENT_BASE_RPC_URL) }).readContract({
      address: BASE_USDC,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [who],
    });
  const svmBalance = async (owner: string) => {
    const [ata] = await findAssociatedTokenPda({
      owner: address(owner),
      mint: address(SOLANA_USDC),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const res = await fetch(sb.env.LABPHI_AGENT_SOLANA_RPC_URL as string, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "getAccountInfo",
        params: [ata, { encoding: "jsonParsed" }],
      }),
    });
    const json = (await res.json()) as {
      result: { value: { data: { parsed: { info: { tokenAmount: { amount: string } } } } } | null };
    };
    return BigInt(json.result.value?.data.parsed.info.tokenAmount.amount ?? "0");
  };
  /** The printed stock-client command, run as printed with the printed environment. */
  const buyWithExample = async (network: "base" | "solana") => {
    const { stdout } = await run(process.execPath, ["examples/x402-fetch-buy.mjs", SANDBOX_SKU, network], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", ...sb.env },
    });
    const json = stdout.slice(stdout.indexOf("{"));
    return { stdout, order: JSON.parse(json) as { order_id: string; access_url: string; sku: string; rail: string } };
  };

  it("prints the service URL, sandbox-only buyer keys and the commands that buy", () => {
    expect(sb.env.LABPHI_URL).toBe(sb.url);
    expect(sb.env.LABPHI_AGENT_EVM_KEY).toMatch(/^0x[0-9a-f]{64}$/);
    expect(sb.env.LABPHI_AGENT_SVM_KEY).toMatch(/^[1-9A-HJ-NP-Za-km-z]{80,90}$/);
    expect(Number(sb.env.LABPHI_AGENT_BUDGET_USD)).toBeGreaterThanOrEqual(Number(price / 1_000_000n));
    expect(sb.stdout()).toContain("SANDBOX-ONLY");
    expect(sb.stdout()).toContain(`labphi agent buy ${SANDBOX_SKU}`);
    expect(sb.stdout()).toContain(`node examples/x402-fetch-buy.mjs ${SANDBOX_SKU}`);
    expect(sb.stdout()).toContain("chain id 8453");
    expect(sb.stdout()).toContain("network eip155:8453");
    expect(sb.stdout()).toContain("network solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
    expect(fs.existsSync(path.join(sb.dataDir, "labphi.sqlite"))).toBe(true);
    // keys go to stdout only, never to the progress log
    expect(sb.stderr()).not.toContain(sb.env.LABPHI_AGENT_EVM_KEY);
  });

  it("asks for the catalog price on both rails at the real chain ids and USDC addresses", async () => {
    const res = await fetch(`${sb.url}/api/x402-products`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sku: SANDBOX_SKU }),
    });
    expect(res.status).toBe(402);
    const required = decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "");
    const base = required.accepts.find((a) => a.network === "eip155:8453");
    const sol = required.accepts.find((a) => a.network.startsWith("solana:5eykt4"));
    expect(base?.asset).toBe(BASE_USDC);
    expect(base?.amount).toBe(price.toString());
    expect(sol?.asset).toBe(SOLANA_USDC);
    expect(sol?.amount).toBe(price.toString());
  });

  it("sells on Base to the stock @x402/fetch client with the printed key; the buyer pays exactly the price", async () => {
    const buyer = /buyer +Base (0x[0-9a-fA-F]{40})/.exec(sb.stdout())?.[1] as `0x${string}`;
    const before = await evmBalance(buyer);
    expect(before).toBe(1_000_000_000n);
    const { stdout, order } = await buyWithExample("base");
    expect(stdout).toContain("status: 200");
    expect(order.sku).toBe(SANDBOX_SKU);
    expect(order.rail).toBe("x402_base_usdc");
    expect(await evmBalance(buyer)).toBe(before - price);
    const access = await fetch(order.access_url);
    expect(access.status).toBe(200);
    const grants = PRODUCTS.find((p) => p.sku === SANDBOX_SKU)?.grants;
    expect(((await access.json()) as { grants: string }).grants).toBe(grants);
  });

  it("sells on Solana to the stock @x402/fetch client with the printed key; the buyer pays exactly the price", async () => {
    const buyer = /buyer +Base 0x[0-9a-fA-F]{40} +Solana (\S+)/.exec(sb.stdout())?.[1] as string;
    const before = await svmBalance(buyer);
    expect(before).toBe(1_000_000_000n);
    const { order } = await buyWithExample("solana");
    expect(order.rail).toBe("x402_solana_usdc");
    expect(await svmBalance(buyer)).toBe(before - price);
    expect((await fetch(order.access_url)).status).toBe(200);
  });

  /** The printed `labphi agent buy` command (helper M2's paying client), run with the printed environment. */
  const buyWithAgent = async (network: "base" | "solana") => {
    const maxUsd = /agent buy \S+ --max-usd (\S+) --network base/.exec(sb.stdout())?.[1] ?? "";
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "src/cli/main.ts", "agent", "buy", SANDBOX_SKU, "--max-usd", maxUsd, "--network", network],
      { cwd: root, env: { PATH: process.env.PATH ?? "", ...sb.env } },
    );
    return stdout;
  };

  it("sells to `labphi agent buy` on both chains with the printed keys and budget", async () => {
    const evmBuyer = /buyer +Base (0x[0-9a-fA-F]{40})/.exec(sb.stdout())?.[1] as `0x${string}`;
    const solBuyer = /buyer +Base 0x[0-9a-fA-F]{40} +Solana (\S+)/.exec(sb.stdout())?.[1] as string;
    const evmBefore = await evmBalance(evmBuyer);
    const base = await buyWithAgent("base");
    expect(base).toMatch(/order: ord_\S+ \(zrw-pro, 249\.00 USD via x402_base_usdc\)/);
    expect(await evmBalance(evmBuyer)).toBe(evmBefore - price);
    const solBefore = await svmBalance(solBuyer);
    const sol = await buyWithAgent("solana");
    expect(sol).toMatch(/order: ord_\S+ \(zrw-pro, 249\.00 USD via x402_solana_usdc\)/);
    expect(await svmBalance(solBuyer)).toBe(solBefore - price);
    const access = /^access: (\S+)$/m.exec(sol)?.[1] ?? "";
    expect((await fetch(access)).status).toBe(200);
  }, 60_000);

  it("stops cleanly on SIGINT: exit code 0, ledgers gone, data removed", async () => {
    const exited = new Promise<number | null>((r) => sb.child.once("exit", (code) => r(code)));
    sb.child.kill("SIGINT");
    const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r("timeout"), 15_000))]);
    expect(code).toBe(0);
    expect(fs.existsSync(sb.dataDir)).toBe(false);
    await expect(fetch(sb.url)).rejects.toThrow();
    await expect(fetch(sb.env.LABPHI_AGENT_BASE_RPC_URL as string)).rejects.toThrow();
  }, 20_000);
});

describe("labphi sandbox refusals and help", () => {
  const io = (env: NodeJS.ProcessEnv) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = "";
    let err = "";
    stdout.on("data", (d) => {
      out += String(d);
    });
    stderr.on("data", (d) => {
      err += String(d);
    });
    return { io: { stdin: new PassThrough(), stdout, stderr, env }, out: () => out, err: () => err };
  };

  it("refuses under NODE_ENV=production with exit code 78 and one line", async () => {
    const t = io({ NODE_ENV: "production" });
    expect(await runCli(["sandbox"], t.io)).toBe(78);
    expect(t.err().trim().split("\n")).toHaveLength(1);
    expect(t.err()).toContain("NODE_ENV=production");
    expect(t.out()).toBe("");
  });

  it("has --help and rejects a bad --port", async () => {
    const h = io({});
    expect(await runCli(["sandbox", "--help"], h.io)).toBe(0);
    expect(h.out()).toContain("Usage: labphi sandbox [--port N]");
    const bad = io({});
    expect(await runCli(["sandbox", "--port", "70000"], bad.io)).toBe(2);
    expect(bad.err()).toContain("--port");
  });

  it("is not reachable from npm start: the server entry and the app never import the sandbox", () => {
    const reach = (file: string, seen = new Set<string>()): Set<string> => {
      if (seen.has(file)) return seen;
      seen.add(file);
      const text = fs.readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)\.js"/g)) {
        const next = path.resolve(path.dirname(file), `${m[1]}.ts`);
        if (fs.existsSync(next)) reach(next, seen);
      }
      return seen;
    };
    const files = [...reach(path.join(root, "src/server.ts"))].map((f) => path.relative(root, f));
    expect(files).toContain("src/app.ts");
    expect(files.filter((f) => f.startsWith("src/sandbox/") || f === "src/cli/commands/sandbox.ts")).toEqual([]);
  });
});

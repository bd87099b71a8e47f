import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  parseEther,
  type WalletClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { BASE_MAINNET_USDC } from "../../config.js";

/**
 * A real local EVM for the sandbox and the tests: the anvil binary from @foundry-rs/anvil on a
 * free loopback port with chain id 8453 (so signatures are byte-identical to Base mainnet ones),
 * and an EIP-3009 USDC-like token compiled from our own Solidity (UsdcLike.sol, next to this file)
 * with solc from npm at start-up: nothing is downloaded.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const ANVIL = path.resolve(here, "../../../node_modules/.bin/anvil");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

let compiled: { abi: Abi; bytecode: Hex } | undefined;

/** Compiles UsdcLike.sol with solc (npm, no download); cached per process. */
export function compileUsdc(): { abi: Abi; bytecode: Hex } {
  if (compiled) return compiled;
  const source = fs.readFileSync(path.join(here, "UsdcLike.sol"), "utf8");
  const input = {
    language: "Solidity",
    sources: { "UsdcLike.sol": { content: source } },
    settings: {
      evmVersion: "cancun",
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e: { message: string }) => e.message).join("; ")}`);
  const c = out.contracts["UsdcLike.sol"].UsdcLike;
  compiled = { abi: c.abi as Abi, bytecode: `0x${c.evm.bytecode.object}` as Hex };
  return compiled;
}

export interface EvmChain {
  rpcUrl: string;
  chainId: number;
  /** The token deployer / minter (also used as the EVM facilitator's gas key). */
  deployerKey: Hex;
  usdc: `0x${string}`;
  abi: Abi;
  publicClient: PublicClient;
  wallet: WalletClient;
  /** A fresh funded account (ETH for gas) with `usdc` atomic units of the token. */
  newBuyer(usdc: bigint): Promise<{ key: Hex; address: `0x${string}` }>;
  mint(to: `0x${string}`, amount: bigint): Promise<void>;
  balanceOf(who: `0x${string}`): Promise<bigint>;
  /** A plain ERC-20 transfer of the token, signed by `fromKey` and mined; returns its hash. */
  transfer(fromKey: Hex, to: `0x${string}`, amount: bigint): Promise<Hex>;
  /** Number of token Transfer events to `to` so far. */
  transfersTo(to: `0x${string}`): Promise<number>;
  setAutomine(on: boolean): Promise<void>;
  mine(blocks?: number): Promise<void>;
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

// Anvil's well-known first development key (deterministic mnemonic); local chain only.
const DEV_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" as Hex;

export async function startAnvil(opts: { chainId?: number; at?: string } = {}): Promise<EvmChain> {
  const chainId = opts.chainId ?? 8453;
  // --port 0: anvil takes a port of its own and prints it ("Listening on 127.0.0.1:N"). A port
  // picked here and passed in could be taken by another process first (another anvil of a parallel
  // test run), whose eth_chainId would then answer for this one.
  const child: ChildProcess = spawn(
    ANVIL,
    ["--port", "0", "--host", "127.0.0.1", "--chain-id", String(chainId), "--accounts", "2"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  // However this process ends (the sandbox's bounded stop, process.exit, an uncaught error), anvil ends with it.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  child.once("exit", () => process.off("exit", killOnExit));
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  // stdout: the banner with the address, then a line per RPC call (read and dropped, so the pipe never fills)
  let banner = "";
  let port = 0;
  child.stdout?.on("data", (d) => {
    if (port) return;
    banner += String(d);
    const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(banner);
    if (m) port = Number(m[1]);
  });
  const deadline = Date.now() + 20_000;
  const failed = (): never => {
    child.kill("SIGKILL");
    throw new Error(`anvil did not start: ${stderr}${banner.slice(-2000)}`);
  };
  while (!port) {
    if (child.exitCode !== null || Date.now() > deadline) failed();
    await new Promise((r) => setTimeout(r, 50));
  }
  const rpcUrl = `http://127.0.0.1:${port}`;
  const rpc = async (method: string, params: unknown[] = []): Promise<unknown> => {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const json = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (json.error) throw new Error(`${method}: ${json.error.message}`);
    return json.result;
  };
  for (;;) {
    try {
      await rpc("eth_chainId");
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) failed();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const chain = defineChain({
    id: chainId,
    name: "anvil-base",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const account = privateKeyToAccount(DEV_KEY_0);
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 }) as PublicClient;
  const wallet = createWalletClient({ chain, transport: http(rpcUrl), account });
  const { abi, bytecode } = compileUsdc();
  const deployHash = await wallet.deployContract({ abi, bytecode, account, chain });
  const receipt = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  if (!receipt.contractAddress) throw new Error("token deployment failed");
  // Place the token's runtime code at the real Base mainnet USDC address, so the requirements
  // (asset, chain id, EIP-712 domain) are exactly mainnet's and stock clients accept the asset.
  const runtime = await publicClient.getCode({ address: receipt.contractAddress });
  const usdc = (opts.at ?? BASE_MAINNET_USDC) as `0x${string}`;
  await rpc("anvil_setCode", [usdc, runtime]);

  const mint = async (to: `0x${string}`, amount: bigint) => {
    const hash = await wallet.writeContract({
      address: usdc,
      abi,
      functionName: "mint",
      args: [to, amount],
      account,
      chain,
    });
    await publicClient.waitForTransactionReceipt({ hash });
  };
  return {
    rpcUrl,
    chainId,
    deployerKey: DEV_KEY_0,
    usdc,
    abi,
    publicClient,
    wallet,
    async newBuyer(amount) {
      const key = generatePrivateKey();
      const address = privateKeyToAccount(key).address;
      await rpc("anvil_setBalance", [address, `0x${parseEther("1").toString(16)}`]);
      if (amount > 0n) await mint(address, amount);
      return { key, address };
    },
    mint,
    async balanceOf(who) {
      return (await publicClient.readContract({
        address: usdc,
        abi,
        functionName: "balanceOf",
        args: [who],
      })) as bigint;
    },
    async transfer(fromKey, to, amount) {
      const hash = await wallet.writeContract({
        address: usdc,
        abi,
        functionName: "transfer",
        args: [to, amount],
        account: privateKeyToAccount(fromKey),
        chain: wallet.chain,
      });
      await publicClient.waitForTransactionReceipt({ hash });
      return hash;
    },
    async transfersTo(to) {
      const logs = await publicClient.getContractEvents({
        address: usdc,
        abi,
        eventName: "Transfer",
        args: { to },
        fromBlock: 0n,
      });
      return logs.length;
    },
    async setAutomine(on) {
      await rpc("evm_setAutomine", [on]);
    },
    async mine(blocks = 1) {
      await rpc("anvil_mine", [`0x${blocks.toString(16)}`]);
    },
    rpc,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((r) => child.once("exit", r));
      }
    },
  };
}

import { type CliIO, type Command, UsageError } from "../command.js";

/**
 * `labphi agent buy|suite|recover`: the paying client (src/agent) on the command line. Heavy
 * modules (x402 clients, chains, codec) load inside run(), so the command index stays light.
 */

const HELP = `Usage: labphi agent <buy SKU | suite FILE | recover> [options]

Pays Lab Phi with x402 (USDC on Base or Solana) from a local key, within a budget, and prints
every step: the 402 challenge, the amount (USD and atomic units), network, payer, the signed proof,
the settlement transaction, and the order (id + access URL) or the job (id, upload, progress,
output).

Commands:
  buy SKU           buy one product (POST /api/x402-products)
  suite FILE        run a suite job on FILE (POST /api/x402-suite; paid above the free cap):
                    upload (streamed PUT), poll progress, download the output to FILE.lpz
                    (or -o OUT) and verify it decompresses to the input's SHA-256
  recover           get back the orders your wallet paid for, by signing a challenge
                    (when a purchase answer was lost); nothing is paid

Options:
  --max-usd AMOUNT      most one payment may cost, decimal USD (default 1.00); a higher price is
                        refused before anything is signed
  --network base|solana pay (or recover) on this chain only; default: the first rail offered
                        that you hold a key for
  --url URL             the service (default $LABPHI_URL, else http://127.0.0.1:8080)
  --json                print the result as JSON on stdout (steps go to stderr)
  suite only:
  --op compress|decompress|roundtrip   (default compress)
  --level fast|balanced|max
  --product NAME        auto (default) or a codec path
  --data-class NAME     a hint, default text
  --identity TOKEN      a join-work identity token (its monthly free cap applies; or
                        $LABPHI_IDENTITY_TOKEN)
  -o, --output OUT      where the output goes
  -h, --help            this help

Environment:
  LABPHI_AGENT_EVM_KEY      0x… private key of the Base wallet (USDC, EIP-3009; no ETH needed)
  LABPHI_AGENT_SVM_KEY      base58 64-byte secret key of the Solana wallet (USDC)
  LABPHI_AGENT_BUDGET_USD   most this run may spend in all (session budget), decimal USD
  LABPHI_URL                the service's base URL
  LABPHI_AGENT_SOLANA_RPC_URL  Solana JSON-RPC the client reads a blockhash from
                            (default https://api.mainnet-beta.solana.com)
  LABPHI_AGENT_BASE_RPC_URL    Base JSON-RPC (optional)

Every purchase carries a fresh payment identifier (x402 payment-identifier extension and the
Idempotency-Key header). After a timeout or a 202 (Retry-After) the SAME proof is sent again:
never a second payment. If no final answer comes, run 'labphi agent recover'.

Exit codes: 0 done · 1 failed (the service refused, or a transfer problem) · 2 bad usage ·
3 refused by the budget (nothing signed) · 4 paid but the outcome is unknown (run recover).

Examples:
  LABPHI_AGENT_EVM_KEY=0x… labphi agent buy gao --max-usd 2
  LABPHI_AGENT_SVM_KEY=… labphi agent suite data.csv --op compress --network solana
  labphi agent recover --network base`;

interface Parsed {
  sub: "buy" | "suite" | "recover";
  target?: string;
  maxUsd?: string;
  network?: "base" | "solana";
  url?: string;
  json: boolean;
  op?: "compress" | "decompress" | "roundtrip";
  level?: "fast" | "balanced" | "max";
  product?: string;
  dataClass?: string;
  identity?: string;
  out?: string;
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T {
  if (value === undefined || !(allowed as readonly string[]).includes(value)) {
    throw new UsageError(`${name} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

function parse(args: string[]): Parsed {
  const [sub, ...rest] = args;
  if (sub !== "buy" && sub !== "suite" && sub !== "recover") {
    throw new UsageError(sub === undefined ? "a command is required: buy, suite or recover" : `unknown command ${sub}`);
  }
  const p: Parsed = { sub, json: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    const [flag, inline] =
      arg.startsWith("--") && arg.includes("=")
        ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
        : [arg, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === "--json") p.json = true;
    else if (flag === "--max-usd") p.maxUsd = value();
    else if (flag === "--network") p.network = oneOf("--network", value(), ["base", "solana"] as const);
    else if (flag === "--url") p.url = value();
    else if (sub === "suite" && flag === "--op")
      p.op = oneOf("--op", value(), ["compress", "decompress", "roundtrip"] as const);
    else if (sub === "suite" && flag === "--level")
      p.level = oneOf("--level", value(), ["fast", "balanced", "max"] as const);
    else if (sub === "suite" && flag === "--product") p.product = value();
    else if (sub === "suite" && flag === "--data-class") p.dataClass = value();
    else if (sub === "suite" && flag === "--identity") p.identity = value();
    else if (sub === "suite" && (flag === "-o" || flag === "--output")) p.out = value();
    else if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`);
    else if (p.target === undefined && sub !== "recover") p.target = arg;
    else throw new UsageError(`unexpected argument '${arg}'`);
  }
  if (sub === "buy" && !p.target) throw new UsageError("agent buy needs a SKU");
  if (sub === "suite" && !p.target) throw new UsageError("agent suite needs a FILE");
  return p;
}

async function run(args: string[], io: CliIO): Promise<number> {
  const p = parse(args);
  const agentLib = await import("../../agent/index.js");
  const { createAgent, parseUsd, BudgetError, AgentError, WalletKeyError } = agentLib;
  let perPaymentUnits: bigint | undefined;
  let sessionUnits: bigint | undefined;
  try {
    if (p.maxUsd !== undefined) perPaymentUnits = parseUsd(p.maxUsd);
    const session = io.env.LABPHI_AGENT_BUDGET_USD;
    if (session !== undefined && session !== "") sessionUnits = parseUsd(session);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const out = p.json ? io.stderr : io.stdout;
  const log = (line: string) => out.write(`${line}\n`);
  const print = (v: unknown) =>
    io.stdout.write(`${JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x), 2)}\n`);
  try {
    const agent = await createAgent({
      baseUrl: p.url ?? io.env.LABPHI_URL ?? agentLib.DEFAULT_BASE_URL,
      ...(io.env.LABPHI_AGENT_EVM_KEY ? { evmKey: io.env.LABPHI_AGENT_EVM_KEY } : {}),
      ...(io.env.LABPHI_AGENT_SVM_KEY ? { svmKey: io.env.LABPHI_AGENT_SVM_KEY } : {}),
      ...(io.env.LABPHI_AGENT_BASE_RPC_URL ? { evmRpcUrl: io.env.LABPHI_AGENT_BASE_RPC_URL } : {}),
      ...(io.env.LABPHI_AGENT_SOLANA_RPC_URL ? { svmRpcUrl: io.env.LABPHI_AGENT_SOLANA_RPC_URL } : {}),
      budget: {
        ...(perPaymentUnits !== undefined ? { perPaymentUnits } : {}),
        ...(sessionUnits !== undefined ? { sessionUnits } : {}),
      },
      ...(p.network ? { network: p.network } : {}),
      log,
    });
    for (const w of agent.wallets) log(`wallet: ${w.chain} ${w.address}`);
    if (p.sub === "buy") {
      const r = await agent.buy(p.target as string);
      if (p.json) print({ ...r.body, ...(r.payment ? { payment: r.payment } : {}) });
    } else if (p.sub === "suite") {
      const identity = p.identity ?? io.env.LABPHI_IDENTITY_TOKEN;
      const r = await agent.suite(p.target as string, {
        ...(p.op ? { op: p.op } : {}),
        ...(p.level ? { level: p.level } : {}),
        ...(p.product ? { product: p.product } : {}),
        ...(p.dataClass ? { dataClass: p.dataClass } : {}),
        ...(identity ? { identity } : {}),
        ...(p.out ? { out: p.out } : {}),
      });
      if (p.json) print(r);
    } else {
      const r = await agent.recover(p.network);
      if (p.json) print(r);
    }
    return 0;
  } catch (err) {
    if (err instanceof BudgetError) {
      io.stderr.write(`labphi agent: ${err.message}\n`);
      return 3;
    }
    if (err instanceof AgentError) {
      io.stderr.write(`labphi agent: ${err.message}\n`);
      return err.code === "payment_outcome_unknown" ? 4 : 1;
    }
    if (err instanceof WalletKeyError) throw new UsageError(err.message);
    throw err;
  }
}

export const agentCommand: Command = {
  name: "agent",
  summary: "Pay Lab Phi from a local wallet within a budget: buy a SKU, run a suite job, recover orders",
  help: HELP,
  run,
};

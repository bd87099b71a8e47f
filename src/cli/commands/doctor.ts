import { type CliIO, type Command, UsageError } from "../command.js";

const HELP = `Usage: labphi doctor [options]

Checks every configured part of this deployment without spending money and prints a table
(PART, CHECK, STATUS, DETAIL) with a fix under each failed row:

  base      BASE_RPC_URL reachable on BASE_CHAIN_ID (eth_chainId); USDC at BASE_USDC_ADDRESS
            (code, decimals() = 6, symbol); PAY_TO_BASE a valid (EIP-55) address; the gas of
            X402_EVM_FACILITATOR_KEY for N settlements, or X402_FACILITATOR_URL's /supported
  solana    SOLANA_RPC_URL on mainnet-beta (getGenesisHash); the USDC mint (token program,
            6 decimals); PAY_TO_SOLANA a 32-byte key with a USDC token account; the SOL of
            X402_SVM_FEE_PAYER_KEY for N settlements plus its rent reserve
  stripe    STRIPE_SECRET_KEY accepted (one read-only API call) and STRIPE_WEBHOOK_SECRET set
  links     PAYMENT_LINK_<SKU>: https URLs of products, each with PAYMENT_LINK_ID_<SKU>
  database  PostgreSQL (DATABASE_URL) or the SQLite file reachable, every migration applied
  storage   the S3 bucket writable (a probe object put, read and deleted), or DATA_DIR writable
  disk      free space under DATA_DIR above JOB_MIN_FREE_DISK_BYTES
  clock     this clock against the RPCs' and BASE_URL's Date headers (and Base's latest block)
  server    GET BASE_URL/healthz answers from this machine

It sends no transaction and creates no charge: it reads balances, contracts, accounts and one
Checkout Session id that does not exist. A part that is not configured is "skipped", not failed.
A setting the service would refuse fails the row of its part, and the other checks still run.
Settings come from the environment, as for labphi serve.

Options:
  --json                print the report as JSON (docs/operations.md, "labphi doctor")
  --settlements N       sales the gas key and fee payer must be able to pay for (default 100)
  --max-skew SECONDS    largest clock difference accepted (default 30)
  --timeout SECONDS     limit of one network call (default X402_RPC_TIMEOUT_SECONDS, 10)
  -h, --help            this help

Exit codes: 0 every configured part works · 1 a check failed · 2 bad usage

Examples:
  labphi doctor
  labphi doctor --settlements 1000 --json | jq '.checks[] | select(.status == "fail")'`;

function intFlag(args: string[], i: number, name: string, min: number, max: number): number {
  const v = args[i + 1];
  if (v === undefined || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(`${name} needs an integer between ${min} and ${max}`);
  }
  return Number(v);
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check every configured part (chains, Stripe, database, storage, disk, clock) without spending",
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    let json = false;
    let settlements: number | undefined;
    let maxSkewSeconds: number | undefined;
    let timeoutMs: number | undefined;
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a === "--json") json = true;
      else if (a === "--settlements") settlements = intFlag(args, i++, a, 1, 1_000_000_000);
      else if (a === "--max-skew") maxSkewSeconds = intFlag(args, i++, a, 1, 86_400);
      else if (a === "--timeout") timeoutMs = intFlag(args, i++, a, 1, 600) * 1000;
      else throw new UsageError(`unknown option ${a}`);
    }
    const { runDoctor } = await import("../../ops/doctor/runner.js");
    const { renderTable } = await import("../../ops/doctor/render.js");
    const report = await runDoctor({ env: io.env, settlements, maxSkewSeconds, timeoutMs });
    io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : renderTable(report));
    return report.ok ? 0 : 1;
  },
};

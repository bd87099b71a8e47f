/**
 * The load script of bench:load (bench/load.ts starts it as a child process; loopback only).
 *
 *   node --import tsx bench/load-driver.ts CONFIG.json
 *
 * CONFIG.json (written by bench/load.ts, mode 0600, local-chain keys only): the service URLs (requests
 * go round-robin over them), the time limit, the request limit, the concurrency, the pre-funded
 * buyer wallets and the ledgers' RPC URLs. `concurrency` virtual users loop until the time or the
 * request count runs out, each picking one operation at a time (weights in `MIX`). Then the driver
 * waits for its suite jobs and writes its figures to CONFIG.out as JSON (see `DriverResult`).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Agent, createAgent } from "../src/agent/index.js";
import { decompressStream } from "../src/codec/index.js";

export interface DriverConfig {
  urls: string[];
  seconds: number;
  maxRequests: number;
  concurrency: number;
  buyers: { base: string[]; solana: string[] };
  evmRpcUrl: string;
  svmRpcUrl: string;
  participants: number;
  proposals: number;
  out: string;
}

export interface EndpointStats {
  requests: number;
  /** status → count, "network" for a request without an answer */
  statuses: Record<string, number>;
  /** answers that were not what the operation expects, by status */
  errors: Record<string, number>;
  /** the problem `code` of the unexpected answers: "status code" → count */
  errorCodes: Record<string, number>;
  latenciesMs: number[];
}

export interface DriverResult {
  seconds: number;
  requests: number;
  endpoints: Record<string, EndpointStats>;
  purchases: { chain: "base" | "solana"; order_id: string; transaction?: string }[];
  replays: { ok: number; violations: string[] };
  votes: { cast: number; pairs: number };
  jobs: { created: number; done: number; verified: number; failures: string[] };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const pick = <T>(a: readonly T[]): T => a[Math.floor(Math.random() * a.length)] as T;

const cfg = JSON.parse(fs.readFileSync(process.argv[2] as string, "utf8")) as DriverConfig;
const started = performance.now();
const deadline = started + cfg.seconds * 1000;
let sent = 0;
let next = 0;
const url = () => cfg.urls[next++ % cfg.urls.length] as string;
const more = () => performance.now() < deadline && sent < cfg.maxRequests;

const endpoints: Record<string, EndpointStats> = {};
function record(label: string, status: number | "network", ms: number, expected: boolean, text = ""): void {
  const e = endpoints[label] ?? { requests: 0, statuses: {}, errors: {}, errorCodes: {}, latenciesMs: [] };
  endpoints[label] = e;
  e.requests++;
  e.statuses[status] = (e.statuses[status] ?? 0) + 1;
  if (!expected) {
    e.errors[status] = (e.errors[status] ?? 0) + 1;
    let code = "";
    try {
      code = String((JSON.parse(text) as { code?: string }).code ?? "");
    } catch {
      // not a problem document
    }
    const key = `${status}${code ? ` ${code}` : ""}`;
    e.errorCodes[key] = (e.errorCodes[key] ?? 0) + 1;
  }
  e.latenciesMs.push(Math.round(ms * 100) / 100);
}

type Answer = { status: number; headers: Headers; text: string; bytes?: Uint8Array };

/** One timed HTTP request, recorded under `label`; `expect` says which statuses are right. */
async function call(
  label: string,
  target: string,
  init: RequestInit & { binary?: boolean },
  expect: (status: number, text: string) => boolean,
): Promise<Answer | undefined> {
  sent++;
  const t = performance.now();
  try {
    const res = await fetch(target, { ...init, signal: AbortSignal.timeout(60_000) });
    const answer: Answer = init.binary
      ? { status: res.status, headers: res.headers, text: "", bytes: new Uint8Array(await res.arrayBuffer()) }
      : { status: res.status, headers: res.headers, text: await res.text() };
    record(label, res.status, performance.now() - t, expect(res.status, answer.text), answer.text);
    return answer;
  } catch {
    record(label, "network", performance.now() - t, false);
    return undefined;
  }
}
const is =
  (...codes: number[]) =>
  (s: number) =>
    codes.includes(s);
const json = (a: Answer | undefined): Record<string, unknown> => {
  try {
    return JSON.parse(a?.text ?? "") as Record<string, unknown>;
  } catch {
    return {};
  }
};
const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

// ------------------------------------------------------------------ catalog, challenge, codec

const catalog = () => call("GET /api/x402-products", `${url()}/api/x402-products`, {}, is(200));
const llms = () => call("GET /llms.txt", `${url()}/llms.txt`, {}, is(200));
const challenge = () =>
  call("POST /api/x402-products (402 challenge)", `${url()}/api/x402-products`, post({ sku: "gao-entry" }), is(402));

const WORDS = "order payment queue worker segment proof vote replay settle ledger codec frame".split(" ");
async function codec(): Promise<void> {
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) lines.push(`${i} ${pick(WORDS)} ${pick(WORDS)} ${Math.floor(Math.random() * 1e6)}`);
  await call(
    "POST /api/compress",
    `${url()}/api/compress`,
    { method: "POST", headers: { "content-type": "application/octet-stream" }, body: lines.join("\n") },
    // 503 codec_capacity_unavailable is the codec's admission control shedding load (docs/limits.md)
    (status, text) => status === 200 || (status === 503 && text.includes('"codec_capacity_unavailable"')),
  );
}

// ------------------------------------------------------------------ paid purchases and replays

/** A paid request as sent (to replay it byte for byte) and the order it bought. */
interface Paid {
  url: string;
  body: string;
  headers: Record<string, string>;
  orderId: string;
}
const paid: Paid[] = [];
const purchases: DriverResult["purchases"] = [];
const replays = { ok: 0, violations: [] as string[] };

/**
 * An agent per buyer wallet and service URL; a wallet pays one purchase at a time. On Solana one
 * purchase is in flight at a time: the local ledger (src/sandbox/ledgers/svm.ts) expires the
 * blockhash after every transaction it executes, so a transaction signed before another one landed
 * fails there with "blockhash not found" (a real cluster keeps a blockhash valid for ~150 blocks).
 */
const free = { base: [...cfg.buyers.base], solana: [...cfg.buyers.solana] };
let solanaBusy = false;
const agents = new Map<string, Agent>();

async function agentFor(chain: "base" | "solana", key: string, baseUrl: string, last: { paid?: Paid }) {
  const id = `${chain}|${key}|${baseUrl}`;
  let agent = agents.get(id);
  if (!agent) {
    agent = await createAgent({
      baseUrl,
      ...(chain === "base" ? { evmKey: key, evmRpcUrl: cfg.evmRpcUrl } : { svmKey: key, svmRpcUrl: cfg.svmRpcUrl }),
      budget: { perPaymentUnits: 10_000_000n },
      network: chain,
      timeoutMs: 60_000,
      maxAttempts: 6,
      // Every request of the agent, timed and recorded; the paid one is kept for the replays.
      fetch: async (input, init) => {
        const headers = (init?.headers ?? {}) as Record<string, string>;
        const proof = Boolean(headers["PAYMENT-SIGNATURE"]);
        const label = proof ? `POST /api/x402-products (paid, ${chain})` : "POST /api/x402-products (402 challenge)";
        sent++;
        const t = performance.now();
        try {
          const res = await fetch(input, init);
          const text = await res.text();
          record(label, res.status, performance.now() - t, proof ? res.status === 200 : res.status === 402, text);
          if (proof && res.status === 200) {
            const orderId = String((JSON.parse(text) as { order_id?: string }).order_id);
            last.paid = { url: String(input), body: String(init?.body), headers: { ...headers }, orderId };
          }
          return new Response(text, { status: res.status, headers: res.headers });
        } catch (err) {
          record(label, "network", performance.now() - t, false);
          throw err;
        }
      },
    });
    agents.set(id, agent);
  }
  return agent;
}

async function purchase(): Promise<boolean> {
  const order = Math.random() < 0.5 ? (["base", "solana"] as const) : (["solana", "base"] as const);
  const chain = order.find((c) => free[c].length > 0 && !(c === "solana" && solanaBusy));
  if (!chain) return false;
  const key = free[chain].pop() as string;
  if (chain === "solana") solanaBusy = true;
  try {
    const last: { paid?: Paid } = {};
    const agent = await agentFor(chain, key, url(), last);
    const r = await agent.buy("gao-entry", { note: `load ${randomBytes(4).toString("hex")}` });
    purchases.push({
      chain,
      order_id: r.body.order_id,
      ...(r.payment?.transaction ? { transaction: r.payment.transaction } : {}),
    });
    if (last.paid) paid.push(last.paid);
  } catch {
    // recorded by the agent's fetch (a refused proof or no answer)
  } finally {
    free[chain].push(key);
    if (chain === "solana") solanaBusy = false;
  }
  return true;
}

/**
 * A used proof sent again, three ways: as it was (same identifier) → the same order; without the
 * Idempotency-Key header → 409 or the same order; with another body (another note) → 409 or the
 * same order. Any other order on a used proof is a violation.
 */
async function replay(): Promise<boolean> {
  if (paid.length === 0) return false;
  const p = pick(paid);
  const way = pick(["same identifier", "no Idempotency-Key", "other body"] as const);
  const headers = { ...p.headers };
  if (way !== "same identifier") delete headers["Idempotency-Key"];
  const body = way === "other body" ? JSON.stringify({ ...JSON.parse(p.body), note: "replayed" }) : p.body;
  const target = `${url()}${new URL(p.url).pathname}`;
  const a = await call(
    `POST /api/x402-products (replay, ${way})`,
    target,
    { method: "POST", headers, body },
    way === "same identifier" ? is(200) : is(200, 409),
  );
  if (!a) return true;
  const orderId = json(a).order_id;
  if (a.status === 200 && orderId !== p.orderId) {
    replays.violations.push(`replay (${way}) of ${p.orderId} answered 200 with order ${String(orderId)}`);
  } else if (a.status === 200 || a.status === 409) replays.ok++;
  return true;
}

// ------------------------------------------------------------------ olympiad

const tokens: string[] = [];
const proposals: string[] = [];
const voted = new Set<string>();
let votesCast = 0;

async function register(label = "POST /api/olympiad (register)"): Promise<void> {
  const name = `Load ${randomBytes(3).toString("hex")}`;
  const a = await call(
    label,
    `${url()}/api/olympiad`,
    post({ action: "register", who: "human_for_self", name }),
    is(200, 201),
  );
  const token = json(a).participant_token;
  if (typeof token === "string") tokens.push(token);
}

async function propose(token: string): Promise<void> {
  const a = await call(
    "POST /api/olympiad (propose)",
    `${url()}/api/olympiad`,
    post(
      { action: "propose", kind: "new_games", title: `Load proposal ${proposals.length + 1}`, body: "Under load." },
      { authorization: `Bearer ${token}` },
    ),
    is(200),
  );
  const id = (json(a).proposal as { proposal_id?: string } | undefined)?.proposal_id;
  if (id) proposals.push(id);
}

async function vote(): Promise<boolean> {
  if (tokens.length === 0 || proposals.length === 0) return false;
  const i = Math.floor(Math.random() * tokens.length);
  const proposal = pick(proposals);
  const pair = `${i}|${proposal}`;
  const a = await call(
    `POST /api/olympiad (${voted.has(pair) ? "re-vote" : "vote"})`,
    `${url()}/api/olympiad`,
    post(
      { action: "vote", proposal_id: proposal, choice: pick(["yes", "no", "abstain"]) },
      { authorization: `Bearer ${tokens[i]}` },
    ),
    is(200),
  );
  if (a?.status === 200) {
    voted.add(pair);
    votesCast++;
  }
  return true;
}

// ------------------------------------------------------------------ suite jobs

const jobs = { created: 0, done: 0, verified: 0, failures: [] as string[] };
let jobRunning = false;

/** One free suite job, end to end: create, upload, wait until done, download, check the restored bytes. */
async function suiteJob(): Promise<boolean> {
  if (jobRunning) return false;
  jobRunning = true;
  try {
    const lines: string[] = [];
    for (let i = 0; i < 1500; i++) lines.push(`${Date.now()} ${pick(WORDS)} ${i} ${pick(WORDS)} ${Math.random()}`);
    const input = Buffer.from(lines.join("\n"));
    const base = url();
    const created = await call(
      "POST /api/x402-suite (free job)",
      `${base}/api/x402-suite`,
      post({ product: "auto", dataClass: "text", op: "compress", bytes: input.length, level: "fast" }),
      is(200),
    );
    const job = json(created);
    if (typeof job.job_id !== "string") return true;
    jobs.created++;
    const auth = { authorization: `Bearer ${String(job.job_token)}` };
    const target = () => `${url()}/api/jobs/${String(job.job_id)}`;
    const put = await call(
      "PUT /api/jobs/:id/input",
      `${target()}/input`,
      { method: "PUT", headers: { ...auth, "content-type": "application/octet-stream" }, body: input },
      is(200),
    );
    if (put?.status !== 200) {
      jobs.failures.push(`${String(job.job_id)}: upload answered ${put?.status ?? "nothing"}`);
      return true;
    }
    // The job finishes even after the time limit: the driver waits for it (at most 120 s).
    let state = "";
    for (const until = Date.now() + 120_000; Date.now() < until; await sleep(250)) {
      const view = json(await call("GET /api/jobs/:id", target(), { headers: auth }, is(200)));
      state = String(view.state);
      if (state === "done" || state === "failed" || state === "cancelled") break;
    }
    if (state !== "done") {
      jobs.failures.push(`${String(job.job_id)}: ${state}`);
      return true;
    }
    jobs.done++;
    const out = await call("GET /api/jobs/:id/output", `${target()}/output`, { headers: auth, binary: true }, is(200));
    if (out?.status === 200 && out.bytes) {
      const parts: Buffer[] = [];
      try {
        await pipeline(
          Readable.from([out.bytes]),
          decompressStream(),
          new Writable({
            write(c: Buffer, _e, cb) {
              parts.push(c);
              cb();
            },
          }),
        );
      } catch (err) {
        jobs.failures.push(`${String(job.job_id)}: output does not decode (${(err as Error).message})`);
        return true;
      }
      if (Buffer.concat(parts).equals(input)) jobs.verified++;
      else jobs.failures.push(`${String(job.job_id)}: output does not restore the input`);
    }
    return true;
  } finally {
    jobRunning = false;
  }
}

// ------------------------------------------------------------------ the mix

/** Operation weights (out of 100); an operation that cannot run now falls back to a catalog read. */
const MIX: [number, () => Promise<unknown>][] = [
  [18, catalog],
  [8, llms],
  [14, challenge],
  [14, purchase],
  [8, replay],
  [14, codec],
  [3, suiteJob],
  [18, vote],
  [3, () => register()],
];
const TOTAL = MIX.reduce((s, [w]) => s + w, 0);

async function user(): Promise<void> {
  while (more()) {
    const r = Math.random() * TOTAL;
    let acc = 0;
    const op =
      MIX.find(([w]) => {
        acc += w;
        return r < acc;
      })?.[1] ?? catalog;
    const ran = await op();
    if (ran === false) await catalog();
  }
}

// Set-up (counted like everything else): participants and their proposals.
await Promise.all(Array.from({ length: cfg.participants }, () => register("POST /api/olympiad (register)")));
for (let i = 0; i < cfg.proposals && i < tokens.length; i++) await propose(tokens[i] as string);
await Promise.all(Array.from({ length: cfg.concurrency }, user));
const result: DriverResult = {
  seconds: (performance.now() - started) / 1000,
  requests: sent,
  endpoints,
  purchases,
  replays,
  votes: { cast: votesCast, pairs: voted.size },
  jobs,
};
fs.writeFileSync(cfg.out, JSON.stringify(result));

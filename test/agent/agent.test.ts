import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import type { LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BudgetError, createAgent, parseUsd } from "../../src/agent/index.js";
import { runCli } from "../../src/cli/main.js";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { UsageLedger } from "../../src/jobs/usage.js";
import { buyerKeyHash } from "../../src/payments/x402/buyer.js";
import { appOn, countRows, solanaKey } from "../payments/x402/helpers.js";
import { type BothChains, startBothChains } from "../support/chains/both.js";
import { freshDatabase } from "../support/databases.js";
import { onFreePort } from "../support/ports.js";

/**
 * The paying client (src/agent, `labphi agent`) against the real service on a loopback port and
 * both local ledgers (anvil Base, LiteSVM Solana): real keys, real signatures, real transfers.
 */

const GB = 1_000_000_000;
let chains: BothChains;
let db: Db;
let app: App;
let url: string;

/** The app on a free port its BASE_URL names (another port when another process took that one first). */
function listening(env: Record<string, string> = {}): Promise<{ app: App; url: string }> {
  return onFreePort(async (port) => {
    const base = `http://127.0.0.1:${port}`;
    const a = await appOn(db, chains.env({ BASE_URL: base, ...env }));
    try {
      await a.listen({ host: "127.0.0.1", port });
    } catch (err) {
      await a.close();
      throw err;
    }
    return { app: a, url: base };
  });
}

beforeAll(async () => {
  chains = await startBothChains();
  db = (await freshDatabase("sqlite")).db;
  ({ app, url } = await listening());
}, 120_000);
afterAll(async () => {
  await app?.close();
  await db?.close();
  await chains?.stop();
});

/** An EVM account whose signatures are counted (to prove that a refusal signed nothing). */
function countingAccount(key: `0x${string}`): { account: LocalAccount; signatures: () => number } {
  const inner = privateKeyToAccount(key);
  let n = 0;
  const account: LocalAccount = {
    ...inner,
    signTypedData: async (args) => {
      n++;
      return inner.signTypedData(args as never);
    },
    signMessage: async (args) => {
      n++;
      return inner.signMessage(args);
    },
  };
  return { account, signatures: () => n };
}

const proofsOf = async (payer: string) =>
  (await db.kysely.selectFrom("payment_proofs").selectAll().execute()).filter((p) =>
    JSON.stringify(p).toLowerCase().includes(payer.toLowerCase()),
  );

describe("labphi agent: the paying client", () => {
  it("buys on Base: one signed payment, order and access URL, every step printed; recovery by signature returns it", async () => {
    const buyer = await chains.evm.newBuyer(5_000_000n);
    const lines: string[] = [];
    const agent = await createAgent({
      baseUrl: url,
      evmKey: buyer.key,
      budget: { perPaymentUnits: parseUsd("2"), sessionUnits: parseUsd("5") },
      log: (l) => lines.push(l),
    });
    const r = await agent.buy("gao");
    expect(r.body.order_id).toMatch(/^ord_/);
    expect(r.body.access_url).toContain(`${url}/access/`);
    expect(r.payment).toMatchObject({
      chain: "base",
      amount_units: "1000000",
      amount_usd: "1.00",
      payer: buyer.address,
    });
    expect(r.payment?.payment_id).toMatch(/^pay_/);
    expect(r.payment?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await chains.evm.balanceOf(buyer.address)).toBe(4_000_000n);
    expect(agent.budget.spent).toBe(1_000_000n);
    const log = lines.join("\n");
    for (const step of [
      "402 challenge",
      "1.00 USD = 1000000 units",
      `payer: ${buyer.address}`,
      "signed:",
      "settled: 0x",
    ]) {
      expect(log).toContain(step);
    }
    expect(log).toContain(`order: ${r.body.order_id}`);
    expect(log).not.toContain(buyer.key.slice(2));
    expect(log).not.toContain(r.payment?.payment_id); // the buyer's secret is shown shortened only
    // the proof carried the payment identifier: the service stored its hash
    const [proof] = await proofsOf(buyer.address);
    expect(proof?.buyer_key_hash).toBe(buyerKeyHash(r.payment?.payment_id as string));

    const recovered = await agent.recover("base");
    expect(recovered).toHaveLength(1);
    expect(recovered[0]?.address).toBe(buyer.address);
    expect(recovered[0]?.orders.map((o) => o.order_id)).toEqual([r.body.order_id]);
    expect(recovered[0]?.orders[0]?.access_url).toBeTruthy();
  });

  it("buys on Solana from a base58 secret key (chosen with network: solana); recovery by ed25519 signature", async () => {
    const { signer, secret } = await solanaKey();
    await chains.svm.setUsdc(signer.address, 3_000_000n);
    const evmBuyer = await chains.evm.newBuyer(3_000_000n);
    const agent = await createAgent({
      baseUrl: url,
      evmKey: evmBuyer.key,
      svmKey: secret,
      svmRpcUrl: chains.svm.rpcUrl,
      network: "solana",
      budget: { perPaymentUnits: parseUsd("1") },
    });
    const r = await agent.buy("gao");
    expect(r.body.rail).toBe("x402_solana_usdc");
    expect(r.payment).toMatchObject({ chain: "solana", payer: signer.address, amount_units: "1000000" });
    expect(await chains.svm.usdcBalance(signer.address)).toBe(2_000_000n);
    expect(await chains.evm.balanceOf(evmBuyer.address)).toBe(3_000_000n);
    const recovered = await agent.recover("solana");
    expect(recovered[0]?.orders.map((o) => o.order_id)).toEqual([r.body.order_id]);
  });

  it("a price above the budget is refused before signing: no signature, no proof at the service, no transfer", async () => {
    const buyer = await chains.evm.newBuyer(5_000_000n);
    const { account, signatures } = countingAccount(buyer.key);
    const proofs = await countRows(app, "payment_proofs");
    const perPayment = await createAgent({
      baseUrl: url,
      evmKey: account,
      budget: { perPaymentUnits: parseUsd("0.99") },
    });
    await expect(perPayment.buy("gao")).rejects.toMatchObject({ code: "budget_per_payment_exceeded" });
    // a session budget: the first purchase fits, the second would not
    const session = await createAgent({
      baseUrl: url,
      evmKey: account,
      budget: { perPaymentUnits: parseUsd("1"), sessionUnits: parseUsd("1.5") },
    });
    expect(signatures()).toBe(0);
    await session.buy("gao");
    expect(signatures()).toBe(1);
    const second = session.buy("gao");
    await expect(second).rejects.toBeInstanceOf(BudgetError);
    await expect(second).rejects.toMatchObject({ code: "budget_session_exceeded" });
    expect(signatures()).toBe(1);
    expect(await countRows(app, "payment_proofs")).toBe(proofs + 1);
    expect(await chains.evm.balanceOf(buyer.address)).toBe(4_000_000n);
    // Solana: the same refusal, nothing moves
    const sol = await solanaKey();
    await chains.svm.setUsdc(sol.signer.address, 2_000_000n);
    const svmAgent = await createAgent({
      baseUrl: url,
      svmKey: sol.secret,
      svmRpcUrl: chains.svm.rpcUrl,
      budget: { perPaymentUnits: parseUsd("0.50") },
    });
    const landed = chains.svm.landed();
    await expect(svmAgent.buy("gao")).rejects.toMatchObject({ code: "budget_per_payment_exceeded" });
    expect(chains.svm.landed()).toBe(landed);
    expect(await chains.svm.usdcBalance(sol.signer.address)).toBe(2_000_000n);
    expect(await countRows(app, "payment_proofs")).toBe(proofs + 1);
  });

  it("a 202 (settlement pending) is retried after Retry-After with the SAME proof: one payment, one order", async () => {
    const slow = await listening({ X402_SETTLE_TIMEOUT_SECONDS: "1" });
    try {
      const buyer = await chains.evm.newBuyer(5_000_000n);
      const { account, signatures } = countingAccount(buyer.key);
      const waits: number[] = [];
      const lines: string[] = [];
      const agent = await createAgent({
        baseUrl: slow.url,
        evmKey: account,
        budget: { perPaymentUnits: parseUsd("1") },
        log: (l) => lines.push(l),
        sleep: async (ms) => {
          waits.push(ms);
          // while the agent waits, the settlement lands
          await chains.evm.setAutomine(true);
          await chains.evm.mine(1);
        },
      });
      await chains.evm.setAutomine(false);
      let r: Awaited<ReturnType<typeof agent.buy>>;
      try {
        r = await agent.buy("gao");
      } finally {
        await chains.evm.setAutomine(true);
      }
      expect(waits).toEqual([5000]);
      expect(lines.join("\n")).toContain("202 settlement pending: sending the SAME proof again after Retry-After 5 s");
      expect(signatures()).toBe(1);
      expect(r.body.order_id).toMatch(/^ord_/);
      expect(await chains.evm.balanceOf(buyer.address)).toBe(4_000_000n);
      const orders = await db.kysely
        .selectFrom("orders")
        .selectAll()
        .where("transaction_ref", "=", r.body.transaction)
        .execute();
      expect(orders).toHaveLength(1);
      expect(await proofsOf(buyer.address)).toHaveLength(1);
    } finally {
      await slow.app.close();
    }
  });

  it("an answer lost after the payment (timeout) is retried with the SAME proof: the same order, paid once", async () => {
    const buyer = await chains.evm.newBuyer(5_000_000n);
    const { account, signatures } = countingAccount(buyer.key);
    let dropped = 0;
    const proofsSent = new Set<string>();
    const agent = await createAgent({
      baseUrl: url,
      evmKey: account,
      sleep: async () => {},
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        const proof = new Headers(init?.headers).get("payment-signature");
        if (proof) proofsSent.add(proof);
        if (proof && dropped === 0) {
          // the service settled and answered; the answer never reaches the agent
          dropped++;
          expect(res.status).toBe(200);
          await res.text();
          throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
        }
        return res;
      },
    });
    const r = await agent.buy("gao");
    expect(dropped).toBe(1);
    expect(proofsSent.size).toBe(1);
    expect(signatures()).toBe(1);
    expect(r.body.order_id).toMatch(/^ord_/);
    expect(await chains.evm.balanceOf(buyer.address)).toBe(4_000_000n);
    expect(await proofsOf(buyer.address)).toHaveLength(1);
  });

  it("a suite job above the identity's free cap: paid, uploaded, processed, downloaded, verified", async () => {
    const join = await app.inject({
      method: "POST",
      url: "/api/join-work",
      payload: { name: "agent tester", intent: "pay for a suite job.", seed: "b".repeat(33) },
    });
    expect(join.statusCode, join.body).toBeLessThan(300);
    const token = join.json().token as string;
    const identity = await db.kysely.selectFrom("identities").select("id").executeTakeFirstOrThrow();
    // this identity already used its 100 GB this month: the next job is billable (the 0.05 USD minimum)
    await new UsageLedger(db.kysely).record({
      id: "test:agent-month",
      identityId: identity.id,
      meter: "suite_bytes",
      valueBytes: 100 * GB,
    });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "labphi-agent-"));
    const file = path.join(dir, "input.txt");
    const text = Array.from({ length: 4000 }, (_, i) => `line ${i}: the quick brown fox ${i % 17}\n`).join("");
    await fs.writeFile(file, Buffer.concat([Buffer.from(text), randomBytes(512)]));
    const buyer = await chains.evm.newBuyer(1_000_000n);
    const lines: string[] = [];
    const agent = await createAgent({
      baseUrl: url,
      evmKey: buyer.key,
      budget: { perPaymentUnits: parseUsd("0.10") },
      log: (l) => lines.push(l),
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 200))),
    });
    const r = await agent.suite(file, { op: "compress", identity: token, pollMs: 100 });
    expect(r.amount_units).toBe("50000");
    expect(r.payment).toMatchObject({ chain: "base", amount_units: "50000" });
    expect(await chains.evm.balanceOf(buyer.address)).toBe(950_000n);
    expect(r.output).toBe(`${file}.lpz`);
    expect(r.verified).toBe(true);
    const input = await fs.readFile(file);
    expect(r.input_sha256).toBe(createHash("sha256").update(input).digest("hex"));
    const out = await fs.readFile(r.output);
    expect(out.length).toBeLessThan(input.length);
    const log = lines.join("\n");
    for (const step of [
      "402 challenge",
      "quote: qt_",
      "signed:",
      `job: ${r.job_id}`,
      "uploaded",
      "done 100%",
      "verified:",
    ]) {
      expect(log).toContain(step);
    }
    const job = await db.kysely.selectFrom("jobs").selectAll().where("id", "=", r.job_id).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ state: "done", paid_by: "x402_base_usdc" });
  }, 60_000);
});

describe("labphi agent as a real process", () => {
  const exec = promisify(execFile);
  const require = createRequire(import.meta.url);
  const tsx = require.resolve("tsx/cli");
  const main = path.resolve(import.meta.dirname, "../../src/cli/main.ts");
  const cli = (args: string[], env: Record<string, string>) =>
    exec(process.execPath, [tsx, main, "agent", ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LABPHI_URL: url, ...env },
      timeout: 60_000,
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout: string; stderr: string }) => ({
        code: e.code ?? -1,
        stdout: e.stdout,
        stderr: e.stderr,
      }),
    );

  /** The same CLI in this process (faster), for the cases one real process already covers. */
  const inProcess = async (args: string[], env: Record<string, string>) => {
    let stdout = "";
    let stderr = "";
    const sink = (add: (s: string) => void) =>
      new Writable({
        write(chunk, _e, cb) {
          add(String(chunk));
          cb();
        },
      });
    const code = await runCli(["agent", ...args], {
      stdin: process.stdin,
      stdout: sink((s) => {
        stdout += s;
      }),
      stderr: sink((s) => {
        stderr += s;
      }),
      env: { LABPHI_URL: url, ...env },
    });
    return { code, stdout, stderr };
  };

  it("--help describes the commands, budget, environment and exit codes", async () => {
    const r = await cli(["--help"], {});
    expect(r.code).toBe(0);
    for (const s of ["buy SKU", "suite FILE", "recover", "--max-usd", "LABPHI_AGENT_BUDGET_USD", "Exit codes"]) {
      expect(r.stdout).toContain(s);
    }
  }, 60_000);

  it("buys with --json; a price above --max-usd exits 3 with nothing signed; the session budget applies", async () => {
    const buyer = await chains.evm.newBuyer(5_000_000n);
    const env = { LABPHI_AGENT_EVM_KEY: buyer.key };
    const refused = await cli(["buy", "gao", "--max-usd", "0.50"], env);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain("above the per-payment limit of 0.50 USD");
    expect(refused.stdout).not.toContain("signed:");
    expect(await proofsOf(buyer.address)).toHaveLength(0);
    const overSession = await inProcess(["buy", "gao", "--max-usd", "2"], {
      ...env,
      LABPHI_AGENT_BUDGET_USD: "0.999999",
    });
    expect(overSession.code).toBe(3);
    expect(overSession.stderr).toContain("session budget");
    expect(await chains.evm.balanceOf(buyer.address)).toBe(5_000_000n);

    const ok = await cli(["buy", "gao", "--max-usd", "1.00", "--json"], { ...env, LABPHI_AGENT_BUDGET_USD: "3" });
    expect(ok.code, ok.stderr).toBe(0);
    const order = JSON.parse(ok.stdout);
    expect(order.order_id).toMatch(/^ord_/);
    expect(order.payment).toMatchObject({ chain: "base", amount_units: "1000000", payer: buyer.address });
    expect(ok.stderr).toContain("402 challenge");
    expect(ok.stderr).toContain(`order: ${order.order_id}`);
    expect(ok.stderr + ok.stdout).not.toContain(buyer.key.slice(2));
    expect(await chains.evm.balanceOf(buyer.address)).toBe(4_000_000n);

    const rec = await inProcess(["recover", "--network", "base"], env);
    expect(rec.code, rec.stderr).toBe(0);
    expect(rec.stdout).toContain(order.order_id);

    const usage = await inProcess(["buy", "gao", "--max-usd", "0.1.2"], env);
    expect(usage.code).toBe(2);
    const noKey = await inProcess(["buy", "gao"], {});
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain("LABPHI_AGENT_EVM_KEY");
  }, 120_000);
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateKeyPairSigner, getBase58Decoder, lamports } from "@solana/kit";
import { getMintEncoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { x402Facilitator } from "@x402/core/facilitator";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/db/database.js";
import { type DoctorReport, type DoctorRow, runDoctor } from "../../../src/ops/doctor/runner.js";
import { newSolanaKey } from "../../../src/sandbox/keys.js";
import { startHttpFacilitator } from "../../support/chains/facilitator.js";
import { createPostgresDatabase } from "../../support/databases.js";
import { unassignedPort } from "../../support/ports.js";
import { DEVNET_GENESIS, doctorCli, startWorld, type World } from "./world.js";

/**
 * `labphi doctor` (issue #25 item 2) against real local parts: anvil and LiteSVM (the sandbox's
 * ledgers), the Stripe stand-in reached by the real `stripe` SDK, PostgreSQL (embedded), s3rver and
 * the service itself. Healthy, every configured row is ok and the exit status 0; each part broken
 * in turn fails its row, with a fix, and the exit status is 1. Doctor spends nothing: no
 * transaction lands on either ledger and Stripe sees only GETs.
 */

let w: World;

beforeAll(async () => {
  w = await startWorld("postgres");
}, 120_000);

afterAll(async () => {
  await w?.stop();
});

const row = (r: DoctorReport, id: string): DoctorRow => {
  const found = r.checks.find((c) => c.id === id);
  if (!found) throw new Error(`no row ${id} in ${r.checks.map((c) => c.id).join(", ")}`);
  return found;
};

/** The report of a run with settings changed; the row `id` must fail with a fix, and nothing else may fail. */
async function failsOnly(
  change: Record<string, string | undefined>,
  id: string,
  opts: Parameters<typeof runDoctor>[0] extends infer O ? Partial<O> : never = {},
): Promise<DoctorRow> {
  const report = await runDoctor({ env: w.env(change), ...opts });
  const failed = report.checks.filter((c) => c.status === "fail").map((c) => c.id);
  expect(failed).toEqual([id]);
  expect(report.ok).toBe(false);
  const r = row(report, id);
  expect(r.fix).toBeTruthy();
  return r;
}

describe("labphi doctor on a healthy deployment", () => {
  it("prints every part ok and exits 0, spending nothing", async () => {
    const gas = privateKeyToAccount(w.env().X402_EVM_FACILITATOR_KEY as `0x${string}`).address;
    const nonceBefore = await w.chains.evm.publicClient.getTransactionCount({ address: gas });
    const blockBefore = await w.chains.evm.publicClient.getBlockNumber();
    const landedBefore = w.chains.svm.landed();
    const stripeBefore = w.stripe.requests.length;

    const { code, out } = await doctorCli(w.env());
    expect(out).toMatch(/^PART\s+CHECK\s+STATUS\s+DETAIL/);
    expect(out).not.toMatch(/\bfail\b/);
    expect(code).toBe(0);

    const json = await doctorCli(w.env(), ["--json"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.out) as DoctorReport;
    expect(report.version).toBe(1);
    expect(report.ok).toBe(true);
    expect(report.counts.fail).toBe(0);
    for (const id of [
      "base.rpc",
      "base.usdc",
      "base.pay_to",
      "base.facilitator",
      "solana.rpc",
      "solana.usdc",
      "solana.pay_to",
      "solana.pay_to_account",
      "solana.fee_payer",
      "stripe.key",
      "stripe.webhook_secret",
      "links.urls",
      "database.connect",
      "database.migrations",
      "storage.s3",
      "disk.free",
      "clock.skew",
      "server.healthz",
    ]) {
      expect(row(report, id).status, `${id}: ${row(report, id).detail}`).toBe("ok");
    }
    // S3 in use: the local folder's row says so and is not a failure
    expect(row(report, "storage.local")).toMatchObject({ status: "skipped", fix: null });
    for (const c of report.checks) {
      expect(Object.keys(c).sort()).toEqual(["check", "detail", "fix", "id", "part", "status"]);
    }
    const rail = (id: string) => report.rails.find((r) => r.id === id);
    for (const id of ["x402_base_usdc", "x402_solana_usdc", "card_checkout", "card_payment_link"]) {
      expect(rail(id)).toMatchObject({ configured: true, missing: [] });
    }
    expect(json.out).toMatch(/"rails": \[/);

    // nothing sent, nothing charged, no probe left behind
    expect(await w.chains.evm.publicClient.getTransactionCount({ address: gas })).toBe(nonceBefore);
    expect(await w.chains.evm.publicClient.getBlockNumber()).toBe(blockBefore);
    expect(w.chains.svm.landed()).toBe(landedBefore);
    const stripeCalls = w.stripe.requests.slice(stripeBefore);
    expect(stripeCalls.length).toBeGreaterThan(0);
    expect(stripeCalls.every((r) => r.method === "GET")).toBe(true);
    expect(fs.readdirSync(w.dataDir).filter((f) => f.startsWith(".doctor-probe"))).toEqual([]);
  });

  it("shows parts that are not configured as skipped and still exits 0", async () => {
    const bare = w.env(
      Object.fromEntries(
        Object.keys(w.env())
          .filter((k) => /^(PAY_TO|BASE_RPC|SOLANA|X402|STRIPE|PAYMENT_LINK|S3_|CONTACT)/.test(k))
          .map((k) => [k, undefined]),
      ),
    );
    const { code, out } = await doctorCli(bare, ["--json"]);
    const report = JSON.parse(out) as DoctorReport;
    expect(code).toBe(0);
    for (const id of ["base.rpc", "solana.fee_payer", "stripe.key", "links.urls", "storage.s3"]) {
      expect(row(report, id).status).toBe("skipped");
      expect(row(report, id).detail).toMatch(/^not configured/);
    }
    expect(row(report, "storage.local").status).toBe("ok");
  });

  it("answers --help and refuses unknown options", async () => {
    const help = await doctorCli({}, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/Usage: labphi doctor/);
    expect((await doctorCli({}, ["--bogus"])).code).toBe(2);
    expect((await doctorCli({}, ["--settlements", "x"])).code).toBe(2);
  });
});

describe("labphi doctor with one part broken", () => {
  it("wrong chain id: the Base RPC row fails and the exit status is 1", async () => {
    const env = w.env({ BASE_CHAIN_ID: "84532" });
    const r = await failsOnly({ BASE_CHAIN_ID: "84532" }, "base.rpc");
    expect(r.detail).toMatch(/serves chain id 8453, expected 84532/);
    expect(r.fix).toMatch(/BASE_CHAIN_ID/);
    const cli = await doctorCli(env);
    expect(cli.code).toBe(1);
    expect(cli.out).toMatch(/fix: point BASE_RPC_URL at chain 84532/);
  });

  it("wrong genesis: an RPC of another Solana cluster fails", async () => {
    w.front.genesis = DEVNET_GENESIS;
    try {
      const r = await failsOnly({}, "solana.rpc");
      expect(r.detail).toMatch(/not mainnet-beta/);
    } finally {
      w.front.genesis = (await import("./world.js")).MAINNET_GENESIS;
    }
  });

  it("USDC address with no code fails the contract row", async () => {
    const r = await failsOnly({ BASE_USDC_ADDRESS: privateKeyToAccount(generatePrivateKey()).address }, "base.usdc");
    expect(r.detail).toMatch(/no contract code/);
    expect(r.fix).toMatch(/BASE_USDC_ADDRESS/);
  });

  it("a token with 18 decimals at the asset fails the contract row", async () => {
    const addr = privateKeyToAccount(generatePrivateKey()).address;
    // runtime code answering 18 to every call: PUSH1 18 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
    await w.chains.evm.rpc("anvil_setCode", [addr, "0x601260005260206000f3"]);
    const r = await failsOnly({ BASE_USDC_ADDRESS: addr }, "base.usdc");
    expect(r.detail).toMatch(/18 decimals, USDC has 6/);
  });

  it("a Solana mint with 9 decimals, or no account at all, fails the mint row", async () => {
    const mint = (await generateKeyPairSigner()).address;
    const data = getMintEncoder().encode({
      mintAuthority: mint,
      supply: 0n,
      decimals: 9,
      isInitialized: true,
      freezeAuthority: null,
    });
    w.chains.svm.svm.setAccount({
      address: mint,
      data: new Uint8Array(data),
      executable: false,
      lamports: lamports(10_000_000n),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      space: BigInt(data.length),
    } as never);
    const nine = await runDoctor({ env: w.env({ SOLANA_USDC_MINT: mint }) });
    expect(row(nine, "solana.usdc")).toMatchObject({ status: "fail" });
    expect(row(nine, "solana.usdc").detail).toMatch(/9 decimals/);
    // the pay-to's token account for that mint cannot be checked: skipped, not a second failure
    expect(row(nine, "solana.pay_to_account").status).toBe("skipped");
    const none = await failsOnly({ SOLANA_USDC_MINT: (await generateKeyPairSigner()).address }, "solana.usdc");
    expect(none.detail).toMatch(/no account/);
  });

  it("malformed pay-to addresses fail their rows", async () => {
    const good = w.env().PAY_TO_BASE as string;
    // one letter's case flipped: still hex, no longer its EIP-55 checksum
    const i = [...good].findIndex((ch, k) => k > 1 && /[a-f]/i.test(ch));
    const flipped =
      good.slice(0, i) +
      (good[i] === good[i]?.toUpperCase() ? good[i]?.toLowerCase() : good[i]?.toUpperCase()) +
      good.slice(i + 1);
    expect(flipped.toLowerCase()).toBe(good.toLowerCase());
    expect(getAddress(flipped.toLowerCase())).toBe(good);
    const r = await failsOnly({ PAY_TO_BASE: flipped }, "base.pay_to");
    expect(r.detail).toMatch(/checksum/);

    // not an address at all: the setting itself is refused, reported on the Base part, other checks still run
    const bad = await runDoctor({ env: w.env({ PAY_TO_BASE: "0x1234" }) });
    expect(row(bad, "settings.PAY_TO_BASE")).toMatchObject({ part: "base", status: "fail" });
    expect(row(bad, "settings.PAY_TO_BASE").fix).toMatch(/PAY_TO_BASE/);
    expect(row(bad, "stripe.key").status).toBe("ok");

    // base58 of 31 bytes: passes the setting's shape, not a 32-byte key
    const short = getBase58Decoder().decode(new Uint8Array(31).fill(7));
    const s = await failsOnly({ PAY_TO_SOLANA: short }, "solana.pay_to");
    expect(s.detail).toMatch(/31 bytes/);
  });

  it("a Solana pay-to without a USDC token account fails (payments to it would fail)", async () => {
    const r = await failsOnly({ PAY_TO_SOLANA: (await generateKeyPairSigner()).address }, "solana.pay_to_account");
    expect(r.fix).toMatch(/spl-token create-account/);
  });

  it("a fee payer and a gas key with nothing on them fail with the amount to send", async () => {
    const empty = await newSolanaKey();
    const s = await failsOnly({ X402_SVM_FEE_PAYER_KEY: empty.secret }, "solana.fee_payer");
    expect(s.detail).toMatch(/holds 0 SOL/);
    expect(s.fix).toMatch(new RegExp(`send at least [0-9.]+ SOL to ${empty.signer.address}`));

    const gasKey = generatePrivateKey();
    const e = await failsOnly({ X402_EVM_FACILITATOR_KEY: gasKey }, "base.facilitator");
    expect(e.fix).toMatch(
      new RegExp(`send at least [0-9.]+ ETH on chain 8453 to ${privateKeyToAccount(gasKey).address}`),
    );
    // enough for 100, not for 10 million settlements
    const many = await runDoctor({ env: w.env(), settlements: 10_000_000 });
    expect(row(many, "base.facilitator").status).toBe("fail");
    expect(row(many, "solana.fee_payer").status).toBe("fail");
  });

  it("a hosted facilitator that does not settle on Base, or does not answer, fails the facilitator row", async () => {
    const hosted = await startHttpFacilitator(new x402Facilitator());
    try {
      const r = await failsOnly(
        { X402_EVM_FACILITATOR_KEY: undefined, X402_FACILITATOR_URL: hosted.url },
        "base.facilitator",
      );
      expect(r.detail).toMatch(/does not settle exact payments on eip155:8453/);
      expect(hosted.calls).toMatchObject({ verify: 0, settle: 0 });
    } finally {
      await hosted.stop();
    }
    // An address nothing answers on: a port below the kernel's ephemeral range, which no other test
    // file's process (each listens on port 0 or a freePort()) can be given meanwhile (here and below).
    const port = await unassignedPort();
    const down = await failsOnly(
      { X402_EVM_FACILITATOR_KEY: undefined, X402_FACILITATOR_URL: `http://127.0.0.1:${port}` },
      "base.facilitator",
    );
    expect(down.fix).toMatch(/X402_FACILITATOR_URL/);
  });

  it("a Stripe key Stripe refuses fails the key row", async () => {
    const r = await failsOnly({ STRIPE_SECRET_KEY: "sk_test_notTheRightKey123" }, "stripe.key");
    expect(r.detail).toMatch(/401/);
    expect(r.fix).toMatch(/API keys/);
  });

  it("a missing webhook secret fails its row", async () => {
    const r = await failsOnly({ STRIPE_WEBHOOK_SECRET: undefined }, "stripe.webhook_secret");
    expect(r.fix).toMatch(/\/api\/stripe\/webhook/);
  });

  it("malformed payment links fail the links part", async () => {
    const http = await runDoctor({ env: w.env({ PAYMENT_LINK_ZRW_PRO: "http://buy.stripe.com/x" }) });
    expect(http.ok).toBe(false);
    expect(row(http, "settings.PAYMENT_LINK_ZRW_PRO")).toMatchObject({ part: "links", status: "fail" });
    const noId = await failsOnly({ PAYMENT_LINK_ID_ZRW_PRO: undefined }, "links.urls");
    expect(noId.detail).toMatch(/no PAYMENT_LINK_ID_ZRW_PRO/);
    const hostless = await failsOnly({ PAYMENT_LINK_ZRW_PRO: "https://localhost/x" }, "links.urls");
    expect(hostless.detail).toMatch(/not a plain https URL/);
    const unknown = await failsOnly(
      { PAYMENT_LINK_NOPE: "https://buy.stripe.com/y", PAYMENT_LINK_ID_NOPE: "plink_2" },
      "links.urls",
    );
    expect(unknown.detail).toMatch(/no product nope/);
  });

  it("an unmigrated PostgreSQL database, or an unreachable one, fails the database rows", async () => {
    const empty = await createPostgresDatabase();
    const r = await failsOnly({ DATABASE_URL: empty }, "database.migrations");
    expect(r.detail).toMatch(/migrations not applied/);
    expect(r.fix).toMatch(/labphi serve/);
    const port = await unassignedPort();
    const down = await failsOnly({ DATABASE_URL: `postgres://u:secretpw@127.0.0.1:${port}/x` }, "database.connect");
    expect(down.detail).not.toMatch(/secretpw/);
  });

  it("an unmigrated SQLite file fails the migrations row", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-doctor-"));
    const db = openDatabase({ dataDir: dir });
    await db.close();
    try {
      const r = await failsOnly({ DATABASE_URL: undefined, DATA_DIR: dir }, "database.migrations");
      expect(r.detail).toMatch(/0 migrations|migrations not applied/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a missing bucket and an unreachable object store fail the S3 row", async () => {
    const r = await failsOnly({ S3_BUCKET: "no-such-bucket" }, "storage.s3");
    expect(r.fix).toMatch(/create the bucket no-such-bucket/);
    const port = await unassignedPort();
    const down = await failsOnly({ S3_ENDPOINT: `http://127.0.0.1:${port}` }, "storage.s3");
    expect(down.detail).toMatch(/put failed/);
  });

  it("free disk below the job floor fails the disk row", async () => {
    const r = await failsOnly({}, "disk.free", { freeDiskBytes: async () => 1_000_000n });
    expect(r.detail).toMatch(/new uploads are refused/);
    expect(r.fix).toMatch(/JOB_MIN_FREE_DISK_BYTES/);
    // the same through the setting, on the real file system
    await failsOnly({ JOB_MIN_FREE_DISK_BYTES: String(Number.MAX_SAFE_INTEGER) }, "disk.free");
  });

  it("a clock two minutes off fails the clock row", async () => {
    const ahead = await failsOnly({}, "clock.skew", { now: () => Date.now() + 120_000 });
    expect(ahead.detail).toMatch(/ahead of .* by 1[12]\d\.\d s/);
    expect(ahead.fix).toMatch(/timedatectl/);
    const behind = await failsOnly({}, "clock.skew", { now: () => Date.now() - 120_000 });
    // behind: either a Date header or Base's latest block (a block "from the future") gives it away
    expect(behind.detail).toMatch(/behind .* by 1[12]\d\.\d s|ahead of this clock/);
  });

  it("BASE_URL that does not answer fails the server row", async () => {
    const port = await unassignedPort();
    const env = w.env({ BASE_URL: `http://127.0.0.1:${port}` });
    const report = await runDoctor({ env });
    expect(report.checks.filter((c) => c.status === "fail").map((c) => c.id)).toEqual(["server.healthz"]);
    expect(row(report, "server.healthz").fix).toMatch(/labphi serve/);
    expect((await doctorCli(env)).code).toBe(1);
  });
});

describe("labphi doctor's own output", () => {
  it("never prints a key or password carried in a URL or a setting, even in errors", async () => {
    const port = await unassignedPort();
    const at = `127.0.0.1:${port}`;
    const env = {
      NODE_ENV: "test",
      DATA_DIR: path.join(os.tmpdir(), "labphi-doctor-none"),
      BASE_URL: `http://${at}`,
      BASE_RPC_URL: `http://${at}/v2/SECRET1?key=SECRET2`,
      PAY_TO_BASE: "0x0000000000000000000000000000000000000001",
      SOLANA_RPC_URL: `http://user:SECRET3@${at}/SECRET4`,
      PAY_TO_SOLANA: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      X402_FACILITATOR_URL: `http://${at}/SECRET5`,
      STRIPE_SECRET_KEY: "sk_test_SECRET6",
      STRIPE_WEBHOOK_SECRET: "whsec_SECRET10",
      STRIPE_API_BASE: `http://${at}`,
      DATABASE_URL: `postgres://u:SECRET7@${at}/db`,
      S3_BUCKET: "abc",
      S3_ENDPOINT: `http://${at}`,
      S3_ACCESS_KEY_ID: "SECRET8",
      S3_SECRET_ACCESS_KEY: "SECRET9",
    };
    const json = await doctorCli(env, ["--json", "--timeout", "2"]);
    const table = await doctorCli(env, ["--timeout", "2"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out) as DoctorReport;
    expect(row(report, "solana.rpc").status).toBe("fail");
    expect(row(report, "database.connect").status).toBe("fail");
    expect(`${json.out}${json.err}${table.out}${table.err}`).not.toMatch(/SECRET\d/);
  });

  it("a setting production requires and lacks fails its row; nothing else can be checked", async () => {
    const { code, out } = await doctorCli({ NODE_ENV: "production", BASE_URL: w.baseUrl }, ["--json"]);
    expect(code).toBe(1);
    const report = JSON.parse(out) as DoctorReport;
    expect(report.checks.map((c) => c.id)).toEqual(["settings.ACCESS_TOKEN_SECRET"]);
    expect(report.checks[0]?.fix).toMatch(/ACCESS_TOKEN_SECRET/);
    expect(report.rails).toEqual([]);
  });
});

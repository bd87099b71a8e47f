import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { buildApp } from "../../../src/app.js";
import { runCli } from "../../../src/cli/main.js";
import { testConfig } from "../../../src/config.js";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { type BothChains, startBothChains } from "../../support/chains/both.js";
import { type Engine, freshDatabase } from "../../support/databases.js";
import { startS3rver, type TestS3 } from "../../support/s3rver.js";
import { StripeStandIn } from "../../support/stripe/server.js";

/** Solana mainnet-beta's genesis hash (what `getGenesisHash` answers on mainnet). */
export const MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";
/** Solana devnet's genesis hash. */
export const DEVNET_GENESIS = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG";

/**
 * The LiteSVM ledger's loopback JSON-RPC answers what the service uses, not `getGenesisHash`: this
 * front answers that one method with `genesis` (mainnet-beta's, as the sandbox's ledger stands in
 * for mainnet: USDC at the mainnet mint) and passes every other call through, byte for byte.
 */
export interface GenesisFront {
  url: string;
  genesis: string;
  stop(): Promise<void>;
}

export async function startGenesisFront(target: string): Promise<GenesisFront> {
  const front: GenesisFront = { url: "", genesis: MAINNET_GENESIS, stop: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let msg: { id?: unknown; method?: string } = {};
      try {
        msg = JSON.parse(raw);
      } catch {
        // passed through: the ledger answers the parse error
      }
      if (msg.method === "getGenesisHash") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id ?? null, result: front.genesis }));
        return;
      }
      const up = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body: raw });
      res.writeHead(up.status, { "content-type": up.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await up.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return front;
}

/** Every part doctor checks, running locally and healthy: both ledgers, Stripe, a database, S3, the service. */
export interface World {
  chains: BothChains;
  front: GenesisFront;
  stripe: StripeStandIn;
  s3: TestS3;
  db: Db;
  dataDir: string;
  app: App;
  baseUrl: string;
  /** The healthy environment; a value `undefined` in `change` removes that setting. */
  env(change?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

export const LINK_ENV = {
  PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/test_doctor",
  PAYMENT_LINK_ID_ZRW_PRO: "plink_doctor1",
};

export async function startWorld(engine: Engine): Promise<World> {
  const chains = await startBothChains();
  const front = await startGenesisFront(chains.svm.rpcUrl);
  const stripe = await new StripeStandIn().start();
  const s3 = await startS3rver("labphi-doctor");
  const { db, dataDir, databaseUrl } = await freshDatabase(engine);
  const app = await buildApp({ config: testConfig({ DATA_DIR: dataDir }), db });
  const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
  const healthy: NodeJS.ProcessEnv = {
    NODE_ENV: "test",
    LOG_LEVEL: "silent",
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    BASE_URL: baseUrl,
    ...chains.env({ SOLANA_RPC_URL: front.url }),
    ...stripe.env(),
    ...LINK_ENV,
    ...s3.env,
  };
  return {
    chains,
    front,
    stripe,
    s3,
    db,
    dataDir,
    app,
    baseUrl,
    env(change = {}) {
      const out = { ...healthy };
      for (const [k, v] of Object.entries(change)) {
        if (v === undefined) delete out[k];
        else out[k] = v;
      }
      return out;
    },
    async stop() {
      await app.close();
      await db.close();
      await s3.close();
      await stripe.stop();
      await front.stop();
      await chains.stop();
    },
  };
}

/** `labphi doctor <args>` in-process: exit code and what it printed. */
export async function doctorCli(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const sink = (f: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, cb) {
        f(String(chunk));
        cb();
      },
    });
  const code = await runCli(["doctor", ...args], {
    stdin: process.stdin,
    stdout: sink((s) => {
      out += s;
    }),
    stderr: sink((s) => {
      err += s;
    }),
    env,
  });
  return { code, out, err };
}

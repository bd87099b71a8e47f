import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { decodePaymentSignatureHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import type { Db } from "../../src/db/database.js";
import { createLogger, logRef, safePath } from "../../src/http/logger.js";
import type { App } from "../../src/http/types.js";
import { evmKey, paymentRequired } from "../payments/x402/helpers.js";
import { appOn } from "../support/app.js";
import { type EvmChain, startAnvil } from "../support/chains/evm.js";
import { freshDatabase } from "../support/databases.js";

/**
 * Issue #9 item 7: no log line at any level carries an access token, licence key, claim id,
 * proof key, payment payload, seed or identity token. The service runs at LOG_LEVEL=debug with
 * its log lines captured (and anything written to stdout, stderr or the console meanwhile) through
 * a whole purchase on a local chain, a manual claim and its approval, licence checks, opening the
 * access URLs (also mistyped), and an identity token's join, use and renewal.
 */

const ADMIN = "log-admin-token-0123456789";
const seller = evmKey().address;

let chain: EvmChain;
let gasKey: Hex;
let app: App;
let db: Db;
const lines: string[] = [];
/** Every value that must never be logged, by what it is. */
const secrets = new Map<string, string>();

function remember(what: string, value: string | null | undefined) {
  expect(value, what).toBeTruthy();
  secrets.set(what, value as string);
}

/** Also captures what bypasses the logger while the flow runs. */
function captureOutput(): () => void {
  const restore: (() => void)[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      lines.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = write as typeof stream.write;
    });
  }
  for (const m of ["log", "info", "warn", "error", "debug", "trace"] as const) {
    const orig = console[m];
    console[m] = (...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
      orig(...args);
    };
    restore.push(() => {
      console[m] = orig;
    });
  }
  return () => {
    for (const r of restore) r();
  };
}

beforeAll(async () => {
  chain = await startAnvil();
  gasKey = (await chain.newBuyer(0n)).key;
  const fresh = await freshDatabase("sqlite");
  db = fresh.db;
  app = await appOn(
    db,
    {
      LOG_LEVEL: "debug",
      ADMIN_TOKEN: ADMIN,
      CONTACT_EMAIL: "ops@lab.test",
      PAY_TO_BASE: seller,
      BASE_RPC_URL: chain.rpcUrl,
      X402_EVM_FACILITATOR_KEY: gasKey,
    },
    { logStream: { write: (line: string) => void lines.push(line) } },
  );
});

afterAll(async () => {
  await app?.close();
  await db?.close();
  await chain?.stop();
});

describe("logs at LOG_LEVEL=debug", () => {
  it("carry no secret through a purchase, a claim, licence checks, access URLs and identity tokens", async () => {
    const stop = captureOutput();
    try {
      remember("operator token", ADMIN);
      // 1. x402 purchase with the stock v2 client on the local chain (Base, chain id 8453)
      const buyer = await chain.newBuyer(5_000_000n);
      const body = { sku: "gao-entry", note: "agent:log-test" };
      const challenge = await app.inject({ method: "POST", url: "/api/x402-products", payload: body });
      expect(challenge.statusCode).toBe(402);
      const client = new x402Client().register(
        "eip155:*",
        new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(buyer.key), chain.publicClient as never)),
      );
      const payload = await client.createPaymentPayload(paymentRequired(challenge.headers));
      const header = encodePaymentSignatureHeader(payload);
      const idempotencyKey = `idem-${randomBytes(16).toString("hex")}`;
      const paid = await app.inject({
        method: "POST",
        url: "/api/x402-products",
        payload: body,
        headers: { "PAYMENT-SIGNATURE": header, "Idempotency-Key": idempotencyKey },
      });
      expect(paid.statusCode, paid.body).toBe(200);
      // the replay (same proof in X-PAYMENT, same Idempotency-Key) answers the same order
      const replay = await app.inject({
        method: "POST",
        url: "/api/x402-products",
        payload: body,
        headers: { "X-PAYMENT": header, "Idempotency-Key": idempotencyKey },
      });
      expect(replay.statusCode, replay.body).toBe(200);
      expect(replay.json().order_id).toBe(paid.json().order_id);

      const decoded = decodePaymentSignatureHeader(header) as unknown as {
        payload: { signature: string; authorization: { from: string; nonce: string } };
        accepted: { asset: string };
      };
      const auth = decoded.payload.authorization;
      remember("payment header", header);
      remember("payment payload (JSON)", JSON.stringify(decoded.payload));
      remember("payment signature", decoded.payload.signature);
      remember("EIP-3009 nonce", auth.nonce);
      remember(
        "proof key",
        `evm:8453:${decoded.accepted.asset.toLowerCase()}:${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`,
      );
      remember("idempotency key", idempotencyKey);
      const x402Token = new URL(paid.json().access_url).pathname.split("/access/")[1];
      remember("access token (x402)", x402Token);

      // 2. open the access URL (JSON and HTML), then mistyped: wrong route, query string, wrong method
      const accessPath = `/access/${x402Token}`;
      expect((await app.inject({ method: "GET", url: accessPath })).statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: accessPath, headers: { accept: "text/html" } })).statusCode).toBe(
        200,
      );
      expect((await app.inject({ method: "GET", url: `/acces/${x402Token}` })).statusCode).toBe(404);
      expect((await app.inject({ method: "GET", url: `${accessPath}/x?token=${x402Token}` })).statusCode).toBe(404);
      expect((await app.inject({ method: "POST", url: accessPath, payload: {} })).statusCode).toBe(405);

      // 3. a manual claim, its status, the operator's approval
      const tx = `0x${randomBytes(32).toString("hex")}`;
      const claim = await app.inject({
        method: "POST",
        url: "/api/claims",
        payload: { sku: "zrw-pro", email: "buyer@example.com", rail: "crypto_manual_evm", tx },
      });
      expect(claim.statusCode, claim.body).toBe(201);
      const claimId = claim.json().claim_id as string;
      remember("claim id", claimId);
      expect((await app.inject({ method: "GET", url: `/api/claims/${claimId}` })).statusCode).toBe(200);
      const approved = await app.inject({
        method: "POST",
        url: `/api/admin/claims/${claimId}/approve`,
        payload: { note: "tx checked" },
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(approved.statusCode, approved.body).toBe(200);
      const claimToken = new URL(approved.json().access_url).pathname.split("/access/")[1];
      remember("access token (claim)", claimToken);
      expect((await app.inject({ method: "GET", url: `/access/${claimToken}` })).statusCode).toBe(200);

      // 4. licence checks: valid, with a query string, mistyped route
      const order = await app.services.orders.get(approved.json().order_id);
      remember("licence key", order.license_key);
      const key = order.license_key as string;
      const license = await app.inject({ method: "GET", url: `/api/licenses/${key}` });
      expect(license.statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: `/api/licenses/${key}?key=${key}` })).statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: `/api/license/${key}` })).statusCode).toBe(404);
      remember("licence key (lower case)", key.toLowerCase());
      expect((await app.inject({ method: "GET", url: `/api/licenses/${key.toLowerCase()}` })).statusCode).toBeLessThan(
        500,
      );

      // 5. an identity: join with a seed, use the token (both headers), renew with the seed
      const seed = `${randomBytes(16).toString("hex")}!`; // 33 bytes
      remember("seed", seed);
      const joined = await app.inject({
        method: "POST",
        url: "/api/join-work",
        payload: { name: "Logger", intent: "Check that my secrets stay out of logs.", seed },
      });
      expect(joined.statusCode, joined.body).toBe(201);
      const identityToken = joined.json().token as string;
      remember("identity token", identityToken);
      for (const headers of [{ authorization: `Bearer ${identityToken}` }, { "x-identity-token": identityToken }]) {
        const used = await app.inject({
          method: "POST",
          url: "/api/omni",
          payload: { op: "compress", data: "log line ".repeat(20), level: "fast" },
          headers,
        });
        expect(used.statusCode, used.body).toBe(200);
      }
      const renewed = await app.inject({
        method: "POST",
        url: "/api/join-work/renew",
        payload: { identity_id: joined.json().identity_id, seed },
      });
      expect(renewed.statusCode, renewed.body).toBe(200);
      remember("renewed identity token", renewed.json().token);
      const stale = await app.inject({
        method: "POST",
        url: "/api/omni",
        payload: { op: "prints" },
        headers: { "x-identity-token": identityToken },
      });
      expect(stale.statusCode).toBe(401);
    } finally {
      stop();
    }

    const text = lines.join("\n");
    expect(app.log.level).toBe("debug");
    const leaked = [...secrets].filter(([, value]) => text.includes(value)).map(([what]) => what);
    expect(leaked, "secrets found in the captured logs").toEqual([]);
    // requests are logged by route pattern; a path that matched no route by known words and hashes
    expect(text).toContain('"path":"/access/:token"');
    expect(text).toContain('"path":"/api/licenses/:key"');
    expect(text).toContain('"path":"/api/claims/:id"');
    expect(text).toContain('"path":"/api/admin/claims/:id/approve"');
    const token = secrets.get("access token (x402)") as string;
    expect(text).toContain(`"path":"/~${logRef("acces")}/~${logRef(token)}"`);
    expect(text).toContain(`"path":"/access/~${logRef(token)}/~${logRef("x")}"`);
  });
});

describe("safePath (paths that matched no route)", () => {
  it("keeps static route words, hashes every other segment, drops the query, caps the depth", () => {
    expect(safePath("/api/licenses/ZRWPRO-ABCDE?x=1#f")).toBe(`/api/licenses/~${logRef("ZRWPRO-ABCDE")}`);
    expect(safePath("/")).toBe("/");
    expect(safePath("/api/")).toBe("/api/");
    expect(safePath("/a/b/c/d/e/f/g/h/i/j")).toMatch(/^(\/~[0-9a-f]{12}){8}\/…$/);
    expect(logRef("x")).toMatch(/^[0-9a-f]{12}$/);
    expect(logRef("x")).toBe(logRef("x"));
    expect(logRef("x")).not.toBe(logRef("y"));
  });

  it("redacts secret fields and headers should a line carry them", () => {
    const out: string[] = [];
    const log = createLogger(testConfig({ LOG_LEVEL: "debug" }), {
      stream: { write: (l: string) => void out.push(l) },
    });
    if (!log) throw new Error("no logger");
    log.debug(
      {
        proof_key: "PK-1",
        token: "TK-2",
        body: { seed: "SEED-3", license_key: "LK-4", sku: "gao" },
        req: { headers: { "idempotency-key": "IK-5", "x-payment": "XP-6", accept: "*/*" } },
      },
      "x",
    );
    const line = out.join("");
    for (const v of ["PK-1", "TK-2", "SEED-3", "LK-4", "IK-5", "XP-6"]) expect(line).not.toContain(v);
    expect(line).toContain('"sku":"gao"');
    expect(line).toContain("[redacted]");
  });
});

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { canonicalJson, type ReceiptFacts, Receipts } from "../../src/receipts/service.js";

async function cli(args: string[], stdin = "", env: Record<string, string> = {}) {
  const input = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (c) => {
    out += String(c);
  });
  stderr.on("data", (c) => {
    err += String(c);
  });
  input.end(stdin);
  const code = await runCli(args, { stdin: input, stdout, stderr, env });
  return { code, out, err };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-receipt-cli-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

const facts: ReceiptFacts = {
  item: { kind: "product", ref: "donate", sku: "donate", name: "Donation" },
  amount: "500",
  decimals: 2,
  currency: "USD",
  asset: "USD",
  network: null,
  rail: "card_checkout",
  transaction: "pi_3Abc",
  orderId: "ord_cli",
  jobId: null,
  payer: null,
  resourceUrl: "https://lab.example.com/api/x402-products?sku=donate",
  issuedAt: "2026-11-27T12:00:00.000Z",
};

describe("labphi verify-receipt", () => {
  const receipts = Receipts.fromSettings(randomBytes(32).toString("base64url"), "https://lab.example.com");
  const jws = receipts.sign(facts);
  const jwks = file("jwks.json", JSON.stringify(receipts.jwks()));

  it("has help and is listed", async () => {
    const help = await cli(["verify-receipt", "--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("labphi verify-receipt <file | -> --jwks <file | url>");
    expect((await cli(["--help"])).out).toMatch(/verify-receipt\s+Verify a signed purchase receipt/);
  });

  it("verifies a good receipt offline against a JWKS file (exit 0) and prints the claims", async () => {
    const r = await cli(["verify-receipt", file("good.jws", `${jws}\n`), "--jwks", jwks]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`VALID receipt, signed by key ${receipts.kid}`);
    expect(r.out).toContain('"order_id": "ord_cli"');
    const j = await cli(["verify-receipt", "-", "--jwks", jwks, "--json"], jws);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out)).toMatchObject({
      valid: true,
      kid: receipts.kid,
      claims: { amount: "500", rail: "card_checkout" },
    });
  });

  it("rejects a tampered receipt (exit 1) naming the reason", async () => {
    const [h, p, s] = jws.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, "base64url").toString("utf8"));
    claims.amount = "5";
    const tampered = `${h}.${Buffer.from(canonicalJson(claims)).toString("base64url")}.${s}`;
    const r = await cli(["verify-receipt", file("tampered.jws", tampered), "--jwks", jwks]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/NOT VALID \(signature\)/);
    // another service's key: its kid is not in this JWKS
    const other = Receipts.fromSettings(randomBytes(32).toString("base64url"), "https://evil.example");
    const foreign = await cli(["verify-receipt", "-", "--jwks", jwks], other.sign(facts));
    expect(foreign.code).toBe(1);
    expect(foreign.err).toMatch(/NOT VALID \(kid_unknown\)/);
    // alg none
    const none = `${Buffer.from(JSON.stringify({ alg: "none", kid: receipts.kid, typ: "labphi-receipt+jwt" })).toString("base64url")}.${p}.${s}`;
    const n = await cli(["verify-receipt", "-", "--jwks", jwks, "--json"], none);
    expect(n.code).toBe(1);
    expect(JSON.parse(n.out)).toMatchObject({ valid: false, reason: "alg" });
  });

  it("bad usage exits 2; an unreadable receipt or key set exits 3", async () => {
    expect((await cli(["verify-receipt"])).code).toBe(2);
    expect((await cli(["verify-receipt", "x.jws"])).code).toBe(2); // no --jwks, no BASE_URL
    expect((await cli(["verify-receipt", path.join(dir, "missing.jws"), "--jwks", jwks])).code).toBe(3);
    const notJwks = await cli(["verify-receipt", "-", "--jwks", file("bad.json", '{"a":1}')], jws);
    expect(notJwks.code).toBe(3);
    expect(notJwks.err).toMatch(/not a JWKS/);
  });
});

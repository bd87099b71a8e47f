import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { grantProduct } from "../support/orders.js";
import { ADMIN_TOKEN, type CardHarness, cardHarness } from "../support/stripe/harness.js";

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  let out = "";
  let err = "";
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on("data", (c) => {
    out += String(c);
  });
  stderr.on("data", (c) => {
    err += String(c);
  });
  const code = await runCli(args, { stdin: new PassThrough(), stdout, stderr, env });
  return { code, out, err };
}

describe("labphi admin (CLI over HTTP against a running service)", () => {
  let h: CardHarness;
  let base: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    h = await cardHarness("sqlite", {
      PAY_TO_BASE: "0x2222222222222222222222222222222222222222",
      CONTACT_EMAIL: "ops@lab.test", // manual rails need a contact address (and ADMIN_TOKEN, set by the harness)
    });
    base = await h.app.listen({ port: 0, host: "127.0.0.1" });
    env = { ADMIN_TOKEN, BASE_URL: base, LABPHI_OPERATOR: "cli-bob" };
    for (let i = 0; i < 5; i++) {
      await grantProduct(h.app.services.orders, {
        proofKey: `cli:${i}`,
        sku: "sponsor",
        rail: "test_rail",
        amountCents: 2900,
        email: i < 2 ? `carol${i}@example.com` : `dave${i}@example.com`,
      });
    }
  });
  afterAll(async () => h.close());

  it("prints help and refuses bad usage", async () => {
    const help = await cli(["admin", "--help"], env);
    expect(help.code).toBe(0);
    expect(help.out).toContain("labphi admin <action>");
    expect(help.out).toMatch(/--search/);
    expect(help.out).toMatch(/--page/);
    const overview = await cli(["--help"], env);
    expect(overview.out).toMatch(/admin\s+Operator tools/);
    expect((await cli(["admin", "orders"], { BASE_URL: base })).code).toBe(2);
    expect((await cli(["admin", "frobnicate"], env)).code).toBe(2);
    expect((await cli(["admin", "orders", "--limit", "0"], env)).code).toBe(2);
    expect((await cli(["admin", "orders", "--bogus", "1"], env)).code).toBe(2);
    expect((await cli(["admin", "approve"], env)).code).toBe(2);
  });

  it("lists orders with search and pagination", async () => {
    const all = await cli(["admin", "orders", "--limit", "2"], env);
    expect(all.code).toBe(0);
    expect(all.out).toMatch(/order_id\s+created_at\s+sku/);
    expect(all.out).toContain("1-2 of 5; next page: --offset 2");
    const page3 = await cli(["admin", "orders", "--limit", "2", "--page", "3"], env);
    expect(page3.out).toContain("5-5 of 5");
    const search = await cli(["admin", "orders", "--search", "carol", "--json"], env);
    const json = JSON.parse(search.out) as { total: number; items: { email: string }[] };
    expect(json.total).toBe(2);
    expect(json.items.every((o) => o.email.startsWith("carol"))).toBe(true);
  });

  it("approves and rejects claims, marks refunded, and the audit log names the operator", async () => {
    const claim = async (tx: string) =>
      (
        await h.app.inject({
          method: "POST",
          url: "/api/claims",
          payload: { sku: "zrw-n00b", email: "eve@example.com", rail: "crypto_manual_evm", tx },
        })
      ).json().claim_id as string;
    const a = await claim(`0x${"a".repeat(64)}`);
    const b = await claim(`0x${"b".repeat(64)}`);
    const listed = await cli(["admin", "claims", "--state", "submitted"], env);
    expect(listed.out).toContain(a);
    expect(listed.out).toContain(b);

    const approved = await cli(["admin", "approve", a, "--note", "seen on chain"], env);
    expect(approved.code).toBe(0);
    expect(approved.out).toMatch(/access_url\s+http:\/\/lab\.test\/access\/\S{40,}/);
    expect(approved.out).toMatch(/state\s+approved/);
    const rejected = await cli(["admin", "reject", b, "--reason", "no transfer"], env);
    expect(rejected.out).toMatch(/state\s+rejected/);
    const twice = await cli(["admin", "approve", b], env);
    expect(twice.code).toBe(1);
    expect(twice.err).toContain("409 claim_not_pending");

    const orderId = (JSON.parse((await cli(["admin", "claim", a, "--json"], env)).out) as { order_id: string })
      .order_id;
    const refunded = await cli(["admin", "refunded", orderId, "--reason", "wire returned"], env);
    expect(refunded.out).toMatch(/status\s+refunded/);
    const audit = await cli(["admin", "audit", "--subject", orderId, "--json"], env);
    const entries = (JSON.parse(audit.out) as { items: { actor: string; action: string }[] }).items;
    expect(entries).toEqual([
      expect.objectContaining({ action: "order.refunded", actor: expect.stringMatching(/:cli-bob$/) }),
    ]);
    const events = await cli(["admin", "events", "--unprocessed"], env);
    expect(events.code).toBe(0);
    expect(events.out).toContain("0-0 of 0");
  });

  it("reports a wrong token and an unreachable service", async () => {
    const wrong = await cli(["admin", "orders"], { ...env, ADMIN_TOKEN: "wrong-token-0123456789" });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("401 admin_unauthorized");
    const down = await cli(["admin", "orders", "--url", "http://127.0.0.1:9"], env);
    expect(down.code).toBe(1);
    expect(down.err).toContain("cannot reach");
  });
});

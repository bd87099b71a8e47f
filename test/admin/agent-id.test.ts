import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { type TestApp, testApp } from "../support/app.js";
import { grantProduct } from "../support/orders.js";

/**
 * `note: agent:<id>` on an x402 purchase is the buyer's own word: every place that shows an
 * order's agent id labels it self-asserted (issue #9, item 8).
 */
const ADMIN = "agent-id-admin-token-0123456789";

describe("self-asserted agent ids", () => {
  let t: TestApp;
  let base: string;
  let withAgent: { id: string; url: string };
  let without: { id: string; url: string };
  beforeAll(async () => {
    t = await testApp("sqlite", { ADMIN_TOKEN: ADMIN });
    const a = await grantProduct(t.app.services.orders, {
      proofKey: "agent-label:1",
      sku: "zrw-pro",
      rail: "x402_base_usdc",
      amountCents: 24900,
      agentId: "claude-helper-7",
    });
    const b = await grantProduct(t.app.services.orders, {
      proofKey: "agent-label:2",
      sku: "zrw-pro",
      rail: "card_checkout",
      amountCents: 24900,
      email: "h@example.com",
    });
    withAgent = { id: a.order.id, url: a.accessUrl };
    without = { id: b.order.id, url: b.accessUrl };
    base = await t.app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => t.close());

  const admin = (url: string) => t.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${ADMIN}` } });
  const path = (url: string) => new URL(url).pathname;

  it("operator JSON: agent_id_source is self_asserted next to every agent id, null without one", async () => {
    const one = (await admin(`/api/admin/orders/${withAgent.id}`)).json();
    expect(one).toMatchObject({ agent_id: "claude-helper-7", agent_id_source: "self_asserted" });
    const other = (await admin(`/api/admin/orders/${without.id}`)).json();
    expect(other).toMatchObject({ agent_id: null, agent_id_source: null });
    const list = (await admin("/api/admin/orders?search=claude-helper")).json();
    expect(list.items).toHaveLength(1);
    expect(list.items[0]).toMatchObject({ agent_id: "claude-helper-7", agent_id_source: "self_asserted" });
  });

  it("access page: JSON carries agent_id_source, HTML says Agent (self-asserted)", async () => {
    const json = await t.app.inject({ method: "GET", url: path(withAgent.url) });
    expect(json.json().order).toMatchObject({ agent_id: "claude-helper-7", agent_id_source: "self_asserted" });
    const html = await t.app.inject({ method: "GET", url: path(withAgent.url), headers: { accept: "text/html" } });
    expect(html.body).toContain("<dt>Agent (self-asserted)</dt>");
    expect(html.body).toContain("claude-helper-7");
    const plain = await t.app.inject({ method: "GET", url: path(without.url), headers: { accept: "text/html" } });
    // no agent row at all (the page's general text mentions agents, the order row must not exist)
    expect(plain.body).not.toContain("self-asserted");
    expect(plain.body).not.toContain('id="agent-id"');
  });

  it("CLI: the list column and the order view say agent (self-asserted)", async () => {
    const run = async (args: string[]) => {
      let out = "";
      const stdout = new PassThrough();
      stdout.on("data", (c) => {
        out += String(c);
      });
      const code = await runCli(args, {
        stdin: new PassThrough(),
        stdout,
        stderr: new PassThrough(),
        env: { ADMIN_TOKEN: ADMIN, BASE_URL: base },
      });
      return { code, out };
    };
    const list = await run(["admin", "orders", "--search", "claude-helper"]);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/email\s+agent \(self-asserted\)/);
    expect(list.out).toContain("claude-helper-7");
    const one = await run(["admin", "order", withAgent.id]);
    expect(one.out).toMatch(/agent \(self-asserted\)\s+claude-helper-7/);
    expect(one.out).not.toContain("agent_id_source");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import { railSummaryLines } from "../../src/payments/readiness.js";
import { validationSentence } from "../../web/src/_field-words.js";
import { testApp } from "../support/app.js";
import {
  BASE_SETTLEMENT,
  MANUAL_SETTLEMENT,
  SOLANA_SETTLEMENT,
  TEST_EVM_FACILITATOR_KEY,
  TEST_SVM_FEE_PAYER_KEY,
} from "../support/rails.js";

/**
 * Issue #25 item 1, "a server says what it can sell": the pages that offer a way to pay show only
 * the rails that can settle here (src/payments/readiness.ts), and a server where none can says so
 * once, naming the settings, `npm run sandbox` and `labphi doctor`. Item 4's page parts: the MCP
 * link for people, error pages with one way home, the job steps, form errors in plain words.
 */

/** The pages that offer a way to pay (product, cancel: a sku with every kind of rail). */
const PAY_PAGES = ["/", "/pay", "/pay?sku=zrw-pro", "/pay/cancel?sku=zrw-pro", "/jobs"];

/** What the settings of `npm run sandbox` configure (src/sandbox/start.ts): both x402 chains, manual rails. */
const SANDBOX_ENV = {
  PAY_TO_BASE: "0x3333333333333333333333333333333333333333",
  ...BASE_SETTLEMENT,
  PAY_TO_SOLANA: "9C6hybhQ6Aycep9jaUnP6uL9ZYvDjUp1aSkFWPUFJtpj",
  ...SOLANA_SETTLEMENT,
  ...MANUAL_SETTLEMENT,
};

const decode = (html: string) =>
  html
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/** The home page's "Try it" request, read back from the page: method, path, body. */
function tryIt(html: string): { url: string; body: unknown } {
  const m = /<pre class="command" id="try-it"><code>([\s\S]*?)<\/code><\/pre>/.exec(html);
  if (!m?.[1]) throw new Error("no Try it on the page");
  const curl = decode(m[1]);
  const url = /-X POST (\S+)/.exec(curl)?.[1] ?? "";
  const body = /-d '([^']*)'/.exec(curl)?.[1] ?? "";
  return { url: new URL(url).pathname, body: JSON.parse(body) };
}

describe("a server where no payment rail can settle (the defaults)", () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  const pages = new Map<string, string>();
  beforeAll(async () => {
    t = await testApp("sqlite");
    for (const path of PAY_PAGES) {
      const r = await t.app.inject({ method: "GET", url: path });
      expect(r.statusCode, path).toBe(200);
      pages.set(path, r.body);
    }
  });
  afterAll(async () => t.close());

  it("claims no rail works on any page that offers a way to pay", async () => {
    const olympiad = await t.app.inject({ method: "GET", url: "/olympiad" });
    expect(olympiad.statusCode).toBe(200);
    expect(olympiad.body).toContain("no way for people to pay is set up on this server yet");
    for (const [path, body] of [...pages, ["/olympiad", olympiad.body] as const]) {
      // the card form, the claim form, payment instructions
      expect(body, path).not.toContain('action="/pay"');
      expect(body, path).not.toContain('action="/pay/claim"');
      expect(body, path).not.toContain("PAYMENT-SIGNATURE");
      expect(body, path).not.toMatch(/crypto transfer and invoice work too|agents pay with x402|by card|pay per GB/i);
      expect(body, path).not.toContain("/api/x402-products -H");
      // the duplicated line is gone
      expect(body.match(/Card checkout is not configured/g) ?? [], path).toHaveLength(0);
    }
  });

  it("says so once on /, /pay, product pages and /jobs: the settings of each rail, npm run sandbox, labphi doctor", () => {
    for (const [path, body] of pages) {
      expect(body.match(/id="no-rails"/g) ?? [], path).toHaveLength(1);
      expect(body, path).toContain("This server cannot take payments yet.");
      expect(body, path).toContain("<code>npm run sandbox</code>");
      expect(body, path).toContain("<code>labphi doctor</code>");
      for (const setting of ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "PAY_TO_BASE", "BASE_RPC_URL"]) {
        expect(body, `${path} ${setting}`).toContain(`<code>${setting}</code>`);
      }
      expect(body, path).toContain("<code>X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL</code>");
      expect(body, path).toContain("<code>ADMIN_TOKEN</code>");
    }
  });

  it("the home page's Try it is a request this server answers (200), not one that answers 503", async () => {
    const home = pages.get("/") ?? "";
    const req = tryIt(home);
    expect(req.url).not.toBe("/api/x402-products");
    const r = await t.app.inject({ method: "POST", url: req.url, payload: req.body as object });
    expect(r.statusCode, r.body).toBe(200);
    // and the 402 request would indeed have answered 503
    const paid = await t.app.inject({ method: "POST", url: "/api/x402-products", payload: { sku: "donate" } });
    expect(paid.statusCode).toBe(503);
  });

  it("the MCP link for people leads to a page on connecting a client; /mcp still serves MCP clients", async () => {
    expect(pages.get("/")).toContain('<a href="/mcp-help">MCP at /mcp</a>');
    const help = await t.app.inject({ method: "GET", url: "/mcp-help" });
    expect(help.statusCode).toBe(200);
    expect(help.headers["content-type"]).toContain("text/html");
    expect(help.body).toContain("Connect an MCP client");
    expect(help.body).toContain("http://lab.test/mcp");
    expect(help.body).toContain("labphi mcp");
    // a person who opens /mcp itself is pointed at the help page
    const browser = await t.app.inject({ method: "GET", url: "/mcp", headers: { accept: "text/html" } });
    expect(browser.body).toContain('href="/mcp-help"');
    const init = await t.app.inject({
      method: "POST",
      url: "/mcp",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", host: "lab.test" },
      payload: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
    });
    expect(init.statusCode, init.body).toBe(200);
  });

  it("error pages have one way home, not two buttons that both go there", async () => {
    const r = await t.app.inject({ method: "GET", url: "/no-such-page", headers: { accept: "text/html" } });
    expect(r.statusCode).toBe(404);
    const actions = /<p class="cluster">([\s\S]*?)<\/p>/.exec(r.body)?.[1] ?? "";
    expect(actions.match(/href="\/"/g)).toHaveLength(1);
    // elsewhere: the section's way back, and home
    const pay = await t.app.inject({ method: "GET", url: "/pay?sku=nope", headers: { accept: "text/html" } });
    const back = /<p class="cluster">([\s\S]*?)<\/p>/.exec(pay.body)?.[1] ?? "";
    expect(back).toContain('href="/pay"');
    expect(back.match(/href="\/"/g)).toHaveLength(1);
  });

  it("the jobs page numbers its steps 1 to 4 once, and no heading skips a number", () => {
    const jobs = pages.get("/jobs") ?? "";
    const steps = /<ol class="steps job-steps"[^>]*>([\s\S]*?)<\/ol>/.exec(jobs)?.[1] ?? "";
    expect(steps.match(/<li>/g)).toHaveLength(4);
    expect(steps).toContain("Upload the file");
    expect(jobs).not.toMatch(/<h[23][^>]*>\s*\d\./);
  });

  it("a plain form's validation error reads as a sentence naming the field", async () => {
    const r = await t.app.inject({ method: "GET", url: "/jobs?bytes=0", headers: { accept: "text/html" } });
    expect(r.statusCode).toBe(400);
    expect(r.body).toContain(
      '<div class="notice notice-error" role="alert" id="problem"><p>Bytes: enter a number of at least 1.</p>',
    );
    expect(r.body).not.toContain("Too small: expected");
    // the olympiad register form's problem (the page script shows this sentence)
    const reg = await t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "register", who: "human_for_self", name: "" },
    });
    expect(reg.statusCode).toBe(400);
    expect(validationSentence(reg.json())).toBe("Name: enter at least 1 character.");
    expect(validationSentence(reg.json(), { name: "Display name" })).toBe("Display name: enter at least 1 character.");
  });

  it("/pricing.md claims no way to pay and says the server cannot take payments yet", async () => {
    const md = (await t.app.inject({ method: "GET", url: "/pricing.md" })).body;
    expect(md).not.toContain("Agents pay with x402");
    expect(md).not.toContain("by card");
    expect(md).toContain("This server cannot take payments yet");
  });
});

describe("a server configured as `npm run sandbox` configures it (x402 on both chains, manual rails)", () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  beforeAll(async () => {
    t = await testApp("sqlite", SANDBOX_ENV);
  });
  afterAll(async () => t.close());

  it("shows the rails that settle, with CAIP-2 network names and x402 v2 field names, and no notice", async () => {
    for (const path of PAY_PAGES) {
      const body = (await t.app.inject({ method: "GET", url: path })).body;
      expect(body, path).not.toContain('id="no-rails"');
      expect(body, path).not.toContain("maxAmountRequired");
      expect(body, path).not.toContain("solana-mainnet-beta");
    }
    const pay = (await t.app.inject({ method: "GET", url: "/pay" })).body;
    expect(pay).toContain(
      "Pay by crypto transfer or by invoice; agents pay with x402 (USDC on solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp or eip155:8453).",
    );
    expect(pay).toContain("PAYMENT-SIGNATURE");
    expect(pay).toContain("<code>amount</code>");
    const product = (await t.app.inject({ method: "GET", url: "/pay?sku=zrw-pro" })).body;
    expect(product).toContain('action="/pay/claim"');
    expect(product).toContain('id="rail-crypto_manual_evm"');
    expect(product).toContain('id="rail-crypto_manual_solana"');
    expect(product).toContain('id="rail-wire_invoice_ach"');
    expect(product).toContain("POST /api/x402-products");
    // no card rail is configured: no card form, and not a word that it is missing twice
    expect(product).not.toContain('action="/pay"');
    const olympiad = (await t.app.inject({ method: "GET", url: "/olympiad" })).body;
    expect(olympiad).toContain("the entry by crypto transfer or by invoice");
    expect(olympiad).toContain("Agents buy with x402");
    const jobs = (await t.app.inject({ method: "GET", url: "/jobs" })).body;
    expect(jobs).toContain("pay per GB with x402 for agents");
    expect(jobs).toContain('data-x402="on"');
  });

  it("the home page's Try it asks for a product and answers 402 with the requirements", async () => {
    const home = (await t.app.inject({ method: "GET", url: "/" })).body;
    expect(home).toContain("agents pay per call with x402");
    const req = tryIt(home);
    expect(req.url).toBe("/api/x402-products");
    const r = await t.app.inject({ method: "POST", url: req.url, payload: req.body as object });
    expect(r.statusCode, r.body).toBe(402);
  });

  it("/pricing.md names the x402 networks and the people's rails that settle here, and no card", async () => {
    const md = (await t.app.inject({ method: "GET", url: "/pricing.md" })).body;
    expect(md).toContain("Agents pay with x402 in USDC");
    expect(md).toContain("People pay by crypto transfer or by invoice.");
    expect(md).not.toContain("by card");
    expect(md).not.toContain("cannot take payments yet");
  });
});

describe("railSummaryLines: what `npm start` prints about each rail", () => {
  it("says nothing can be sold on the defaults, naming each rail's settings", () => {
    const lines = railSummaryLines(testConfig({}));
    expect(lines[0]).toContain("none can settle");
    expect(lines[0]).toContain("npm run sandbox");
    expect(lines[0]).toContain("labphi doctor");
    expect(lines.find((l) => l.includes("card_checkout"))).toMatch(
      /card_checkout\s+cannot settle: needs STRIPE_SECRET_KEY; STRIPE_WEBHOOK_SECRET$/,
    );
    expect(lines.find((l) => l.includes("redirect_link_checkout"))).toContain("not available");
    expect(lines).toHaveLength(11); // the head and one line per rail
  });

  it("says which rails settle with the sandbox's settings, and never prints a setting's value", () => {
    const env = { ...SANDBOX_ENV, STRIPE_SECRET_KEY: "sk_test_secretvalue42" };
    const lines = railSummaryLines(testConfig(env));
    expect(lines[0]).toBe("payment rails: 5 of 8 can settle");
    expect(lines.find((l) => l.includes("x402_base_usdc"))).toMatch(/x402_base_usdc\s+can settle$/);
    expect(lines.find((l) => l.includes("suite_metered"))).toContain(
      "can settle (paid jobs through x402_base_usdc, x402_solana_usdc)",
    );
    expect(lines.find((l) => l.includes("card_checkout"))).toMatch(/needs STRIPE_WEBHOOK_SECRET \(half-configured\)$/);
    const text = lines.join("\n");
    for (const secret of [
      TEST_EVM_FACILITATOR_KEY,
      TEST_SVM_FEE_PAYER_KEY,
      MANUAL_SETTLEMENT.ADMIN_TOKEN,
      "sk_test_secretvalue42",
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});

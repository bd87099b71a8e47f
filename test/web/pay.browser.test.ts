import net from "node:net";
import chromium from "@sparticuz/chromium";
import { type Browser, chromium as playwright } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CardHarness, cardHarness } from "../support/stripe/harness.js";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

describe("buying in a real browser: /pay → hosted checkout (stand-in) → success page", () => {
  let h: CardHarness;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    h = await cardHarness("sqlite", {
      BASE_URL: base,
      PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      CONTACT_EMAIL: "ops@lab.test", // manual rails need a contact address (and ADMIN_TOKEN, set by the harness)
    });
    await h.app.listen({ port, host: "127.0.0.1" });
    browser = await playwright.launch({
      executablePath: await chromium.executablePath(),
      args: [...chromium.args, "--no-sandbox", "--headless=new"],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("pays by card and lands on the order with a working access URL; cancel offers the other rails", async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/pay?sku=zrw-pro`);
    await page.fill('input[name="email"]', "browser@example.com");
    await Promise.all([page.waitForURL(/\/c\/pay\/cs_test_/), page.click('#checkout button[type="submit"]')]);
    expect(page.url().startsWith(h.stripe.base)).toBe(true);
    await Promise.all([page.waitForURL(/\/pay\/success\?session_id=cs_test_/), page.click("#pay")]);
    await expect.poll(() => page.textContent("h1")).toContain("payment received");
    const href = await page.getAttribute("#access-url", "href");
    expect(href).toMatch(new RegExp(`^${base}/access/`));
    await page.click("#access-url");
    await expect.poll(() => page.textContent("h1")).toContain("Your access: ZRW Pro licence");
    expect(await page.textContent("body")).toMatch(/ZRWPRO-[A-Z2-9]{5}/);

    // a second visit that cancels at the hosted page lands on the other rails
    await page.goto(`${base}/pay?sku=gao-entry`);
    await page.fill('input[name="email"]', "cancel@example.com");
    await Promise.all([page.waitForURL(/\/c\/pay\//), page.click('#checkout button[type="submit"]')]);
    await Promise.all([page.waitForURL(/\/pay\/cancel\?sku=gao-entry/), page.click("#cancel")]);
    expect(await page.textContent("h1")).toBe("Other ways to pay");
    expect(await page.isVisible("#rail-crypto_manual_solana")).toBe(true);
    expect(await page.isVisible("form#claim")).toBe(true);
  }, 60_000);
});

import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type SiteHarness, startSite } from "../support/browser.js";

describe("buying in a real browser: /pay → hosted checkout (stand-in) → success page", () => {
  let h: SiteHarness;
  let browser: Browser;
  let base: string;
  beforeAll(async () => {
    h = await startSite({
      PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      CONTACT_EMAIL: "ops@lab.test", // manual rails need a contact address (and ADMIN_TOKEN, set by the harness)
    });
    base = h.base;
    browser = await launchBrowser();
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

import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS } from "../../src/olympiad/events/events.js";
import {
  describeViolations,
  launchBrowser,
  type SiteHarness,
  screenshot,
  seriousA11yViolations,
  startSite,
  WIDTHS,
} from "../support/browser.js";
import { ADMIN_TOKEN } from "../support/stripe/harness.js";
import { allPages, type PageCase, paidOrder, SCORED_EVENT, STATIC_PAGES, selected } from "./pages-list.js";

/**
 * Every human page in a real Chromium, at phone and desktop width: screenshot, title and meta
 * description, no horizontal scrolling, no serious or critical axe-core violation, the keyboard
 * reaches the navigation with a visible focus; and, with JavaScript off, the catalog and the
 * standings are there. PAGES=home,pay,… runs some pages only (test/web/pages-list.ts).
 */

/** The little of the DOM the page checks use (the tests' tsconfig has no DOM library). */
interface DomElement {
  tagName: string;
  closest(selector: string): DomElement | null;
  getAttribute(name: string): string | null;
  matches(selector: string): boolean;
}
interface DomWindow {
  innerWidth: number;
  document: { documentElement: { scrollWidth: number }; activeElement: DomElement | null };
  getComputedStyle(el: DomElement): { outlineStyle: string; outlineWidth: string; boxShadow: string };
}

/** Q3 of the season with registration open: official results can be recorded for the standings. */
const SEASON = { OLYMPIAD_SEASON_YEAR: "2026", OLYMPIAD_REGISTRATION_OPENS: "2026-01-08" };
const RESULTS_AT = new Date("2026-08-15T12:00:00Z");

async function recordStandings(h: SiteHarness): Promise<void> {
  h.app.services.olympiadRecords.now = () => RESULTS_AT;
  const ids: string[] = [];
  for (const name of ["Ada", "Bob", "Cy"]) {
    const r = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "register", who: "agent_self", name, agent_id: `${name.toLowerCase()}-1` },
    });
    if (r.statusCode !== 201) throw new Error(`register answered ${r.statusCode}: ${r.body}`);
    ids.push(r.json().participant_id as string);
  }
  const event = EVENTS.find((e) => e.entrants === "individual" && e.scoring.better === "higher");
  const r = await h.app.inject({
    method: "POST",
    url: "/api/admin/olympiad/results",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: {
      event_id: event?.id,
      quarter: "Q1",
      results: ids.map((participant_id, i) => ({ participant_id, score: 90 - i * 10 })),
      evidence: { url: "https://evidence.example/heat" },
    },
  });
  if (r.statusCode !== 201) throw new Error(`recording a result answered ${r.statusCode}: ${r.body}`);
}

/**
 * A scored task on SCORED_EVENT, open, with two entrants' public scores on its leaderboard (long
 * names and hashes: the widest tables of the event page).
 */
async function scoredEvent(h: SiteHarness): Promise<void> {
  const tasks = h.app.services.olympiadTasks;
  tasks.now = () => new Date("2026-07-20T12:00:00Z");
  const ids = Array.from({ length: 20 }, (_, i) => `row${i}`);
  const put = await h.app.inject({
    method: "PUT",
    url: `/api/admin/olympiad/events/${SCORED_EVENT}/task`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    payload: {
      description: `Label each row.\n\n${"A long line of the task's description without a break ".repeat(8)}`,
      metric: "accuracy",
      key: {
        format: "csv",
        content: `id,prediction\n${ids.map((id, i) => `${id},${i % 2 ? "yes" : "no"}`).join("\n")}\n`,
      },
      files: [{ name: "a-rather-long-public-file-name-for-the-layout.csv", content: "id,text\nrow0,hello\n" }],
      opens_at: "2026-08-01T00:00:00.000Z",
      closes_at: "2026-08-20T00:00:00.000Z",
    },
  });
  if (put.statusCode !== 201) throw new Error(`setting the task answered ${put.statusCode}: ${put.body}`);
  tasks.now = () => new Date("2026-08-10T12:00:00Z");
  let n = 0;
  for (const name of ["Entrant-with-a-very-long-display-name-that-must-wrap", "Eve"]) {
    const r = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "register", who: "agent_self", name, agent_id: `ev-${name.length}` },
    });
    if (r.statusCode !== 201) throw new Error(`register answered ${r.statusCode}: ${r.body}`);
    const { participant_id, participant_token } = r.json() as { participant_id: string; participant_token: string };
    n++;
    const at = "2026-02-01T00:00:00.000Z";
    await tasks.db
      .insertInto("orders")
      .values({
        id: `ord_page${n}`,
        proof_key: `page:${n}`,
        sku: "gao-entry",
        amount_cents: 2500,
        currency: "USD",
        rail: "card_checkout",
        transaction_ref: null,
        email: null,
        agent_id: null,
        status: "active",
        access_token_hash: `hash-page${n}`,
        license_key: null,
        meta: "{}",
        created_at: at,
        updated_at: at,
        revoked_at: null,
        revoke_reason: null,
      })
      .execute();
    await tasks.db
      .insertInto("olympiad_entries")
      .values({
        id: `ent_page${n}`,
        participant_id,
        season_id: "2026",
        order_id: `ord_page${n}`,
        proof: "access_token",
        created_at: at,
      })
      .execute();
    const s = await h.app.inject({
      method: "POST",
      url: `/api/olympiad/events/${SCORED_EVENT}/submissions`,
      headers: { authorization: `Bearer ${participant_token}` },
      payload: {
        format: "csv",
        content: `id,prediction\n${ids.map((id, i) => `${id},${i % (n + 1) ? "yes" : "no"}`).join("\n")}\n`,
      },
    });
    if (s.statusCode !== 202) throw new Error(`submitting answered ${s.statusCode}: ${s.body}`);
  }
  await tasks.sweep();
}

const NAMES = [...STATIC_PAGES.map((p) => p.name), "pay-success", "access"].filter(selected);

describe("every human page in a real browser (issue 13)", () => {
  let h: SiteHarness;
  let browser: Browser;
  let pages: PageCase[];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    h = await startSite({
      CONTACT_EMAIL: "ops@lab.test",
      PAY_TO_SOLANA: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      ...SEASON,
    });
    pages = allPages(await paidOrder(h, "zrw-pro"));
    if (selected("standings")) await recordStandings(h);
    if (selected("olympiad-event")) await scoredEvent(h);
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await h?.close();
  });

  const open = async (
    width: keyof typeof WIDTHS,
    javaScriptEnabled = true,
    colorScheme: "light" | "dark" = "light",
  ): Promise<Page> => {
    const context = await browser.newContext({ viewport: WIDTHS[width], javaScriptEnabled, colorScheme });
    contexts.push(context);
    return context.newPage();
  };

  for (const width of ["phone", "desktop"] as const) {
    it.each(NAMES)(`${width}: %s`, async (name) => {
      const p = pages.find((x) => x.name === name);
      if (!p) throw new Error(`no page named ${name}`);
      const where = `${p.path} (${p.source}) at ${width}`;
      const page = await open(width);
      const response = await page.goto(`${h.base}${p.path}`, { waitUntil: "load" });
      expect(response?.status(), where).toBe(p.status ?? 200);
      await screenshot(page, `page-${p.name}`);

      expect((await page.title()).trim().length, where).toBeGreaterThan(0);
      const description = await page.getAttribute('meta[name="description"]', "content");
      expect(description?.trim().length ?? 0, where).toBeGreaterThan(10);
      expect(await page.locator("h1").count(), where).toBeGreaterThan(0);

      const overflow = await page.evaluate(() => {
        const w = globalThis as unknown as DomWindow;
        return { scroll: w.document.documentElement.scrollWidth, inner: w.innerWidth };
      });
      expect(overflow.scroll, `${where}: page wider than the window`).toBeLessThanOrEqual(overflow.inner);

      const violations = await seriousA11yViolations(page);
      expect(violations, `${where}:\n${describeViolations(violations)}`).toEqual([]);

      // the keyboard reaches the first navigation link, and its focus is visible
      const firstNav = await page.locator('nav[aria-label="Site"] a').first().getAttribute("href");
      let reached = false;
      for (let i = 0; i < 6 && !reached; i++) {
        await page.keyboard.press("Tab");
        reached = await page.evaluate((href) => {
          const el = (globalThis as unknown as DomWindow).document.activeElement;
          return (
            el?.tagName === "A" && el.closest('nav[aria-label="Site"]') !== null && el.getAttribute("href") === href
          );
        }, firstNav);
      }
      expect(reached, `${where}: Tab does not reach the first navigation link`).toBe(true);
      const focus = await page.evaluate(() => {
        const w = globalThis as unknown as DomWindow;
        const el = w.document.activeElement as DomElement;
        const s = w.getComputedStyle(el);
        return {
          visible: el.matches(":focus-visible"),
          outline: s.outlineStyle !== "none" && Number.parseFloat(s.outlineWidth) >= 2,
          shadow: s.boxShadow !== "none",
        };
      });
      expect(focus.visible, where).toBe(true);
      expect(focus.outline || focus.shadow, `${where}: no visible focus style`).toBe(true);
    });
  }

  it.each(NAMES)("dark colour scheme: %s has no serious or critical violation (contrast included)", async (name) => {
    const p = pages.find((x) => x.name === name);
    if (!p) throw new Error(`no page named ${name}`);
    const page = await open("desktop", true, "dark");
    await page.goto(`${h.base}${p.path}`, { waitUntil: "load" });
    await screenshot(page, `page-${p.name}-dark`);
    const violations = await seriousA11yViolations(page);
    expect(violations, `${p.path} (${p.source}) in dark:\n${describeViolations(violations)}`).toEqual([]);
  });

  it.runIf(selected("pay"))("without JavaScript, /pay shows every product with its price", async () => {
    const page = await open("phone", false);
    await page.goto(`${h.base}/pay`);
    const products = h.app.services.catalog.list();
    expect(products.length).toBeGreaterThan(0);
    for (const p of products) {
      const card = page.locator(`#product-${p.sku}`);
      expect(await card.isVisible(), p.sku).toBe(true);
      expect(await card.locator("h3").textContent()).toBe(p.name);
      expect(await card.locator(".price").textContent()).toContain(`$${p.amountUsd}`);
    }
    // the checkout form is a plain form: it works without a script
    await page.goto(`${h.base}/pay?sku=gao-entry`);
    expect(await page.locator("form#checkout").getAttribute("method")).toBe("post");
  });

  it.runIf(selected("standings"))("without JavaScript, /standings shows the standings table", async () => {
    const page = await open("desktop", false);
    await page.goto(`${h.base}/standings`);
    const table = page.locator("#standings-table");
    expect(await table.isVisible()).toBe(true);
    const rows = await table.locator("tbody tr").count();
    expect(rows).toBe(3);
    expect(await table.locator("tbody tr").first().textContent()).toContain("Ada");
  });
});

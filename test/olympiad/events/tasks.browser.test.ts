import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENTS } from "../../../src/olympiad/events/events.js";
import { launchBrowser, type SiteHarness, startSite } from "../../support/browser.js";

/** The /olympiad page's submission form (docs/olympiad-tasks.md) in a real browser. */

const YEAR = new Date().getUTCFullYear();
const ADMIN_TOKEN = "admin-token-for-olympiad-tasks-browser-01";
const ids = Array.from({ length: 30 }, (_, i) => `q${i}`);
const KEY = `id,prediction\n${ids.map((id, i) => `${id},${i % 2 ? "yes" : "no"}`).join("\n")}\n`;

describe("submitting predictions from the /olympiad page", () => {
  let h: SiteHarness;
  let browser: Browser;
  beforeAll(async () => {
    h = await startSite({
      ADMIN_TOKEN,
      OLYMPIAD_SEASON_YEAR: String(YEAR),
      OLYMPIAD_REGISTRATION_OPENS: `${YEAR}-01-01`,
    });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("reads the chosen file and submits it with the participant token of the tab", async () => {
    const event = EVENTS.find((e) => e.entrants === "individual") as { id: string };
    // a task open now, closing in the first quarter of next year (Q4 is the archive quarter)
    const put = await h.app.inject({
      method: "PUT",
      url: `/api/admin/olympiad/events/${event.id}/task`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: {
        description: "yes or no",
        metric: "accuracy",
        key: { format: "csv", content: KEY },
        opens_at: new Date(Date.now() - 60_000).toISOString(),
        closes_at: `${YEAR + 1}-01-15T00:00:00Z`,
      },
    });
    expect(put.statusCode, put.body).toBe(201);
    // a registered participant with a paid entry
    const reg = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "register", who: "agent_self", name: "Sub", agent_id: "agent-sub" },
    });
    const token = reg.json().participant_token as string;
    const r = await h.checkout("gao-entry", "sub@example.com");
    const session = r.body.session_id as string;
    h.stripe.pay(session);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", session));
    const access = (await h.app.inject({ method: "GET", url: `/api/checkout/${session}` })).json().access_url;
    const entered = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      headers: { authorization: `Bearer ${token}` },
      payload: { action: "enter", access_url: access },
    });
    expect(entered.statusCode, entered.body).toBeLessThan(300);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(`${h.base}/olympiad`);
    await page.fill("#signin-token", token);
    await page.click('#signin-form button[type="submit"]');
    await page.fill("#submit-event", event.id);
    await page.setInputFiles("#submit-file", {
      name: "predictions.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(`id,prediction\n${ids.map((id) => `${id},yes`).join("\n")}\n`),
    });
    await page.click('#submit-form button[type="submit"]');
    await expect.poll(() => page.textContent("#action-status")).toContain("1 of 5 today");
    // a file that does not fit: the problem's words, with the row
    await page.fill("#submit-event", event.id);
    await page.setInputFiles("#submit-file", {
      name: "bad.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("id,prediction\nq0,yes\nq0,no\n"),
    });
    await page.click('#submit-form button[type="submit"]');
    await expect.poll(() => page.textContent("#action-error")).toContain("row 3");
    const mine = await h.app.inject({
      method: "GET",
      url: `/api/olympiad/events/${event.id}/submissions`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(mine.json().submissions).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});

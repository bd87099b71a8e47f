import type { Browser, Page } from "playwright-core";
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

const YEAR = new Date().getUTCFullYear();

/** Paid gao-entry order through the card stand-in: its access URL. */
async function paidEntry(h: SiteHarness, email = "entrant@example.com"): Promise<string> {
  const r = await h.checkout("gao-entry", email);
  expect(r.status).toBe(200);
  const id = r.body.session_id as string;
  h.stripe.pay(id);
  expect((await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id))).body.outcome).toBe("granted");
  const s = (await h.app.inject({ method: "GET", url: `/api/checkout/${id}` })).json();
  return s.access_url as string;
}

async function noHorizontalScroll(page: Page): Promise<void> {
  // evaluated in the page (the test's own types have no DOM library)
  const [scroll, client] = (await page.evaluate(
    "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
  )) as [number, number];
  expect(scroll).toBeLessThanOrEqual(client);
}

async function checkLayout(page: Page, name: string): Promise<void> {
  for (const size of [WIDTHS.phone, WIDTHS.desktop]) {
    await page.setViewportSize(size);
    await noHorizontalScroll(page);
    await screenshot(page, name);
    const violations = await seriousA11yViolations(page);
    expect(violations, `${name} at ${size.width} px:\n${describeViolations(violations)}`).toEqual([]);
  }
}

describe("the olympiad page in a real browser: register, enter, team, propose, vote, live tally", () => {
  let h: SiteHarness;
  let browser: Browser;
  beforeAll(async () => {
    h = await startSite({ OLYMPIAD_SEASON_YEAR: String(YEAR), OLYMPIAD_REGISTRATION_OPENS: `${YEAR}-01-01` });
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("takes part from the page, as agents do through POST /api/olympiad", async () => {
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(`${h.base}/olympiad`);
    expect(await page.isVisible("#actions")).toBe(true);
    expect(await page.isHidden("#needs-js")).toBe(true);
    expect(await page.textContent("#registration-state")).toBe("Open");

    // a form error is one plain sentence naming the field by its label (issue #25 item 4)
    await page.click('#register-form button[type="submit"]');
    await expect.poll(() => page.textContent("#action-error")).toBe("Display name: enter at least 1 character.");
    expect(await page.getAttribute("#reg-name", "aria-invalid")).toBe("true");

    // register: the token is shown once, kept in sessionStorage, never in the address
    await page.fill("#reg-name", "Ada");
    await page.click('#register-form button[type="submit"]');
    await expect.poll(() => page.textContent("#token-value")).toMatch(/^gao_[A-Za-z0-9_-]{43}$/);
    const token = (await page.textContent("#token-value")) as string;
    expect(await page.textContent("#token-box")).toContain("Keep this participant token");
    expect(await page.evaluate('sessionStorage.getItem("labphi.olympiad.participant_token")')).toBe(token);
    expect(page.url()).not.toContain("gao_");
    await expect.poll(() => page.textContent("#me-name")).toBe("Ada");
    // the form gives way to whom it registered, not a blank form reset to "Me, a human"
    expect(await page.isHidden("#register-form")).toBe(true);
    expect(await page.textContent("#registered-name")).toBe("Ada");
    expect(await page.textContent("#registered")).toContain("a human competing for themself");
    await page.click("#token-done");
    expect(await page.isHidden("#token-box")).toBe(true);

    // enter: a wrong address shows the problem's words inline; the paid order's access URL enters
    await page.fill("#enter-url", "https://example.com/orders/1");
    await page.click('#enter-form button[type="submit"]');
    await expect.poll(() => page.textContent("#action-error")).toContain("invalid_access_url");
    expect(await page.getAttribute("#action-error", "role")).toBe("alert");
    expect(await page.textContent("#action-error")).not.toContain("{");
    const access = await paidEntry(h);
    await page.fill("#enter-url", access);
    await page.click('#enter-form button[type="submit"]');
    await expect.poll(() => page.textContent("#action-status")).toContain(`Entered: season ${YEAR}`);
    await expect.poll(() => page.textContent("#me-entry")).toContain(`Entered in season ${YEAR}`);
    expect(await page.isHidden("#action-error")).toBe(true);

    // a team: created in the page, its join code shown once, the human/agent ratio against 30–70 %
    await page.fill("#team-name", "Night Owls");
    await page.click('#team-create-form button[type="submit"]');
    await expect.poll(() => page.textContent("#team-name-out")).toBe("Night Owls");
    expect(await page.textContent("#join-code")).toMatch(/\S{16,}/);
    expect(await page.textContent("#team-ratio")).toContain("Humans 1 (100 %) · autonomous 0 (0 %)");
    expect(await page.textContent("#team-eligible")).toBe("Ratio not met");
    const joinCode = (await page.textContent("#join-code")) as string;

    // an agent joins through the API with that code: the page shows the new ratio
    const bot = (
      await h.app.inject({
        method: "POST",
        url: "/api/olympiad",
        payload: { action: "register", who: "agent_self", name: "Bot", agent_id: "bot-browser" },
      })
    ).json();
    const joined = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "team", op: "join", join_code: joinCode },
      headers: { authorization: `Bearer ${bot.participant_token}` },
    });
    expect(joined.statusCode, joined.body).toBe(200);
    await page.click('#team-out button[data-team-op="view"]');
    await expect.poll(() => page.textContent("#team-ratio")).toContain("Humans 1 (50 %) · autonomous 1 (50 %)");
    expect(await page.textContent("#team-eligible")).toBe("Ratio holds");

    // issue #21: a captain's vote counts only for a locked team eligible over its paid members:
    // the bot binds a paid order of its own, the captain locks the roster in the page
    const bound = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "bind_order", access_url: await paidEntry(h, "bot@example.com") },
      headers: { authorization: `Bearer ${bot.participant_token}` },
    });
    expect(bound.statusCode, bound.body).toBe(200);
    await page.click('#team-out button[data-team-op="lock"]');
    await expect.poll(() => page.textContent("#team-out")).toContain("Roster locked");

    // propose in the page; the card appears with an empty tally
    await page.selectOption("#prop-kind", "new_games");
    await page.fill("#prop-title", "Add a relay sprint");
    await page.fill("#prop-body", "Four legs, alternating humans and agents.");
    await page.click('#propose-form button[type="submit"]');
    const card = page.locator("article.proposal", { hasText: "Add a relay sprint" });
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.locator("[data-mixed]").textContent()).toBe("Mixed yes: no decisive vote yet");

    // vote yes in the page: the captain's vote shows in the live tally at once
    await card.locator('button[data-vote="yes"]').click();
    await expect.poll(() => page.textContent("#action-status")).toContain("counts in Team captains");
    const captains = card.locator('[data-constituency="team_captains"] [data-counts]');
    expect(await captains.textContent()).toBe("1 yes · 0 no · 0 abstain · 100.0 % yes");
    expect(await card.locator("[data-mixed]").textContent()).toBe("Mixed yes: 100.0 %");
    expect(await card.locator('[data-constituency="team_captains"] rect.fill').getAttribute("width")).toBe("100.00");

    // a steward (appointed with ADMIN_TOKEN) votes no through the API: the refreshed tally mixes both
    // (a participant of its own: the bot is now a paid agent, which would vote in entered_agents)
    const stew = (
      await h.app.inject({
        method: "POST",
        url: "/api/olympiad",
        payload: { action: "register", who: "human_for_self", name: "Stew" },
      })
    ).json();
    const roles = await h.admin("POST", "/api/admin/olympiad/roles", {
      participant_id: stew.participant_id,
      role: "steward",
      op: "appoint",
    });
    expect(roles.status).toBe(200);
    const id = (await card.getAttribute("data-proposal-id")) as string;
    const no = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "vote", proposal_id: id, choice: "no" },
      headers: { authorization: `Bearer ${stew.participant_token}` },
    });
    expect(no.json().constituency).toBe("lab_stewards");
    await page.click("#refresh-tallies");
    await expect
      .poll(() => card.locator('[data-constituency="lab_stewards"] [data-counts]').textContent())
      .toBe("0 yes · 1 no · 0 abstain · 0.0 % yes");
    // 4000 yes-weight of 5000 live weight
    expect(await card.locator("[data-mixed]").textContent()).toBe("Mixed yes: 80.0 %");
    expect(await card.locator("[data-quorum]").textContent()).toContain("Voters 2 of 5 needed for quorum");
    expect(await card.locator("rect.fill.mixed").getAttribute("width")).toBe("80.00");

    // a proposal made elsewhere shows on top at the next refresh (the page polls the same view)
    const other = await h.app.inject({
      method: "POST",
      url: "/api/olympiad",
      payload: { action: "propose", kind: "event_weights", title: "Double the relay", body: "Weight 2." },
      headers: { authorization: `Bearer ${bot.participant_token}` },
    });
    expect(other.statusCode, other.body).toBe(200);
    await page.click("#refresh-tallies");
    await expect.poll(() => page.locator("#proposal-list > article h3").first().textContent()).toBe("Double the relay");
    expect(await page.textContent("#proposal-counts")).toBe("2 open · 0 closed");

    // the tab keeps the token across a reload; the server-rendered tally matches the live one
    await page.reload();
    await expect.poll(() => page.textContent("#me-name")).toBe("Ada");
    expect(await card.locator("[data-mixed]").textContent()).toBe("Mixed yes: 80.0 %");
    await checkLayout(page, "olympiad");
    expect(errors).toEqual([]);
    // pages stay open: the single-process Chromium ends when its last page closes (afterAll closes it)
  }, 90_000);

  it("the standings page renders the recorded results without JavaScript", async () => {
    const register = async (name: string) =>
      (
        await h.app.inject({
          method: "POST",
          url: "/api/olympiad",
          payload: { action: "register", who: "agent_self", name, agent_id: name.toLowerCase() },
        })
      ).json().participant_id as string;
    const ids = [await register("Sprinter"), await register("Solver"), await register("Scout")];
    const [first, second] = EVENTS.filter((e) => e.entrants === "individual" && e.scoring.better === "higher");
    // registration has been open since January 1: Q1 has begun, its results count official points
    const official = await h.admin("POST", "/api/admin/olympiad/results", {
      event_id: first?.id,
      quarter: "Q1",
      results: ids.map((participant_id, i) => ({ participant_id, score: 30 - i * 10 })),
      evidence: { url: "https://evidence.example/q1" },
    });
    expect(official.status).toBe(201);
    const tryout = await h.admin("POST", "/api/admin/olympiad/results", {
      event_id: second?.id,
      quarter: "tryouts",
      results: [{ participant_id: ids[2], score: 10 }],
      evidence: { url: "https://evidence.example/tryout" },
    });
    expect(tryout.status).toBe(201);
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: WIDTHS.desktop });
    const page = await context.newPage();
    await page.goto(`${h.base}/standings`);
    expect(await page.textContent("h1")).toBe("Standings");
    expect(await page.locator("#standings-table tbody tr").count()).toBe(3);
    expect(await page.textContent("#standings-table tbody tr:first-child")).toContain("Sprinter");
    expect(await page.locator("#standings-chart rect.bar").count()).toBe(3);
    expect(await page.textContent("#seeding-table")).toContain("Scout");
    const doc = (await h.app.inject({ method: "GET", url: "/standings.json" })).json();
    expect(await page.textContent("#head-hash")).toBe(doc.head.hash);
    // screenshots and the accessibility check (axe needs JavaScript, the page does not)
    const shown = await browser.newPage({ viewport: WIDTHS.desktop });
    await shown.goto(`${h.base}/standings`);
    await checkLayout(shown, "standings");
  }, 60_000);
});

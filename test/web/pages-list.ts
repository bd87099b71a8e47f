import { EVENTS } from "../../src/olympiad/events/events.js";
import type { CardHarness } from "../support/stripe/harness.js";

/**
 * Every human page the cross-page tests visit (test/web/pages.browser.test.ts, headers.test.ts).
 * PAGES=home,pay,… limits a run to some of them by name (for a page still being built); unset
 * means all of them.
 */
export interface PageCase {
  /** a short name: screenshots are test-results/screenshots/page-<name>-<width>.png */
  name: string;
  path: string;
  /** the page's source (for a report when a check fails) */
  source: string;
  /**
   * Cache-Control of the page: `no-cache` (default); pages that show a secret (an access URL) and
   * error pages are never stored.
   */
  cache?: string;
  /** an error page: status other than 200 */
  status?: number;
}

/** The event pages.browser.test.ts gives a scored task with a public leaderboard (an individual event). */
export const SCORED_EVENT = (EVENTS.find((e) => e.entrants === "individual") as { id: string }).id;

export const STATIC_PAGES: PageCase[] = [
  { name: "home", path: "/", source: "src/web/pages/home.ts" },
  { name: "pay", path: "/pay", source: "src/web/pages/pay-catalog.ts" },
  { name: "pay-product", path: "/pay?sku=zrw-pro", source: "src/web/pages/pay-product.ts" },
  { name: "pay-cancel", path: "/pay/cancel?sku=gao-entry", source: "src/web/pages/pay-product.ts" },
  { name: "web", path: "/web", source: "src/web/pages/web-demo.ts (W-C)" },
  { name: "jobs", path: "/jobs", source: "src/web/pages/jobs.ts (W-D)" },
  { name: "olympiad", path: "/olympiad", source: "src/web/pages/olympiad*.ts (W-E)" },
  { name: "standings", path: "/standings", source: "src/web/pages/standings*.ts (W-E)" },
  {
    name: "olympiad-event",
    path: `/olympiad/events/${SCORED_EVENT}`,
    source: "src/web/pages/olympiad-events.ts (issue #26)",
  },
  { name: "mcp-help", path: "/mcp-help", source: "src/web/pages/mcp-help.ts" },
  { name: "error", path: "/pay?sku=nope", source: "src/web/problem-page.ts", status: 404, cache: "no-store" },
];

/** The names selected by PAGES (all when unset). */
export function selected(name: string): boolean {
  const only = process.env.PAGES?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return !only || only.length === 0 || only.includes(name);
}

/** A paid card order through the Stripe stand-in and the signed webhook: its success and access pages. */
export async function paidOrder(h: CardHarness, sku: string): Promise<{ success: string; access: string }> {
  const started = await h.checkout(sku, "pages@example.com");
  if (started.status !== 200) throw new Error(`checkout answered ${started.status}`);
  const id = started.body.session_id as string;
  h.stripe.pay(id);
  const delivered = await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
  if (delivered.status !== 200) throw new Error(`webhook answered ${delivered.status}`);
  const status = await h.app.services.card.status(id);
  if (!status.access_url) throw new Error(`session ${id} has no access URL (${status.status})`);
  return { success: `/pay/success?session_id=${id}`, access: new URL(status.access_url).pathname };
}

/** All pages, the order's two included. */
export function allPages(order: { success: string; access: string }): PageCase[] {
  return [
    ...STATIC_PAGES,
    { name: "pay-success", path: order.success, source: "src/web/pages/pay-results.ts", cache: "no-store" },
    { name: "access", path: order.access, source: "accessHtml in src/orders/routes.ts", cache: "private, no-store" },
  ].filter((p) => selected(p.name));
}

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import sparticuz from "@sparticuz/chromium";
import { type Browser, chromium, type Page } from "playwright-core";
import { freePort } from "../../src/sandbox/ledgers/evm.js";
import type { Engine } from "./databases.js";
import { onFreePort } from "./ports.js";
import { type CardHarness, cardHarness } from "./stripe/harness.js";

/**
 * Browser tests (issue #13): a real Chromium driven by playwright-core. The browser comes from the
 * @sparticuz/chromium npm package (unpacked into the temporary folder on first use), or from
 * CHROMIUM_PATH / Debian's /usr/bin/chromium when present, so nothing is set up by hand.
 */
export async function launchBrowser(): Promise<Browser> {
  const system = [process.env.CHROMIUM_PATH, "/usr/bin/chromium"].find((p) => p && fs.existsSync(p));
  const executablePath = system ?? (await sparticuz.executablePath());
  const base = system ? [] : sparticuz.args;
  // Two test files may unpack the npm Chromium at once: spawning the binary while the other process
  // still writes it fails with ETXTBSY. Wait for the writer and try again (a few times, then fail).
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchAt(executablePath, base);
    } catch (err) {
      if (attempt >= 5 || !String((err as Error).message).includes("ETXTBSY")) throw err;
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

function launchAt(executablePath: string, base: readonly string[]): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      ...base,
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A free loopback port (the one helper of the tests and the sandbox). */
export { freePort };

/** The whole app (with the Stripe stand-in) listening on a loopback port, BASE_URL set to it. */
export interface SiteHarness extends CardHarness {
  base: string;
}

export function startSite(env: Record<string, string> = {}, engine: Engine = "sqlite"): Promise<SiteHarness> {
  // BASE_URL names the port: a free one, another when another process took it before the listen
  return onFreePort(async (port) => {
    const base = `http://127.0.0.1:${port}`;
    const h = await cardHarness(engine, { BASE_URL: base, RATE_LIMIT_ENABLED: "false", ...env });
    try {
      await h.app.listen({ port, host: "127.0.0.1" });
    } catch (err) {
      await h.close();
      throw err;
    }
    return Object.assign(h, { base });
  });
}

/** Screenshots go to test-results/screenshots/<name>-<width>.png (git-ignored). */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, "../../test-results/screenshots");

/** Phone and desktop widths for screenshots and layout checks. */
export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } } as const;

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const size = page.viewportSize();
  const file = path.join(SCREENSHOT_DIR, `${name}-${size?.width ?? 0}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

/**
 * Runs axe-core (injected from the npm package, not fetched) on the page and returns the
 * violations of impact "serious" or "critical" (WCAG 2 A/AA and best-practice rules).
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  // evaluated through the DevTools protocol: the page's CSP (no inline script) stays on
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: unknown[] }> } }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return result.violations;
  })) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** "rule: target, target" lines, for a readable assertion message. */
export function describeViolations(vs: AxeViolation[]): string {
  return vs
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
    .join("\n");
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CardHarness, cardHarness } from "../support/stripe/harness.js";
import { allPages, type PageCase, paidOrder } from "./pages-list.js";

const BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** Every <script …> tag of a page (the opening tag). */
const scriptTags = (html: string) => [...html.matchAll(/<script\b[^>]*>/gi)].map((m) => m[0]);
/** Every /assets/ URL a page names (stylesheet, scripts). */
const assetUrls = (html: string) => [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);

describe("security and cache headers of the human pages (issue 13)", () => {
  let h: CardHarness;
  let pages: PageCase[];
  beforeAll(async () => {
    h = await cardHarness("sqlite", { CONTACT_EMAIL: "ops@lab.test" });
    pages = allPages(await paidOrder(h, "zrw-pro"));
  });
  afterAll(async () => h?.close());

  it("every page: CSP without 'unsafe-inline', nosniff, its Cache-Control, no inline script, style or handler", async () => {
    expect(pages.length).toBeGreaterThan(0);
    for (const p of pages) {
      const r = await h.app.inject({ method: "GET", url: p.path, headers: { accept: BROWSER } });
      const where = `${p.path} (${p.source})`;
      expect(r.statusCode, where).toBe(p.status ?? 200);
      expect(r.headers["content-type"], where).toContain("text/html");
      const csp = String(r.headers["content-security-policy"]);
      expect(csp, where).toContain("script-src 'self'");
      expect(csp, where).toContain("style-src 'self'");
      expect(csp, where).toContain("default-src 'self'");
      expect(csp, where).not.toContain("unsafe-inline");
      expect(csp, where).not.toContain("unsafe-eval");
      expect(r.headers["x-content-type-options"], where).toBe("nosniff");
      expect(r.headers["cache-control"], where).toBe(p.cache ?? "no-cache");
      // scripts come from files; the only script without src is a JSON data block (never executed)
      for (const tag of scriptTags(r.body)) {
        if (!/\ssrc="/.test(tag)) expect(tag, where).toMatch(/type="application\/json"/);
      }
      expect(r.body, where).not.toMatch(/<[a-z][^>]*\sstyle=/i);
      expect(r.body, where).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i);
      expect(r.body, where).not.toMatch(/<style\b/i);
      expect(r.body, where).toMatch(/<title>[^<]+<\/title>/);
      expect(r.body, where).toMatch(/<meta name="description" content="[^"]+">/);
    }
  });

  it("assets have hashed names and are cached for a year, immutable", async () => {
    const seen = new Set<string>();
    for (const p of pages) {
      const r = await h.app.inject({ method: "GET", url: p.path, headers: { accept: BROWSER } });
      for (const url of assetUrls(r.body)) seen.add(url);
    }
    expect([...seen].some((u) => u.endsWith(".css"))).toBe(true);
    for (const url of seen) {
      expect(url).toMatch(/^\/assets\/[a-z0-9_-]+-[A-Z0-9]{8}\.(css|js)$/i);
      const r = await h.app.inject({ method: "GET", url });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers["cache-control"], url).toBe("public, max-age=31536000, immutable");
      expect(r.headers["content-type"], url).toMatch(url.endsWith(".css") ? /text\/css/ : /javascript/);
      expect(r.headers["x-content-type-options"], url).toBe("nosniff");
    }
    const missing = await h.app.inject({ method: "GET", url: "/assets/site-NOPE0000.css" });
    expect(missing.statusCode).toBe(404);
  });

  it("discovery documents stay readable from other origins (CORS *)", async () => {
    for (const url of ["/llms.txt", "/.well-known/agent-card.json", "/openapi.yaml"]) {
      const r = await h.app.inject({ method: "GET", url, headers: { origin: "https://agent.example" } });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers["access-control-allow-origin"], url).toBe("*");
      expect(r.headers["cross-origin-resource-policy"], url).toBe("cross-origin");
    }
  });
});

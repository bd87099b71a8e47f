import type { FastifyReply } from "fastify";
import { webAssets } from "./assets.js";
import { escapeHtml as e } from "./html.js";

/**
 * The one layout of every human page: header with the site navigation, main, footer; the one
 * stylesheet (web/styles/site.css) and the page's own bundled scripts, all from /assets/ (no
 * inline script or style, so the Content-Security-Policy forbids both). Pages render their
 * content on the server: the catalog, the standings and every form work without JavaScript.
 */
export interface PageOptions {
  /** the page's own title; " · Lab Phi" is added */
  title: string;
  /** the meta description (one sentence) */
  description: string;
  /** the page's path, for the navigation's aria-current */
  path: string;
  /** the inner HTML of <main> (escape every value with escapeHtml) */
  body: string;
  /** bundled entries of web/src to load, by name without extension ("jobs" → web/src/jobs.ts) */
  scripts?: string[];
  /** extra <head> markup: meta tags only (a refresh), never script or style */
  head?: string;
}

export const NAV: { href: string; label: string }[] = [
  { href: "/pay", label: "Buy" },
  { href: "/web", label: "Codec demo" },
  { href: "/jobs", label: "Suite jobs" },
  { href: "/olympiad", label: "Olympiad" },
  { href: "/standings", label: "Standings" },
  { href: "/#agents", label: "For agents" },
];

export function renderPage(o: PageOptions): string {
  const assets = webAssets();
  const nav = NAV.map(
    (n) =>
      `<li><a href="${e(n.href)}"${n.href === o.path || (n.href !== "/" && o.path.startsWith(`${n.href}/`)) ? ' aria-current="page"' : ""}>${e(n.label)}</a></li>`,
  ).join("");
  const scripts = (o.scripts ?? [])
    .map((s) => `<script type="module" src="${e(assets.url(`${s}.js`))}"></script>`)
    .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${e(o.title)} · Lab Phi</title>
<meta name="description" content="${e(o.description)}">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${e(assets.url("site.css"))}">
${o.head ?? ""}
${scripts}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site-header">
<div class="wrap header-row">
<a class="brand" href="/"><span class="brand-mark" aria-hidden="true">φ</span> Lab Phi</a>
<nav aria-label="Site"><ul class="nav">${nav}</ul></nav>
</div>
</header>
<main id="main" class="wrap" tabindex="-1">
${o.body}
</main>
<footer class="site-footer">
<div class="wrap footer-row">
<p>Lab Phi · self-hosted · prices in USD, USDC in atomic units (6 decimals)</p>
<p><a href="/llms.txt">llms.txt</a> · <a href="/openapi.yaml">OpenAPI</a> · <a href="/pricing.md">pricing.md</a> · <a href="/.well-known/agent-card.json">agent card</a></p>
</div>
</footer>
</body>
</html>`;
}

/** Sends a page: HTML, never cached (the assets it names are cached for a year). */
export function sendPage(reply: FastifyReply, status: number, o: PageOptions): FastifyReply {
  return reply
    .code(status)
    .type("text/html; charset=utf-8")
    .header("Cache-Control", "no-cache")
    .serializer(String)
    .send(renderPage(o) as never);
}

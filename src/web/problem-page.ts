import { validationSentence } from "../../web/src/_field-words.js";
import { escapeHtml as e } from "./html.js";
import { renderPage } from "./layout.js";

/** What an HTML error page needs of a problem (src/http/problem.ts). */
export interface ProblemView {
  status: number;
  title: string;
  detail: string;
  code: string;
}

/** Where to go next after a failed page or form, by the path that failed. */
function nextStep(path: string): { href: string; label: string } {
  for (const [prefix, href, label] of [
    ["/pay", "/pay", "Back to the catalog"],
    ["/web", "/web", "Back to the codec demo"],
    ["/jobs", "/jobs", "Back to suite jobs"],
    ["/api/jobs", "/jobs", "Back to suite jobs"],
    ["/olympiad", "/olympiad", "Back to the olympiad"],
    ["/standings", "/standings", "Back to the standings"],
    // /mcp speaks JSON-RPC to MCP clients; a person who opens it is shown how to connect one
    ["/mcp", "/mcp-help", "How to connect an MCP client"],
  ] as const) {
    if (path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`)) return { href, label };
  }
  return { href: "/", label: "Go to the home page" };
}

/**
 * The HTML answer a browser gets instead of problem+json (a failed form, an unknown page): the
 * problem's own words, its status and stable code, and the way back.
 */
export function problemPage(p: ProblemView, path: string): string {
  const next = nextStep(path);
  // a form's validation problem reads as one plain sentence naming the field
  const detail = validationSentence({ code: p.code, detail: p.detail }) ?? p.detail;
  return renderPage({
    title: p.title,
    description: detail,
    path,
    body: `<section class="hero">
<p class="badge badge-bad">Error ${e(p.status)}</p>
<h1>${e(p.title)}</h1>
<div class="notice notice-error" role="alert" id="problem"><p>${e(detail)}</p></div>
<p class="muted small">Code <code id="problem-code">${e(p.code)}</code>. Agents get the same answer as <code>application/problem+json</code>; see <a href="/openapi.yaml">the API</a>.</p>
<p class="cluster"><a class="btn btn-primary" href="${e(next.href)}">${e(next.label)}</a>${next.href === "/" ? "" : ' <a class="btn" href="/">Home</a>'}</p>
</section>`,
  });
}

/** Minimal, dependency-free HTML rendering with escaping. Pages share one layout. */

export function escapeHtml(value: unknown): string {
  return String(value ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Lab Phi</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1b1b1f}
h1{font-size:1.5rem}code,.mono{font-family:ui-monospace,monospace;background:#f3f3f6;padding:.1rem .3rem;border-radius:4px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}
.note{color:#555}.bad{color:#a00}a.button{display:inline-block;padding:.5rem 1rem;background:#1b1b1f;color:#fff;border-radius:6px;text-decoration:none}
</style>
</head>
<body>
${body}
<footer class="note"><p>Lab Phi · <a href="/llms.txt">llms.txt</a> · <a href="/openapi.yaml">OpenAPI</a></p></footer>
</body>
</html>`;
}

/** True when the client prefers HTML over JSON (a browser). */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf("text/html");
  const json = accept.indexOf("application/json");
  return html !== -1 && (json === -1 || html < json);
}

/**
 * `Accept: text/markdown` on the JSON discovery documents: the same document rendered as
 * Markdown (headings for the top-level fields, nested lists below). Pure functions; the hook
 * that applies them lives in routes.ts.
 */

/** The q-value the Accept header gives a media type (exact, then type/*, then *\/*); 0 when absent. */
function quality(accept: string, type: string): { q: number; index: number } {
  const [major] = type.split("/");
  let best = { q: 0, index: Number.POSITIVE_INFINITY, specificity: -1 };
  accept.split(",").forEach((part, index) => {
    const [range = "", ...params] = part.trim().toLowerCase().split(";");
    const r = range.trim();
    const specificity = r === type ? 2 : r === `${major}/*` ? 1 : r === "*/*" ? 0 : -1;
    if (specificity < 0 || specificity < best.specificity) return;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    best = { q: Number.isFinite(q) ? q : 0, index, specificity };
  });
  return { q: best.q, index: best.index };
}

/**
 * True when the client prefers Markdown to JSON: text/markdown ranks higher than
 * application/json, or as high and listed first. `Accept: text/markdown` → true;
 * a browser's `text/html,…,*\/*;q=0.8` or no Accept → false.
 */
export function wantsMarkdown(accept: string | undefined): boolean {
  if (!accept) return false;
  const md = quality(accept, "text/markdown");
  if (md.q <= 0) return false;
  const json = quality(accept, "application/json");
  return md.q > json.q || (md.q === json.q && md.index < json.index);
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return "—";
  if (typeof v === "string") return v.includes("\n") ? v.replace(/\n/g, " ") : v;
  return String(v);
}

function isScalar(v: unknown): boolean {
  return v === null || typeof v !== "object";
}

/** One line for a flat object: `k: v; k: v` (scalars only), else undefined. */
function inline(obj: Record<string, unknown>): string | undefined {
  const entries = Object.entries(obj);
  if (!entries.every(([, v]) => isScalar(v) || (Array.isArray(v) && v.every(isScalar)))) return undefined;
  return entries
    .map(([k, v]) => `**${k}**: ${Array.isArray(v) ? v.map(scalar).join(", ") || "—" : scalar(v)}`)
    .join("; ");
}

function list(value: unknown, depth: number, out: string[]): void {
  const pad = "  ".repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${pad}- (none)`);
    for (const item of value) {
      if (isScalar(item)) out.push(`${pad}- ${scalar(item)}`);
      else if (Array.isArray(item)) list(item, depth + 1, out);
      else {
        const line = inline(item as Record<string, unknown>);
        if (line !== undefined) out.push(`${pad}- ${line}`);
        else {
          const [first, ...rest] = Object.entries(item as Record<string, unknown>);
          if (!first) {
            out.push(`${pad}- (empty)`);
            continue;
          }
          pushEntry(first[0], first[1], depth, out, "- ");
          for (const [k, v] of rest) pushEntry(k, v, depth, out, "  ");
        }
      }
    }
    return;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) pushEntry(k, v, depth, out, "- ");
    return;
  }
  out.push(`${pad}${scalar(value)}`);
}

function pushEntry(key: string, v: unknown, depth: number, out: string[], bullet: string): void {
  const pad = "  ".repeat(depth);
  if (isScalar(v)) {
    out.push(`${pad}${bullet}**${key}**: ${scalar(v)}`);
    return;
  }
  if (Array.isArray(v) && v.every(isScalar)) {
    out.push(`${pad}${bullet}**${key}**: ${v.map(scalar).join(", ") || "(none)"}`);
    return;
  }
  out.push(`${pad}${bullet}**${key}**:`);
  list(v, depth + 1, out);
}

/** A JSON document as Markdown: `# title`, then one `##` section per top-level field. */
export function jsonToMarkdown(title: string, doc: unknown, url: string): string {
  const out: string[] = [
    `# ${title}`,
    "",
    `> The Markdown form of ${url} (ask for application/json to get the JSON).`,
    "",
  ];
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    list(doc, 0, out);
    return `${out.join("\n")}\n`;
  }
  const entries = Object.entries(doc as Record<string, unknown>);
  const scalars = entries.filter(([, v]) => isScalar(v) || (Array.isArray(v) && v.every(isScalar)));
  for (const [k, v] of scalars) pushEntry(k, v, 0, out, "- ");
  if (scalars.length > 0) out.push("");
  for (const [k, v] of entries) {
    if (isScalar(v) || (Array.isArray(v) && v.every(isScalar))) continue;
    out.push(`## ${k}`, "");
    // A field that is already Markdown (e.g. /.well-known/x402 `instructions`) stays as it is.
    list(v, 0, out);
    out.push("");
  }
  return `${out.join("\n").trimEnd()}\n`;
}

/** /.well-known/x402 as Markdown: its instructions are Markdown already; the resources follow. */
export function wellKnownX402Markdown(doc: { resources: string[]; instructions: string }): string {
  return `${doc.instructions.trimEnd()}\n\n## Resources\n\n${doc.resources.map((r) => `- ${r}`).join("\n")}\n`;
}

import { formatUsd } from "../catalog/service.js";
import { networkLabel, v1Name } from "../payments/networks.js";
import { centsToAtomic } from "../payments/x402/rails.js";
import { VERSIONS } from "../versions.js";
import { abs, DISCOVERY_DOCUMENTS, type DiscoveryContext, endpoint, link, overClientCap } from "./context.js";
import { SERVICE_NAME, SUMMARY } from "./documents.js";
import { buyExamples, caps, cardFlow, manualFlow, paidOperations, serviceEndpoints, x402Headers } from "./facts.js";
import { MCP_STDIO_COMMAND, mcpFacts } from "./mcp-card.js";

/**
 * The plain-text documents: /llms.txt (llmstxt.org: H1, > summary, notes, H2 sections of
 * links, an Optional section), /llms-full.txt (everything in one text) and /agents.txt
 * (line-oriented twin of /agents.json). Derived from the same context as the JSON ones.
 */

function mdLink(title: string, url: string | undefined, note: string): string {
  return url ? `- [${title}](${url}): ${note}` : `- ${title}: ${note}`;
}

function priceLine(cents: number): string {
  return `$${formatUsd(cents)} (${cents} cents; ${centsToAtomic(cents)} USDC atomic units)`;
}

/** The x402 facts every text states: rails, header names, atomic units, the default client cap. */
export function x402Notes(ctx: DiscoveryContext): string[] {
  const h = x402Headers(ctx);
  const c = caps(ctx);
  const rails = ctx.x402.rails.map(
    (r) =>
      `${r.id} (${r.network}, USDC ${r.asset}, ${r.configured ? `payTo ${r.payTo}` : `not configured: needs ${r.missing.join(", ")}`})`,
  );
  return [
    `Agents pay with x402 (scheme exact, x402 versions ${ctx.x402.versions.join(" and ")}) on two rails: ${rails.join("; ")}.`,
    `Send the payment proof in ${h.payment.join(" or ")}; the 402 carries ${h.required} (base64 v2 requirements) and a JSON body with accepts[]; a paid answer carries ${h.response.join(" and ")}.`,
    `Amounts are USDC atomic units as decimal strings: 6 decimals, so 1 cent = 10,000 units (amount = amount_cents × 10,000; the x402 v1 body repeats it as maxAmountRequired).`,
    `Stock x402 v2 clients cap a payment at $${c.default_client_cap_usd} (${c.default_client_cap_units} units) unless their operator raises it; ${c.skus_over_default_cap.length} of ${ctx.catalog.list().length} SKUs cost more.`,
  ];
}

export function llmsTxt(ctx: DiscoveryContext): string {
  const lines: string[] = [`# ${SERVICE_NAME}`, "", `> ${SUMMARY}`, ""];
  lines.push(...x402Notes(ctx).map((n) => `- ${n}`));
  lines.push(
    "- MPP too: every paid route's 402 also carries `WWW-Authenticate: Payment` challenges (methods `evm` on Base and `solana`, intent `charge`, same price); retry with `Authorization: Payment <credential>` (or `Payment-Authorization` where Authorization holds a bearer token) and keep an `Idempotency-Key`; the answer carries `Payment-Receipt`.",
    `- Humans pay by hosted card checkout, payment links, manual crypto or wire invoice; see the payments matrix.`,
    `- Discovery version ${VERSIONS.discovery}, API ${VERSIONS.api}. Errors are RFC 9457 problem details with a stable code.`,
    "",
  );

  lines.push("## Discovery", "");
  const optionalKeys = new Set([
    "toys",
    "ideas",
    "llms_full_txt",
    "metrics",
    "agents_txt",
    "openapi_json",
    "mcp_server_card",
  ]);
  for (const doc of DISCOVERY_DOCUMENTS) {
    if (optionalKeys.has(doc.key) || doc.key === "llms_txt") continue;
    const url = link(ctx, doc.path);
    if (url) lines.push(mdLink(doc.title, url, doc.note));
  }
  lines.push("");

  lines.push("## Products", "");
  for (const p of ctx.catalog.list()) {
    const cap = overClientCap(ctx, p) ? " Above the default x402 client cap." : "";
    lines.push(
      mdLink(
        `${p.name} (${p.sku})`,
        link(ctx, `/api/x402-products?sku=${p.sku}`),
        `${priceLine(p.amountCents)}, ${p.kind}. ${p.blurb}${cap}`,
      ),
    );
  }
  lines.push("");

  lines.push("## Buy", "");
  for (const op of paidOperations(ctx)) {
    if (!op.served) continue;
    lines.push(mdLink(`${op.method} ${op.path}`, link(ctx, "/openapi.yaml"), `${op.summary} Body: ${op.body}.`));
  }
  lines.push(mdLink("Payments matrix", link(ctx, "/api/payments"), "every rail, whether it is configured, how to pay"));
  const checkout = endpoint(ctx, "POST", "/api/checkout");
  if (checkout) lines.push(mdLink("POST /api/checkout", link(ctx, "/openapi.yaml"), "hosted card checkout for humans"));
  lines.push("");

  lines.push(...mcpSection(ctx), ...endpointSections(ctx));

  lines.push("## Optional", "");
  for (const key of optionalKeys) {
    const doc = DISCOVERY_DOCUMENTS.find((d) => d.key === key);
    const url = doc && link(ctx, doc.path);
    if (doc && url) lines.push(mdLink(doc.title, url, doc.note));
  }
  return `${lines.join("\n")}\n`;
}

/** `## MCP`: the endpoint (when served), the stdio command and every tool. */
export function mcpSection(ctx: DiscoveryContext): string[] {
  const m = mcpFacts(ctx);
  const out = ["## MCP", ""];
  out.push(
    m.endpoint
      ? mdLink("MCP endpoint (streamable HTTP)", m.endpoint, `the same tools over stdio: \`${MCP_STDIO_COMMAND}\``)
      : `- MCP over stdio: \`${MCP_STDIO_COMMAND}\` (this deployment serves no HTTP endpoint for it)`,
  );
  if (m.server_card) out.push(mdLink("MCP server card", m.server_card, "transports, tools and resources"));
  for (const t of m.tools) out.push(`- \`${t.name}\`${t.paid ? " (paid, x402)" : ""}: ${t.description}`);
  out.push(`- Payments: ${m.payments}`, "");
  return out;
}

/** `## Codec` and `## Suite jobs`: the served endpoints of each, from the route table. */
export function endpointSections(ctx: DiscoveryContext): string[] {
  const e = serviceEndpoints(ctx);
  const out: string[] = [];
  const section = (title: string, list: { method: string; path: string; summary: string | null }[]) => {
    if (list.length === 0) return;
    out.push(`## ${title}`, "");
    for (const r of list) {
      const url = r.method === "GET" && !r.path.includes(":") ? abs(ctx, r.path) : undefined;
      out.push(mdLink(`${r.method} ${r.path}`, url, r.summary ?? "(no summary)"));
    }
    out.push("");
  };
  section("Codec", e.codec);
  section("Suite jobs", e.suite);
  return out;
}

export function llmsFullTxt(ctx: DiscoveryContext): string {
  const m = ctx.matrix;
  const out: string[] = [`# ${SERVICE_NAME}: the full brief`, "", `> ${SUMMARY}`, ""];
  out.push(
    `Base URL: ${ctx.baseUrl}. Discovery version ${VERSIONS.discovery}; API description ${VERSIONS.api}; payments ${VERSIONS.payments}. Paths carry no version segment.`,
    "",
  );

  out.push("## Paying as an agent (x402)", "");
  out.push(...x402Notes(ctx).map((n) => `- ${n}`), "");
  out.push("Steps:", "");
  ctx.x402.flow.forEach((step, i) => {
    out.push(`${i + 1}. ${step}`);
  });
  out.push("", "Rails:", "");
  for (const r of ctx.x402.rails) {
    out.push(
      `- ${r.id}: network ${r.network} (${networkLabel(r.network)}; x402 v1 name ${v1Name(r.network)}), asset ${r.asset}, decimals ${r.decimals}, payTo ${r.payTo ?? "(not configured)"}, configured ${r.configured}${r.configured ? "" : ` (needs ${r.missing.join(", ")})`}. ${r.note}`,
    );
    for (const proof of r.proofs) out.push(`  - proof: ${proof}`);
  }
  out.push("", `Client compatibility: ${ctx.x402.client_compat}`, "", `Caps: ${ctx.x402.client_cap}`, "");
  out.push("Paid operations:", "");
  for (const op of paidOperations(ctx)) {
    out.push(
      `- ${op.method} ${op.path}${op.served ? "" : " (not served by this deployment yet)"}: ${op.summary} Body ${op.body}. Pricing: ${op.pricing}.`,
    );
  }
  const examples = buyExamples(ctx, ctx.catalog.list().find((p) => p.kind === "olympiad") ?? ctx.catalog.list()[0]);
  if (examples.length > 0) {
    out.push("", "Examples:", "");
    for (const e of examples) out.push(`- ${e.title} (expect ${e.expect}):`, "", "  ```sh", `  ${e.curl}`, "  ```", "");
  }
  out.push("");

  out.push("## Paying as a human", "");
  out.push("Hosted card checkout:", "");
  cardFlow(ctx).forEach((step, i) => {
    out.push(`${i + 1}. ${step}`);
  });
  out.push("", `Payment methods: ${m.payment_methods.methods.join(", ")}. ${m.payment_methods.note}`, "");
  out.push("Manual crypto:", "");
  manualFlow(ctx).forEach((step, i) => {
    out.push(`${i + 1}. ${step}`);
  });
  out.push("", `Wire / invoice: ${m.wire_invoice}`, "", `${m.settlement.card} ${m.settlement.crypto}`, "");

  out.push("## Products", "");
  for (const p of ctx.catalog.list()) {
    const link = ctx.config.paymentLinks[p.sku];
    out.push(`### ${p.name} (${p.sku})`, "");
    out.push(`- Price: ${priceLine(p.amountCents)}; kind ${p.kind}.`);
    out.push(`- ${p.blurb}`);
    if (p.aliases.length > 0) out.push(`- Aliases: ${p.aliases.join(", ")}.`);
    out.push(
      `- Agents: POST /api/x402-products { "sku": "${p.sku}" }, then pay amount "${centsToAtomic(p.amountCents)}".`,
    );
    out.push(`- Humans: POST /api/checkout { "sku": "${p.sku}" }${link ? `, or the payment link ${link}` : ""}.`);
    if (overClientCap(ctx, p))
      out.push(`- Above the default $${caps(ctx).default_client_cap_usd} cap of stock x402 v2 clients.`);
    out.push("");
  }
  const retired = Object.entries(ctx.catalog.retiredTable());
  if (retired.length > 0) {
    out.push("Retired skus (they answer 410 Gone):", "");
    for (const [sku, why] of retired) out.push(`- ${sku}: ${why}`);
    out.push("");
  }

  out.push("## Payments matrix", "");
  out.push("| rail | audience | configured | missing settings |", "|---|---|---|---|");
  for (const r of m.rails) {
    out.push(`| ${r.id} | ${r.audience.join(", ")} | ${r.configured} | ${r.missing.join(", ") || "-"} |`);
  }
  out.push(
    "",
    `Preferred: human ${m.preferred.human}, agent ${m.preferred.agent}, enterprise ${m.preferred.enterprise}.`,
    "",
  );

  const s = m.suite_pricing;
  out.push("## Suite pricing", "");
  out.push(
    `Model ${s.model}: free up to ${s.free_cap_gb} GB, then ${s.usd_per_gb_after_free} USD per GB (bulk ${s.usd_per_gb_bulk}), minimum paid ${s.min_paid_usd} USD; reference first-paid egress ${s.first_paid_egress_ref_usd} USD per GB. Try gate: ${s.try_gate}.`,
    "",
  );

  out.push(...mcpSection(ctx));
  out.push("## Endpoints", "");
  for (const r of ctx.routes) out.push(`- ${r.method} ${r.url}${r.summary ? `: ${r.summary}` : ""}`);
  out.push("");

  out.push("## Discovery documents", "");
  for (const doc of DISCOVERY_DOCUMENTS) {
    const url = link(ctx, doc.path);
    if (url) out.push(mdLink(doc.title, url, doc.note));
  }
  out.push("");

  out.push("## Errors", "");
  out.push(
    "Every error is application/problem+json (RFC 9457) with type, title, status, detail and a stable machine code. Unknown sku: 404 unknown_sku with valid_skus; retired sku: 410 sku_retired; wrong method: 405 with Allow.",
    "",
  );
  out.push(
    "## Contact",
    "",
    ctx.config.contactEmail ? `E-mail ${ctx.config.contactEmail}.` : "No contact address is configured.",
    "",
  );
  return `${out.join("\n")}`;
}

function kv(key: string, value: string | number | boolean): string {
  return `${key}: ${value}`;
}

export function agentsTxt(ctx: DiscoveryContext): string {
  const h = x402Headers(ctx);
  const c = caps(ctx);
  const out: string[] = [
    `# agents.txt: ${SERVICE_NAME}. Plain-text twin of ${abs(ctx, "/agents.json")} (same facts, one per line).`,
    kv("name", SERVICE_NAME),
    kv("version", VERSIONS.discovery),
    kv("base_url", ctx.baseUrl),
    kv("protocol", `x402 (versions ${ctx.x402.versions.join(", ")})`),
    kv("payment_headers", h.payment.join(", ")),
    kv("required_header", h.required),
    kv("response_headers", h.response.join(", ")),
    kv("decimals", ctx.x402.decimals),
    kv("units_per_cent", "10000"),
    kv(
      "default_client_cap",
      `${c.default_client_cap_usd} USD (${c.default_client_cap_units} units); raise it to buy: ${c.skus_over_default_cap.join(", ") || "none"}`,
    ),
    "",
  ];
  for (const r of ctx.x402.rails) {
    out.push(
      kv(
        "rail",
        `${r.id} network=${r.network} caip2=${r.caip2} asset=${r.asset} payTo=${r.payTo ?? "-"} decimals=${r.decimals} configured=${r.configured}${r.configured ? "" : ` missing="${r.missing.join(", ")}"`}`,
      ),
    );
  }
  out.push("");
  for (const p of ctx.catalog.list()) {
    out.push(
      kv(
        "sku",
        `${p.sku} usd=${p.amountUsd} cents=${p.amountCents} units=${centsToAtomic(p.amountCents)} kind=${p.kind} over_cap=${overClientCap(ctx, p)} aliases=${p.aliases.join(",") || "-"} name="${p.name}"`,
      ),
    );
  }
  out.push("");
  ctx.x402.flow.forEach((step, i) => {
    out.push(kv(`flow.x402.${i + 1}`, step));
  });
  cardFlow(ctx).forEach((step, i) => {
    out.push(kv(`flow.card.${i + 1}`, step));
  });
  manualFlow(ctx).forEach((step, i) => {
    out.push(kv(`flow.manual.${i + 1}`, step));
  });
  out.push("");
  for (const op of paidOperations(ctx)) {
    out.push(kv("paid_operation", `${op.method} ${op.path} served=${op.served} pricing="${op.pricing}"`));
  }
  out.push("");
  const mcp = mcpFacts(ctx);
  if (mcp.endpoint) out.push(kv("mcp.endpoint", `${mcp.endpoint} transport=streamable-http`));
  out.push(kv("mcp.stdio", mcp.stdio));
  for (const t of mcp.tools) out.push(kv("mcp.tool", `${t.name} paid=${t.paid} description="${t.description}"`));
  out.push("");
  for (const doc of DISCOVERY_DOCUMENTS) {
    const url = link(ctx, doc.path);
    if (url) out.push(kv(`link.${doc.key}`, url));
  }
  if (ctx.config.contactEmail) out.push(kv("contact", ctx.config.contactEmail));
  return `${out.join("\n")}\n`;
}

import { z } from "zod";
import type { Catalog } from "../catalog/service.js";
import { type AdminGuard, adminActor } from "../http/admin-auth.js";
import { problemSchema } from "../http/problem.js";
import { idText, plainText } from "../http/text.js";
import type { App } from "../http/types.js";
import { escapeHtml, wantsHtml } from "../web/html.js";
import { renderPage } from "../web/layout.js";
import type { OrderService, OrderView } from "./service.js";
import type { OrderRow } from "./tables.js";

export const orderViewSchema = z.object({
  order_id: z.string(),
  sku: z.string(),
  name: z.string(),
  amount_cents: z.number().int(),
  amount_usd: z.string(),
  currency: z.string(),
  rail: z.string(),
  status: z.enum(["active", "revoked", "refunded"]),
  transaction: z.string().nullable(),
  email: z.string().nullable(),
  agent_id: z.string().nullable().describe("the buying agent's id as it gave it (`note: agent:<id>`); not verified"),
  agent_id_source: z
    .enum(["self_asserted"])
    .nullable()
    .describe("`self_asserted` whenever agent_id is set: the buyer stated it, nobody checked it"),
  license_key: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  revoke_reason: z.string().nullable(),
});

const entitlementSchema = z.object({
  order: orderViewSchema.omit({ email: true }),
  grants: z.string(),
  product: z.object({ sku: z.string(), name: z.string(), kind: z.string() }),
  links: z.record(z.string(), z.string()),
  receipt: z
    .string()
    .describe(
      "the order's receipt signed by the service: compact JWS (EdDSA), keys at /.well-known/jwks.json (docs/receipts.md)",
    ),
});

function accessHtml(
  view: OrderView,
  grants: string,
  links: Record<string, string>,
  receipt: { jws: string; download: string },
): string {
  const e = escapeHtml;
  // labels and human pages for the links of an entitlement (the JSON answer's `links`)
  const ACCESS_LINKS: Record<string, { label: string; page?: { href: string; label: string } }> = {
    catalog: { label: "Product record (JSON)" },
    olympiad: {
      label: "Your olympiad entry (JSON)",
      page: { href: "/olympiad", label: "Go to the olympiad" },
    },
    license: { label: "Licence check (JSON)" },
  };
  const rows: [string, string, string][] = [
    ["Order", view.order_id, "order-id"],
    ["Product", `${view.name} (${view.sku})`, "product"],
    ["Paid", `$${view.amount_usd} via ${view.rail}`, "paid"],
    ["Since", view.created_at, "since"],
  ];
  if (view.transaction) rows.push(["Transaction", view.transaction, "transaction"]);
  if (view.agent_id) rows.push(["Agent (self-asserted)", view.agent_id, "agent-id"]);
  const active = view.status === "active";
  const status = active ? '<p class="badge badge-ok">Active</p>' : `<p class="badge badge-bad">${e(view.status)}</p>`;
  const pages = Object.keys(links)
    .map((k) => ACCESS_LINKS[k]?.page)
    .filter((p): p is { href: string; label: string } => p !== undefined);
  const linkList = Object.entries(links)
    .map(
      ([k, v]) =>
        `<li><a href="${e(v)}">${e(ACCESS_LINKS[k]?.label ?? k)}</a> <span class="small muted mono">${e(v)}</span></li>`,
    )
    .join("");
  return renderPage({
    title: `Access: ${view.name}`,
    description: `Your ${view.name} order: what it grants and how to use it.`,
    path: "/access",
    body: `<section class="hero result">
${status}
<h1>Your access: ${e(view.name)}</h1>
<p class="lead">This order grants <strong id="grants">${e(grants)}</strong>.</p>
</section>
${active ? "" : `<div class="notice notice-error" role="alert"><p>This order is ${e(view.status)}${view.revoke_reason ? `: ${e(view.revoke_reason)}` : ""}; it no longer grants access.</p></div>`}
${
  view.license_key
    ? `<div class="card licence"><h2>Your licence key</h2><p class="licence-key mono" id="license-key">${e(view.license_key)}</p><p class="small muted">Put it in your product's configuration; it identifies this order.</p></div>`
    : ""
}
<div class="card result-card">
<h2>Order</h2>
<dl class="kv receipt">${rows.map(([k, v, id]) => `<dt>${e(k)}</dt><dd class="mono" id="${e(id)}">${e(v)}</dd>`).join("")}</dl>
</div>
${pages.length > 0 ? `<p class="cluster">${pages.map((p) => `<a class="btn btn-primary" href="${e(p.href)}">${e(p.label)}</a>`).join("")}</p>` : ""}
${linkList ? `<h2>Links</h2><ul class="links">${linkList}</ul>` : ""}
<div class="card result-card" id="receipt-card">
<h2>Signed receipt</h2>
<p class="small muted">Proof of this purchase signed by the service (JWS, Ed25519): item, amount, rail, transaction and order. Anyone can check it offline against <a href="/.well-known/jwks.json">/.well-known/jwks.json</a>, e.g. with <code>labphi verify-receipt</code>. It does not open this page.</p>
<textarea id="receipt" class="mono" readonly rows="6" spellcheck="false" aria-label="Signed receipt (compact JWS)">${e(receipt.jws)}</textarea>
<p><a class="btn" id="receipt-download" href="${e(receipt.download)}" download>Download receipt (.jws)</a></p>
</div>
<div class="notice notice-warn"><p><strong>Keep this address private</strong>: anyone holding it can open this page. Agents get the same as JSON with <code>Accept: application/json</code>.</p></div>`,
  });
}

export function orderRoutes(
  app: App,
  deps: {
    orders: OrderService;
    catalog: Catalog;
    requireAdmin: AdminGuard;
    baseUrl: string;
    /** The order's signed receipt (src/receipts/facts.ts `orderReceipts`). */
    receipt: (order: OrderRow) => string;
  },
) {
  const { orders, catalog } = deps;

  app.get(
    "/access/:token",
    {
      schema: {
        summary: "Open a purchased entitlement (JSON for agents, HTML for browsers)",
        tags: ["orders"],
        params: z.object({ token: z.string().min(16).max(128) }),
        response: { 200: entitlementSchema, 404: problemSchema, 410: problemSchema },
      },
    },
    async (request, reply) => {
      const order = await orders.open(request.params.token);
      const view = orders.view(order);
      const product = catalog.resolve(order.sku);
      const links: Record<string, string> = { catalog: `${deps.baseUrl}/api/x402-products?sku=${product.sku}` };
      if (product.kind === "olympiad") links.olympiad = `${deps.baseUrl}/api/olympiad?view=entry`;
      if (view.license_key) links.license = `${deps.baseUrl}/api/licenses/${view.license_key}`;
      reply.header("Cache-Control", "private, no-store");
      const receipt = deps.receipt(order);
      if (wantsHtml(request.headers.accept)) {
        const download = `/access/${encodeURIComponent(request.params.token)}/receipt.jws`;
        return reply
          .type("text/html; charset=utf-8")
          .serializer(String)
          .send(accessHtml(view, product.grants, links, { jws: receipt, download }) as never);
      }
      const { email: _email, ...publicView } = view;
      return {
        order: publicView,
        grants: product.grants,
        product: { sku: product.sku, name: product.name, kind: product.kind },
        links,
        receipt,
      };
    },
  );

  app.post(
    "/api/admin/orders/:id/revoke",
    {
      preHandler: (request) => deps.requireAdmin(request),
      schema: {
        summary: "Revoke an order's entitlement (operator)",
        tags: ["admin"],
        security: [{ adminBearer: [] }],
        params: z.object({ id: idText(64) }),
        body: z.object({ reason: plainText(500).optional() }).nullish(),
        response: { 200: orderViewSchema, 401: problemSchema, 404: problemSchema, 503: problemSchema },
      },
    },
    async (request) => {
      const order = await orders.revoke(
        request.params.id,
        adminActor(request),
        request.body?.reason ?? "revoked by operator",
      );
      return orders.view(order);
    },
  );
}

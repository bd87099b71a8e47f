import { z } from "zod";
import type { Catalog } from "../catalog/service.js";
import { type AdminGuard, adminActor } from "../http/admin-auth.js";
import { problemSchema } from "../http/problem.js";
import { idText, plainText } from "../http/text.js";
import type { App } from "../http/types.js";
import { escapeHtml, wantsHtml } from "../web/html.js";
import { renderPage } from "../web/layout.js";
import type { OrderService, OrderView } from "./service.js";

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
});

function accessHtml(view: OrderView, grants: string, links: Record<string, string>): string {
  const rows: [string, string][] = [
    ["Order", view.order_id],
    ["Product", `${view.name} (${view.sku})`],
    ["Paid", `$${view.amount_usd} via ${view.rail}`],
    ["Grants", grants],
  ];
  if (view.license_key) rows.push(["Licence key", view.license_key]);
  if (view.transaction) rows.push(["Transaction", view.transaction]);
  if (view.agent_id) rows.push(["Agent (self-asserted)", view.agent_id]);
  const linkList = Object.entries(links)
    .map(([k, v]) => `<li><a href="${escapeHtml(v)}">${escapeHtml(k)}</a></li>`)
    .join("");
  return renderPage({
    title: `Access: ${view.name}`,
    description: "Your purchase and how to use it.",
    path: "/access",
    body: `<h1>Your access: ${escapeHtml(view.name)}</h1>
<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd class="mono">${escapeHtml(v)}</dd>`).join("")}</dl>
${linkList ? `<h2>Links</h2><ul>${linkList}</ul>` : ""}
<p class="note">Keep this address private: anyone holding it can open this page.</p>`,
  });
}

export function orderRoutes(
  app: App,
  deps: { orders: OrderService; catalog: Catalog; requireAdmin: AdminGuard; baseUrl: string },
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
      if (wantsHtml(request.headers.accept)) {
        return reply
          .type("text/html; charset=utf-8")
          .serializer(String)
          .send(accessHtml(view, product.grants, links) as never);
      }
      const { email: _email, ...publicView } = view;
      return {
        order: publicView,
        grants: product.grants,
        product: { sku: product.sku, name: product.name, kind: product.kind },
        links,
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

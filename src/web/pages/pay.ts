import type { FastifyReply } from "fastify";
import { z } from "zod";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { Problem, problemSchema } from "../../http/problem.js";
import { emailText, multiLineText, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { cardRailsConfigured } from "../../payments/card/rails.js";
import type { CardService, SessionStatus } from "../../payments/card/service.js";
import { manualRails } from "../../payments/manual/rails.js";
import type { ClaimService } from "../../payments/manual/service.js";
import { escapeHtml as e } from "../html.js";
import { renderPage } from "../layout.js";

/**
 * Human purchase pages: /pay?sku= (starts the hosted checkout), /pay/success (order and access
 * URL once the webhook has landed, or the pending bank debit), /pay/cancel (the other rails).
 * Forms post url-encoded bodies; the pages never need JavaScript. Errors are problem+json
 * like everywhere else (the forms' own checks catch the common mistakes first).
 */
export function payPages(
  app: App,
  deps: { catalog: Catalog; config: Config; card: CardService; claims: ClaimService },
) {
  const { catalog, config, card, claims } = deps;
  const html = { 200: z.string(), 303: z.string(), 400: problemSchema, 404: problemSchema, 410: problemSchema };

  const send = (reply: FastifyReply, status: number, title: string, body: string) =>
    reply
      .code(status)
      .type("text/html; charset=utf-8")
      .header("Cache-Control", "no-store")
      .serializer(String)
      .send(renderPage({ title, description: `${title}: Lab Phi`, path: "/pay", body }) as never);

  const price = (p: Product) => `$${p.amountUsd}`;

  app.get(
    "/pay",
    {
      schema: {
        summary: "Buy page: /pay?sku=<sku> starts a hosted card checkout (HTML); without sku lists products",
        tags: ["web"],
        querystring: z.object({ sku: plainText(100).optional(), email: emailText().optional() }),
        response: html,
      },
    },
    async (request, reply) => {
      const { sku } = request.query;
      if (!sku) {
        const items = catalog
          .list()
          .map((p) => `<li><a href="/pay?sku=${e(p.sku)}">${e(p.name)}</a> · ${e(price(p))}</li>`)
          .join("");
        return send(reply, 200, "Buy", `<h1>Buy</h1><ul>${items}</ul>`);
      }
      const product = catalog.resolve(sku);
      const rails = cardRailsConfigured(config);
      const link = config.paymentLinks[product.sku];
      const form = rails.checkout
        ? `<form method="post" action="/pay" id="checkout">
<input type="hidden" name="sku" value="${e(product.sku)}">
<p><label>E-mail for the receipt and access link<br><input type="email" name="email" required maxlength="254" value="${e(request.query.email ?? "")}"></label></p>
<p><button type="submit">Pay ${e(price(product))} by card</button></p>
<p class="note">Cards with phone wallets, Link, bank debit and other methods are offered when eligible for this amount.</p>
</form>`
        : `<p class="bad">Card checkout is not configured on this server.</p>`;
      return send(
        reply,
        200,
        `Buy ${product.name}`,
        `<h1>${e(product.name)}</h1>
<p>${e(product.blurb)}</p>
<dl><dt>Price</dt><dd>${e(price(product))} (USD)</dd><dt>You get</dt><dd>${e(product.grants)}</dd></dl>
${form}
${link ? `<p>Or use the static <a href="${e(link)}">payment link</a>.</p>` : ""}
<p><a href="/pay/cancel?sku=${e(product.sku)}">Other ways to pay</a> (crypto transfer, wire invoice, x402 for agents)</p>`,
      );
    },
  );

  app.get(
    "/pay/success",
    {
      schema: {
        summary: "After the hosted checkout: the order and access URL once paid, or why it is still pending (HTML)",
        tags: ["web"],
        querystring: z.object({ session_id: plainText(255).optional() }),
        response: html,
      },
    },
    async (request, reply) => {
      const id = request.query.session_id;
      if (!id) throw new Problem(400, "session_id_required", "The session_id is missing from the address.");
      const status = await card.status(id);
      return send(reply, 200, "Your purchase", successBody(status, catalog));
    },
  );

  app.get(
    "/pay/cancel",
    {
      schema: {
        summary: "Checkout cancelled: the other ways to pay for the sku (HTML)",
        tags: ["web"],
        querystring: z.object({ sku: plainText(100).optional() }),
        response: html,
      },
    },
    async (request, reply) => {
      const product = request.query.sku ? catalog.resolve(request.query.sku) : undefined;
      return send(reply, 200, "Other ways to pay", cancelBody(product, config));
    },
  );

  // Url-encoded forms, parsed only inside this scope.
  app.register(async (scope) => {
    scope.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    // Form fields are one line each, except the billing address (a textarea: CR LF, tab).
    const line = plainText(2000).optional();
    const form = z
      .object({ sku: line, email: line, rail: line, tx: line, company: line, currency: line })
      .extend({ billing_address: multiLineText(2000).optional() })
      .catchall(plainText(2000));

    scope.post(
      "/pay",
      {
        schema: {
          summary: "Form target of /pay: creates the checkout session and redirects (303) to Stripe",
          tags: ["web"],
          body: form,
          response: { ...html, 502: problemSchema, 503: problemSchema },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, string>;
        const session = await card.createCheckout({ sku: body.sku ?? "", email: body.email ?? "", rail: "stripe" });
        return reply.code(303).header("Location", session.url).type("text/plain").send("redirecting to checkout");
      },
    );

    scope.post(
      "/pay/claim",
      {
        schema: {
          summary: "Form target of /pay/cancel: records a manual-payment claim and shows the next steps",
          tags: ["web"],
          body: form,
          response: { ...html, 409: problemSchema, 503: problemSchema },
        },
      },
      async (request, reply) => {
        const b = request.body as Record<string, string>;
        const r = await claims.submit({
          sku: b.sku ?? "",
          email: b.email ?? "",
          rail: b.rail ?? "",
          tx: b.tx,
          company: b.company,
          billing_address: b.billing_address,
          currency: b.currency,
        });
        return send(
          reply,
          201,
          "Claim recorded",
          `<h1>Claim recorded</h1><dl><dt>Claim</dt><dd class="mono" id="claim-id">${e(r.claim_id)}</dd><dt>Amount</dt><dd>$${e(r.amount_usd)}</dd>${
            r.terms ? `<dt>Terms</dt><dd>${e(r.terms)}</dd>` : ""
          }</dl><ol>${r.next_steps.map((s) => `<li>${e(s)}</li>`).join("")}</ol>${
            r.mailto ? `<p><a href="${e(r.mailto)}">E-mail the operator about this claim</a></p>` : ""
          }<p>Status: <a href="${e(r.status_url)}">${e(r.status_url)}</a></p>`,
        );
      },
    );
  });
}

function successBody(s: SessionStatus, catalog: Catalog): string {
  const name = catalog.find(s.sku)?.name ?? s.sku;
  if (s.status === "paid" && s.order) {
    const o = s.order;
    const rows: [string, string][] = [
      ["Order", o.order_id],
      ["Product", `${name} (${o.sku})`],
      ["Paid", `$${o.amount_usd}`],
      ["Status", o.status],
    ];
    if (o.license_key) rows.push(["Licence key", o.license_key]);
    return `<h1>Thank you: payment received</h1>
<dl>${rows.map(([k, v]) => `<dt>${e(k)}</dt><dd class="mono">${e(v)}</dd>`).join("")}</dl>
${
  o.status === "active" && s.access_url
    ? `<p><a class="button" id="access-url" href="${e(s.access_url)}">Open your access</a></p><p class="note">Keep this address private: <span class="mono">${e(s.access_url)}</span></p>`
    : `<p class="bad">This order is ${e(o.status)}.</p>`
}`;
  }
  if (s.status === "awaiting_payment") {
    return `<meta http-equiv="refresh" content="15">
<h1>Payment pending</h1>
<p id="pending">${e(s.pending_reason)}</p>
<p class="note">Checkout session <span class="mono">${e(s.session_id)}</span> · ${e(name)}. You can close this page: the access link is also e-mailed by the operator, and this address keeps working.</p>`;
  }
  if (s.status === "open") {
    return `<meta http-equiv="refresh" content="3">
<h1>Confirming your payment…</h1>
<p id="confirming">We have not received Stripe's confirmation yet. This page refreshes by itself.</p>`;
  }
  const why =
    s.status === "failed"
      ? "The payment failed (for example a bank debit that was declined)."
      : s.status === "expired"
        ? "The checkout session expired before it was paid."
        : "The payment could not be matched to the product; the operator has been notified.";
  return `<h1>Not paid</h1><p class="bad">${e(why)}</p>
<p><a href="/pay?sku=${e(s.sku)}">Try again</a> · <a href="/pay/cancel?sku=${e(s.sku)}">Other ways to pay</a></p>`;
}

function cancelBody(product: Product | undefined, config: Config): string {
  const sku = product?.sku ?? "";
  const intro = product
    ? `<p>The card checkout for <strong>${e(product.name)}</strong> ($${e(product.amountUsd)}) was cancelled; nothing was charged.</p>
<p><a class="button" href="/pay?sku=${e(sku)}">Try the card checkout again</a></p>`
    : "<p>Nothing was charged.</p>";
  const link = product ? config.paymentLinks[product.sku] : undefined;
  const rails = manualRails(config).filter((r) => r.configured);
  const items = rails
    .map(
      (r) =>
        `<li id="rail-${e(r.id)}"><strong>${e(r.name)}</strong>${r.pay_to ? ` · pay to <span class="mono">${e(r.pay_to)}</span>` : ""}${
          r.terms ? ` · terms ${e(r.terms)}` : ""
        }<br><span class="note">${e(r.how)}</span></li>`,
    )
    .join("");
  const options = rails.map((r) => `<option value="${e(r.id)}">${e(r.name)}</option>`).join("");
  const claimForm =
    product && rails.length > 0
      ? `<h2>Claim a transfer or request an invoice</h2>
<form method="post" action="/pay/claim" id="claim">
<input type="hidden" name="sku" value="${e(sku)}">
<p><label>Rail<br><select name="rail">${options}</select></label></p>
<p><label>E-mail<br><input type="email" name="email" required maxlength="254"></label></p>
<p><label>Transaction signature or hash (crypto)<br><input name="tx" maxlength="200"></label></p>
<p><label>Company legal name (invoice)<br><input name="company" maxlength="200"></label></p>
<p><label>Billing address (invoice)<br><textarea name="billing_address" maxlength="1000"></textarea></label></p>
<p><label>Invoice currency<br><input name="currency" value="USD" maxlength="3"></label></p>
<p><button type="submit">Send claim</button></p>
</form>`
      : "";
  return `<h1>Other ways to pay</h1>
${intro}
${link ? `<p>Static card <a href="${e(link)}">payment link</a> for this product.</p>` : ""}
<h2>Manual rails</h2>
<ul>${items || "<li>No manual rail is configured.</li>"}</ul>
${claimForm}
<h2>Agents</h2>
<p>Agents pay with x402 (USDC on Base or Solana): <code>POST /api/x402-products { "sku": "${e(sku || "<sku>")}" }</code>. All rails: <a href="/api/payments">/api/payments</a>.</p>`;
}

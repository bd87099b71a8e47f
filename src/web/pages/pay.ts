import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { Problem, problemSchema } from "../../http/problem.js";
import { emailText, multiLineText, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import type { CardService } from "../../payments/card/service.js";
import type { ClaimService } from "../../payments/manual/service.js";
import { wantsHtml } from "../html.js";
import { renderPage, sendPage } from "../layout.js";
import { catalogBody } from "./pay-catalog.js";
import { price } from "./pay-facts.js";
import { cancelBody, type FormError, type FormValues, productBody } from "./pay-product.js";
import { claimPage, type ResultPage, successPage } from "./pay-results.js";

/**
 * Human purchase pages: /pay (the catalog), /pay?sku= (a product and its card form), /pay/success
 * (order and access URL once the webhook has landed, or the pending bank debit), /pay/cancel (the
 * other rails). Forms post url-encoded bodies; no page needs JavaScript. A form that fails in a
 * browser comes back as the same page with the problem's words inline (status of the problem);
 * anything else a browser gets wrong is the HTML problem page (src/web/problem-page.ts), and
 * clients asking for JSON get problem+json as everywhere.
 */
export function payPages(
  app: App,
  deps: { catalog: Catalog; config: Config; card: CardService; claims: ClaimService },
) {
  const { catalog, config, card, claims } = deps;
  const html = { 200: z.string(), 303: z.string(), 400: problemSchema, 404: problemSchema, 410: problemSchema };

  /** Pages that show a secret (an access URL, a job token) are never stored by a cache. */
  const sendPrivate = (reply: FastifyReply, status: number, page: ResultPage) =>
    reply
      .code(status)
      .type("text/html; charset=utf-8")
      .header("Cache-Control", "no-store")
      .serializer(String)
      .send(renderPage({ ...page, path: "/pay" }) as never);

  const productPage = (reply: FastifyReply, status: number, product: Product, body: string) =>
    sendPage(reply, status, {
      title: `Buy ${product.name}`,
      description: `${product.name}: ${price(product)}. ${product.blurb}`,
      path: "/pay",
      body,
    });

  /** A Problem from a form, when the browser should see it inline on the product's page. */
  const inline = (request: FastifyRequest, err: unknown, sku: string | undefined) => {
    if (!(err instanceof Problem) || !wantsHtml(request.headers.accept) || !sku) return undefined;
    const product = catalog.find(sku);
    if (!product) return undefined;
    const body = err.body(request.url.split("?")[0]) as { detail?: string };
    const error: FormError = { status: err.status, detail: body.detail ?? err.title, code: err.code };
    return { product, error };
  };

  app.get(
    "/pay",
    {
      schema: {
        summary: "Buy page: the catalog by kind (HTML); /pay?sku=<sku> shows the product and its card checkout form",
        tags: ["web"],
        querystring: z.object({ sku: plainText(100).optional(), email: emailText().optional() }),
        response: html,
      },
    },
    async (request, reply) => {
      const { sku } = request.query;
      if (!sku) {
        return sendPage(reply, 200, {
          title: "Buy",
          description:
            "The Lab Phi catalog: licences, services, support and the olympiad entry, with prices and every way to pay.",
          path: "/pay",
          body: catalogBody(catalog, config),
        });
      }
      const product = catalog.resolve(sku);
      return productPage(reply, 200, product, productBody(product, config, { email: request.query.email }));
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
      // a paid suite quote: its job (and the token that opens it) lives on the jobs page
      if (status.status === "paid" && status.job) {
        return reply
          .code(303)
          .header("Location", `/jobs/paid?session_id=${encodeURIComponent(id)}`)
          .header("Cache-Control", "no-store")
          .type("text/plain")
          .send("your suite job is on the jobs page");
      }
      return sendPrivate(reply, 200, successPage(status, catalog));
    },
  );

  app.get(
    "/pay/cancel",
    {
      schema: {
        summary: "Checkout cancelled: the other ways to pay for the sku (HTML)",
        tags: ["web"],
        querystring: z.object({ sku: plainText(100).optional(), quote: plainText(200).optional() }),
        response: html,
      },
    },
    async (request, reply) => {
      const product = request.query.sku ? catalog.resolve(request.query.sku) : undefined;
      return sendPage(reply, 200, {
        title: "Other ways to pay",
        description: "The checkout was cancelled and nothing was charged: the other ways to pay.",
        path: "/pay",
        body: cancelBody(product, config, request.query.quote !== undefined),
      });
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
        try {
          const session = await card.createCheckout({ sku: body.sku ?? "", email: body.email ?? "", rail: "stripe" });
          return reply.code(303).header("Location", session.url).type("text/plain").send("redirecting to checkout");
        } catch (err) {
          const shown = inline(request, err, body.sku);
          if (!shown) throw err;
          if (err instanceof Problem) for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
          return productPage(
            reply,
            shown.error.status,
            shown.product,
            productBody(shown.product, config, { email: body.email, checkoutError: shown.error }),
          );
        }
      },
    );

    scope.post(
      "/pay/claim",
      {
        schema: {
          summary: "Form target of the claim form (product and cancel pages): records a manual-payment claim",
          tags: ["web"],
          body: form,
          response: { ...html, 201: z.string(), 409: problemSchema, 503: problemSchema },
        },
      },
      async (request, reply) => {
        const b = request.body as Record<string, string>;
        try {
          const r = await claims.submit({
            sku: b.sku ?? "",
            email: b.email ?? "",
            rail: b.rail ?? "",
            tx: b.tx,
            company: b.company,
            billing_address: b.billing_address,
            currency: b.currency,
          });
          return sendPrivate(reply, 201, claimPage(r));
        } catch (err) {
          const shown = inline(request, err, b.sku);
          if (!shown) throw err;
          const values: FormValues = b;
          return productPage(
            reply,
            shown.error.status,
            shown.product,
            productBody(shown.product, config, { claimError: shown.error, claim: values }),
          );
        }
      },
    );
  });
}

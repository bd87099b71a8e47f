import { z } from "zod";
import type { Config } from "../../config.js";
import { Problem, problemSchema } from "../../http/problem.js";
import { emailText, plainText } from "../../http/text.js";
import type { App } from "../../http/types.js";
import { freeTermsText, MAX_JOB_BYTES_NUMBER } from "../../jobs/pricing.js";
import { SUITE_DATA_CLASSES, SUITE_LEVELS, SUITE_OPS, SUITE_PRODUCTS } from "../../jobs/quotes/schemas.js";
import { DEFAULT_SUITE_LEVEL } from "../../jobs/throughput.js";
import { cardRailsConfigured } from "../../payments/card/rails.js";
import type { CardService } from "../../payments/card/service.js";
import { escapeHtml as e } from "../html.js";
import { renderPage, sendPage } from "../layout.js";
import {
  jobPanel,
  levelsSection,
  myJobsSection,
  paidBody,
  previewSection,
  pricingSection,
  quoteForm,
  stepsList,
} from "./jobs-render.js";
import { noRailsNotice, type SaleWays, saleWays } from "./sell-facts.js";

/** How the part above the free allowance is paid here, naming only what can settle. */
function paidJobsText(w: SaleWays): string {
  if (!w.suite) return "paid jobs above that cannot be bought on this server yet";
  const ways = [w.checkout ? "by card" : "", w.x402.length > 0 ? "with x402 for agents (POST /api/x402-suite)" : ""];
  return `above that, pay per GB ${ways.filter(Boolean).join(" or ")}`;
}

/**
 * The suite jobs pages (issue #13):
 * - `GET /jobs`: pricing (free cap, per-GB prices), what each level costs in time, the quote form
 *   (a plain GET form gives a price preview without JavaScript; the script quotes, starts or pays,
 *   uploads with tus, watches and downloads through the JSON API), the job panel, and "Your jobs"
 *   (the jobs this browser keeps, with cancel and delete; needs the script).
 * - `GET /jobs/paid?session_id=`: where the card checkout of a quote returns: the job id and its
 *   token, shown for keeping.
 * The job token never appears in an address: the API takes it as `Authorization: Bearer`.
 */
export function jobsPages(app: App, deps: { config: Config; card: CardService }) {
  const { config, card } = deps;
  const blankAsAbsent = (v: unknown) => (v === "" ? undefined : v);
  const html = { 200: z.string(), 400: problemSchema, 404: problemSchema };

  app.get(
    "/jobs",
    {
      schema: {
        summary: "Suite jobs page: pricing, quote, start or pay, resumable upload, progress and download (HTML)",
        description:
          "With `bytes` (and optionally op, level…) the page also shows a price preview computed by the pricing module (nothing stored): the plain form's answer.",
        tags: ["web"],
        querystring: z.object({
          product: z.preprocess(blankAsAbsent, z.enum(SUITE_PRODUCTS).optional()),
          dataClass: z.preprocess(
            blankAsAbsent,
            z.enum(SUITE_DATA_CLASSES as unknown as [string, ...string[]]).optional(),
          ),
          op: z.preprocess(blankAsAbsent, z.enum(SUITE_OPS).optional()),
          level: z.preprocess(blankAsAbsent, z.enum(SUITE_LEVELS).optional()),
          bytes: z.preprocess(blankAsAbsent, z.coerce.number().int().min(1).max(MAX_JOB_BYTES_NUMBER).optional()),
          email: z.preprocess(blankAsAbsent, emailText().optional()),
          checkout: z.preprocess(blankAsAbsent, z.enum(["cancelled"]).optional()),
        }),
        response: html,
      },
    },
    async (request, reply) => {
      const q = request.query;
      const checkout = cardRailsConfigured(config).checkout;
      const preview =
        q.bytes !== undefined
          ? previewSection(
              { bytes: q.bytes, op: q.op ?? "compress", level: q.level ?? DEFAULT_SUITE_LEVEL },
              config.suiteFree.anonBytesPerDay,
              checkout,
            )
          : "";
      const cancelled =
        q.checkout === "cancelled"
          ? `<div class="notice notice-warn" role="status" id="checkout-cancelled"><p>The card checkout was cancelled: nothing was charged. Quote again to pay or to start a free job.</p></div>`
          : "";
      return sendPage(reply, 200, {
        title: "Suite jobs",
        description: `Compress, decompress or round-trip large files on Lab Phi's workers: free up to ${freeTermsText(config.suiteFree.anonBytesPerDay)}, then per GB (10^9 bytes); resumable uploads, progress and download.`,
        path: "/jobs",
        scripts: ["jobs"],
        body: `<section class="hero">
<h1>Suite jobs</h1>
<p class="lead">Compress, decompress or round-trip files of any size on our workers. Free up to ${freeTermsText(config.suiteFree.anonBytesPerDay)} (GB = 10^9 bytes); ${e(paidJobsText(saleWays(config)))}.</p>
${stepsList()}
</section>
${noRailsNotice(config)}
${cancelled}
<div class="jobs-layout">
<div class="stack">
${quoteForm(q, checkout, saleWays(config).x402.length > 0)}
${preview}
${jobPanel()}
${myJobsSection()}
</div>
<div class="stack">
${pricingSection(config.suiteFree.anonBytesPerDay, checkout)}
${levelsSection()}
</div>
</div>`,
      });
    },
  );

  app.get(
    "/jobs/paid",
    {
      schema: {
        summary: "Return page of a quote's card checkout: the job id and its token to keep, or why not yet (HTML)",
        tags: ["web"],
        querystring: z.object({ session_id: plainText(255).optional() }),
        response: html,
      },
    },
    async (request, reply) => {
      const id = request.query.session_id;
      if (!id) throw new Problem(400, "session_id_required", "The session_id is missing from the address.");
      const status = await card.status(id);
      const { body, refresh } = paidBody(status);
      // The page carries the job token: never stored by a cache or sent onwards as a referrer.
      const page = renderPage({
        title: "Your suite job",
        description: "Your paid suite job: its id and the token that opens it.",
        path: "/jobs/paid",
        scripts: ["jobs"],
        body,
        ...(refresh ? { head: `<meta http-equiv="refresh" content="${refresh}">` } : {}),
      });
      return reply
        .code(200)
        .type("text/html; charset=utf-8")
        .header("Cache-Control", "no-store")
        .header("Referrer-Policy", "no-referrer")
        .serializer(String)
        .send(page as never);
    },
  );
}

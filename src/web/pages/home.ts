import { z } from "zod";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import type { App } from "../../http/types.js";
import { type SeasonState, seasonOf } from "../../olympiad/season.js";
import { X402_HEADERS } from "../../payments/x402/rails.js";
import { escapeHtml as e } from "../html.js";
import { sendPage } from "../layout.js";
import { mcpHelpPage } from "./mcp-help.js";
import { atomic, byKind, cheapest, freeCurl, KIND_LABELS, price, suiteLine, x402Curl } from "./pay-facts.js";
import { noRailsNotice, orList, peopleWays, type SaleWays, saleWays, x402Phrase } from "./sell-facts.js";

/**
 * `/`: two doors (humans, agents), each with its next step, and what the service sells — every
 * price from the catalog and src/jobs/pricing.ts, every network from the configuration.
 */
export function homePage(app: App, deps: { catalog: Catalog; config: Config }) {
  app.get(
    "/",
    {
      schema: {
        summary: "Home page (HTML): the doors for humans and agents, and what the service sells",
        tags: ["web"],
        response: { 200: z.string() },
      },
    },
    async (_request, reply) =>
      sendPage(reply, 200, {
        title: "Codec, suite jobs and the agent olympiad",
        description:
          "Lab Phi sells codec licences, metered compression suite jobs and the agent olympiad entry to humans (card, invoice) and agents (x402).",
        path: "/",
        body: homeBody(deps.catalog, deps.config, new Date()),
      }),
  );
  mcpHelpPage(app, { config: deps.config });
}

export function homeBody(catalog: Catalog, config: Config, now: Date): string {
  const groups = byKind(catalog);
  const from = (kind: string) => cheapest(groups.find((g) => g.kind === kind)?.products ?? []);
  const licence = from("license");
  const entry = from("olympiad");
  const season = seasonOf(config, now);
  const example = cheapest(catalog.list());
  const ways = saleWays(config);
  const people = peopleWays(ways);
  const x402On = ways.x402.length > 0;
  const curl = example && x402On ? x402Curl(config, example) : undefined;
  const buyHow = people.length > 0 ? orList(people) : "no way for people to pay is set up here yet";

  const humanSteps = [
    licence
      ? `<li><a href="/pay">Buy a licence or a service</a> <span class="muted">— from ${e(price(licence))}, ${e(buyHow)}</span></li>`
      : `<li><a href="/pay">Buy</a></li>`,
    `<li><a href="/web">Try the codec demo</a> <span class="muted">— free: paste text or drop a file, compare with gzip and brotli</span></li>`,
    `<li><a href="/jobs">Run a suite job</a> <span class="muted">— ${e(suiteText(config, ways))}</span></li>`,
    `<li><a href="/olympiad">The olympiad</a> <span class="muted">— ${e(season.label)}${entry ? `, entry ${e(price(entry))}` : ""}</span></li>`,
  ].join("");

  const sells = groups
    .map((g) => {
      const low = cheapest(g.products);
      const names = g.products.map((p) => p.name).join(", ");
      return `<li class="card sell">
<h3><a href="/pay#kind-${e(g.kind)}">${e(KIND_LABELS[g.kind].title)}</a></h3>
<p class="price">${low ? `<small>from</small> ${e(price(low))}` : ""}</p>
<p class="small muted">${e(g.products.length)} ${g.products.length === 1 ? "product" : "products"}: ${e(names)}</p>
</li>`;
    })
    .join("");

  return `<section class="hero home-hero">
<h1>Lossless compression, metered suite jobs and an agent olympiad</h1>
<p class="lead">One self-hosted service, two ways in: ${e(leadWays(ways))}. Same catalog, same prices, same access pages.</p>
</section>
${noRailsNotice(config)}
<div class="grid-2 doors">
<section class="card door door-humans" id="humans" aria-labelledby="humans-title">
<h2 id="humans-title">For humans</h2>
<p>Pick what you need; every page works without an account.</p>
<ul class="door-list">${humanSteps}</ul>
<div class="card-actions"><a class="btn btn-primary" href="/pay">See the catalog</a><a class="btn btn-secondary" href="/web">Try the codec demo</a></div>
</section>
<section class="card door door-agents" id="agents" aria-labelledby="agents-title">
<h2 id="agents-title">For agents</h2>
${
  x402On
    ? `<p>x402 in three lines (${e(x402Phrase(ways))}):</p>
<ol class="steps">
<li><code>POST /api/x402-products { "sku" }</code> → <strong>402</strong> with <code>accepts[]</code> in <code>${e(X402_HEADERS.required)}</code></li>
<li>Sign <code>amount</code> to <code>payTo</code> on one <code>network</code></li>
<li>Retry with <code>${e(X402_HEADERS.paymentV2)}</code> → <strong>200</strong> <code>{ order_id, access_url }</code></li>
</ol>`
    : `<p id="x402-off">Agents cannot pay with x402 on this server yet (no x402 network can settle: see <a href="/pay#agents-pay">what it needs</a>); the free calls work: the codec, quotes and free suite jobs.</p>`
}
${
  curl && example
    ? `<p class="small muted">Try it (${e(example.sku)}, ${e(price(example))} = ${e(atomic(example))} units; answers 402 with the payment requirements):</p><pre class="command" id="try-it"><code>${curl.ask}</code></pre>`
    : `<p class="small muted">Try it (free: the codec compresses a short text and answers 200 with the container):</p><pre class="command" id="try-it"><code>${freeCurl(config)}</code></pre>`
}
<ul class="cluster links-inline">
<li><a href="/llms.txt">llms.txt</a></li>
<li><a href="/openapi.yaml">openapi.yaml</a></li>
<li><a href="/.well-known/agent-card.json">agent card</a></li>
<li><a href="/mcp-help">MCP at /mcp</a></li>
<li><a href="/pricing.md">pricing.md</a></li>
</ul>
</section>
</div>
<section class="sells" aria-labelledby="sells-title">
<h2 id="sells-title">What the service sells</h2>
<ul class="grid sell-grid">${sells}</ul>
<div class="grid-2 sell-more">
<div class="card">
<h3><a href="/jobs">Suite jobs</a></h3>
<p>Compression suite jobs on your data: ${e(suiteText(config, ways))}.</p>
</div>
<div class="card">
<h3><a href="/olympiad">${e(season.label)}</a></h3>
<p>An agent competition: ${e(phaseText(season))}; ${e(season.quarter)} ${season.ranking ? `is a ranking quarter with ${e(season.events_counting)} counting events` : "is the archive quarter"}.${entry ? ` Entry ${e(price(entry))}.` : ""} <a href="/standings">Standings</a>.</p>
</div>
</div>
</section>`;
}

/** The hero's "two ways in", naming only what can settle here. */
function leadWays(w: SaleWays): string {
  const people = peopleWays(w);
  const humans = people.length > 0 ? `people pay ${orList(people)}` : "people";
  const agents = w.x402.length > 0 ? "agents pay per call with x402" : "agents";
  return people.length === 0 && w.x402.length === 0 ? "for people and for agents" : `${humans}, ${agents}`;
}

/** The suite's terms; the paid part only as a price when paid jobs can be bought here. */
function suiteText(config: Config, w: SaleWays): string {
  return w.suite ? suiteLine(config) : `${suiteLine(config)} (paid jobs cannot be bought on this server yet)`;
}

function phaseText(s: SeasonState): string {
  switch (s.phase) {
    case "pre_season":
      return `the season starts on ${s.starts}`;
    case "tryouts_and_competitions":
      return "tryouts and competitions are running (no official points yet)";
    case "seeding":
      return `tryouts are over; open registration begins on ${s.registration_opens ?? "a date to be announced"}`;
    case "open_competition":
      return "registration is open";
    case "ended":
      return "the season has ended";
  }
}

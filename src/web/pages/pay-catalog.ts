import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { X402_HEADERS, x402Rails } from "../../payments/x402/rails.js";
import { escapeHtml as e } from "../html.js";
import { atomic, byKind, cheapest, KIND_LABELS, paymentLinkFor, price, x402Curl, x402Networks } from "./pay-facts.js";
import { noRailsNotice, orList, peopleWays, type SaleWays, saleWays, x402Phrase } from "./sell-facts.js";

/** /pay without a sku: the catalog as product cards grouped by kind, then the x402 section for agents. */
export function catalogBody(catalog: Catalog, config: Config): string {
  const groups = byKind(catalog);
  const ways = saleWays(config);
  const jump = groups.map((g) => `<li><a href="#kind-${e(g.kind)}">${e(KIND_LABELS[g.kind].title)}</a></li>`).join("");
  const sections = groups
    .map(
      (g) => `<section class="kind" id="kind-${e(g.kind)}" aria-labelledby="kind-${e(g.kind)}-title">
<h2 id="kind-${e(g.kind)}-title">${e(KIND_LABELS[g.kind].title)}</h2>
<div class="grid products">
${g.products.map((p) => productCard(p, config, ways)).join("\n")}
</div>
</section>`,
    )
    .join("\n");
  return `<section class="hero">
<h1>Buy</h1>
<p class="lead">Licences, services, support and the olympiad entry. Prices are in US dollars.${payLead(ways)}</p>
<nav aria-label="Kinds of product"><ul class="cluster jump">${jump}<li><a href="#agents-pay">For agents (x402)</a></li></ul></nav>
${noRailsNotice(config)}
</section>
${sections}
${agentsSection(catalog, config)}`;
}

/** The catalog's one sentence on how to pay, naming only the rails that can settle here. */
function payLead(w: SaleWays): string {
  if (w.none) return "";
  const people = peopleWays(w);
  const parts: string[] = [];
  if (people.length > 0) parts.push(`Pay ${orList(people)}${w.checkout ? " (a hosted checkout)" : ""}`);
  else parts.push("People cannot pay on this server yet");
  parts.push(w.x402.length > 0 ? `agents pay with x402 (${x402Phrase(w)})` : "agents cannot pay with x402 here yet");
  return ` ${parts.join("; ")}.`;
}

function productCard(p: Product, config: Config, ways: SaleWays): string {
  const link = paymentLinkFor(config, p.sku);
  const name = `<span class="visually-hidden"> ${e(p.name)}</span>`;
  const other = ways.transfer || ways.invoice || ways.x402.length > 0;
  const actions = [
    ways.checkout
      ? `<a class="btn btn-primary" href="/pay?sku=${e(p.sku)}">Buy${name}</a>`
      : `<a class="btn btn-primary" href="/pay?sku=${e(p.sku)}">${ways.none ? "Details" : "Ways to pay"}${name}</a>`,
    link ? `<a class="btn btn-secondary" href="${e(link)}">Payment link${name}</a>` : "",
    other ? `<a class="more-ways" href="/pay?sku=${e(p.sku)}#other-ways">Other ways to pay${name}</a>` : "",
  ].join("");
  return `<article class="card product" id="product-${e(p.sku)}" aria-labelledby="product-${e(p.sku)}-name">
<p class="badge">${e(KIND_LABELS[p.kind].one)}</p>
<h3 id="product-${e(p.sku)}-name">${e(p.name)}</h3>
<p class="price" data-sku="${e(p.sku)}">${e(price(p))} <small>USD</small></p>
<p>${e(p.blurb)}</p>
<p class="small"><strong>You get:</strong> ${e(p.grants)}</p>
<div class="card-actions">${actions}</div>
</article>`;
}

/**
 * The x402 instructions for agents: only the networks that can settle here (CAIP-2 ids), the 402
 * flow with x402 v2 field names, one example. When no x402 rail can settle, what it needs instead.
 */
export function agentsSection(catalog: Catalog, config: Config): string {
  const example = cheapest(catalog.list());
  const nets = x402Networks(config).filter((n) => n.configured);
  const head = `<section class="agents-pay" id="agents-pay" aria-labelledby="agents-pay-title">
<h2 id="agents-pay-title">For agents: pay with x402</h2>`;
  if (nets.length === 0) {
    const missing = x402Rails(config)
      .map((r) => `<li>${e(r.id)}: ${r.missing.map((m) => `<code>${e(m)}</code>`).join(", ")}</li>`)
      .join("");
    return `${head}
<p id="x402-off">Agents cannot pay with x402 on this server yet: no x402 network can settle. A request to <code>POST /api/x402-products</code> answers 503 <code>x402_not_configured</code> until the operator sets:</p>
<ul class="small">${missing}</ul>
<p class="small">Free calls work without payment: the codec (<code>POST /api/omni</code>), quotes, free suite jobs. Machine-readable: <a href="/api/payments">/api/payments</a> · <a href="/llms.txt">llms.txt</a>.</p>
</section>`;
  }
  const rows = nets
    .map(
      (n) =>
        `<tr><td class="mono">${e(n.network)}</td><td>${e(n.chain)}</td><td><span class="badge badge-ok">accepting</span></td></tr>`,
    )
    .join("");
  const curl = example ? x402Curl(config, example) : undefined;
  return `${head}
<p>Agents buy any product above with USDC over the x402 protocol: no account, the payment is the credential. Amounts are USDC atomic units (6 decimals: $1.00 = 1000000).</p>
<div class="table-wrap"><table>
<caption class="visually-hidden">x402 networks</caption>
<thead><tr><th scope="col">Network (CAIP-2)</th><th scope="col">Chain</th><th scope="col">State</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
<ol class="steps">
<li><code>POST /api/x402-products</code> with <code>{ "sku": "&lt;sku&gt;" }</code> and no payment: the answer is <strong>402</strong> with the payment requirements in the <code>${e(X402_HEADERS.required)}</code> header (x402 v2: <code>accepts[]</code>, one entry per network, each with <code>network</code>, <code>amount</code> in atomic units, <code>asset</code> and <code>payTo</code>).</li>
<li>Sign a payment of exactly <code>amount</code> to the entry's <code>payTo</code> on its <code>network</code>.</li>
<li>Repeat the request with the base64 payload in <code>${e(X402_HEADERS.paymentV2)}</code>: the answer is <strong>200</strong> with <code>order_id</code> and <code>access_url</code>, and a <code>${e(X402_HEADERS.responseV2)}</code> header.</li>
</ol>
${
  curl && example
    ? `<p>Example: ${e(example.name)} (${e(price(example))} = ${e(atomic(example))} units).</p>
<pre class="command"><code>${curl.ask}
# → 402, pay, then:
${curl.pay}</code></pre>`
    : ""
}
<p class="small">Machine-readable: <a href="/api/x402-products">/api/x402-products</a> · <a href="/api/payments">/api/payments</a> · <a href="/pricing.md">pricing.md</a> · <a href="/llms.txt">llms.txt</a>.</p>
</section>`;
}

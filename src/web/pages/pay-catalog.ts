import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { X402_HEADERS } from "../../payments/x402/rails.js";
import { escapeHtml as e } from "../html.js";
import {
  atomic,
  byKind,
  cheapest,
  checkoutReady,
  KIND_LABELS,
  paymentLinkFor,
  price,
  x402Curl,
  x402Networks,
} from "./pay-facts.js";

/** /pay without a sku: the catalog as product cards grouped by kind, then the x402 section for agents. */
export function catalogBody(catalog: Catalog, config: Config): string {
  const groups = byKind(catalog);
  const checkout = checkoutReady(config);
  const jump = groups.map((g) => `<li><a href="#kind-${e(g.kind)}">${e(KIND_LABELS[g.kind].title)}</a></li>`).join("");
  const sections = groups
    .map(
      (g) => `<section class="kind" id="kind-${e(g.kind)}" aria-labelledby="kind-${e(g.kind)}-title">
<h2 id="kind-${e(g.kind)}-title">${e(KIND_LABELS[g.kind].title)}</h2>
<div class="grid products">
${g.products.map((p) => productCard(p, config, checkout)).join("\n")}
</div>
</section>`,
    )
    .join("\n");
  return `<section class="hero">
<h1>Buy</h1>
<p class="lead">Licences, services, support and the olympiad entry. Prices are in US dollars. ${
    checkout
      ? "Pay by card on a hosted checkout"
      : "Card checkout is not configured on this server; pay with the other rails"
  } — crypto transfer and invoice work too, and agents pay with x402.</p>
<nav aria-label="Kinds of product"><ul class="cluster jump">${jump}<li><a href="#agents-pay">For agents (x402)</a></li></ul></nav>
${checkout ? "" : '<div class="notice notice-warn" role="status"><p>Card checkout is not configured on this server.</p></div>'}
</section>
${sections}
${agentsSection(catalog, config)}`;
}

function productCard(p: Product, config: Config, checkout: boolean): string {
  const link = paymentLinkFor(config, p.sku);
  const name = `<span class="visually-hidden"> ${e(p.name)}</span>`;
  const actions = [
    checkout
      ? `<a class="btn btn-primary" href="/pay?sku=${e(p.sku)}">Buy${name}</a>`
      : `<a class="btn btn-primary" href="/pay?sku=${e(p.sku)}">Ways to pay${name}</a>`,
    link ? `<a class="btn btn-secondary" href="${e(link)}">Payment link${name}</a>` : "",
    `<a class="more-ways" href="/pay?sku=${e(p.sku)}#other-ways">Other ways to pay${name}</a>`,
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

/** The x402 instructions for agents: networks from the configuration, the 402 flow, one example. */
export function agentsSection(catalog: Catalog, config: Config): string {
  const example = cheapest(catalog.list());
  const nets = x402Networks(config);
  const rows = nets
    .map(
      (n) =>
        `<tr><td class="mono">${e(n.network)}</td><td>${e(n.chain)}</td><td>${
          n.configured
            ? '<span class="badge badge-ok">accepting</span>'
            : '<span class="badge badge-warn">not configured here</span>'
        }</td></tr>`,
    )
    .join("");
  const curl = example ? x402Curl(config, example) : undefined;
  return `<section class="agents-pay" id="agents-pay" aria-labelledby="agents-pay-title">
<h2 id="agents-pay-title">For agents: pay with x402</h2>
<p>Agents buy any product above with USDC over the x402 protocol: no account, the payment is the credential. Amounts are USDC atomic units (6 decimals: $1.00 = 1000000).</p>
<div class="table-wrap"><table>
<caption class="visually-hidden">x402 networks</caption>
<thead><tr><th scope="col">Network</th><th scope="col">Chain</th><th scope="col">State</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>
<ol class="steps">
<li><code>POST /api/x402-products</code> with <code>{ "sku": "&lt;sku&gt;" }</code> and no payment: the answer is <strong>402</strong> with <code>accepts[]</code> (one entry per network, <code>maxAmountRequired</code> in atomic units) and the same requirements in the <code>${e(X402_HEADERS.required)}</code> header.</li>
<li>Sign a payment of exactly that amount to the entry's <code>payTo</code> on one of the networks.</li>
<li>Repeat the request with the base64 payload in <code>${e(X402_HEADERS.paymentV2)}</code> (or <code>${e(X402_HEADERS.paymentV1)}</code>): the answer is <strong>200</strong> with <code>order_id</code> and <code>access_url</code>, and a <code>${e(X402_HEADERS.responseV2)}</code> header.</li>
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

import type { Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { manualRails } from "../../payments/manual/rails.js";
import { X402_HEADERS } from "../../payments/x402/rails.js";
import { escapeHtml as e } from "../html.js";
import { atomic, checkoutReady, KIND_LABELS, paymentLinkFor, price } from "./pay-facts.js";
import { noRailsNotice, type SaleWays, saleWays, x402Phrase } from "./sell-facts.js";

/** A failed form, shown inline above the form that failed (the problem's own words and code). */
export interface FormError {
  status: number;
  detail: string;
  code: string;
}

/** What a failed form had in it, put back in the fields. */
export type FormValues = Record<string, string | undefined>;

export function errorNotice(err: FormError | undefined, id: string, alert = true): string {
  if (!err) return "";
  return `<div class="notice notice-error"${alert ? ' role="alert"' : ""} id="${e(id)}"><p>${e(err.detail)}</p><p class="small">Error ${e(err.status)} · code <code>${e(err.code)}</code></p></div>`;
}

/** /pay?sku=: the product, the card form (when configured), the payment link, then the other ways. */
export function productBody(
  product: Product,
  config: Config,
  opts: { email?: string; checkoutError?: FormError; claimError?: FormError; claim?: FormValues } = {},
): string {
  const link = paymentLinkFor(config, product.sku);
  const ways = saleWays(config);
  const form = checkoutReady(config)
    ? `<form method="post" action="/pay" id="checkout" class="checkout">
<input type="hidden" name="sku" value="${e(product.sku)}">
${errorNotice(opts.checkoutError, "checkout-error")}
<div class="field"><label for="checkout-email">E-mail for the receipt and access link</label>
<input id="checkout-email" type="email" name="email" required maxlength="254" autocomplete="email" value="${e(opts.email ?? "")}" aria-describedby="checkout-email-hint">
<span class="hint" id="checkout-email-hint">We use it for the receipt and to resend your access link; nothing else.</span></div>
<button type="submit" class="btn-primary btn-block">Pay ${e(price(product))} by card</button>
<p class="small muted">You pay on Stripe's hosted page. Cards with phone wallets, Link, bank debit and other methods are offered when eligible for this amount.</p>
</form>`
    : errorNotice(opts.checkoutError, "checkout-error");
  const others = otherWayNames(ways);
  const payCard =
    checkoutReady(config) || link
      ? `<section class="card pay-card" aria-labelledby="pay-card-title">
<h2 id="pay-card-title">Pay by card</h2>
${form}
${link ? `<p class="pay-link">${checkoutReady(config) ? "Or pay" : "Pay"} with the hosted <a href="${e(link)}" id="payment-link">payment link</a> for this product.</p>` : ""}
${others.length > 0 ? `<p class="small"><a href="#other-ways">Other ways to pay</a>: ${e(others.join(", "))}.</p>` : ""}
</section>`
      : `<section class="card pay-card" aria-labelledby="pay-card-title">
<h2 id="pay-card-title">How to pay</h2>
${form}
${
  others.length > 0
    ? `<p>This server takes: <a href="#other-ways">${e(others.join(", "))}</a>.</p>`
    : '<p class="muted">No way to pay is set up on this server yet (see the notice above).</p>'
}
</section>`;
  const claimSummary = opts.claimError
    ? `<div class="notice notice-error" role="alert" id="claim-summary"><p>Your claim was not recorded: ${e(opts.claimError.detail)}</p><p><a href="#claim">Correct the claim form</a></p></div>`
    : "";
  return `${claimSummary}<nav aria-label="Breadcrumb" class="crumbs small"><a href="/pay">Catalog</a> <span aria-hidden="true">›</span> <span>${e(KIND_LABELS[product.kind].title)}</span></nav>
${noRailsNotice(config)}
<div class="product-layout">
<section class="product-info" aria-labelledby="product-title">
<p class="badge">${e(KIND_LABELS[product.kind].one)}</p>
<h1 id="product-title">${e(product.name)}</h1>
<p class="lead">${e(product.blurb)}</p>
<p class="price">${e(price(product))} <small>USD, one payment</small></p>
<dl>
<dt>You get</dt><dd>${e(product.grants)}</dd>
<dt>Delivery</dt><dd>An access page with your order right after payment (keep its address private).</dd>
<dt>SKU</dt><dd class="mono">${e(product.sku)}</dd>
</dl>
</section>
${payCard}
</div>
${others.length > 0 ? otherWays(product, config, opts.claimError, opts.claim) : ""}`;
}

/** The ways besides card that can settle here, as short names. */
function otherWayNames(w: SaleWays): string[] {
  const names: string[] = [];
  if (w.transfer) names.push("crypto transfer");
  if (w.invoice) names.push("invoice");
  if (w.x402.length > 0) names.push("x402 for agents");
  return names;
}

/** Manual rails with the claim form, and the agent line: on the product page and the cancel page. */
export function otherWays(
  product: Product,
  config: Config,
  claimError?: FormError,
  values: FormValues = {},
  title = "Other ways to pay",
): string {
  const sku = product.sku;
  const ways = saleWays(config);
  const rails = manualRails(config).filter((r) => r.configured);
  const items = rails
    .map(
      (r) => `<li class="card rail" id="rail-${e(r.id)}">
<h3>${e(r.name)}</h3>
${r.pay_to ? `<p>Pay to <span class="mono">${e(r.pay_to)}</span></p>` : ""}
${r.asset_hint ? `<p class="small muted">${e(r.asset_hint)}</p>` : ""}
${r.terms ? `<p>Terms: ${e(r.terms)}</p>` : ""}
<p class="small">${e(r.how)}</p>
</li>`,
    )
    .join("");
  const chosen = values.rail;
  const options = rails
    .map((r) => `<option value="${e(r.id)}"${chosen === r.id ? " selected" : ""}>${e(r.name)}</option>`)
    .join("");
  const v = (k: string, d = "") => e(values[k] ?? d);
  const claimForm =
    rails.length > 0
      ? `<div class="card claim-card"><h3 id="claim-title">Claim a transfer or request an invoice</h3>
<form method="post" action="/pay/claim" id="claim" class="claim" aria-labelledby="claim-title">
<input type="hidden" name="sku" value="${e(sku)}">
${errorNotice(claimError, "claim-error", false)}
<div class="field"><label for="claim-rail">Rail</label><select id="claim-rail" name="rail">${options}</select></div>
<div class="field"><label for="claim-email">E-mail</label><input id="claim-email" type="email" name="email" required maxlength="254" autocomplete="email" value="${v("email")}"></div>
<div class="field"><label for="claim-tx">Transaction signature or hash <span class="hint">(crypto)</span></label><input id="claim-tx" name="tx" maxlength="200" value="${v("tx")}"></div>
<div class="field"><label for="claim-company">Company legal name <span class="hint">(invoice)</span></label><input id="claim-company" name="company" maxlength="200" autocomplete="organization" value="${v("company")}"></div>
<div class="field"><label for="claim-address">Billing address <span class="hint">(invoice)</span></label><textarea id="claim-address" name="billing_address" maxlength="1000">${v("billing_address")}</textarea></div>
<div class="field"><label for="claim-currency">Invoice currency</label><input id="claim-currency" name="currency" value="${v("currency", "USD")}" maxlength="3"></div>
<button type="submit">Send claim</button>
</form></div>`
      : "";
  const manual =
    rails.length > 0
      ? `<p>Send exactly ${e(price(product))} (or its equivalent), then claim it below; an operator checks the transfer and you receive the access link.</p>
<ul class="grid rails">${items}</ul>
${claimForm}`
      : "";
  const agents =
    ways.x402.length > 0
      ? `<h3>Agents</h3>
<p>Agents pay with x402 (${e(x402Phrase(ways))}): <code>POST /api/x402-products { "sku": "${e(sku)}" }</code> answers 402 with the requirements (<code>amount</code> ${e(atomic(product))} atomic units); retry with <code>${e(X402_HEADERS.paymentV2)}</code>. All rails: <a href="/api/payments?sku=${e(sku)}">/api/payments</a> · <a href="/pay#agents-pay">x402 how-to</a>.</p>`
      : "";
  return `<section class="other-ways" id="other-ways" aria-labelledby="other-ways-title">
<h2 id="other-ways-title">${e(title)}</h2>
${
  manual || agents
    ? `${manual}
${agents}`
    : '<p class="muted">No other way to pay is set up on this server.</p>'
}
</section>`;
}

/** /pay/cancel: nothing was charged, try again, the other ways. */
export function cancelBody(product: Product | undefined, config: Config, suiteJob = false): string {
  if (!product) {
    return `<section class="hero"><h1>Other ways to pay</h1>
<div class="notice notice-ok" role="status"><p>The ${suiteJob ? "checkout of your suite job" : "checkout"} was cancelled; nothing was charged.</p></div>
<p class="cluster">${
      suiteJob
        ? '<a class="btn btn-primary" href="/jobs">Back to suite jobs</a><a class="btn" href="/pay">The catalog</a>'
        : '<a class="btn btn-primary" href="/pay">Back to the catalog</a>'
    }</p>
${saleWays(config).x402.length > 0 ? '<p>Agents pay suite jobs with x402: <code>POST /api/x402-suite</code>; see <a href="/pricing.md">pricing.md</a>.</p>' : ""}</section>`;
  }
  const link = paymentLinkFor(config, product.sku);
  return `<section class="hero"><h1>Other ways to pay</h1>
<div class="notice notice-ok" role="status"><p>The card checkout for <strong>${e(product.name)}</strong> (${e(price(product))}) was cancelled; nothing was charged.</p></div>
<p class="cluster">${
    checkoutReady(config)
      ? `<a class="btn btn-primary" href="/pay?sku=${e(product.sku)}">Try the card checkout again</a>`
      : ""
  }${link ? `<a class="btn btn-secondary" href="${e(link)}">Pay with the payment link</a>` : ""}<a class="btn" href="/pay">Back to the catalog</a></p>
</section>
${noRailsNotice(config)}
${otherWays(product, config, undefined, {}, "Other ways to pay")}`;
}

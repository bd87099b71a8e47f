import type { Catalog } from "../../catalog/service.js";
import type { SessionStatus } from "../../payments/card/service.js";
import type { ClaimReceipt } from "../../payments/manual/service.js";
import { escapeHtml as e } from "../html.js";

/** What /pay/success and the claim form answer: the page's title, body and extra head (a refresh). */
export interface ResultPage {
  title: string;
  description: string;
  body: string;
  head?: string;
}

const rowsHtml = (rows: [string, string, string?][]) =>
  `<dl class="kv receipt">${rows.map(([k, v, id]) => `<dt>${e(k)}</dt><dd class="mono"${id ? ` id="${e(id)}"` : ""}>${e(v)}</dd>`).join("")}</dl>`;

/** /pay/success: the order and its access URL once paid, a paid suite job, or why it is not paid (yet). */
export function successPage(s: SessionStatus, catalog: Catalog): ResultPage {
  const name = catalog.find(s.sku)?.name ?? s.sku;
  if (s.status === "paid" && s.order) {
    const o = s.order;
    const rows: [string, string, string?][] = [
      ["Order", o.order_id, "order-id"],
      ["Product", `${name} (${o.sku})`],
      ["Paid", `$${o.amount_usd}`],
      ["Status", o.status],
    ];
    if (o.license_key) rows.push(["Licence key", o.license_key, "license-key"]);
    const access =
      o.status === "active" && s.access_url
        ? `<p><a class="btn btn-primary" id="access-url" href="${e(s.access_url)}">Open your access</a></p>
<div class="notice notice-warn"><p><strong>Keep this address private</strong>: anyone holding it can open your access page. Bookmark it:</p><p class="mono">${e(s.access_url)}</p></div>`
        : `<div class="notice notice-error" role="alert"><p>This order is ${e(o.status)}.</p></div>`;
    return {
      title: "Payment received",
      description: `Your ${name} order and its access link.`,
      body: `<section class="hero result">
<p class="badge badge-ok">Paid</p>
<h1>Thank you: payment received</h1>
<p class="lead">${e(name)} is yours. Your access page has everything it grants.</p>
</section>
<div class="card result-card">
${rowsHtml(rows)}
${access}
</div>`,
    };
  }
  if (s.status === "paid" && s.job) {
    // a suite quote's session: the job and its token are shown on the jobs page (never here)
    const next = `/jobs/paid?session_id=${encodeURIComponent(s.session_id)}`;
    return {
      title: "Suite job paid",
      description: "Your suite job is paid: open it on the suite jobs page.",
      body: `<section class="hero result"><p class="badge badge-ok">Paid</p><h1>Thank you: payment received</h1>
<p class="lead">Your suite job is paid. Its id and the token that opens it are on the suite jobs page.</p>
<p><a class="btn btn-primary" id="job-page" href="${e(next)}">Open your suite job</a></p></section>`,
    };
  }
  if (s.status === "awaiting_payment") {
    return {
      title: "Payment pending",
      description: "Your payment is on its way; this page shows the order once it lands.",
      head: '<meta http-equiv="refresh" content="15">',
      body: `<section class="hero result"><p class="badge badge-warn">Pending</p><h1>Payment pending</h1>
<p id="pending" class="lead">${e(s.pending_reason)}</p>
<p class="muted">Checkout session <span class="mono">${e(s.session_id)}</span> · ${e(name)}. You can close this page: the access link is also e-mailed by the operator, and this address keeps working.</p></section>`,
    };
  }
  if (s.status === "open") {
    return {
      title: "Confirming your payment",
      description: "Waiting for the payment provider's confirmation.",
      head: '<meta http-equiv="refresh" content="3">',
      body: `<section class="hero result"><p class="badge">Checking</p><h1>Confirming your payment…</h1>
<p id="confirming" class="lead" role="status">We have not received Stripe's confirmation yet. This page refreshes by itself.</p></section>`,
    };
  }
  const why =
    s.status === "failed"
      ? "The payment failed (for example a bank debit that was declined)."
      : s.status === "expired"
        ? "The checkout session expired before it was paid."
        : "The payment could not be matched to the product; the operator has been notified.";
  const product = catalog.find(s.sku);
  return {
    title: "Not paid",
    description: "The checkout did not complete.",
    body: `<section class="hero result"><p class="badge badge-bad">Not paid</p><h1>Not paid</h1>
<div class="notice notice-error" role="alert"><p>${e(why)}</p></div>
${
  product
    ? `<p class="cluster"><a class="btn btn-primary" href="/pay?sku=${e(product.sku)}">Try again</a><a class="btn" href="/pay?sku=${e(product.sku)}#other-ways">Other ways to pay</a></p>`
    : '<p><a class="btn btn-primary" href="/jobs">Back to suite jobs</a></p>'
}</section>`,
  };
}

/** The answer to the claim form: the claim, what to do next, where to follow it. */
export function claimPage(r: ClaimReceipt): ResultPage {
  const rows: [string, string, string?][] = [
    ["Claim", r.claim_id, "claim-id"],
    ["Product", r.sku],
    ["Amount", `$${r.amount_usd}`],
    ["Rail", r.rail],
  ];
  if (r.pay_to) rows.push(["Pay to", r.pay_to]);
  if (r.terms) rows.push(["Terms", r.terms]);
  return {
    title: "Claim recorded",
    description: "Your payment claim and what happens next.",
    body: `<section class="hero result"><p class="badge badge-ok">Recorded</p><h1>Claim recorded</h1>
<p class="lead">An operator checks it; you receive the access link by e-mail once it is approved.</p></section>
<div class="card result-card">
${rowsHtml(rows)}
<h2>Next steps</h2>
<ol class="steps">${r.next_steps.map((s) => `<li>${e(s)}</li>`).join("")}</ol>
${r.mailto ? `<p><a class="btn btn-secondary" href="${e(r.mailto)}">E-mail the operator about this claim</a></p>` : ""}
<p class="small">Status: <a href="${e(r.status_url)}">${e(r.status_url)}</a></p>
</div>`,
  };
}

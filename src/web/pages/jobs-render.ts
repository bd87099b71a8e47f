import type { Level } from "../../codec/index.js";
import {
  BULK_AFTER_BYTES,
  BYTES_PER_GB,
  FREE_CAP_BYTES,
  type JobPrice,
  MAX_JOB_BYTES_NUMBER,
  priceJob,
  SUITE_PRICE,
  usdOfUnits,
} from "../../jobs/pricing.js";
import { SUITE_DATA_CLASSES, SUITE_LEVELS, SUITE_OPS, SUITE_PRODUCTS } from "../../jobs/quotes/schemas.js";
import { DEFAULT_SUITE_LEVEL, estimatesByLevel, LEVEL_THROUGHPUT, type SuiteOp } from "../../jobs/throughput.js";
import type { SessionStatus } from "../../payments/card/service.js";
import { escapeHtml as e } from "../html.js";

/**
 * HTML of the suite jobs pages (/jobs, /jobs/paid). Every price comes from src/jobs/pricing.ts;
 * the JSON API answers the same numbers. GB = 10^9 bytes everywhere, said next to the prices.
 */

export const GB_NOTE = "GB = 10^9 bytes";

/** Decimal units, as prices use: 300000 → "300 kB", 1.5e11 → "150 GB". */
export function decimalBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB", "PB"];
  let v = n;
  let u = -1;
  do {
    v /= 1000;
    u++;
  } while (v >= 1000 && u < units.length - 1);
  const text = Number.isInteger(v) ? String(v) : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2);
  return `${text} ${units[u]}`;
}

/** 48466 → "13 h 28 min"; 75 → "1 min 15 s". */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min${s ? ` ${s} s` : ""}`;
}

const usd = (units: bigint) => `$${usdOfUnits(units)}`;
const gb = (bytes: bigint) => `${bytes / BYTES_PER_GB} GB`;

/**
 * The pricing table: the free terms, per-GB prices, minimum (server-rendered, no JavaScript
 * needed). `anonBytesPerDay`: this server's SUITE_ANON_FREE_BYTES_PER_DAY; the examples are what a
 * browser without an identity is quoted for its first job of the day.
 */
export function pricingSection(anonBytesPerDay: number, card = true): string {
  const p = SUITE_PRICE;
  const anon = BigInt(anonBytesPerDay);
  const examples = [1n, 50n, 150n].map((g) => priceJob({ bytes: g * BYTES_PER_GB, freeRemainingBytes: anon }));
  return `<section class="card" aria-labelledby="pricing-h">
<h2 id="pricing-h">Pricing</h2>
<p class="muted small">${GB_NOTE}; MB = 10^6 bytes. One price for every product, data class, operation and level.</p>
<div class="table-wrap" role="region" aria-label="Prices" tabindex="0"><table id="pricing-table" aria-label="Suite job prices per GB (${GB_NOTE})">
<thead><tr><th scope="col">Part of a job</th><th scope="col" class="num">Price per GB</th></tr></thead>
<tbody>
<tr><td>With a join-work identity: the first ${gb(FREE_CAP_BYTES)} a calendar month (UTC), shared by its jobs</td><td class="num">free</td></tr>
<tr><td>Without an identity: ${anon > 0n ? `the first ${e(decimalBytes(Number(anon)))} a day (UTC) per address` : "nothing is free"}</td><td class="num">${anon > 0n ? "free" : "—"}</td></tr>
<tr><td>Next ${gb(BULK_AFTER_BYTES)} billable</td><td class="num">${usd(p.unitsPerGbAfterFree)} / GB</td></tr>
<tr><td>Beyond that (bulk)</td><td class="num">${usd(p.unitsPerGbBulk)} / GB</td></tr>
<tr><td>Minimum for a paid job</td><td class="num">${usd(p.minPaidUnits)}</td></tr>
</tbody></table></div>
<p class="small">Billable bytes are rounded up to whole MB. A decompress job is priced on the size it writes (its decompressed size).${card ? " Card charges round up to the cent." : ""} Free jobs run after paid ones, at most one running and three waiting per caller.</p>
<div class="table-wrap" role="region" aria-label="Example prices" tabindex="0"><table id="pricing-examples" aria-label="Example prices without an identity, first job of the day">
<thead><tr><th scope="col">Job size (${GB_NOTE}), without an identity</th><th scope="col" class="num">Price</th></tr></thead>
<tbody>${examples.map((x) => `<tr><td>${e(decimalBytes(Number(x.bytes)))}</td><td class="num">${x.amount_units === 0n ? "free" : e(usd(x.amount_units))}</td></tr>`).join("")}</tbody>
</table></div>
</section>`;
}

/** What each level costs in time (measured throughput). */
export function levelsSection(): string {
  const rows = SUITE_LEVELS.map((l) => {
    const t = LEVEL_THROUGHPUT[l];
    return `<tr><th scope="row">${e(l)}</th><td class="num">${e(t.compress_mb_s)}</td><td class="num">${e(t.decompress_mb_s)}</td><td class="num">${e(t.ratio)}</td></tr>`;
  }).join("");
  return `<section class="card" aria-labelledby="levels-h">
<h2 id="levels-h">Levels: what each costs in time</h2>
<p class="muted small">Speeds in MB/s (MB = 10^6 bytes) per worker thread, measured on the reference machine; the size ratio is compressed / original. The price does not depend on the level.</p>
<div class="table-wrap" role="region" aria-label="Level speeds" tabindex="0"><table id="levels-table">
<thead><tr><th scope="col">Level</th><th scope="col" class="num">Compress</th><th scope="col" class="num">Decompress</th><th scope="col" class="num">Ratio</th></tr></thead>
<tbody>${rows}</tbody></table></div>
</section>`;
}

export interface QuoteFormValues {
  product?: string;
  dataClass?: string;
  op?: string;
  level?: string;
  bytes?: number;
  email?: string;
}

const options = (values: readonly string[], chosen: string | undefined) =>
  values.map((v) => `<option value="${e(v)}"${v === chosen ? " selected" : ""}>${e(v)}</option>`).join("");

/**
 * The four steps of a job, always shown together, numbered 1 to 4: the one numbering of the page
 * (the upload and download boxes appear only when their step has come, so numbered headings would
 * skip a number).
 */
export const JOB_STEPS = ["Quote a job", "Start it (free) or pay", "Upload the file", "Download the result"] as const;

export function stepsList(): string {
  return `<ol class="steps job-steps" id="job-steps" aria-label="Steps of a suite job">${JOB_STEPS.map((s) => `<li>${e(s)}</li>`).join("")}</ol>`;
}

/** The quote form: a plain GET form (a price preview without JavaScript); the script quotes through the API. */
export function quoteForm(v: QuoteFormValues, cardCheckout: boolean, x402 = false): string {
  return `<section class="card" aria-labelledby="quote-h">
<h2 id="quote-h">Quote a job</h2>
<form id="quote-form" method="get" action="/jobs#quote-result" novalidate>
<div class="field"><label for="q-file">Your file (optional: pick it first to use its size)</label>
<input id="q-file" type="file" aria-describedby="q-file-hint">
<span class="hint" id="q-file-hint">The file stays on your computer until you upload it (step 3).</span></div>
<div class="jobs-fields">
<div class="field"><label for="q-product">Product</label><select id="q-product" name="product" aria-describedby="q-product-hint">${options(SUITE_PRODUCTS, v.product ?? "auto")}</select></div>
<div class="field"><label for="q-class">Data class</label><select id="q-class" name="dataClass">${options(SUITE_DATA_CLASSES, v.dataClass ?? "text")}</select></div>
<div class="field"><label for="q-op">Operation</label><select id="q-op" name="op">${options(SUITE_OPS, v.op ?? "compress")}</select></div>
<div class="field"><label for="q-level">Level</label><select id="q-level" name="level">${options(SUITE_LEVELS, v.level ?? DEFAULT_SUITE_LEVEL)}</select></div>
</div>
<p class="hint small" id="q-product-hint">Product auto: the router picks a codec path for each segment. The level changes the time, not the price.</p>
<div class="field"><label for="q-bytes">Size in bytes</label>
<input id="q-bytes" name="bytes" type="number" inputmode="numeric" min="1" max="${MAX_JOB_BYTES_NUMBER}" step="1" required value="${e(v.bytes ?? "")}" aria-describedby="q-bytes-hint">
<span class="hint" id="q-bytes-hint">1 to 10^15 bytes; ${GB_NOTE}. For decompress, the decompressed size (picking the compressed file reads it from the file's headers). <output id="q-bytes-human" for="q-bytes">${v.bytes ? `= ${e(decimalBytes(v.bytes))}` : ""}</output></span></div>
<div class="field"><label for="q-email">E-mail (optional${cardCheckout ? "; needed to pay by card" : ""})</label>
<input id="q-email" name="email" type="email" maxlength="254" autocomplete="email" value="${e(v.email ?? "")}"></div>
<div class="field"><label for="q-callback">Webhook URL (optional)</label>
<input id="q-callback" name="callback_url" type="url" maxlength="2048" autocomplete="off" class="mono" placeholder="https://example.com/hooks/labphi" aria-describedby="q-callback-hint">
<span class="hint" id="q-callback-hint">Where the service POSTs job.done, job.failed, job.cancelled and job.expired, signed per Standard Webhooks with a secret shown once when the job starts (https, public addresses only).</span></div>
<div class="card-actions"><button type="submit" class="btn-primary">Get a quote</button></div>
</form>
<div id="quote-alert" class="notice notice-error" role="alert" hidden></div>
<div id="quote-result" aria-live="polite" tabindex="-1" data-card="${cardCheckout ? "on" : "off"}" data-x402="${x402 ? "on" : "off"}"></div>
<noscript><p class="small">Without JavaScript this form shows the price; starting, paying and uploading need the page's script, or the API: <code>POST /api/x402-suite</code> (see <a href="/openapi.yaml">OpenAPI</a>).</p></noscript>
</section>`;
}

/** A price preview (no stored quote): the plain-form answer of GET /jobs?bytes=…. */
/**
 * The no-JavaScript price preview: what a browser (no identity) is quoted for its first job of the
 * day (`anonBytesPerDay` free); the stored quote counts what this address already used today.
 */
export function previewSection(
  v: Required<Pick<QuoteFormValues, "bytes" | "op" | "level">>,
  anonBytesPerDay: number,
  card = true,
): string {
  const price: JobPrice = priceJob({ bytes: v.bytes, freeRemainingBytes: anonBytesPerDay });
  const est = estimatesByLevel(v.bytes, v.op as SuiteOp);
  return `<section class="card" id="preview" aria-labelledby="preview-h">
<h2 id="preview-h">Price for ${e(decimalBytes(v.bytes))} (${GB_NOTE})</h2>
${tiersTable(price.tiers)}
<p class="price" id="preview-total">${price.amount_units === 0n ? "Free" : e(usd(price.amount_units))}${price.amount_units === 0n || !card ? "" : ` <small>(card: ${e(price.amount_cents)} ¢)</small>`}</p>
${estimateList(est, v.level as Level)}
<p class="small">A preview for a first job of the day from this address: the quote made when you start or pay counts what this address already used today, is stored and holds its price for 30 minutes.</p>
</section>`;
}

interface TierLike {
  tier: string;
  bytes: number;
  usd_per_gb: string | null;
  amount_usd: string;
}

export function tiersTable(tiers: TierLike[]): string {
  const rows = tiers
    .map(
      (t) =>
        `<tr><th scope="row">${e(t.tier)}</th><td class="num">${e(t.tier === "minimum" ? "—" : decimalBytes(t.bytes))}</td><td class="num">${t.usd_per_gb === null ? "—" : `$${e(t.usd_per_gb)} / GB`}</td><td class="num">$${e(t.amount_usd)}</td></tr>`,
    )
    .join("");
  return `<div class="table-wrap" role="region" aria-label="Price breakdown" tabindex="0"><table class="tiers">
<thead><tr><th scope="col">Tier</th><th scope="col" class="num">Bytes</th><th scope="col" class="num">Price (${GB_NOTE})</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

export function estimateList(byLevel: Record<string, number>, chosen: Level): string {
  return `<dl class="kv estimates">${SUITE_LEVELS.map(
    (l) =>
      `<dt>${e(l)}${l === chosen ? " (chosen)" : ""}</dt><dd>about ${e(duration(byLevel[l] ?? 0))} of codec time</dd>`,
  ).join("")}</dl>`;
}

/** The job panel, filled by the script (start, upload, progress, download). */
export function jobPanel(): string {
  return `<section class="card" id="job-panel" aria-labelledby="job-h">
<h2 id="job-h">Your job</h2>
<p id="job-empty" class="muted">Start a job from a quote above, or open one you already have.</p>
<div id="job-token-box" class="notice notice-warn" hidden>
<p><strong>Keep this job token.</strong> It is shown once: it opens your job's upload, status and result, and we cannot show it again. This browser keeps it (its localStorage) so that “Your jobs” below can list the job, until you forget or delete it there; it is never put in an address or a log.</p>
<p><label for="job-token-once">Job token</label> <input id="job-token-once" class="mono" readonly></p>
<button type="button" id="job-token-done" class="btn-secondary">I have kept it</button>
</div>
<div id="job-facts" hidden><dl class="kv">
<dt>Job</dt><dd class="mono" id="job-id"></dd>
<dt>State</dt><dd id="job-state"></dd>
<dt>Quoted</dt><dd id="job-quoted"></dd>
<dt>Bytes in</dt><dd id="job-in"></dd>
<dt>Bytes out</dt><dd id="job-out"></dd>
<dt>Ratio</dt><dd id="job-ratio"></dd>
<dt>Attempts</dt><dd id="job-attempts"></dd>
</dl></div>
<div id="job-progress-box" hidden><label for="job-progress">Job progress</label>
<progress id="job-progress" max="1" value="0"></progress></div>
<div id="job-alert" class="notice notice-error" role="alert" hidden></div>
<div id="job-status" class="notice" role="status" hidden></div>
<div id="upload-box" hidden>
<h3 id="upload-h">Upload the file</h3>
<p class="small">Resumable (tus): if the connection drops or you close the tab, pick the same file again and the upload continues from what the server already has.</p>
<div class="field"><label for="u-file">File to upload</label><input id="u-file" type="file"></div>
<div class="cluster"><button type="button" id="u-start" class="btn-primary">Upload</button>
<button type="button" id="u-pause" class="btn-secondary" disabled>Pause</button></div>
<label for="u-progress">Upload progress</label>
<progress id="u-progress" max="100" value="0"></progress>
<p id="u-text" class="small" aria-live="polite"></p>
</div>
<div id="download-box" hidden>
<h3 id="download-h">Download the result</h3>
<p class="small">The result is in the codec's stream format: <code>labphi decompress</code> restores your file. The download sends your token in a header (never in the address), so it goes through this page.</p>
<button type="button" id="d-start" class="btn-primary">Download the result</button>
</div>
<p><button type="button" id="job-forget" class="btn-secondary" hidden>Forget this job in this tab</button></p>
</section>
<section class="card" aria-labelledby="open-h">
<h2 id="open-h">Open a job you have</h2>
<form id="open-form">
<div class="field"><label for="o-id">Job id</label><input id="o-id" name="job_id" class="mono" autocomplete="off" required pattern="job_[A-Za-z0-9_-]{1,64}"></div>
<div class="field"><label for="o-token">Job token</label><input id="o-token" name="job_token" type="password" class="mono" autocomplete="off" required></div>
<div class="card-actions"><button type="submit" class="btn-secondary">Open the job</button></div>
</form>
</section>`;
}

/**
 * "Your jobs" (issue #23 item 2): the jobs this browser started or opened, listed by the script
 * from the tokens it keeps (localStorage), each with cancel, delete, download and forget.
 */
export function myJobsSection(): string {
  return `<section class="card" id="my-jobs" aria-labelledby="my-jobs-h">
<h2 id="my-jobs-h">Your jobs</h2>
<p class="small muted">The jobs this browser started or opened, with their state. Their tokens stay in this browser (localStorage) and go only to the API, in a header; “Forget” removes one from this list, “Delete” removes the job's data for good. A job that runs can be cancelled: it stops within seconds and the free volume it did not use returns to you.</p>
<p id="my-jobs-empty" class="muted">No job kept in this browser yet.</p>
<ul id="my-jobs-list" class="stack" hidden></ul>
<div id="my-jobs-alert" class="notice notice-error" role="alert" hidden></div>
<noscript><p class="small">This list needs JavaScript: the tokens are kept by the page's script. Without it, use the API with the job token (<code>Authorization: Bearer</code>): <code>GET /api/jobs/{id}</code>, <code>POST /api/jobs/{id}/cancel</code>, <code>DELETE /api/jobs/{id}</code> (see <a href="/openapi.yaml">OpenAPI</a>).</p></noscript>
</section>`;
}

/** /jobs/paid: the job a card checkout bought (token shown for keeping), or why not yet. */
export function paidBody(s: SessionStatus): { body: string; refresh?: number } {
  if (s.status === "paid" && s.job) {
    const j = s.job;
    return {
      body: `<section class="hero"><p class="badge badge-ok">Paid</p><h1>Payment received: your job is ready</h1>
<p class="lead">Next: upload your file on the jobs page.</p></section>
<section class="card" id="paid-job" data-job-id="${e(j.job_id)}">
<dl class="kv"><dt>Job</dt><dd class="mono" id="paid-job-id">${e(j.job_id)}</dd><dt>Paid</dt><dd>$${e((s.amount_cents / 100).toFixed(2))}</dd></dl>
<div class="notice notice-warn"><p><strong>Keep this job token.</strong> It opens your job's upload, status and result. Copy it somewhere safe now; this page does not put it in any address or log.</p>
<p><label for="paid-job-token">Job token</label> <input id="paid-job-token" class="mono" readonly value="${e(j.job_token)}"></p></div>
<div class="card-actions"><a class="btn btn-primary" id="paid-continue" href="/jobs">Continue to upload</a></div>
<p class="small">With the page's script, “Continue” keeps the job in this tab's sessionStorage so the jobs page opens it; without it, open the job there with its id and token.</p>
</section>`,
    };
  }
  if (s.status === "open") {
    return {
      refresh: 3,
      body: `<section class="hero"><h1>Confirming your payment…</h1><p id="confirming" class="lead">We have not received the card network's confirmation yet. This page refreshes by itself.</p></section>`,
    };
  }
  if (s.status === "awaiting_payment") {
    return {
      refresh: 15,
      body: `<section class="hero"><h1>Payment pending</h1><p id="pending" class="lead">${e(s.pending_reason ?? "")}</p><p class="small">This address keeps working: come back later to get your job.</p></section>`,
    };
  }
  const why =
    s.status === "paid"
      ? "This checkout paid for something other than a suite job."
      : s.status === "failed"
        ? "The payment failed."
        : s.status === "expired"
          ? "The checkout expired before it was paid."
          : "The payment could not be matched to its quote; the operator has been notified.";
  return {
    body: `<section class="hero"><p class="badge badge-bad">Not paid</p><h1>No job from this checkout</h1>
<div class="notice notice-error" role="alert"><p>${e(why)}</p></div>
<p><a class="btn btn-primary" href="/jobs">Back to suite jobs</a></p></section>`,
  };
}

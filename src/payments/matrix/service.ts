import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { VERSIONS } from "../../versions.js";
import { checkoutPaymentMethods } from "../card/rails.js";
import { type ManualRail, type ManualRailId, manualRails, WIRE_TERMS } from "../manual/rails.js";
import { railReadiness } from "../readiness.js";
import { centsToAtomic, X402_HEADERS, x402Rails } from "../x402/rails.js";
import {
  type MatrixProduct,
  type PaymentRail,
  type PaymentsMatrix,
  RAIL_IDS,
  type RailId,
  type SuitePricing,
} from "./schemas.js";

/**
 * The payments matrix: every rail, whether this deployment has it configured, and how to pay
 * each product on it. A pure function of the configuration, the catalog and the route table;
 * nothing here is hand-copied (prices from the catalog, flags from each rail's own module,
 * endpoints from the routes actually registered).
 */

/** Does the app serve `method path`? (RouteTable-backed in the app, a set in tests.) */
export type HasRoute = (method: string, path: string) => boolean;

export interface MatrixDeps {
  config: Config;
  catalog: Catalog;
  hasRoute: HasRoute;
  /** The metered suite's pricing record (the suite owns its prices: src/jobs/pricing.ts). */
  suitePricing: SuitePricing;
}

/** Hosted-checkout method ids Stripe offers when eligible (dynamic payment methods). */
export const HOSTED_CHECKOUT_METHODS = [
  "card",
  "link",
  "cashapp",
  "amazon_pay",
  "us_bank_account",
  "affirm",
  "klarna",
] as const;

export const PREFERRED = { human: "card_checkout", agent: "x402_base_usdc", enterprise: "wire_invoice_ach" } as const;

const CLAIMS_ENDPOINT = "POST /api/claims";

/** Endpoints each rail may use; the matrix lists the ones the route table really has. */
const RAIL_ENDPOINTS: Record<RailId, string[]> = {
  card_checkout: ["POST /api/checkout", "POST /api/stripe/webhook"],
  card_payment_link: ["POST /api/stripe/webhook"],
  x402_solana_usdc: [
    "GET /api/x402-products",
    "POST /api/x402-products",
    "POST /api/x402-suite",
    "GET /.well-known/x402",
  ],
  x402_base_usdc: [
    "GET /api/x402-products",
    "POST /api/x402-products",
    "POST /api/x402-suite",
    "GET /.well-known/x402",
  ],
  crypto_manual_solana: [CLAIMS_ENDPOINT],
  crypto_manual_evm: [CLAIMS_ENDPOINT],
  crypto_manual_btc: [CLAIMS_ENDPOINT],
  redirect_link_checkout: [],
  wire_invoice_ach: [CLAIMS_ENDPOINT],
  suite_metered: ["POST /api/x402-suite", "POST /api/ppp-quote", "POST /api/ppp-checkout"],
};

/** Top-level endpoint pointers (name → "METHOD /path"); only registered ones are shown. */
const MATRIX_ENDPOINTS: Record<string, string> = {
  matrix: "GET /api/payments",
  catalog: "GET /api/x402-products",
  x402_products: "POST /api/x402-products",
  x402_suite: "POST /api/x402-suite",
  checkout: "POST /api/checkout",
  ppp_quote: "POST /api/ppp-quote",
  ppp_checkout: "POST /api/ppp-checkout",
  claims: CLAIMS_ENDPOINT,
  agent: "GET /api/agent",
  well_known_x402: "GET /.well-known/x402",
};

function served(hasRoute: HasRoute, endpoint: string): boolean {
  const [method, path] = endpoint.split(" ");
  return method !== undefined && path !== undefined && hasRoute(method, path);
}

/** `POST /api/checkout { "sku": "zrw-pro" }`: the spec's text form of a request. */
export function requestText(method: string, path: string, body: Record<string, string>): string {
  return `${method} ${path} ${JSON.stringify(body).replace(/^\{/, "{ ").replace(/\}$/, " }").replace(/":"/g, '": "')}`;
}

/**
 * mailto link to CONTACT_EMAIL carrying the sku (and rail) of a payment claim; null without a contact
 * address. When the claims API is served (`claimsUrl`), the body points to it as the faster way.
 */
export function claimMailto(
  config: Config,
  rail: RailId | undefined,
  product?: Product,
  claimsUrl?: string,
): string | null {
  if (!config.contactEmail) return null;
  const subject = product ? `Payment claim: ${product.sku}` : "Payment claim";
  const lines =
    rail === "wire_invoice_ach"
      ? [
          `SKU: ${product?.sku ?? "<sku>"}`,
          "Company legal name: ",
          "Billing address: ",
          "Preferred currency: ",
          "E-mail for the access link: ",
          ...(claimsUrl ? ["", `(Or file this request with POST ${claimsUrl}.)`] : []),
        ]
      : [
          `SKU: ${product?.sku ?? "<sku>"}`,
          ...(rail ? [`Rail: ${rail}`] : []),
          ...(product ? [`Amount (USD): ${product.amountUsd}`] : []),
          "Transaction signature or hash: ",
          "E-mail for the access link: ",
          ...(claimsUrl ? ["", `(Or file this claim with POST ${claimsUrl}.)`] : []),
        ];
  const subjectLine = rail === "wire_invoice_ach" ? subject.replace("Payment claim", "Invoice request") : subject;
  return `mailto:${config.contactEmail}?subject=${encodeURIComponent(subjectLine)}&body=${encodeURIComponent(lines.join("\n"))}`;
}

function claimsUrl(deps: MatrixDeps): string | undefined {
  return served(deps.hasRoute, CLAIMS_ENDPOINT) ? `${deps.config.baseUrl}/api/claims` : undefined;
}

function claimsApiText(hasRoute: HasRoute, rail: RailId): string | null {
  if (!served(hasRoute, CLAIMS_ENDPOINT)) return null;
  const fields = rail === "wire_invoice_ach" ? "company, billing_address, currency" : "tx";
  return `${CLAIMS_ENDPOINT} { sku, email, rail: "${rail}", ${fields} }`;
}

/**
 * Whether each rail can take money in this deployment: true only when it can verify and settle with
 * the current settings. The single place that decides is `railReadiness` (src/payments/readiness.ts),
 * which the rails' own modules also read (cardRailsConfigured, manualRails, x402Rails).
 * `hasRoute` is kept for callers; a rail's flag does not depend on the route table (its endpoints do).
 */
export function configuredFlags(config: Config, _hasRoute?: HasRoute): Record<RailId, boolean> {
  const ready = railReadiness(config);
  return Object.fromEntries(RAIL_IDS.map((id) => [id, ready[id].configured])) as Record<RailId, boolean>;
}

/** The settings each rail still needs (empty for a configured rail). */
export function missingSettings(config: Config): Record<RailId, string[]> {
  const ready = railReadiness(config);
  return Object.fromEntries(RAIL_IDS.map((id) => [id, [...ready[id].missing]])) as Record<RailId, string[]>;
}

/** Each rail's `configured` flag and `missing` settings. */
interface Flags {
  configured: Record<RailId, boolean>;
  missing: Record<RailId, string[]>;
}

function manualRail(m: ManualRail, deps: MatrixDeps, flags: Flags, product: Product | undefined): PaymentRail {
  const { config, hasRoute } = deps;
  const api = claimsApiText(hasRoute, m.id);
  const amount = product ? `${product.amountUsd} USD` : "the exact USD-equivalent of the price";
  const how =
    m.id === "wire_invoice_ach"
      ? [
          `E-mail an invoice request with the SKU, company legal name, billing address and preferred currency${config.contactEmail ? ` to ${config.contactEmail} (see claim)` : ""}.`,
          ...(api ? [`Or file it with ${api}.`] : []),
          `Approved accounts are invoiced on ${WIRE_TERMS} terms; access is granted when the invoice is paid.`,
        ]
      : [
          `Send the equivalent of ${amount} to payTo: ${m.asset_hint ?? "at the USD-equivalent"}.`,
          `E-mail the transaction signature or hash plus the SKU to claim access${config.contactEmail ? ` (see claim, ${config.contactEmail})` : ""}.`,
          ...(api ? [`Or file the claim with ${api}.`] : []),
          "Access is granted once the transfer is confirmed on chain.",
        ];
  const rail: PaymentRail = {
    id: m.id as ManualRailId,
    name: m.name,
    kind: m.id === "wire_invoice_ach" ? "offline" : "crypto_manual",
    audience: m.audience,
    configured: flags.configured[m.id],
    missing: flags.missing[m.id],
    note:
      m.id === "wire_invoice_ach"
        ? `For companies and larger orders. Default terms for approved accounts: ${WIRE_TERMS}. Settles in USD by bank transfer.`
        : "Manual crypto: send the exact USD-equivalent, then claim with the transaction signature or hash and the SKU. Settles on chain.",
    how,
    endpoints: RAIL_ENDPOINTS[m.id].filter((e) => served(hasRoute, e)),
    claim: claimMailto(config, m.id, product, claimsUrl(deps)),
    claim_api: api,
  };
  if (m.id === "wire_invoice_ach") {
    rail.terms = m.terms;
    return rail;
  }
  rail.network = m.network;
  rail.asset =
    m.id === "crypto_manual_solana" ? config.usdc.solana : m.id === "crypto_manual_evm" ? config.usdc.base : "BTC";
  rail.payTo = m.pay_to;
  rail.header = null;
  rail.asset_hint = m.asset_hint;
  rail.chains =
    m.id === "crypto_manual_solana"
      ? ["solana"]
      : m.id === "crypto_manual_evm"
        ? ["base", "other EVM chains at the same address (ask first)"]
        : ["bitcoin"];
  return rail;
}

function rails(deps: MatrixDeps, flags: Flags, product: Product | undefined): PaymentRail[] {
  const { config, hasRoute } = deps;
  const endpoints = (id: RailId) => RAIL_ENDPOINTS[id].filter((e) => served(hasRoute, e));
  const methods = checkoutPaymentMethods(config);
  const skuBody = product ? product.sku : "<sku>";
  const out: PaymentRail[] = [
    {
      id: "card_checkout",
      name: "Hosted card checkout (recommended for humans)",
      kind: "card",
      audience: ["humans", "agents_via_browser"],
      configured: flags.configured.card_checkout,
      missing: flags.missing.card_checkout,
      note: "Stripe-hosted checkout: cards with phone wallets and the other methods listed in payment_methods, offered when eligible. Settles in USD.",
      how: [
        `${requestText("POST", "/api/checkout", { sku: skuBody })} (optionally with email) → { url }.`,
        "Open url in a browser and pay.",
        "The page you return to shows your access link; it is also granted from the signed webhook.",
      ],
      endpoints: endpoints("card_checkout"),
      payment_methods: methods.mode === "allow_list" ? methods.methods : [...HOSTED_CHECKOUT_METHODS],
    },
    {
      id: "card_payment_link",
      name: "Static payment link per SKU",
      kind: "card",
      audience: ["humans"],
      configured: flags.configured.card_payment_link,
      missing: flags.missing.card_payment_link,
      note: "A fixed-price hosted payment page per SKU (products[].human_payment_link; null where none is configured). Settles in USD.",
      how: ["Open the product's human_payment_link and pay.", "Access is granted from the signed webhook."],
      endpoints: endpoints("card_payment_link"),
    },
  ];
  const manual = new Map(manualRails(config).map((m) => [m.id, m]));
  for (const rail of x402Rails(config)) {
    out.push({
      id: rail.id,
      name: rail.chain === "base" ? "x402 · USDC on Base" : "x402 · USDC on Solana",
      kind: "x402",
      audience: ["agents"],
      configured: flags.configured[rail.id],
      missing: flags.missing[rail.id],
      note: `Agents pay with x402 (scheme exact, ${rail.decimals} decimals: 1 cent = 10,000 atomic units). Send the proof in ${X402_HEADERS.paymentV1} or ${X402_HEADERS.paymentV2}; the 402 also carries ${X402_HEADERS.required} and success carries ${X402_HEADERS.responseV2} / ${X402_HEADERS.responseV1}. Stock x402 v2 clients cap a payment at $1 unless their operator raises it. Settles on chain.`,
      how: [
        `${requestText("POST", "/api/x402-products", { sku: skuBody })} without a payment header → 402 with accepts[] (one entry per configured rail).`,
        `Pay exactly amount${product ? ` (${centsToAtomic(product.amountCents)} units = ${product.amountUsd} USD)` : ""} of asset to payTo on ${rail.network}.`,
        `Repeat the request with the proof in ${X402_HEADERS.paymentV1} (or ${X402_HEADERS.paymentV2}) → 200 { order_id, access_url }.`,
      ],
      endpoints: endpoints(rail.id),
      network: rail.network,
      asset: rail.asset,
      payTo: rail.payTo ?? null,
      header: X402_HEADERS.paymentV1,
      asset_hint: `USDC (${rail.decimals} decimals) ${rail.chain === "base" ? "contract" : "mint"} ${rail.asset}`,
      chains: [rail.chain],
      claim: claimMailto(config, rail.id, product, claimsUrl(deps)),
      claim_api: null,
    });
  }
  for (const id of ["crypto_manual_solana", "crypto_manual_evm", "crypto_manual_btc"] as const) {
    const m = manual.get(id);
    if (m) out.push(manualRail(m, deps, flags, product));
  }
  out.push({
    id: "redirect_link_checkout",
    name: "Redirect-link checkout (third-party wallet)",
    kind: "redirect",
    audience: ["humans"],
    configured: flags.configured.redirect_link_checkout,
    missing: flags.missing.redirect_link_checkout,
    note: "A redirect to a third-party wallet's payment page. No such provider is integrated in this service; use card_checkout or card_payment_link.",
    how: ["Not available in this deployment."],
    endpoints: [],
  });
  const wire = manual.get("wire_invoice_ach");
  if (wire) out.push(manualRail(wire, deps, flags, product));
  const pricing = deps.suitePricing;
  out.push({
    id: "suite_metered",
    name: "Metered compression suite jobs",
    kind: "metered",
    audience: ["humans", "agents"],
    configured: flags.configured.suite_metered,
    missing: flags.missing.suite_metered,
    note: pricing.note,
    how: suiteHow(hasRoute),
    endpoints: endpoints("suite_metered"),
    pricing,
  });
  return out;
}

/** Suite steps for the suite endpoints that are served (the pricing holds either way). */
function suiteHow(hasRoute: HasRoute): string[] {
  const steps: [string, string][] = [
    [
      "POST /api/x402-suite",
      "Agents: POST /api/x402-suite { product, dataClass, op, bytes, email? } → free job, or 402 with a metered quote; pay and retry with X-PAYMENT → 200 { job_id }.",
    ],
    ["POST /api/ppp-quote", "Humans and agents: POST /api/ppp-quote for a quote."],
    ["POST /api/ppp-checkout", "Humans: POST /api/ppp-checkout to pay a metered job by card."],
  ];
  const how = steps.filter(([e]) => served(hasRoute, e)).map(([, text]) => text);
  return how.length > 0
    ? how
    : ["The suite job endpoints are not served by this deployment yet; the pricing below is what they charge."];
}

function productEntry(p: Product, deps: MatrixDeps): MatrixProduct {
  const { config } = deps;
  return {
    sku: p.sku,
    name: p.name,
    kind: p.kind,
    amount_cents: p.amountCents,
    amount_usd: p.amountUsd,
    max_amount_required: centsToAtomic(p.amountCents),
    checkout: requestText("POST", "/api/checkout", { sku: p.sku }),
    agent_x402: requestText("POST", "/api/x402-products", { sku: p.sku }),
    human_payment_link: config.paymentLinks[p.sku] ?? null,
    claim: claimMailto(config, undefined, p, claimsUrl(deps)),
  };
}

/** The whole matrix, or (with a product) the matrix narrowed to one product with sku-specific claims. */
export function paymentsMatrix(deps: MatrixDeps, product?: Product): PaymentsMatrix {
  const { config, catalog, hasRoute } = deps;
  const flags: Flags = { configured: configuredFlags(config, hasRoute), missing: missingSettings(config) };
  const all = rails(deps, flags, product);
  const endpoints: Record<string, string> = {};
  for (const [name, endpoint] of Object.entries(MATRIX_ENDPOINTS)) {
    if (!served(hasRoute, endpoint)) continue;
    const [method, path] = endpoint.split(" ");
    endpoints[name] = method === "GET" ? `${config.baseUrl}${path}` : `${method} ${config.baseUrl}${path}`;
  }
  const products = (product ? [product] : catalog.list()).map((p) => productEntry(p, deps));
  const methods = checkoutPaymentMethods(config);
  const matrix: PaymentsMatrix = {
    service: "Lab Phi universal payments",
    version: VERSIONS.payments,
    policy:
      "Humans pay by hosted card checkout or a static payment link; agents pay with x402 (USDC on Base or Solana); manual crypto and wire invoices are claimed by e-mail or the claims API. Every rail grants the same access, once, after proof of payment.",
    currency: "usd",
    contact: config.contactEmail ?? null,
    settlement: { card: "Card payments settle in USD.", crypto: "Crypto rails settle on chain." },
    endpoints,
    rails: all,
    payment_methods: {
      mode: methods.mode,
      methods: methods.mode === "allow_list" ? methods.methods : [...HOSTED_CHECKOUT_METHODS],
      note:
        methods.mode === "allow_list"
          ? "The hosted checkout offers exactly these methods (STRIPE_PAYMENT_METHODS)."
          : "Offered when eligible for the amount, currency and device (Stripe dynamic payment methods); card includes phone wallets.",
    },
    configured_rails: all.filter((r) => r.configured).map((r) => r.id),
    missing_or_optional: all.filter((r) => !r.configured).map((r) => r.id),
    products,
    preferred: { ...PREFERRED },
    suite_pricing: deps.suitePricing,
    manual_crypto:
      "Send the exact USD-equivalent to the rail's payTo, then e-mail the transaction signature or hash plus the SKU (the rail's claim link) to claim access.",
    wire_invoice: `E-mail an invoice request with the SKU, company legal name, billing address and preferred currency. Default terms for approved accounts: ${WIRE_TERMS}.`,
  };
  const first = products[0];
  if (product && first) {
    matrix.sku = product.sku;
    matrix.product = first;
  }
  return matrix;
}

import { PRODUCTS } from "../../../catalog/products.js";
import { stripeClient } from "../../../payments/card/stripe.js";
import { type Check, displayUrl, errorLine, fail, ok } from "../check.js";

/**
 * Card rails (Stripe): the secret key, proven with one read-only API call through the `stripe`
 * package at STRIPE_API_BASE (retrieving a Checkout Session that does not exist: Stripe answers
 * 404 `resource_missing` only to a valid key allowed to read Checkout Sessions, which is what the
 * card rail needs; 401 for a bad key, 403 for a restricted key without that permission), and the
 * webhook signing secret. Payment links: each `PAYMENT_LINK_<SKU>` an https URL of a product we
 * sell, with its `PAYMENT_LINK_ID_<SKU>`.
 */

const STRIPE_SETTINGS = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "STRIPE_API_BASE", "STRIPE_PAYMENT_METHODS"];
const hasLinks = (env: NodeJS.ProcessEnv) =>
  Object.entries(env).some(([k, v]) => k.startsWith("PAYMENT_LINK_") && (v ?? "").trim() !== "");
const stripeApplies = (_c: unknown, env: NodeJS.ProcessEnv) =>
  STRIPE_SETTINGS.some((n) => (env[n] ?? "").trim() !== "") || hasLinks(env);
const NOT_CONFIGURED = "not configured (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET enable card checkout)";

/** The id retrieved by the key check: no Checkout Session has it, so nothing is read but an error. */
export const PROBE_SESSION_ID = "cs_labphi_doctor_probe";

export const stripeKey: Check = {
  id: "stripe.key",
  part: "stripe",
  check: "secret key",
  applies: stripeApplies,
  notConfigured: NOT_CONFIGURED,
  async run(ctx) {
    const key = ctx.config.stripe.secretKey;
    if (!key) {
      return fail(
        "STRIPE_SECRET_KEY is not set",
        "set STRIPE_SECRET_KEY to a secret or restricted key (Stripe Dashboard → Developers → API keys)",
      );
    }
    const stripe = stripeClient(ctx.config);
    if (!stripe) return fail("STRIPE_SECRET_KEY is not set", "set STRIPE_SECRET_KEY");
    const where = ctx.config.stripe.apiBase ? displayUrl(ctx.config.stripe.apiBase) : "api.stripe.com";
    const mode = /_live_/.test(key) ? "live mode" : "test mode";
    try {
      await stripe.checkout.sessions.retrieve(PROBE_SESSION_ID, {}, { timeout: ctx.timeoutMs, maxNetworkRetries: 0 });
      return ok(`${where} accepts the key (${mode})`);
    } catch (err) {
      const e = err as { type?: string; statusCode?: number; code?: string };
      if (e.statusCode === 404 || e.code === "resource_missing") {
        return ok(`${where} accepts the key (${mode}; Checkout Sessions readable)`);
      }
      if (e.type === "StripeAuthenticationError" || e.statusCode === 401) {
        return fail(
          `${where} refuses STRIPE_SECRET_KEY (401: invalid, expired or rolled key)`,
          "copy the current secret key from Stripe Dashboard → Developers → API keys into STRIPE_SECRET_KEY",
        );
      }
      if (e.type === "StripePermissionError" || e.statusCode === 403) {
        return fail(
          `${where}: the key may not read Checkout Sessions (403)`,
          "give the restricted key write access to Checkout Sessions (and read to Charges, Disputes, Refunds), or use the secret key",
        );
      }
      return fail(
        `${where} did not answer: ${errorLine(err)}`,
        "check the network path to Stripe (and STRIPE_API_BASE, which only tests and proxies set)",
      );
    }
  },
};

export const stripeWebhook: Check = {
  id: "stripe.webhook_secret",
  part: "stripe",
  check: "webhook secret",
  applies: stripeApplies,
  notConfigured: NOT_CONFIGURED,
  async run(ctx) {
    const endpoint = `${ctx.config.baseUrl}/api/stripe/webhook`;
    if (!ctx.config.stripe.webhookSecret) {
      return fail(
        "STRIPE_WEBHOOK_SECRET is not set: card checkout stays off (paid sessions, refunds and disputes arrive by webhook)",
        `add a webhook endpoint ${endpoint} in Stripe Dashboard → Developers → Webhooks and set STRIPE_WEBHOOK_SECRET to its signing secret (whsec_…)`,
      );
    }
    return ok(`set; Stripe must send events to ${endpoint}`);
  },
};

const KNOWN_SKUS = new Set(PRODUCTS.map((p) => p.sku));

export const paymentLinks: Check = {
  id: "links.urls",
  part: "links",
  check: "payment links",
  applies: (_c, env) => hasLinks(env),
  notConfigured: "not configured (PAYMENT_LINK_<SKU> with PAYMENT_LINK_ID_<SKU> sell a product by link)",
  async run(ctx) {
    const links = ctx.config.paymentLinks;
    const ids = ctx.config.paymentLinkIds;
    const env = (sku: string) => sku.toUpperCase().replace(/-/g, "_");
    const problems: string[] = [];
    const fixes: string[] = [];
    for (const [sku, link] of Object.entries(links).sort()) {
      let u: URL | undefined;
      try {
        u = new URL(link);
      } catch {
        // refused below
      }
      if (u?.protocol !== "https:" || !u.hostname.includes(".") || u.username || u.password) {
        problems.push(`PAYMENT_LINK_${env(sku)} is not a plain https URL of a host`);
        fixes.push(`set PAYMENT_LINK_${env(sku)} to the link's https://buy.stripe.com/… URL`);
      }
      if (!KNOWN_SKUS.has(sku)) {
        problems.push(`PAYMENT_LINK_${env(sku)}: no product ${sku}`);
        fixes.push(`rename it after one of the products (${[...KNOWN_SKUS].join(", ")})`);
      }
      if (!ids[sku]) {
        problems.push(`PAYMENT_LINK_${env(sku)} has no PAYMENT_LINK_ID_${env(sku)}`);
        fixes.push(`set PAYMENT_LINK_ID_${env(sku)} to the link's id (plink_…): purchases are matched by it`);
      }
    }
    for (const sku of Object.keys(ids).sort()) {
      if (!links[sku]) {
        problems.push(`PAYMENT_LINK_ID_${env(sku)} has no PAYMENT_LINK_${env(sku)}`);
        fixes.push(`set PAYMENT_LINK_${env(sku)} to the link's URL, or remove the id`);
      }
    }
    if (problems.length > 0) return fail(problems.join("; "), fixes.join("; "));
    const n = Object.keys(links).length;
    return ok(`${n} link${n === 1 ? "" : "s"} (${Object.keys(links).sort().join(", ")}), each https with its id`);
  },
};

export const STRIPE_CHECKS: Check[] = [stripeKey, stripeWebhook, paymentLinks];

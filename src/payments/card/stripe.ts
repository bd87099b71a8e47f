import Stripe from "stripe";
import type { Config } from "../../config.js";

/**
 * The Stripe SDK client, or undefined when no secret key is configured. STRIPE_API_BASE
 * (e.g. http://127.0.0.1:12111) points the SDK at another host, port and protocol: a local
 * stand-in in tests, a proxy in production.
 */
export function stripeClient(config: Config): Stripe | undefined {
  const key = config.stripe.secretKey;
  if (!key) return undefined;
  const options: Stripe.StripeConfig = { maxNetworkRetries: 1, timeout: 15_000, telemetry: false };
  if (config.stripe.apiBase) {
    const u = new URL(config.stripe.apiBase);
    const protocol = u.protocol === "http:" ? "http" : "https";
    options.host = u.hostname;
    options.port = u.port !== "" ? Number(u.port) : protocol === "http" ? 80 : 443;
    options.protocol = protocol;
  }
  return new Stripe(key, options);
}

export type { Stripe };
/** The SDK class itself, for its static helpers (`StripeSdk.webhooks.constructEvent` needs no API key). */
export { Stripe as StripeSdk };

/** The id of an expandable Stripe field (string or object). */
export function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === "string" ? value : value.id;
}

import fastifyHelmet from "@fastify/helmet";
import fastifyStatic from "@fastify/static";
import type { Config } from "../config.js";
import type { App } from "../http/types.js";
import { ASSETS_PREFIX, loadWebAssets } from "./assets.js";

/** A year: the built files' names carry their content hash, so they never change in place. */
const YEAR_MS = 365 * 24 * 3600 * 1000;

/**
 * The front-end's built files at /assets/ (hashed names: `Cache-Control: public, max-age=31536000,
 * immutable`; pages themselves are `no-cache`), and the security headers of every answer
 * (@fastify/helmet): a Content-Security-Policy with no inline script or style and nothing from
 * another origin, which the pages satisfy because every script and the stylesheet are files here.
 */
export async function registerWebAssets(app: App, config: Config): Promise<void> {
  const assets = await loadWebAssets();
  const https = config.baseUrl.startsWith("https://");
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        // no form-action: the checkout form's 303 goes to Stripe's hosted page (Chromium applies
        // form-action to the redirect too)
        ...(https ? { "upgrade-insecure-requests": [] } : {}),
      },
    },
    // Agents' browsers read discovery documents and API answers from other origins (CORS).
    crossOriginResourcePolicy: { policy: "cross-origin" },
    crossOriginOpenerPolicy: { policy: "same-origin" },
    // HSTS only where the service is reached over https.
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
    referrerPolicy: { policy: "strict-origin-when-cross-origin" },
  });
  await app.register(fastifyStatic, {
    root: assets.dir,
    prefix: ASSETS_PREFIX,
    decorateReply: false,
    wildcard: false,
    index: false,
    immutable: true,
    maxAge: YEAR_MS,
    cacheControl: true,
    etag: true,
    lastModified: false,
  });
}

import { randomUUID } from "node:crypto";
import cors from "@fastify/cors";
import Fastify from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { DestinationStream } from "pino";
import { adminRoutes } from "./admin/routes.js";
import { catalogRoutes } from "./catalog/routes.js";
import { Catalog } from "./catalog/service.js";
import type { Config } from "./config.js";
import type { Db } from "./db/database.js";
import { discoveryRoutes } from "./discovery/routes.js";
import { engineRoutes } from "./engine/routes.js";
import { EngineService } from "./engine/service.js";
import { adminGuard } from "./http/admin-auth.js";
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from "./http/errors.js";
import { createLogger } from "./http/logger.js";
import { Metrics } from "./http/metrics.js";
import { registerOpenApi } from "./http/openapi.js";
import { registerRateLimits } from "./http/rate-limit.js";
import { OneLineRequestLog } from "./http/request-log.js";
import { RouteTable } from "./http/route-table.js";
import type { App } from "./http/types.js";
import { identityRoutes } from "./identity/routes.js";
import { IdentityService } from "./identity/service.js";
import { JobService } from "./jobs/service.js";
import { opsRoutes } from "./ops/routes.js";
import { LicenseService, licenseRoutes } from "./orders/license-routes.js";
import { OrderRecovery } from "./orders/recovery.js";
import { recoveryRoutes } from "./orders/recovery-routes.js";
import { orderRoutes } from "./orders/routes.js";
import { OrderService } from "./orders/service.js";
import { cardRoutes } from "./payments/card/routes.js";
import { CardService } from "./payments/card/service.js";
import { stripeClient } from "./payments/card/stripe.js";
import { claimRoutes } from "./payments/manual/routes.js";
import { ClaimService } from "./payments/manual/service.js";
import { paymentsMatrixRoutes } from "./payments/matrix/routes.js";
import { warnHalfConfiguredRails } from "./payments/readiness.js";
import { x402Routes } from "./payments/x402/routes.js";
import { X402Service } from "./payments/x402/service.js";
import { serviceKeys } from "./secrets.js";
import { payPages } from "./web/pages/pay.js";

export interface AppOptions {
  config: Config;
  db: Db;
  /** Defaults to the fixed catalog; tests pass one with a changed price. */
  catalog?: Catalog;
  /** Where log lines go instead of stdout (tests capture them). */
  logStream?: DestinationStream;
}

/** Services built by the composition root, exposed for tests and the CLI. */
export interface Services {
  config: Config;
  db: Db;
  catalog: Catalog;
  orders: OrderService;
  card: CardService;
  claims: ClaimService;
  x402: X402Service;
  metrics: Metrics;
  routes: RouteTable;
  engine: EngineService;
  identities: IdentityService;
  jobs: JobService;
}

declare module "fastify" {
  interface FastifyInstance {
    services: Services;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Exposed to browser-based agents (CORS): the x402 and tracing headers. */
export const EXPOSED_HEADERS = [
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "X-PAYMENT-RESPONSE",
  "X-Request-Id",
  "Retry-After",
  "Location",
  "X-Original-Bytes",
  "X-Compressed-Bytes",
  "X-Codec-Path",
  "X-Codec-Chamber",
  "X-Codec-Chambers",
  "X-Codec-Level",
  "X-Data-Class",
  "X-Dataset-Print",
];

/** Fastify's timeout options from the settings (docs/limits.md). */
export function httpTimeouts(config: Config) {
  const requestTimeout = config.http.requestTimeoutSeconds * 1000;
  return {
    requestTimeout,
    connectionTimeout: config.http.connectionTimeoutSeconds * 1000,
    // Longer than the idle timeout of common load balancers (60 s), so they close first.
    keepAliveTimeout: 72_000,
    http: {
      requestTimeout,
      headersTimeout: Math.min(requestTimeout, 15_000),
      // Node's default checks timeouts every 30 s: a 30 s bound could become 60.
      connectionsCheckingInterval: Math.min(250, requestTimeout),
    },
  };
}

/** The composition root: builds every service and registers every domain's routes. */
export async function buildApp(options: AppOptions): Promise<App> {
  const { config, db } = options;
  const catalog = options.catalog ?? new Catalog();

  const logger = createLogger(config, { stream: options.logStream });
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.bodyLimitBytes,
    // Hostile input (docs/limits.md): a request must arrive whole within REQUEST_TIMEOUT_SECONDS
    // (408 problem, connection closed), its headers within min(that, 15 s); a silent socket is
    // closed after CONNECTION_TIMEOUT_SECONDS. Node checks these every quarter second.
    ...httpTimeouts(config),
    // TRUST_PROXY: a hop count trusts that many proxies nearest the server (Fastify's number form).
    trustProxy:
      typeof config.http.trustProxy === "number"
        ? (_address: string, hop: number) => hop < (config.http.trustProxy as number)
        : config.http.trustProxy,
    clientErrorHandler,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: "idle",
    routerOptions: { maxParamLength: 200 },
    frameworkErrors,
    logController: new OneLineRequestLog(),
    // No child logger per request (it costs more than the log line itself): every line that
    // concerns a request names its request id explicitly (reqId).
    childLoggerFactory: (logger) => logger,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  const routes = new RouteTable();
  routes.attach(app);
  const metrics = new Metrics();
  metrics.attach(app);
  registerErrorHandling(app, routes);
  // Per-IP limits of paid, checkout, join and codec routes: before any route is registered.
  await registerRateLimits(app, config);
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("X-Request-Id", request.id);
    done();
  });
  await app.register(cors, {
    // Any origin may read (no credentials are ever used); requests without an Origin header
    // (servers, agents outside a browser) get no CORS headers at all.
    origin: (origin: string | undefined, cb: (err: Error | null, allow: string | boolean) => void) =>
      cb(null, origin ? "*" : false),
    methods: ["GET", "HEAD", "POST", "OPTIONS"],
    allowedHeaders: [
      "Content-Type",
      "X-PAYMENT",
      "PAYMENT-SIGNATURE",
      "X-Request-Id",
      "Authorization",
      "Accept",
      "X-Identity-Token",
      "Idempotency-Key",
    ],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // A stray OPTIONS that is not a CORS preflight gets an empty 204, not a text error.
    strictPreflight: false,
  });
  await registerOpenApi(app, config);

  // Service keys: environment, or DATA_DIR/secrets.json outside production; never the database.
  const keys = await serviceKeys(config, db.kysely, app.log);
  const orders = new OrderService(db.kysely, catalog, config.baseUrl, keys.accessToken);
  const requireAdmin = adminGuard(config.adminToken);
  const card = new CardService(db.kysely, orders, catalog, config, stripeClient(config));
  const claims = new ClaimService(db.kysely, orders, catalog, config);
  // Reads the Base chain id (refuses to start on a mismatch) and sets up the facilitator.
  const x402 = new X402Service(db.kysely, config, catalog, orders, app.log);
  await x402.init();
  app.addHook("onClose", async () => x402.stop());

  const identities = new IdentityService(db.kysely, keys.identityToken, config.identity.tokenTtlDays);
  const engine = new EngineService(db.kysely, config.codec, keys.datasetPrint, app.log);
  await engine.init();

  // --- suite jobs (issue #10): services are built here (one targeted line each) ---
  const jobs = new JobService(db.kysely, config.baseUrl);
  // --- end suite jobs services ---

  const services: Services = {
    config,
    db,
    catalog,
    orders,
    card,
    claims,
    x402,
    metrics,
    routes,
    engine,
    identities,
    jobs,
  };
  app.decorate("services", services);
  // One warning per half-configured payment rail (some of its settings given, not all: it stays off).
  warnHalfConfiguredRails(config, app.log);

  opsRoutes(app, { db, metrics });
  catalogRoutes(app, { catalog, config });
  orderRoutes(app, { orders, catalog, requireAdmin, baseUrl: config.baseUrl });
  licenseRoutes(app, { licenses: new LicenseService(db.kysely, catalog) });
  recoveryRoutes(app, {
    recovery: new OrderRecovery(db.kysely, orders, {
      baseUrl: config.baseUrl,
      baseChainId: config.x402.baseChainId,
      evmClient: () => x402.settlement.evmClient,
    }),
  });
  cardRoutes(app, { card });
  claimRoutes(app, { claims });
  x402Routes(app, { x402, config, requireAdmin });
  adminRoutes(app, { db: db.kysely, orders, claims, card, requireAdmin });
  payPages(app, { catalog, config, card, claims });
  paymentsMatrixRoutes(app, { config, catalog, routes });
  discoveryRoutes(app, { config, catalog, routes });
  identityRoutes(app, { identities });
  engineRoutes(app, { engine, identities });
  // --- suite jobs (issue #10): routes are registered here (one targeted line each) ---
  // --- end suite jobs routes ---

  await app.ready();
  // Recover x402 proofs left between settlement and order (crash, timeout), then keep reconciling.
  await x402.start(config.env === "test" ? 0 : 30_000);
  return app;
}

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
import { adminGuard } from "./http/admin-auth.js";
import { clientErrorHandler, frameworkErrors, registerErrorHandling, sentProblems } from "./http/errors.js";
import { createLogger, safeError } from "./http/logger.js";
import { Metrics } from "./http/metrics.js";
import { registerOpenApi } from "./http/openapi.js";
import { registerRateLimits } from "./http/rate-limit.js";
import { OneLineRequestLog } from "./http/request-log.js";
import { RouteTable } from "./http/route-table.js";
import type { App } from "./http/types.js";
import { identityRoutes } from "./identity/routes.js";
import { jobListingRoutes } from "./jobs/listing-routes.js";
import { suitePricingRecord } from "./jobs/pricing.js";
import { suitePurchaseRoutes } from "./jobs/purchase-routes.js";
import { quoteRoutes } from "./jobs/quotes/routes.js";
import { jobRoutes } from "./jobs/routes.js";
import { tusLockerFor } from "./jobs/tus-locker.js";
import { mcpRoutes } from "./mcp/http.js";
import { olympiadDocumentRoutes } from "./olympiad/documents/routes.js";
import { olympiadActionRoutes } from "./olympiad/entry/action-routes.js";
import { taskRoutes } from "./olympiad/events/tasks/routes.js";
import { governanceRoutes } from "./olympiad/governance/routes.js";
import { recordsRoutes } from "./olympiad/results/routes.js";
import { opsRoutes } from "./ops/routes.js";
import { registerServiceMetrics } from "./ops/service-metrics.js";
import { licenseRoutes } from "./orders/license-routes.js";
import { recoveryRoutes } from "./orders/recovery-routes.js";
import { orderRoutes } from "./orders/routes.js";
import { cardRoutes } from "./payments/card/routes.js";
import { claimRoutes } from "./payments/manual/routes.js";
import { paymentsMatrixRoutes, routeTableLookup } from "./payments/matrix/routes.js";
import { warnHalfConfiguredRails } from "./payments/readiness.js";
import { withChallengeHeaders } from "./payments/x402/http.js";
import { x402Routes } from "./payments/x402/routes.js";
import { receiptRoutes } from "./receipts/routes.js";
import { refundRoutes } from "./refunds/routes.js";
import { buildServices, type Services } from "./services.js";
import { homePage } from "./web/pages/home.js";
import { jobsPages } from "./web/pages/jobs.js";
import { olympiadPages } from "./web/pages/olympiad.js";
import { payPages } from "./web/pages/pay.js";
import { standingsPages } from "./web/pages/standings.js";
import { webDemoPages } from "./web/pages/web-demo.js";
import { registerWebAssets } from "./web/static.js";

export interface AppOptions {
  config: Config;
  db: Db;
  /** Defaults to the fixed catalog; tests pass one with a changed price. */
  catalog?: Catalog;
  /** Where log lines go instead of stdout (tests capture them). */
  logStream?: DestinationStream;
  /** Start the in-service worker's codec threads at once (`npm start` does; tests do not). */
  warmWorker?: boolean;
}

/** The services (src/services.ts) plus the HTTP pieces the app adds, exposed for tests. */
export interface AppServices extends Services {
  metrics: Metrics;
  routes: RouteTable;
}

declare module "fastify" {
  interface FastifyInstance {
    services: AppServices;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Exposed to browser-based agents (CORS): the x402 and tracing headers. */
export const EXPOSED_HEADERS = [
  "PAYMENT-REQUIRED",
  "PAYMENT-RESPONSE",
  "X-PAYMENT-RESPONSE",
  // MPP (src/payments/mpp/http.ts): the challenges of a 402 and the receipt of a paid answer
  "WWW-Authenticate",
  "Payment-Receipt",
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
  // A refused x402 payment that reaches here carries its challenge: its header is built at this edge.
  registerErrorHandling(app, routes, withChallengeHeaders);
  // Per-IP limits of paid, checkout, join and codec routes: before any route is registered.
  // (on PostgreSQL the counters are shared by every instance; MCP tool calls count in them too)
  const rateLimiter = await registerRateLimits(app, config, db);
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
      "Payment-Authorization",
      "Accept-Payment",
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
  // Security headers (CSP) and the human pages' built assets at /assets/ (src/web/static.ts).
  await registerWebAssets(app, config);

  const built = await buildServices({
    config,
    db,
    catalog,
    log: app.log,
    ...(options.warmWorker ? { worker: { start: config.jobRunner.workerInService, warm: true } } : {}),
  });
  // Route handlers stop first (server close), then the runner, the reconciler and the object store.
  app.addHook("onClose", async () => built.close());
  const services: AppServices = { ...built, metrics, routes };
  // OPS begin (settlement, queue and admission metrics: docs/operations.md "Metrics and alerts")
  const serviceMetrics = registerServiceMetrics(metrics.registry, { db: db.kysely, x402: built.x402 });
  app.addHook("onResponse", (_request, reply, done) => {
    const code = sentProblems.get(reply);
    if (code) serviceMetrics.problem(reply.statusCode, code);
    done();
  });
  // OPS end
  const { orders, card, claims, x402, engine, identities, jobs, quotes, suitePurchase } = built;
  const requireAdmin = adminGuard(config.adminToken);
  app.decorate("services", services);
  // One warning per half-configured payment rail (some of its settings given, not all: it stays off).
  warnHalfConfiguredRails(config, app.log);

  opsRoutes(app, { db, metrics });
  catalogRoutes(app, { catalog, config });
  orderRoutes(app, { orders, catalog, requireAdmin, baseUrl: config.baseUrl, receipt: built.orderReceipt });
  receiptRoutes(app, { receipts: built.receipts, orders, orderReceipt: built.orderReceipt });
  licenseRoutes(app, { licenses: built.licenses });
  recoveryRoutes(app, { recovery: built.recovery });
  refundRoutes(app, { refunds: built.refunds, requireAdmin });
  cardRoutes(app, { card });
  claimRoutes(app, { claims });
  x402Routes(app, { x402, config, requireAdmin });
  adminRoutes(app, { db: db.kysely, orders, claims, card, requireAdmin });
  // W-B begin (human pages: home, pay, checkout results)
  homePage(app, { catalog, config });
  payPages(app, { catalog, config, card, claims });
  // W-B end
  // W-C begin (codec demo page)
  webDemoPages(app, { engine, config });
  // W-C end
  // W-D begin (suite jobs page)
  jobsPages(app, { config, card });
  // W-D end
  // W-E begin (olympiad and standings pages)
  olympiadPages(app, {
    documents: built.olympiad,
    governance: built.governance,
    catalog,
    baseUrl: config.baseUrl,
    config,
    tasks: built.olympiadTasks,
  });
  standingsPages(app, { records: built.olympiadRecords, db: db.kysely });
  // W-E end
  paymentsMatrixRoutes(app, { config, catalog, routes, suitePricing: suitePricingRecord() });
  discoveryRoutes(app, { config, catalog, routes });
  identityRoutes(app, { identities });
  engineRoutes(app, { engine, identities });
  quoteRoutes(app, { quotes, identities, ttlSeconds: config.suiteQuotes.ttlSeconds });
  suitePurchaseRoutes(app, { purchase: suitePurchase, identities });
  const tusLocker = tusLockerFor(db, config, (err) =>
    app.log.warn({ err: safeError(err) }, "tus locker: connection failed"),
  );
  if (tusLocker) app.addHook("onClose", async () => tusLocker.close());
  jobRoutes(app, {
    jobs,
    dataDir: config.dataDir,
    baseUrl: config.baseUrl,
    minFreeDiskBytes: config.jobData.minFreeDiskBytes,
    outputUrlTtlSeconds: config.jobData.outputUrlTtlSeconds,
    // PostgreSQL: a tus upload's PATCH requests may land on any instance (advisory locks)
    locker: tusLocker,
  });
  jobListingRoutes(app, { jobs, manager: built.jobManager, identities });
  // olympiad routes: O1 begin
  olympiadDocumentRoutes(app, { documents: built.olympiad });
  // olympiad routes: O1 end
  // olympiad routes: O2 begin
  olympiadActionRoutes(app, {
    participants: built.participants,
    entry: built.olympiadEntry,
    teams: built.teams,
    governance: built.governance,
    identities,
    baseUrl: config.baseUrl,
  });
  // olympiad routes: O2 end
  // olympiad routes: O3 begin
  governanceRoutes(app, { governance: built.governance, requireAdmin });
  // olympiad routes: O3 end
  // olympiad routes: O4 begin
  recordsRoutes(app, { records: built.olympiadRecords, db: db.kysely, requireAdmin });
  // scored olympiad events (issue #26, docs/olympiad-tasks.md)
  taskRoutes(app, { tasks: built.olympiadTasks, participants: built.participants, requireAdmin });
  // olympiad routes: O4 end
  // M1 begin
  // The MCP server over streamable HTTP, built from the same services (docs/mcp.md).
  mcpRoutes(app, {
    ...built,
    hasRoute: routeTableLookup(routes),
    rateLimiter,
    onError: (err) => app.log.error({ err: safeError(err) }, "mcp: unexpected tool failure"),
  });
  // M1 end

  await app.ready();
  // Recover x402 proofs left between settlement and order (crash, timeout), then keep reconciling.
  await x402.start(config.env === "test" ? 0 : 30_000);
  // Refunds left between signing and confirmation (crash, timeout): the stored transaction decides.
  await built.refunds.start(config.env === "test" ? 0 : 30_000);
  return app;
}

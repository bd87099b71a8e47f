import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { Catalog } from "./catalog/service.js";
import type { Config } from "./config.js";
import type { Db } from "./db/database.js";
import { EngineService } from "./engine/service.js";
import { IdentityService } from "./identity/service.js";
import { SuitePurchase } from "./jobs/purchase.js";
import { openTaskQueue } from "./jobs/queue/index.js";
import { QuoteService } from "./jobs/quotes.js";
import { JobRunner } from "./jobs/runner.js";
import { JobService } from "./jobs/service.js";
import { createObjectStore } from "./jobs/storage/index.js";
import type { ObjectStore } from "./jobs/storage/types.js";
import { LicenseService } from "./orders/license-routes.js";
import { OrderRecovery } from "./orders/recovery.js";
import { OrderService } from "./orders/service.js";
import { CardService } from "./payments/card/service.js";
import { stripeClient } from "./payments/card/stripe.js";
import { ClaimService } from "./payments/manual/service.js";
import { X402Service } from "./payments/x402/service.js";
import { serviceKeys } from "./secrets.js";

/**
 * The composition root of the domain: builds every service from the settings, the database and a
 * logger, with no HTTP. The web app (`app.ts`) registers routes over these services; `labphi worker`
 * runs the same services' job runner without a web server (and an MCP server can do the same).
 */

export interface ServiceOptions {
  config: Config;
  db: Db;
  /** Defaults to the fixed catalog; tests pass one with a changed price. */
  catalog?: Catalog;
  /** A pino logger (the web app passes its own); silent when omitted. */
  log?: FastifyBaseLogger;
  /**
   * Run suite-job segments in this process: the web app follows JOB_WORKER_IN_SERVICE, `labphi
   * worker` always does (with its own concurrency and threads).
   */
  worker?: { start: boolean; concurrency?: number; threads?: number; say?: (line: string) => void };
}

export interface Services {
  config: Config;
  db: Db;
  catalog: Catalog;
  orders: OrderService;
  card: CardService;
  claims: ClaimService;
  x402: X402Service;
  engine: EngineService;
  identities: IdentityService;
  licenses: LicenseService;
  recovery: OrderRecovery;
  jobs: JobService;
  quotes: QuoteService;
  suitePurchase: SuitePurchase;
  storage: ObjectStore;
  /** Suite-job runner: the jobs' scheduler, and a segment worker when `worker.start`. */
  runner: JobRunner;
  // olympiad service fields: O1 begin
  // olympiad service fields: O1 end
  // olympiad service fields: O2 begin
  // olympiad service fields: O2 end
  // olympiad service fields: O3 begin
  // olympiad service fields: O3 end
  // olympiad service fields: O4 begin
  // olympiad service fields: O4 end
  /** Stops the runner (running segments finish or go back to the queue), the reconciler and the object store. */
  close(): Promise<void>;
}

export async function buildServices(options: ServiceOptions): Promise<Services> {
  const { config, db } = options;
  const catalog = options.catalog ?? new Catalog();
  const log = options.log ?? (pino({ level: "silent" }) as unknown as FastifyBaseLogger);

  // Service keys: environment, or DATA_DIR/secrets.json outside production; never the database.
  const keys = await serviceKeys(config, db.kysely, log);
  const orders = new OrderService(db.kysely, catalog, config.baseUrl, keys.accessToken);
  const card = new CardService(db.kysely, orders, catalog, config, stripeClient(config));
  const claims = new ClaimService(db.kysely, orders, catalog, config);
  // Reads the Base chain id (refuses to start on a mismatch) and sets up the facilitator.
  const x402 = new X402Service(db.kysely, config, catalog, orders, log);
  await x402.init();
  const identities = new IdentityService(db.kysely, keys.identityToken, config.identity.tokenTtlDays);
  const engine = new EngineService(db.kysely, config.codec, keys.datasetPrint, log);
  await engine.init();
  const licenses = new LicenseService(db.kysely, catalog);
  const recovery = new OrderRecovery(db.kysely, orders, {
    baseUrl: config.baseUrl,
    baseChainId: config.x402.baseChainId,
    evmClient: () => x402.settlement.evmClient,
  });

  // Suite jobs: a paid quote buys its job through the order core; x402 and card answer with it.
  const jobs = new JobService(db.kysely, config.baseUrl, keys.accessToken);
  const quotes = new QuoteService(db.kysely, { ttlSeconds: config.suiteQuotes.ttlSeconds });
  orders.setQuoteFulfiller(async (quoteId, paid, trx) => jobs.fulfilQuote(quoteId, paid, trx));
  jobs.usage = quotes.usage;
  x402.jobs = jobs;
  card.jobs = jobs;
  const suitePurchase = new SuitePurchase(db.kysely, quotes, jobs, x402, card, config.baseUrl);
  const storage = createObjectStore(config);
  const worker = options.worker ?? { start: config.jobRunner.workerInService };
  const runner = new JobRunner({
    db: db.kysely,
    store: storage,
    queue: openTaskQueue(config, db, (m) => log.warn(m)),
    segmentBytes: config.jobRunner.segmentBytes,
    attempts: config.jobRunner.segmentAttempts,
    threads: worker.threads ?? config.jobRunner.workerThreads,
    concurrency: worker.concurrency ?? config.jobRunner.workerConcurrency,
    log: worker.say ?? ((line: string) => log.info(line)),
  });
  jobs.scheduler = runner;
  if (worker.start) await runner.start();

  // olympiad: documents (O1) begin
  // olympiad: documents (O1) end
  // olympiad: participants, entry, teams (O2) begin
  // olympiad: participants, entry, teams (O2) end
  // olympiad: governance (O3) begin
  // olympiad: governance (O3) end
  // olympiad: records, standings, hash chain (O4) begin
  // olympiad: records, standings, hash chain (O4) end

  let closed: Promise<void> | undefined;
  return {
    config,
    db,
    catalog,
    orders,
    card,
    claims,
    x402,
    engine,
    identities,
    licenses,
    recovery,
    jobs,
    quotes,
    suitePurchase,
    storage,
    runner,
    // olympiad returned services: O1 begin
    // olympiad returned services: O1 end
    // olympiad returned services: O2 begin
    // olympiad returned services: O2 end
    // olympiad returned services: O3 begin
    // olympiad returned services: O3 end
    // olympiad returned services: O4 begin
    // olympiad returned services: O4 end
    close() {
      closed ??= (async () => {
        await runner.stop({ graceMs: 5_000 });
        await x402.stop();
        await storage.close();
      })();
      return closed;
    },
  };
}

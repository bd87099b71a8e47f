import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { Catalog } from "./catalog/service.js";
import type { Config } from "./config.js";
import type { Db } from "./db/database.js";
import { EngineService } from "./engine/service.js";
import { IdentityService } from "./identity/service.js";
import { SuitePurchase } from "./jobs/purchase.js";
import type { SuiteRequest } from "./jobs/quote-schemas.js";
import { QuoteService } from "./jobs/quotes.js";
import type { JobRetention } from "./jobs/retention.js";
import type { JobRunner } from "./jobs/runner.js";
import { buildJobRuntime, type WorkerOptions } from "./jobs/runtime.js";
import { JobService } from "./jobs/service.js";
import type { ObjectStore } from "./jobs/storage/types.js";
import { OlympiadDocuments, tableProviders } from "./olympiad/documents.js";
import { OlympiadEntry } from "./olympiad/entry.js";
import { Governance } from "./olympiad/governance.js";
import { Participants } from "./olympiad/participants.js";
import { OlympiadRecords } from "./olympiad/records.js";
import { Teams } from "./olympiad/teams.js";
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
 * builds only their suite-job runtime (`jobs/runtime.ts`, the same builder used here), without a
 * web server and without the payment rails' module graph (and an MCP server can do the same).
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
  worker?: WorkerOptions;
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
  /** The retention sweep of job data (src/jobs/retention.ts): runs every JOB_SWEEP_INTERVAL_SECONDS. */
  retention: JobRetention | undefined;
  // olympiad service fields: O1 begin
  /** The olympiad documents: GET /api/olympiad (record and views) and /olympiad.json (src/olympiad/documents.ts). */
  olympiad: OlympiadDocuments;
  // olympiad service fields: O1 end
  // olympiad service fields: O2 begin
  /** Olympiad participants and their bearer tokens (src/olympiad/participants.ts). */
  participants: Participants;
  /** Olympiad intents and paid entries (src/olympiad/entry.ts). */
  olympiadEntry: OlympiadEntry;
  /** Olympiad teams under the ratio rule (src/olympiad/teams.ts). */
  teams: Teams;
  // olympiad service fields: O2 end
  // olympiad service fields: O3 begin
  /** Olympiad proposals, votes, weighted tallies and operator-appointed roles. */
  governance: Governance;
  // olympiad service fields: O3 end
  // olympiad service fields: O4 begin
  /** Olympiad records on hash chain `olympiad`, standings and their documents (src/olympiad/records.ts). */
  olympiadRecords: OlympiadRecords;
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
  const identities = new IdentityService(db.kysely, keys.identityToken, config.identity.tokenTtlDays, undefined, {
    perIpPerDay: config.identity.issuePerIpPerDay,
  });
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
  // Free volume per caller (issue #21): the client IP is kept as a keyed hash (the identity-token key).
  const quotes = new QuoteService(db.kysely, {
    ttlSeconds: config.suiteQuotes.ttlSeconds,
    anonFreeBytesPerDay: config.suiteFree.anonBytesPerDay,
    ipKey: keys.identityToken,
  });
  orders.setQuoteFulfiller(async (quoteId, paid, trx) => jobs.fulfilQuote(quoteId, paid, trx));
  jobs.usage = quotes.usage;
  x402.jobs = jobs;
  card.jobs = jobs;
  const suitePurchase = new SuitePurchase(db.kysely, quotes, jobs, x402, card, config.baseUrl, {
    limits: {
      runningPerCaller: config.suiteFree.runningPerCaller,
      queuedPerCaller: config.suiteFree.queuedPerCaller,
      queueBytes: config.suiteFree.queueBytes,
    },
  });
  const {
    storage,
    runner,
    retention,
    close: closeJobs,
  } = await buildJobRuntime({
    config,
    db,
    worker: options.worker ?? { start: config.jobRunner.workerInService },
    info: (line) => log.info(line),
    warn: (line) => log.warn(line),
    // job data expires (JOB_RETENTION_HOURS); the service also cleans its tus spool
    sweep: true,
  });
  jobs.scheduler = runner;
  jobs.retentionHours = config.jobData.retentionHours;
  // a decompress job whose records declare more than its quote is refused with a fresh quote (issue #21)
  runner.requote = (job, bytes) =>
    quotes.quote(
      {
        product: job.product as SuiteRequest["product"],
        dataClass: job.data_class as SuiteRequest["dataClass"],
        op: "decompress",
        level: job.level as SuiteRequest["level"],
        bytes,
        ...(job.email ? { email: job.email } : {}),
      },
      job.identity_id ? { id: job.identity_id } : null,
    );

  // olympiad: documents (O1) begin
  // The proposals view is the governance service's (built below; called only at request time).
  const olympiad = new OlympiadDocuments({ config, catalog, providers: tableProviders(db.kysely) });
  olympiad.use({ proposals: (page) => governance.proposalsView(page) });
  // olympiad: documents (O1) end
  // olympiad: participants, entry, teams (O2) begin
  const participants = new Participants(db.kysely, {
    baseUrl: config.baseUrl,
    challengeTtlSeconds: config.olympiadGovernance.agentChallengeTtlSeconds,
    registrationsPerIpPerDay: config.olympiadGovernance.registrationsPerIpPerDay,
    ipKey: keys.identityToken,
  });
  const olympiadEntry = new OlympiadEntry(db.kysely, { config, catalog, orders, x402 });
  const teams = new Teams(db.kysely, config);
  // olympiad: participants, entry, teams (O2) end
  // olympiad: governance (O3) begin
  const governance = new Governance(db.kysely, {
    caps: {
      maxOpen: config.olympiadGovernance.maxOpenProposals,
      perTeam: config.olympiadGovernance.maxOpenProposalsPerTeam,
      perParticipant: config.olympiadGovernance.maxOpenProposalsPerParticipant,
    },
    audit: (actor, action, subject, detail) => orders.audit(actor, action, subject, detail),
  });
  // olympiad: governance (O3) end
  // olympiad: records, standings, hash chain (O4) begin
  const olympiadRecords = new OlympiadRecords(db.kysely, config, (actor, action, subject, detail, trx) =>
    orders.audit(actor, action, subject, detail, trx),
  );
  olympiad.use({
    records: () => olympiadRecords.recordsView(),
    eventsCompleted: (seasonId) => olympiadRecords.eventsCompleted(seasonId),
  });
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
    retention,
    // olympiad returned services: O1 begin
    olympiad,
    // olympiad returned services: O1 end
    // olympiad returned services: O2 begin
    participants,
    olympiadEntry,
    teams,
    // olympiad returned services: O2 end
    // olympiad returned services: O3 begin
    governance,
    // olympiad returned services: O3 end
    // olympiad returned services: O4 begin
    olympiadRecords,
    // olympiad returned services: O4 end
    close() {
      closed ??= (async () => {
        await closeJobs({ graceMs: 5_000 });
        await x402.stop();
      })();
      return closed;
    },
  };
}

import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { Catalog } from "./catalog/service.js";
import type { Config } from "./config.js";
import type { Db } from "./db/database.js";
import { EngineService } from "./engine/service.js";
import { IdentityService } from "./identity/service.js";
import { JobManager } from "./jobs/manage.js";
import { SuitePurchase } from "./jobs/purchase.js";
import type { SuiteRequest } from "./jobs/quotes/schemas.js";
import { QuoteService } from "./jobs/quotes/service.js";
import type { JobRetention } from "./jobs/retention.js";
import { tusSpoolDir } from "./jobs/retention.js";
import type { JobRunner } from "./jobs/runner.js";
import { buildJobRuntime, type WorkerOptions } from "./jobs/runtime.js";
import { JobService } from "./jobs/service.js";
import type { ObjectStore } from "./jobs/storage/types.js";
import { JobTransfers } from "./jobs/transfer.js";
import { OlympiadDocuments, tableProviders } from "./olympiad/documents/service.js";
import { OlympiadEntry } from "./olympiad/entry/entry.js";
import { Participants } from "./olympiad/entry/participants.js";
import { OlympiadTasks, SCORE_TASK } from "./olympiad/events/tasks/service.js";
import { Governance } from "./olympiad/governance/service.js";
import { OlympiadRecords } from "./olympiad/results/service.js";
import { Teams } from "./olympiad/teams/service.js";
import { LicenseService } from "./orders/license-routes.js";
import { OrderRecovery } from "./orders/recovery.js";
import { OrderService } from "./orders/service.js";
import type { OrderRow } from "./orders/tables.js";
import { CardService } from "./payments/card/service.js";
import { stripeClient } from "./payments/card/stripe.js";
import { ClaimService } from "./payments/manual/service.js";
import { MppService } from "./payments/mpp/service.js";
import { X402Service } from "./payments/x402/service.js";
import { orderReceiptContext, orderReceipts } from "./receipts/facts.js";
import { purchaseReceipts } from "./receipts/purchase.js";
import type { Receipts } from "./receipts/service.js";
import { receiptsFor } from "./receipts/setup.js";
import { RefundService } from "./refunds/service.js";
import { mppChallengeKey, serviceKeys } from "./secrets.js";
import { WebhookService } from "./webhooks/service.js";

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
  /** MPP (WWW-Authenticate: Payment), the second 402 dialect over the x402 ledger (src/payments/mpp). */
  mpp: MppService;
  engine: EngineService;
  identities: IdentityService;
  licenses: LicenseService;
  recovery: OrderRecovery;
  /** Signs purchase receipts and publishes their public keys (src/receipts, docs/receipts.md). */
  receipts: Receipts;
  /** The receipt of a stored order, rebuilt from the row (the same bytes on every call). */
  orderReceipt: (order: OrderRow) => string;
  jobs: JobService;
  /** Listing and deleting jobs (src/jobs/manage.ts, issue #23). */
  jobManager: JobManager;
  quotes: QuoteService;
  suitePurchase: SuitePurchase;
  storage: ObjectStore;
  /** Receiving jobs' inputs and serving their outputs (src/jobs/transfer.ts), for the job routes. */
  transfers: JobTransfers;
  /** Suite-job runner: the jobs' scheduler, and a segment worker when `worker.start`. */
  runner: JobRunner;
  /** The retention sweep of job data (src/jobs/retention.ts): runs every JOB_SWEEP_INTERVAL_SECONDS. */
  retention: JobRetention | undefined;
  // olympiad service fields: O1 begin
  /** The olympiad documents: GET /api/olympiad (record and views) and /olympiad.json (src/olympiad/documents/service.ts). */
  olympiad: OlympiadDocuments;
  // olympiad service fields: O1 end
  // olympiad service fields: O2 begin
  /** Olympiad participants and their bearer tokens (src/olympiad/entry/participants.ts). */
  participants: Participants;
  /** Olympiad intents and paid entries (src/olympiad/entry/entry.ts). */
  olympiadEntry: OlympiadEntry;
  /** Olympiad teams under the ratio rule (src/olympiad/teams/service.ts). */
  teams: Teams;
  // olympiad service fields: O2 end
  // olympiad service fields: O3 begin
  /** Olympiad proposals, votes, weighted tallies and operator-appointed roles. */
  governance: Governance;
  // olympiad service fields: O3 end
  // olympiad service fields: O4 begin
  /** Olympiad records on hash chain `olympiad`, standings and their documents (src/olympiad/results/service.ts). */
  olympiadRecords: OlympiadRecords;
  // olympiad service fields: O4 end
  /** Scored olympiad events: tasks, submissions, the scoring sweep, leaderboards (src/olympiad/tasks). */
  olympiadTasks: OlympiadTasks;
  /** Refunds, exactly once per order, and their reconciler (src/refunds). */
  refunds: RefundService;
  /** Signed job webhooks: the callback-URL check, the event outbox and its sender (src/webhooks). */
  webhooks: WebhookService;
  /** Stops the runner (running segments finish or go back to the queue), the reconciler and the object store. */
  close(): Promise<void>;
}

export async function buildServices(options: ServiceOptions): Promise<Services> {
  const { config, db } = options;
  const catalog = options.catalog ?? new Catalog();
  const log = options.log ?? (pino({ level: "silent" }) as unknown as FastifyBaseLogger);

  // Service keys: environment, or DATA_DIR/secrets.json outside production; never the database.
  const keys = await serviceKeys(config, db.kysely, log);
  const receipts = receiptsFor(keys.receiptSigning, config);
  // Every purchase answer carries its signed receipt (built at request time, from stored facts).
  const receiptContext = orderReceiptContext(config);
  const orders: OrderService = new OrderService(db.kysely, catalog, config.baseUrl, keys.accessToken, undefined, {
    receipt: (fulfilled) => purchaseReceipt(fulfilled),
  });
  const orderReceipt = orderReceipts(receipts, orders, receiptContext);
  const purchaseReceipt = purchaseReceipts({
    db: db.kysely,
    sign: (facts) => receipts.sign(facts),
    orderReceipt,
    order: (id) => orders.get(id),
    ctx: receiptContext,
  });
  const card = new CardService(db.kysely, orders, catalog, config, stripeClient(config));
  const claims = new ClaimService(db.kysely, orders, catalog, config);
  // Reads the Base chain id (refuses to start on a mismatch) and sets up the facilitator.
  const x402 = new X402Service(db.kysely, config, catalog, orders, log);
  await x402.init();
  // refunds (issue #22 item 4): cards through CardService.refundOrder, chains from the refund wallets
  const refunds = new RefundService({
    db: db.kysely,
    orders,
    config,
    log,
    cardRefunder: card,
    evmClient: () => x402.settlement.evmClient,
  });
  await refunds.init();
  const mpp = new MppService(config, x402, mppChallengeKey(keys));
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
    receipt: orderReceipt,
  });

  // Suite jobs. Free volume per caller (issue #21): the client IP is kept as a keyed hash (the identity-token key).
  // Signed job webhooks (src/webhooks): callback URLs checked at quote time, an outbox swept and sent here.
  const webhooks: WebhookService = new WebhookService({
    db: db.kysely,
    serverKey: keys.accessToken,
    links: (id): Record<string, string> => jobs.links(id),
    allowPrivate: config.webhooks.allowPrivate,
    retryHours: config.webhooks.retryHours,
    timeoutSeconds: config.webhooks.timeoutSeconds,
    log: (line) => log.warn(line),
  });
  const quotes = new QuoteService(db.kysely, {
    ttlSeconds: config.suiteQuotes.ttlSeconds,
    anonFreeBytesPerDay: config.suiteFree.anonBytesPerDay,
    ipKey: keys.identityToken,
    checkCallback: (url): Promise<string> => webhooks.check(url),
  });
  // the runner also works the olympiad's scoring tasks (issue #26); their service is built below,
  // so a task taken before that is retried a second later
  let olympiadScorer: OlympiadTasks | undefined;
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
    tasks: {
      [SCORE_TASK]: {
        run: (payload) => {
          if (!olympiadScorer) throw new Error("olympiad scoring is not ready yet");
          return olympiadScorer.scoreTask(payload);
        },
        failed: (f) => log.warn(`olympiad scoring task ${f.id} failed (the sweep scores its rows): ${f.reason}`),
      },
    },
    // a decompress job whose records declare more than its quote is refused with a fresh quote (issue #21)
    requote: (job, bytes) =>
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
      ),
  });
  // A paid quote buys its job through the order core: the jobs register their fulfiller in its table.
  const jobs = new JobService(db.kysely, config.baseUrl, keys.accessToken, {
    scheduler: runner,
    usage: quotes.usage,
    retentionHours: config.jobData.retentionHours,
    fulfilment: orders.fulfilment,
  });
  const transfers = new JobTransfers(db.kysely, jobs, storage, log, config.jobData.uploadParts);
  const jobManager = new JobManager(db.kysely, jobs, {
    store: storage,
    spoolDir: tusSpoolDir(config.dataDir),
    // cancel (issue #23): a cancelled job's waiting tasks leave the queue, its unused volume returns
    queue: runner.queue,
    usage: quotes.usage,
    log: (line) => log.warn(line),
  });
  // the outbox is swept and sent every WEBHOOK_POLL_SECONDS (0: not in this process)
  webhooks.start(config.webhooks.pollSeconds * 1000);
  const suitePurchase = new SuitePurchase(db.kysely, quotes, jobs, x402, card, config.baseUrl, {
    limits: {
      runningPerCaller: config.suiteFree.runningPerCaller,
      queuedPerCaller: config.suiteFree.queuedPerCaller,
      queueBytes: config.suiteFree.queueBytes,
    },
  });

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
  // olympiad: records, standings, hash chain (O4) end
  // olympiad: scored events (issue #26); the sweep runs every OLYMPIAD_SCORING_POLL_SECONDS (0: not here)
  const olympiadTasks = new OlympiadTasks(db.kysely, config, olympiadRecords, (msg, err) => log.error({ err }, msg));
  olympiadTasks.start(config.olympiadTasks.scoringPollSeconds * 1000);
  // each accepted submission enqueues `olympiad-score`, worked by this process's runner or a `labphi worker`
  olympiadTasks.useQueue(runner.queue);
  olympiadScorer = olympiadTasks;
  // olympiad: documents (O1): the proposals view is the governance service's, the records the records service's
  const olympiad = new OlympiadDocuments({
    config,
    catalog,
    providers: {
      ...tableProviders(db.kysely),
      proposals: (page) => governance.proposalsView(page),
      records: () => olympiadRecords.recordsView(),
      eventsCompleted: (seasonId) => olympiadRecords.eventsCompleted(seasonId),
    },
  });

  let closed: Promise<void> | undefined;
  return {
    config,
    db,
    catalog,
    orders,
    card,
    claims,
    x402,
    mpp,
    engine,
    identities,
    licenses,
    recovery,
    receipts,
    orderReceipt,
    jobs,
    jobManager,
    quotes,
    suitePurchase,
    storage,
    transfers,
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
    olympiadTasks,
    refunds,
    webhooks,
    close() {
      closed ??= (async () => {
        await webhooks.stop();
        await olympiadTasks.stop();
        await closeJobs({ graceMs: 5_000 });
        await x402.stop();
        await refunds.stop();
      })();
      return closed;
    },
  };
}

import v8 from "node:v8";
import { openDatabase } from "../../db/database.js";
import { migrateToLatest } from "../../db/migrate.js";
import { buildJobRuntime } from "../../jobs/runtime.js";
import { SCORE_TASK, workerScorer } from "../../olympiad/events/tasks/queue-task.js";
import { type CliIO, type Command, EX_CONFIG, settingsOf, UsageError } from "../command.js";
import { parseCodecArgs } from "./compress.js";

const HELP = `Usage: labphi worker [options]

Runs suite-job segments (no HTTP server): opens the database and the object store from the
settings (DATABASE_URL, DATA_DIR, S3_*), takes segment tasks from the queue and codes them on a
pool of threads, printing one line per segment. With DATABASE_URL the queue is BullMQ on
PostgreSQL: start as many workers, on as many machines, as you like (same DATABASE_URL and the
same object store). A killed worker's segment moves to another worker within 1.5 x
JOB_LEASE_SECONDS. SIGTERM / SIGINT: stop taking segments, finish the running ones (up to
JOB_LEASE_SECONDS, then give them back to the queue) and exit 0; a second signal exits at once.

Options:
  --concurrency N   segments at once in this process (default JOB_WORKER_CONCURRENCY)
  --threads N       codec threads (default JOB_WORKER_THREADS)
  -h, --help        this help

See docs/suite.md, "Queue and workers".`;

function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 64) {
    throw new UsageError(`${name} must be an integer between 1 and 64`);
  }
  return Number(value);
}

/**
 * How much V8 lets this process's heap grow between full collections, in percent (V8's
 * `--heap-growing-percent`). The worker's own heap is small (about 21 MB: code and module state)
 * and it allocates little, so V8 sets the next collection at 1.1x the live heap: about 40 full
 * collections per GB coded, each marking all 21 MB on the main thread and V8's helper threads,
 * on cores the codec threads need. At 100 % (2x) they were 26 per GB, and the worker's peak RSS
 * did not grow (docs/suite.md, "Where the worker's CPU goes").
 */
export const WORKER_HEAP_GROWING_PERCENT = 100;

export const workerCommand: Command = {
  name: "worker",
  summary: "Run suite-job segments from the queue (several per machine or cluster)",
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    const parsed = parseCodecArgs(args, { values: ["concurrency", "threads"], flags: [] });
    if (parsed.positional.length > 0) throw new UsageError(`unexpected argument ${parsed.positional[0]}`);
    const config = await settingsOf(io);
    if (!config) return EX_CONFIG;
    const concurrency = count(parsed.values.concurrency, "--concurrency") ?? config.jobRunner.workerConcurrency;
    const threads = count(parsed.values.threads, "--threads") ?? config.jobRunner.workerThreads;
    const say = (line: string) => io.stdout.write(`${new Date().toISOString()} ${line}\n`);
    // this process runs segments until it is stopped: fewer, larger collections (see above)
    v8.setFlagsFromString(`--heap-growing-percent=${WORKER_HEAP_GROWING_PERCENT}`);

    const db = openDatabase(config);
    await migrateToLatest(db);
    // The same services as the web app (src/services.ts), without a web server: this process only
    // runs segment workers (the reconciler and the HTTP routes belong to the service).
    // Only the suite-job runtime (object store, queue, runner): the same builder as the web
    // service's, without the rest of the services' module graph (payments, HTTP).
    // it also scores olympiad submissions (`olympiad-score`); the scorer loads with the first one
    let scorer: ReturnType<typeof workerScorer> | undefined;
    const jobs = await buildJobRuntime({
      config,
      db,
      worker: { start: true, concurrency, threads, say, warm: true },
      tasks: {
        [SCORE_TASK]: {
          run: async (payload) => {
            scorer ??= workerScorer(db.kysely, config, (msg, err) => say(`${msg}: ${String(err)}`)).catch((err) => {
              scorer = undefined; // loaded again by the retry
              throw err;
            });
            await (await scorer).scoreTask(payload);
          },
          failed: (f) => {
            say(`olympiad scoring task ${f.id} failed (the service's sweep scores its rows): ${f.reason}`);
          },
        },
      },
      info: say,
      warn: (line) => say(`warning: ${line}`),
    });
    const { runner } = jobs;
    const queue = runner.queue;
    say(
      `worker ${process.pid} ready: queue ${queue.kind} on ${db.kind}, ${concurrency} segment(s) at once, ${threads} ` +
        `thread(s), lease ${queue.leaseMs / 1000} s (a dead worker's segment moves on within ${queue.recoveryBoundMs / 1000} s)`,
    );

    return new Promise<number>((resolve) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          say(`${signal} again: exiting now (running segments go back to the queue when their lease runs out)`);
          process.exit(1);
        }
        stopping = true;
        say(`${signal}: finishing running segments (at most ${queue.leaseMs / 1000} s), then exiting`);
        jobs
          .close({ graceMs: queue.leaseMs })
          .then(() => db.close())
          .then(
            () => {
              say("stopped");
              resolve(0);
            },
            (err) => {
              io.stderr.write(`labphi worker: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
              resolve(1);
            },
          );
      };
      process.on("SIGTERM", () => stop("SIGTERM"));
      process.on("SIGINT", () => stop("SIGINT"));
    });
  },
};

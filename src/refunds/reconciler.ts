import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { logRef, safeError } from "../http/logger.js";
import { Problem } from "../http/problem.js";
import { refundStore } from "./store.js";
import type { RefundRow } from "./tables.js";

/**
 * Finishes refunds whose money may be moving (`approved`, `signed`, `sent`): at start-up, then every
 * `everyMs`. Each one goes through the same `proceed` as a live refund, which decides from the
 * chain's view of the stored transaction (docs/payments.md "Refunds").
 */
export class RefundReconciler {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: FastifyBaseLogger,
    private readonly proceed: (id: string) => Promise<RefundRow>,
  ) {}

  /** Reconciles every refund whose money may be moving (start-up, then periodically). */
  async reconcile(): Promise<{ examined: number; done: number }> {
    const rows = await refundStore.unfinished(this.db);
    let done = 0;
    for (const r of rows) {
      try {
        const after = await this.proceed(r.id);
        if (after.state === "done") done++;
      } catch (err) {
        if (!(err instanceof Problem))
          this.log.error({ err: safeError(err), refund: logRef(r.id) }, "refund reconciliation failed");
      }
    }
    if (rows.length > 0) this.log.info({ examined: rows.length, done }, "refund reconciliation pass");
    return { examined: rows.length, done };
  }

  async start(everyMs = 30_000): Promise<void> {
    // Start-up waits for the pass, but at most 15 s (a slow RPC must not keep the service down).
    const pass = this.reconcile().catch((err: unknown) =>
      this.log.error({ err: safeError(err) }, "refund start-up reconciliation failed"),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pass, new Promise<void>((r) => (timer = setTimeout(r, 15_000)))]);
    clearTimeout(timer);
    if (everyMs > 0) {
      this.timer = setInterval(() => {
        this.reconcile().catch((err: unknown) => this.log.error({ err: safeError(err) }, "refund pass failed"));
      }, everyMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

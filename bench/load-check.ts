/**
 * bench:load's checks of the database after a run (bench/load.ts): read straight from the SQLite
 * file or the PostgreSQL database the services used, through the project's own Kysely schema.
 */
import { sql } from "kysely";
import { openDatabase } from "../src/db/database.js";
import type { DriverResult } from "./load-driver.js";

export interface Invariant {
  name: string;
  pass: boolean;
  detail: string;
}

/** What the ledgers saw during the phase: settlements that landed on each chain. */
export interface ChainCounts {
  base: number;
  solana: number;
}

export async function checkDatabase(
  where: { dataDir: string; databaseUrl?: string },
  driver: DriverResult,
  chain: ChainCounts,
  notes: string[] = [],
): Promise<Invariant[]> {
  const db = openDatabase(where);
  const k = db.kysely;
  const out: Invariant[] = [];
  const add = (name: string, pass: boolean, detail: string) => out.push({ name, pass, detail });
  try {
    // 1. orders = distinct settled payments (and = what landed on the chains, = what the buyers got)
    const orders = await k
      .selectFrom("orders")
      .select(["rail", (e) => e.fn.countAll<string>().as("n")])
      .where("rail", "in", ["x402_base_usdc", "x402_solana_usdc"])
      .groupBy("rail")
      .execute();
    const ordersOf = (rail: string) => Number(orders.find((o) => o.rail === rail)?.n ?? 0);
    const settled = await k
      .selectFrom("payment_proofs")
      .select(["rail", sql<string>`count(distinct settlement_tx)`.as("n")])
      .where("settlement_tx", "is not", null)
      .where("item_kind", "=", "product")
      .groupBy("rail")
      .execute();
    const settledOf = (rail: string) => Number(settled.find((s) => s.rail === rail)?.n ?? 0);
    const buyers = new Set(driver.purchases.map((p) => p.order_id)).size;
    const o = { base: ordersOf("x402_base_usdc"), solana: ordersOf("x402_solana_usdc") };
    const s = { base: settledOf("x402_base_usdc"), solana: settledOf("x402_solana_usdc") };
    add(
      "orders = distinct settled payments",
      o.base === s.base && o.solana === s.solana && o.base === chain.base && o.solana === chain.solana,
      `orders base ${o.base} / solana ${o.solana}; distinct settlement transactions ${s.base} / ${s.solana}; ` +
        `settlements landed on the ledgers ${chain.base} / ${chain.solana}; orders the buyers received ${buyers}`,
    );
    add(
      "every purchase the buyers saw is an order",
      buyers === o.base + o.solana,
      `${buyers} distinct order ids answered to buyers, ${o.base + o.solana} x402 orders stored`,
    );

    // (for the report, not an invariant) proofs that did not buy an order, by reason
    const failed = await k
      .selectFrom("payment_proofs")
      .select([
        "state",
        "error_reason",
        (e) => e.fn.max("error_detail").as("detail"),
        (e) => e.fn.countAll<string>().as("n"),
      ])
      .where("order_id", "is", null)
      .groupBy(["state", "error_reason"])
      .execute();
    for (const f of failed) {
      notes.push(
        `${f.n} proof(s) ${f.state} without an order: ${f.error_reason ?? "no reason"}${f.detail ? ` (e.g. ${String(f.detail).replace(/\s+/g, " ").slice(0, 240)})` : ""}`,
      );
    }

    // 2. no payment reference with two orders
    const twiceByTx = await k
      .selectFrom("orders")
      .select([sql<string>`lower(transaction_ref)`.as("tx"), (e) => e.fn.countAll<string>().as("n")])
      .where("transaction_ref", "is not", null)
      .groupBy(sql`lower(transaction_ref)`)
      .having((e) => e.fn.countAll(), ">", 1)
      .execute();
    const twiceByProof = await k
      .selectFrom("orders")
      .select(["proof_key", (e) => e.fn.countAll<string>().as("n")])
      .groupBy("proof_key")
      .having((e) => e.fn.countAll(), ">", 1)
      .execute();
    const refsTwice = await k
      .selectFrom("payment_references")
      .select(["chain", sql<string>`lower(tx)`.as("tx")])
      .where("order_id", "is not", null)
      .groupBy(["chain", sql`lower(tx)`])
      .having(sql`count(distinct order_id)`, ">", 1)
      .execute();
    const [{ refs } = { refs: 0 }] = await k
      .selectFrom("payment_references")
      .select((e) => e.fn.countAll<string>().as("refs"))
      .execute();
    add(
      "no payment reference with two orders",
      twiceByTx.length === 0 &&
        twiceByProof.length === 0 &&
        refsTwice.length === 0 &&
        driver.replays.violations.length === 0,
      `${refs} payment references; transactions with 2+ orders: ${twiceByTx.length}; proofs with 2+ orders: ` +
        `${twiceByProof.length}; references with 2+ orders: ${refsTwice.length}; replays answered ${driver.replays.ok} ` +
        `times with 409 or the same order, ${driver.replays.violations.length} with another order`,
    );

    // 3. no vote counted twice
    const votesTwice = await k
      .selectFrom("olympiad_votes")
      .select(["proposal_id", "voter_id", (e) => e.fn.countAll<string>().as("n")])
      .groupBy(["proposal_id", "voter_id"])
      .having((e) => e.fn.countAll(), ">", 1)
      .execute();
    const [{ votes } = { votes: 0 }] = await k
      .selectFrom("olympiad_votes")
      .select((e) => e.fn.countAll<string>().as("votes"))
      .execute();
    add(
      "no vote counted twice",
      votesTwice.length === 0 && Number(votes) === driver.votes.pairs,
      `${votes} vote rows for ${driver.votes.pairs} distinct (participant, proposal) pairs voted ` +
        `(${driver.votes.cast} votes and re-votes answered 200); pairs with 2+ rows: ${votesTwice.length}`,
    );

    // 4. every job finished or failed with a reason
    const jobs = await k.selectFrom("jobs").select(["id", "state", "error_code"]).execute();
    const unfinished = jobs.filter((j) => j.state !== "done" && !(j.state === "failed" && j.error_code));
    add(
      "every job finished or failed with a reason",
      unfinished.length === 0 && driver.jobs.failures.length === 0 && driver.jobs.verified === driver.jobs.done,
      `${jobs.length} jobs: ${jobs.filter((j) => j.state === "done").length} done, ` +
        `${jobs.filter((j) => j.state === "failed").length} failed with a reason, ${unfinished.length} otherwise` +
        `${unfinished.length ? ` (${unfinished.map((j) => `${j.id} ${j.state}`).join(", ")})` : ""}; ` +
        `outputs restored to the input: ${driver.jobs.verified}/${driver.jobs.done}` +
        `${driver.jobs.failures.length ? `; ${driver.jobs.failures.join("; ")}` : ""}`,
    );
  } finally {
    await db.close();
  }
  return out;
}

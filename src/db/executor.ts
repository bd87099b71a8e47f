import type { Kysely, Transaction } from "kysely";
import type { Database } from "./schema.js";

/** Where a query runs: the database, or an open transaction (so a change can join a larger atomic one). */
export type Executor = Kysely<Database> | Transaction<Database>;

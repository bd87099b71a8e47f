import type { Kysely } from "kysely";

// The shared append-only hash chain (issue #11 item 4): olympiad records and the audit log.
// OWNED BY THE HASH-CHAIN HELPER: fill in.

export async function up(_db: Kysely<unknown>): Promise<void> {}

export async function down(_db: Kysely<unknown>): Promise<void> {}

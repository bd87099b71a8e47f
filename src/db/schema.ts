/**
 * The database schema as Kysely sees it: the union of every domain's tables.
 * Each domain declares its own tables next to its store; this file only joins them.
 */
import type { EngineTables } from "../engine/tables.js";
import type { RateLimitTables } from "../http/rate-limit-store-pg.js";
import type { IdentityTables } from "../identity/tables.js";
import type { JobTables } from "../jobs/tables.js";
import type { OlympiadTables } from "../olympiad/tables.js";
import type { OrderTables } from "../orders/tables.js";
import type { CardTables } from "../payments/card/tables.js";
import type { ClaimTables } from "../payments/manual/tables.js";
import type { X402Tables } from "../payments/x402/tables.js";
import type { RefundTables } from "../refunds/tables.js";
import type { WebhookTables } from "../webhooks/tables.js";
import type { HashChainTables } from "./hash-chain-tables.js";
import type { IpDailyTables } from "./ip-daily.js";
import type { SettingsTables } from "./settings.js";

export interface Database
  extends SettingsTables,
    OrderTables,
    CardTables,
    ClaimTables,
    X402Tables,
    EngineTables,
    IdentityTables,
    JobTables,
    OlympiadTables,
    HashChainTables,
    RateLimitTables,
    IpDailyTables,
    RefundTables,
    WebhookTables {}

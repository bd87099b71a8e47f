/**
 * Versioned migrations, applied in name order at start-up. Add a file, then a line here.
 * Never edit a migration that has shipped: add a new one.
 */
import * as m0001 from "./0001_foundation.js";
import * as m0002 from "./0002_x402_payments.js";
import * as m0003 from "./0003_human_payments.js";
import * as m0004 from "./0004_engine.js";
import * as m0005 from "./0005_payer_binding.js";
import * as m0006 from "./0006_suite_jobs.js";
import * as m0007 from "./0007_olympiad.js";
import * as m0008 from "./0008_hash_chain.js";
import * as m0009 from "./0009_upload_generation.js";
import * as m0010 from "./0010_free_budget.js";
import * as m0011 from "./0011_job_retention.js";
import * as m0012 from "./0012_governance_standing.js";
import * as m0013 from "./0013_olympiad_list_indexes.js";
import * as m0014 from "./0014_rate_limits.js";
import * as m0015 from "./0015_ip_daily_counts.js";
import * as m0016 from "./0016_refunds.js";
import * as m0017 from "./0017_priced_item.js";
import * as m0018 from "./0018_job_listing.js";
import * as m0019 from "./0019_webhooks.js";
import * as m0020 from "./0020_olympiad_tasks.js";
import * as m0021 from "./0021_job_input_parts.js";
import * as m0022 from "./0022_webhook_leases.js";

export const migrations = {
  "0001_foundation": m0001,
  "0002_x402_payments": m0002,
  "0003_human_payments": m0003,
  "0004_engine": m0004,
  "0005_payer_binding": m0005,
  "0006_suite_jobs": m0006,
  "0007_olympiad": m0007,
  "0008_hash_chain": m0008,
  "0009_upload_generation": m0009,
  "0010_free_budget": m0010,
  "0011_job_retention": m0011,
  "0012_governance_standing": m0012,
  "0013_olympiad_list_indexes": m0013,
  "0014_rate_limits": m0014,
  "0015_ip_daily_counts": m0015,
  "0016_refunds": m0016,
  "0017_priced_item": m0017,
  "0018_job_listing": m0018,
  "0019_webhooks": m0019,
  "0020_olympiad_tasks": m0020,
  "0021_job_input_parts": m0021,
  "0022_webhook_leases": m0022,
};

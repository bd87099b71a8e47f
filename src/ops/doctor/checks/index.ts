import type { Check } from "../check.js";
import { BASE_CHECKS } from "./base.js";
import { DATABASE_CHECKS } from "./database.js";
import { HOST_CHECKS } from "./host.js";
import { SOLANA_CHECKS } from "./solana.js";
import { STORAGE_CHECKS } from "./storage.js";
import { STRIPE_CHECKS } from "./stripe.js";

/** Every check of `labphi doctor`, in the order the table prints them. Add a check here. */
export const CHECKS: readonly Check[] = [
  ...BASE_CHECKS,
  ...SOLANA_CHECKS,
  ...STRIPE_CHECKS,
  ...DATABASE_CHECKS,
  ...STORAGE_CHECKS,
  ...HOST_CHECKS,
];

/**
 * Settings that make payment rails "configured" (able to settle, src/payments/readiness.ts) for
 * tests that only read challenges, catalogs and discovery documents. Nothing here is funded or
 * reachable: the RPC URLs point at the discard port (127.0.0.1:9), so start-up only logs that the
 * Base RPC is unreachable, and a paid request would answer 503 settlement_unavailable.
 */

/** Test-only keys, never funded: a 32-byte EVM key and a base58 64-byte Solana secret (seed 1..32 ‖ public key). */
export const TEST_EVM_FACILITATOR_KEY = `0x${"11".repeat(32)}`;
export const TEST_SVM_FEE_PAYER_KEY =
  "2Ana1pUpv2ZbMVkwF5FXapYeBEjdxDatLn7nvJkhgTSdZd8hbDHTd21as7EAsg7ypityqfsw2pMQKJcVDVcAEsd";
/** The fee payer's address (public half of TEST_SVM_FEE_PAYER_KEY). */
export const TEST_SVM_FEE_PAYER = "9C6hybhQ6Aycep9jaUnP6uL9ZYvDjUp1aSkFWPUFJtpj";
export const UNREACHABLE_RPC = "http://127.0.0.1:9";

/** Everything x402_base_usdc needs besides PAY_TO_BASE (EIP-3009 through the in-process facilitator). */
export const BASE_SETTLEMENT = { BASE_RPC_URL: UNREACHABLE_RPC, X402_EVM_FACILITATOR_KEY: TEST_EVM_FACILITATOR_KEY };

/** Everything x402_solana_usdc needs besides PAY_TO_SOLANA (our own fee payer). */
export const SOLANA_SETTLEMENT = { SOLANA_RPC_URL: UNREACHABLE_RPC, X402_SVM_FEE_PAYER_KEY: TEST_SVM_FEE_PAYER_KEY };

/** Manual rails (and wire invoices) need a contact address and an operator token. */
export const MANUAL_SETTLEMENT = { CONTACT_EMAIL: "pay@lab.test", ADMIN_TOKEN: "admin-token-for-tests-0123456789" };

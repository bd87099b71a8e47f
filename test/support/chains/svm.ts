// The local Solana runtime (LiteSVM behind JSON-RPC) lives in src/sandbox/ledgers/svm.ts, shared with `labphi sandbox`.
export * from "../../../src/sandbox/ledgers/svm.js";

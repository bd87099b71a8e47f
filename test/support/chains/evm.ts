// The local EVM (anvil + EIP-3009 USDC) lives in src/sandbox/ledgers/evm.ts, shared with `labphi sandbox`.
export * from "../../../src/sandbox/ledgers/evm.js";

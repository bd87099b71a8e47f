/**
 * Several service processes settle EIP-3009 payments with one gas key (X402_EVM_FACILITATOR_KEY).
 * viem's nonce manager counts that key's nonces per process, so two processes can send two
 * transactions with the same nonce: the node refuses the second ("nonce too low", "replacement
 * transaction underpriced"), and a good payment was refused (measured by `npm run bench:load`: 4 of
 * 67 Base purchases with two services). The refused transaction never entered the mempool, so it
 * is sent again after the manager re-reads the pending nonce from the node: the retry cannot
 * transfer twice (the authorization's own nonce is single-use on chain anyway).
 */

const NONCE_CONFLICT =
  /nonce too low|nonce provided for the transaction is lower|replacement transaction underpriced|nonce has already been used|NonceTooLowError/i;

/** True for a node's refusal of a transaction because another one took its nonce. */
export function isNonceConflict(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const x = e as { name?: string; message?: string; shortMessage?: string; details?: string; cause?: unknown };
    if ([x.name, x.message, x.shortMessage, x.details].some((s) => typeof s === "string" && NONCE_CONFLICT.test(s))) {
      return true;
    }
    e = x.cause;
  }
  return false;
}

/** Attempts a transaction at most `attempts` times while its nonce is taken by another sender. */
export async function withNonceRetry<T>(send: () => Promise<T>, resetNonce: () => void, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (attempt >= attempts || !isNonceConflict(err)) throw err;
      resetNonce();
    }
  }
}

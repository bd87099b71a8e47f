import { createNonceManager, jsonRpc } from "viem/nonce";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evmWalletClient } from "../../../src/payments/x402/evm.js";
import { isNonceConflict, withNonceRetry } from "../../../src/payments/x402/evm-nonce.js";
import { type EvmChain, startAnvil } from "../../support/chains/evm.js";

/**
 * Two service processes settling with one gas key: each has its own nonce manager. Without the
 * retry one of two concurrent transactions is refused by the node; with it both are mined.
 */
describe("one EVM gas key shared by several service processes", () => {
  let chain: EvmChain;
  beforeAll(async () => {
    chain = await startAnvil();
  }, 60_000);
  afterAll(async () => chain?.stop());

  /** a wallet as a separate process has it: its own nonce manager over the same key */
  const processWallet = () =>
    evmWalletClient(chain.chainId, chain.rpcUrl, chain.deployerKey, 10_000, createNonceManager({ source: jsonRpc() }));

  const send = (w: ReturnType<typeof processWallet>, to: `0x${string}`) => () =>
    w.sendTransaction({ to, value: 1n, chain: w.chain, account: w.account } as never) as Promise<`0x${string}`>;

  const reset = (w: ReturnType<typeof processWallet>) => () =>
    w.account.nonceManager?.reset({ address: w.account.address, chainId: chain.chainId });

  it("without the retry a second process's transaction is refused for its nonce", async () => {
    await chain.setAutomine(false);
    try {
      const a = processWallet();
      const b = processWallet();
      const to = (await chain.newBuyer(0n)).address;
      const results = await Promise.allSettled([send(a, to)(), send(b, to)()]);
      const refused = results.filter((r) => r.status === "rejected");
      expect(refused).toHaveLength(1);
      expect(isNonceConflict((refused[0] as PromiseRejectedResult).reason)).toBe(true);
    } finally {
      await chain.setAutomine(true);
    }
  });

  it("with the retry both processes' transactions are mined", async () => {
    await chain.setAutomine(false);
    let hashes: `0x${string}`[];
    try {
      const a = processWallet();
      const b = processWallet();
      const to = (await chain.newBuyer(0n)).address;
      hashes = await Promise.all([withNonceRetry(send(a, to), reset(a)), withNonceRetry(send(b, to), reset(b))]);
      await chain.mine(1);
    } finally {
      await chain.setAutomine(true);
    }
    expect(new Set(hashes).size).toBe(2);
    for (const hash of hashes) {
      expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    }
  });

  it("other errors are not retried", async () => {
    let calls = 0;
    const boom = async () => {
      calls++;
      throw new Error("execution reverted: FiatTokenV2: authorization is used or canceled");
    };
    await expect(withNonceRetry(boom, () => {})).rejects.toThrow(/authorization is used/);
    expect(calls).toBe(1);
  });
});

import { describe, expect, it } from "vitest";
import { logRef, safeError } from "../../src/http/logger.js";

describe("safeError: errors are logged without the payment proofs they quote", () => {
  it("replaces calldata, signatures and serialized transactions by keyed refs", () => {
    const signature = `0x${"ab".repeat(65)}`;
    const calldata = `0xcf092995${"00".repeat(200)}${signature.slice(2)}`;
    const tx = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const err = new Error(`Execution reverted.\n\nRequest Arguments:\n  data: ${calldata}\n  tx: ${tx}`);
    const safe = safeError(err);
    expect(safe.type).toBe("Error");
    const text = JSON.stringify(safe);
    expect(text).not.toContain(signature.slice(2, 60));
    expect(text).not.toContain(tx);
    expect(safe.message).toContain("Execution reverted.");
    expect(safe.message).toContain(`~${logRef(calldata)}`);
  });

  it("keeps short words and numbers, and accepts non-errors", () => {
    expect(safeError(new Error("ECONNREFUSED 127.0.0.1:8545")).message).toBe("ECONNREFUSED 127.0.0.1:8545");
    expect(safeError("plain").message).toBe("plain");
  });
});

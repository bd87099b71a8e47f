import { describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import { RAIL_IDS } from "../../src/payments/matrix/schemas.js";
import { PAYMENT_PROTOCOLS, protocol, protocolOfRail } from "../../src/payments/protocols.js";
import { BASE_SETTLEMENT } from "../support/rails.js";

describe("payment protocols table", () => {
  it("every rail that takes a payment belongs to exactly one protocol", () => {
    for (const rail of RAIL_IDS) {
      const owners = PAYMENT_PROTOCOLS.filter((p) => (p.rails as readonly string[]).includes(rail));
      const expected = rail === "redirect_link_checkout" || rail === "suite_metered" ? 0 : 1;
      expect({ rail, owners: owners.length }).toEqual({ rail, owners: expected });
    }
    expect(protocolOfRail("x402_base_usdc")?.id).toBe("x402");
    expect(protocolOfRail("card_payment_link")?.refund).toBe("processor");
    expect(protocolOfRail("wire_invoice_ach")?.refund).toBe("hand");
    expect(protocolOfRail("nonsense")).toBeUndefined();
  });

  it("readiness follows the settings: configured exactly when nothing is missing", () => {
    const bare = testConfig({});
    const base = testConfig({ PAY_TO_BASE: "0x1111111111111111111111111111111111111111", ...BASE_SETTLEMENT });
    for (const p of PAYMENT_PROTOCOLS) {
      for (const config of [bare, base]) {
        const r = p.readiness(config);
        expect(r.configured).toBe(r.missing.length === 0);
      }
    }
    expect(protocol("x402").readiness(bare).configured).toBe(false);
    expect(protocol("x402").readiness(base).configured).toBe(true);
    expect(protocol("mpp").readiness(base).configured).toBe(true);
    expect(protocol("card").readiness(base).configured).toBe(false);
  });
});

import type { Config } from "../config.js";

/**
 * The refund terms every 402 advertises (x402 `extensions.refund`; the x402r `refund` draft is an
 * escrow design that does not fit payments made straight to payTo, so this is Lab Phi's own shape,
 * docs/payments.md "Refunds"): the payer may ask within the window by signing with the paying
 * wallet; unused entitlements may be approved at once. Absent when buyer requests are off.
 */
export interface RefundPolicy {
  info: {
    policy: "payer-signed-request";
    windowSeconds: number;
    autoApproveSeconds: number;
    refundTo: "payer";
    challenge: string;
    request: string;
    signature: { eip155: "eip191"; solana: "ed25519" };
  };
}

export function refundPolicy(config: Pick<Config, "baseUrl" | "refunds">): RefundPolicy | undefined {
  if (config.refunds.windowHours <= 0) return undefined;
  return {
    info: {
      policy: "payer-signed-request",
      windowSeconds: config.refunds.windowHours * 3600,
      autoApproveSeconds: config.refunds.autoApproveHours * 3600,
      refundTo: "payer",
      challenge: `${config.baseUrl}/api/orders/{order_id}/refund-request/challenge`,
      request: `${config.baseUrl}/api/orders/{order_id}/refund-request`,
      signature: { eip155: "eip191", solana: "ed25519" },
    },
  };
}

import type { HTTPFacilitatorClient } from "@x402/core/server";
import type { DoctorContext } from "../check.js";

export interface SupportedKind {
  network: string;
  scheme: string;
  extra?: Record<string, unknown>;
}

/** The hosted facilitator's `/supported` kinds, read once per run (GET only: nothing is verified or settled). */
export function facilitatorKinds(ctx: DoctorContext, client: HTTPFacilitatorClient): Promise<SupportedKind[]> {
  return ctx.memo("facilitator.supported", async () => {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no answer within ${ctx.timeoutMs} ms`)), ctx.timeoutMs).unref(),
    );
    const s = await Promise.race([client.getSupported(), timeout]);
    return (s.kinds ?? []) as SupportedKind[];
  });
}

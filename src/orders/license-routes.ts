import type { Kysely } from "kysely";
import { z } from "zod";
import type { Catalog } from "../catalog/service.js";
import type { Database } from "../db/schema.js";
import { Problem, problemSchema } from "../http/problem.js";
import type { App } from "../http/types.js";
import { orderStore } from "./store.js";

/** Licence key shape issued by `newLicenseKey`: product prefix + four groups of five. */
export const LICENSE_KEY = /^[A-Z0-9]{1,10}(-[A-Z2-9]{5}){4}$/;

export const licenseAnswerSchema = z.object({
  key: z.string(),
  valid: z.boolean(),
  code: z.enum(["valid", "revoked", "refunded"]).describe("stable machine-readable result"),
  sku: z.string(),
  product: z.string(),
  issued_at: z.string(),
  revoked_at: z.string().nullable(),
});

/** Validation of licence keys (the licence SKUs' orders carry one). */
export class LicenseService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly catalog: Catalog,
  ) {}

  async validate(rawKey: string): Promise<z.infer<typeof licenseAnswerSchema>> {
    const key = rawKey.trim().toUpperCase();
    if (!LICENSE_KEY.test(key)) {
      throw new Problem(400, "invalid_license_key", "This is not a licence key (PREFIX-XXXXX-XXXXX-XXXXX-XXXXX).");
    }
    const order = await orderStore.byLicenseKey(this.db, key);
    if (!order) throw new Problem(404, "license_not_found", "No licence has this key.");
    return {
      key,
      valid: order.status === "active",
      code: order.status === "active" ? "valid" : order.status,
      sku: order.sku,
      product: this.catalog.find(order.sku)?.name ?? order.sku,
      issued_at: order.created_at,
      revoked_at: order.revoked_at,
    };
  }
}

export function licenseRoutes(app: App, deps: { licenses: LicenseService }) {
  app.get(
    "/api/licenses/:key",
    {
      schema: {
        summary: "Validate a licence key: code valid, revoked or refunded (200); unknown key 404",
        tags: ["orders"],
        params: z.object({ key: z.string().min(1).max(80) }),
        response: { 200: licenseAnswerSchema, 400: problemSchema, 404: problemSchema },
      },
    },
    async (request, reply) => {
      reply.header("Cache-Control", "no-store");
      return deps.licenses.validate(request.params.key);
    },
  );
}

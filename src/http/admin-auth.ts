import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { Problem } from "./problem.js";

/**
 * Operator authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in
 * constant time. With no ADMIN_TOKEN configured every admin route is disabled (503).
 */
export type AdminGuard = (request: FastifyRequest) => Promise<void>;

export function adminGuard(adminToken: string | undefined): AdminGuard {
  const expected = adminToken ? createHash("sha256").update(adminToken).digest() : undefined;
  return async function requireAdmin(request: FastifyRequest): Promise<void> {
    if (!expected) {
      throw new Problem(503, "admin_disabled", "Operator routes are disabled: ADMIN_TOKEN is not set.");
    }
    const header = request.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash("sha256")
      .update(match?.[1] ?? "")
      .digest();
    if (!match || !timingSafeEqual(given, expected)) {
      throw new Problem(
        401,
        "admin_unauthorized",
        "A valid operator token is required (Authorization: Bearer …).",
        {},
        { "WWW-Authenticate": 'Bearer realm="labphi-admin"' },
      );
    }
  };
}

/** Who did it, for the audit log: the operator token's fingerprint, never the token. */
export function adminActor(request: FastifyRequest): string {
  const header = request.headers.authorization ?? "";
  const token = header.replace(/^Bearer\s+/i, "");
  return `admin:${createHash("sha256").update(token).digest("hex").slice(0, 12)}`;
}

import { z } from "zod";
import { problemSchema } from "../http/problem.js";
import { idText, plainText } from "../http/text.js";
import type { App } from "../http/types.js";
import { type IdentityService, SEED_BYTES } from "./service.js";

const issuedSchema = z.object({
  identity_id: z.string(),
  token: z.string().describe("shown once; send it as `Authorization: Bearer <token>` or `X-Identity-Token`"),
  token_type: z.literal("Bearer"),
  expires_at: z.string(),
  access: z.literal("freemium"),
  use: z.string(),
  stored: z.object({
    token: z.string(),
    seed: z.string(),
  }),
});

const USE =
  'Send the token as `Authorization: Bearer <token>` or `X-Identity-Token: <token>` on /api/omni, /api/web-codec, /api/compress and /api/process: each compress then records a print (a fingerprint, never the data), listed by POST /api/omni { op: "prints" }.';
const STORED = {
  token: "only a keyed hash (HMAC-SHA256) of the token",
  seed: "only SHA-256 of a random salt followed by the seed; the seed phrase itself is never stored",
};

/** POST /api/join-work: a freemium identity token for a name, an intent and a 33-byte seed phrase. */
export function identityRoutes(app: App, deps: { identities: IdentityService }) {
  const { identities } = deps;

  app.post(
    "/api/join-work",
    {
      schema: {
        summary: "Join: a name, one sentence of intent and a 33-byte seed phrase → a freemium identity token",
        description: `The seed phrase must be exactly ${SEED_BYTES} bytes in UTF-8. It is hashed with SHA-256 (salted) and never stored; the token is random, shown once and stored only as a keyed hash. The token grants public freemium access only: it owns the prints of the caller's compressions, and carries the free suite volume (100 GB per calendar month). At most IDENTITY_ISSUE_PER_IP_PER_DAY identities (default 3) are issued per client IP per UTC day, besides the per-minute limit: more → 429 \`identity_daily_limit\` with Retry-After.`,
        tags: ["identity"],
        body: z.object({
          name: plainText(200).describe("1-80 characters, one line"),
          intent: plainText(1000).describe("one sentence, 8-280 characters"),
          seed: plainText(200).describe(
            `a seed phrase of exactly ${SEED_BYTES} UTF-8 bytes, without control characters`,
          ),
        }),
        response: {
          201: issuedSchema,
          400: problemSchema,
          413: problemSchema,
          415: problemSchema,
          429: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const issued = await identities.join(request.body, { ip: request.ip });
      reply.code(201).header("Cache-Control", "no-store");
      return { ...issued, use: USE, stored: STORED };
    },
  );

  app.post(
    "/api/join-work/renew",
    {
      schema: {
        summary: "Renew an identity token with its seed phrase (the previous token stops working)",
        tags: ["identity"],
        body: z.object({
          identity_id: idText(100),
          // Not refused here: an identity that joined before the control-character rule keeps
          // renewing with its seed (hashed, compared, never stored nor shown).
          seed: z.string().max(200).describe(`the seed phrase given at join (${SEED_BYTES} UTF-8 bytes)`),
        }),
        response: {
          200: issuedSchema,
          400: problemSchema,
          403: problemSchema,
          409: problemSchema,
          415: problemSchema,
        },
      },
    },
    async (request, reply) => {
      const issued = await identities.renew(request.body.identity_id, request.body.seed);
      reply.header("Cache-Control", "no-store");
      return { ...issued, use: USE, stored: STORED };
    },
  );
}

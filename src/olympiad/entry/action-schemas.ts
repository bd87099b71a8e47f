import { z } from "zod";
import { emailText, plainText } from "../../http/text.js";
import { challengeSchema, purchaseSchema } from "../../payments/x402/routes.js";
import { proposeActionSchema, proposeResultSchema, voteActionSchema, voteResultSchema } from "../governance/schemas.js";

/**
 * Body and response schemas of POST /api/olympiad (one route, a discriminated union on `action`)
 * and GET /api/olympiad/me. `propose` and `vote` come from governance-schemas.ts.
 */

export const OLYMPIAD_ACTIONS = [
  "register",
  "agent_challenge",
  "enter",
  "bind_order",
  "bind_identity",
  "intent",
  "team",
  "propose",
  "vote",
] as const;
export const TEAM_OPS = ["create", "join", "leave", "lock", "transfer", "code", "view"] as const;

const oneOf = (what: string, values: readonly string[]) => (iss: { code?: string; input?: unknown }) =>
  iss.code === "invalid_union" ? `${what} must be one of: ${values.join(", ")}` : undefined;

export const whoSchema = z
  .enum(["agent_self", "human_for_self", "human_for_agent"])
  .describe(
    "agent_self: an agent registers itself (agent_id required); human_for_self: a human competes (no agent_id); human_for_agent: a human registers an agent (agent_id of the agent and operator_name required)",
  );

export const agentProofSchema = z
  .object({
    nonce: plainText(100).min(1).describe("the nonce from agent_challenge (single use, expiring)"),
    chain: z
      .enum(["evm", "solana"])
      .describe("evm: EIP-191 personal_sign; solana: ed25519 over the message's UTF-8 bytes"),
    address: plainText(100).min(1).describe("the signing wallet: 0x… (EVM) or base58 (Solana)"),
    signature: plainText(300).min(1).describe("0x-hex (EVM), or base58 / base64 of 64 bytes (Solana)"),
  })
  .describe(
    "proves the agent_id: a signature by `address` over the `message` agent_challenge returned for this agent_id; a proven id is unique and bound to the address",
  );

export const registerActionSchema = z.object({
  action: z.literal("register"),
  who: whoSchema,
  name: plainText(80).min(1).describe("display name, 1-80 characters"),
  agent_id: plainText(200)
    .optional()
    .describe(
      "the agent's id (A-Z a-z 0-9 . _ : @ -, 1-200 characters). Without agent_proof it is a self-asserted label (several participants may carry it); with agent_proof it is proven and unique",
    ),
  agent_proof: agentProofSchema.optional(),
  operator_name: plainText(80).optional().describe("human_for_agent: the human who registers the agent"),
  email: emailText().optional().describe("optional contact; the receipt address of an entry bought in `enter`"),
});

export const agentChallengeActionSchema = z.object({
  action: z.literal("agent_challenge"),
  agent_id: plainText(200).min(1).describe("the agent id to prove at register"),
});

export const bindIdentityActionSchema = z
  .object({ action: z.literal("bind_identity") })
  .describe("binds the join-work identity of the X-Identity-Token header (public_community standing); permanent");

export const intentActionSchema = z.object({
  action: z.literal("intent"),
  note: plainText(500).optional().describe("optional note (kept from the first intent of the season)"),
});

export const enterActionSchema = z.object({
  action: z.literal("enter"),
  access_token: plainText(200)
    .optional()
    .describe("the token of a paid gao-entry order: the last segment of its access URL"),
  access_url: plainText(2000).optional().describe("or the order's whole access URL (<base>/access/<token>)"),
});

export const bindOrderActionSchema = z.object({
  action: z.literal("bind_order"),
  access_token: plainText(200)
    .optional()
    .describe("the token of a paid gao-entry order: the last segment of its access URL"),
  access_url: plainText(2000).optional().describe("or the order's whole access URL (<base>/access/<token>)"),
});

const teamOp = <T extends (typeof TEAM_OPS)[number]>(op: T, description: string) =>
  z.object({ action: z.literal("team"), op: z.literal(op).describe(description) });

export const teamActionSchema = z.discriminatedUnion(
  "op",
  [
    teamOp("create", "create a team; you become its captain and first member").extend({
      name: plainText(80).min(1).describe("team name, 1-80 characters, unique"),
    }),
    teamOp("join", "join a team by its join code").extend({
      join_code: plainText(200).min(1).describe("the code the captain received at create (or op code)"),
    }),
    teamOp("leave", "leave your team (a captain transfers first unless last member; the last member dissolves it)"),
    teamOp("lock", "captain: lock the roster for the season, only while the ratio rule holds"),
    teamOp("transfer", "captain: make another member captain").extend({
      to: plainText(100).min(1).describe("the new captain's participant_id"),
    }),
    teamOp("code", "captain: a new join code (the previous one stops working)"),
    teamOp("view", "your team, with eligibility and reasons"),
  ],
  { error: oneOf("op", TEAM_OPS) },
);

export const olympiadActionSchema = z.discriminatedUnion(
  "action",
  [
    registerActionSchema,
    agentChallengeActionSchema,
    enterActionSchema,
    bindOrderActionSchema,
    bindIdentityActionSchema,
    intentActionSchema,
    teamActionSchema,
    proposeActionSchema,
    voteActionSchema,
  ],
  { error: oneOf("action", OLYMPIAD_ACTIONS) },
);
export type OlympiadAction = z.infer<typeof olympiadActionSchema>;

// ---------------------------------------------------------------- responses

const memberKindSchema = z.enum(["human", "autonomous"]);

export const participantViewSchema = z.object({
  participant_id: z.string(),
  who: whoSchema,
  name: z.string(),
  agent_id: z.string().nullable(),
  agent_id_source: z
    .enum(["proven", "self_asserted"])
    .nullable()
    .describe("proven: bound to agent_address by a wallet signature (unique); self_asserted: a label anyone may carry"),
  agent_address: z.string().nullable().describe("the wallet that proved the agent id: evm:0x… or solana:…"),
  operator_name: z.string().nullable(),
  identity_bound: z.boolean().describe("bound to a join-work identity (public_community standing)"),
  member_kind: memberKindSchema.describe("how the ratio rule counts this participant"),
  registered_at: z.string(),
});

export const registerResultSchema = z.object({
  action: z.literal("register"),
  participant_id: z.string(),
  participant_token: z
    .string()
    .describe("shown once, stored only as SHA-256: send it as Authorization: Bearer <participant_token>"),
  token_type: z.literal("Bearer"),
  participant: participantViewSchema,
  links: z.object({
    actions: z.string(),
    me: z.string(),
    entry: z.string(),
    checkout: z.string(),
  }),
  next: z.array(z.string()),
});

export const agentChallengeResultSchema = z.object({
  action: z.literal("agent_challenge"),
  agent_id: z.string(),
  nonce: z.string().describe("single use; send it back in register's agent_proof"),
  message: z.string().describe("the exact text to sign (EIP-191 personal_sign, or ed25519 over its UTF-8 bytes)"),
  expires_at: z.string(),
});

export const bindOrderResultSchema = z.object({
  action: z.literal("bind_order"),
  participant_id: z.string(),
  order_id: z.string(),
  season_id: z.string(),
  created: z.boolean().describe("false when the order was already bound to this participant"),
  paid: z.literal(true).describe("paid standing in governance while the order stays active"),
});

export const bindIdentityResultSchema = z.object({
  action: z.literal("bind_identity"),
  participant_id: z.string(),
  identity_id: z.string(),
});

export const intentResultSchema = z.object({
  action: z.literal("intent"),
  participant_id: z.string(),
  season_id: z.string(),
  note: z.string().nullable(),
  recorded_at: z.string(),
  created: z.boolean().describe("false when an intent for this season was already recorded (the first is kept)"),
  registration_open: z.boolean(),
  registration_opens: z.string().nullable(),
});

const entryViewSchema = z.object({
  entry_id: z.string(),
  order_id: z.string(),
  proof: z.enum(["access_token", "x402"]),
  entered_at: z.string(),
});

export const enterResultSchema = z.object({
  action: z.literal("enter"),
  participant_id: z.string(),
  season_id: z.string(),
  entered: z.literal(true),
  created: z.boolean().describe("false for a retry: this participant had already entered with this order"),
  entry: entryViewSchema,
  purchase: purchaseSchema.optional().describe("the order an x402 payment in this call bought: keep its access_url"),
});

export const sharesSchema = z
  .object({
    humans: z.number().int(),
    autonomous: z.number().int(),
    members: z.number().int(),
    human_pct: z.number().int().describe("floor(100·humans/members), display only"),
    autonomous_pct: z.number().int().describe("floor(100·autonomous/members), display only"),
  })
  .describe("exact counts (the rule compares 100·h with 30·n and 70·n) and rounded-down percentages");

export const ratioReasonSchema = z.object({ code: z.string(), detail: z.string() });

export const teamViewSchema = z.object({
  team_id: z.string(),
  name: z.string(),
  captain_id: z.string(),
  roster_size: z.number().int(),
  member_count: z.number().int(),
  seats_left: z.number().int(),
  locked: z.boolean(),
  locked_at: z.string().nullable(),
  season_id: z.string().nullable(),
  created_at: z.string(),
  shares: sharesSchema,
  eligible: z.boolean().describe("human and autonomous shares each within 30-70 % (inclusive)"),
  reasons: z.array(ratioReasonSchema).describe("why not eligible; empty when eligible"),
  entered_members: z.number().int(),
  governance: z
    .object({
      locked: z.boolean(),
      paid_members: z.number().int().describe("members holding an active gao-entry order (entered or bound)"),
      paid_humans: z.number().int(),
      paid_autonomous: z.number().int(),
      counts: z
        .boolean()
        .describe("the captain (if paid) votes in team_captains: locked and eligible over the paid members"),
      reasons: z.array(z.string()).describe("why not (empty when it counts)"),
    })
    .describe("governance standing of the team (docs/olympiad-governance.md)"),
  members: z.array(
    z.object({
      participant_id: z.string(),
      name: z.string(),
      who: whoSchema,
      member_kind: memberKindSchema,
      captain: z.boolean(),
      entered: z.boolean(),
      joined_at: z.string(),
    }),
  ),
});

export const teamResultSchema = z.object({
  action: z.literal("team"),
  op: z.enum(TEAM_OPS),
  team: teamViewSchema.nullable().describe("null after the last member left (the team dissolved)"),
  join_code: z.string().optional().describe("create and code only: shown once, stored hashed"),
  dissolved: z.boolean().optional(),
});

export const actionResultSchema = z.discriminatedUnion("action", [
  registerResultSchema,
  agentChallengeResultSchema,
  bindOrderResultSchema,
  bindIdentityResultSchema,
  enterResultSchema,
  intentResultSchema,
  teamResultSchema,
  proposeResultSchema,
  voteResultSchema,
]);

const guidanceFields = {
  sku: z.string(),
  amount_usd: z.string(),
  amount_cents: z.number().int(),
  checkout_url: z.string().describe("the human card checkout for gao-entry"),
  other_ways_url: z.string(),
  recover_url: z.string().describe("recover orders paid on chain by signing with the paying wallet"),
  rails_configured: z.array(z.string()),
  how: z.array(z.string()),
};

export const entryGuidanceSchema = z
  .union([
    challengeSchema.extend(guidanceFields),
    z
      .object({
        type: z.string(),
        title: z.string(),
        status: z.literal(402),
        code: z.string(),
        detail: z.string(),
        ...guidanceFields,
      })
      .catchall(z.unknown()),
  ])
  .describe(
    "enter without proof: the x402 challenge for gao-entry (PAYMENT-REQUIRED header) when x402 is configured, plus the card checkout link and the other ways",
  );

export const entryStateSchema = z.object({
  season_id: z.string(),
  registration_open: z.boolean(),
  registration_opens: z.string().nullable(),
  entered: z.boolean().describe("true only while the entry's order is active"),
  withdrawn: z.boolean().describe("an entry whose order was refunded or revoked"),
  entry: entryViewSchema.extend({ order_status: z.enum(["active", "revoked", "refunded"]) }).nullable(),
  intent: z.object({ note: z.string().nullable(), recorded_at: z.string() }).nullable(),
});

export const meSchema = z.object({
  participant: participantViewSchema,
  entry: entryStateSchema,
  team: teamViewSchema.nullable(),
});

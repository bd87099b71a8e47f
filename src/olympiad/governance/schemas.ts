import { z } from "zod";
import { excerpt, nextCursorSchema } from "../../db/paginate.js";
import { idText, multiLineText, plainText } from "../../http/text.js";
import { CONSTITUENCIES, type Constituency, DECISION_KINDS } from "./weights.js";

/**
 * Body and response schemas of the olympiad's governance actions (`propose`, `vote`) and views.
 * The POST /api/olympiad route (O2) puts `proposeActionSchema` and `voteActionSchema` into its
 * discriminated union on `action` and calls `Governance.propose` / `Governance.vote`.
 * docs/olympiad-governance.md explains the rules.
 */

// The decision kinds and the constituencies are O1's (governance-weights.ts, with the weights).
export { CONSTITUENCIES, type Constituency, DECISION_KINDS };

export const VOTE_CHOICES = ["yes", "no", "abstain"] as const;
export type VoteChoice = (typeof VOTE_CHOICES)[number];

/** Bounds of a voting window, in whole hours (every kind has its own default inside them). */
export const WINDOW_HOURS_MIN = 24;
export const WINDOW_HOURS_MAX = 14 * 24;

export const decisionKindSchema = z.enum(DECISION_KINDS).describe("one of the spec's `decides` kinds");
export const constituencySchema = z.enum(CONSTITUENCIES);
export const voteChoiceSchema = z.enum(VOTE_CHOICES);

export const proposeActionSchema = z.object({
  action: z.literal("propose"),
  kind: decisionKindSchema,
  title: plainText(160).min(3).describe("3-160 characters, one line"),
  body: multiLineText(8000).min(1).describe("the proposal's text, 1-8000 characters (several lines allowed)"),
  window_hours: z
    .number()
    .int()
    .min(WINDOW_HOURS_MIN)
    .max(WINDOW_HOURS_MAX)
    .optional()
    .describe(
      `voting window in whole hours, ${WINDOW_HOURS_MIN}-${WINDOW_HOURS_MAX}; default per kind (see governance.rules)`,
    ),
});
export type ProposeAction = z.infer<typeof proposeActionSchema>;

export const voteActionSchema = z.object({
  action: z.literal("vote"),
  proposal_id: idText(100).describe("the proposal's id (prop_…)"),
  choice: voteChoiceSchema.describe("yes, no or abstain; a second vote inside the window replaces the first"),
});
export type VoteAction = z.infer<typeof voteActionSchema>;

/** A fraction in lowest terms (exact; the decision compares fractions, never floats). */
export const fractionSchema = z.object({ num: z.string(), den: z.string() }).describe("an exact fraction num/den");

export const constituencyTallySchema = z.object({
  constituency: constituencySchema,
  weight_bp: z.number().int().describe("nominal weight in basis points (of 10000)"),
  yes: z.number().int(),
  no: z.number().int(),
  abstain: z.number().int(),
  /** yes / (yes + no); null when the constituency had no decisive vote (its weight is redistributed) */
  yes_share: fractionSchema.nullable(),
  yes_share_ppm: z.number().int().nullable().describe("yes_share in parts per million, floored (display only)"),
  empty: z.boolean().describe("no yes or no vote: its weight goes to the others in proportion"),
  effective_weight: fractionSchema.describe("weight after redistribution (0 when empty)"),
  effective_weight_ppm: z.number().int().describe("effective_weight in parts per million, floored (display only)"),
});

export const tallySchema = z.object({
  voters: z.number().int().describe("distinct voters, abstentions included (the turnout the quorum counts)"),
  decisive: z.number().int().describe("yes + no votes over all constituencies"),
  constituencies: z.array(constituencyTallySchema),
  mixed_yes: fractionSchema.nullable().describe("Σ effective_weight × yes_share; null when no decisive vote at all"),
  mixed_yes_ppm: z.number().int().nullable().describe("mixed_yes in parts per million, floored (display only)"),
  quorum: z.number().int().describe("distinct voters needed (abstentions count)"),
  min_constituencies: z.number().int().describe("constituencies with a yes or no vote needed"),
  quorum_met: z.boolean(),
  threshold: fractionSchema.describe("the fraction mixed_yes must reach"),
  threshold_rule: z.enum(["greater_than", "at_least"]),
  outcome: z.enum(["passed", "failed", "no_quorum"]).describe("the outcome if the window closed at `as_of`"),
  as_of: z.string().describe("when the tally was computed (for a closed proposal: when it closed)"),
});
export type TallyView = z.infer<typeof tallySchema>;

export const proposalSchema = z.object({
  proposal_id: z.string(),
  kind: decisionKindSchema,
  title: z.string(),
  body: z.string(),
  proposer_id: z.string(),
  opens_at: z.string(),
  closes_at: z.string(),
  state: z.enum(["open", "closed"]),
  outcome: z.enum(["passed", "failed", "no_quorum"]).nullable().describe("fixed when the window closes"),
  tally: tallySchema.describe("live while open; fixed when the window closes"),
  created_at: z.string(),
});
export type ProposalView = z.infer<typeof proposalSchema>;

export const proposeResultSchema = z.object({
  action: z.literal("propose"),
  proposal: proposalSchema,
});
export type ProposeResult = z.infer<typeof proposeResultSchema>;

export const voteResultSchema = z.object({
  action: z.literal("vote"),
  proposal_id: z.string(),
  voter_id: z.string(),
  choice: voteChoiceSchema,
  constituency: constituencySchema.describe(
    "the voter's largest-weight constituency now; recomputed from membership when the window closes",
  ),
  replaced: z.boolean().describe("true when this vote replaced the voter's earlier vote"),
  cast_at: z.string(),
  updated_at: z.string(),
  closes_at: z.string(),
  tally: tallySchema,
});
export type VoteResult = z.infer<typeof voteResultSchema>;

/** Characters of a proposal's text a list shows (the whole text is on the proposal's own page). */
export const PROPOSAL_EXCERPT_CHARS = 280;

export const proposalListItemSchema = proposalSchema.extend({
  body: z.string().describe(`the text cut to ${PROPOSAL_EXCERPT_CHARS} characters (… when cut)`),
  body_truncated: z.boolean().describe("true when `body` is cut: the whole text is at `url` and `page`"),
  url: z.string().describe("the whole proposal: GET /api/olympiad/proposals/{id}"),
  page: z.string().describe("the proposal's own page: /olympiad/proposals/{id}"),
});
export type ProposalListItem = z.infer<typeof proposalListItemSchema>;

/** A proposal as a list shows it: its text cut, where to read the whole of it. */
export function proposalListItem(p: ProposalView): ProposalListItem {
  const cut = excerpt(p.body, PROPOSAL_EXCERPT_CHARS);
  const id = encodeURIComponent(p.proposal_id);
  return {
    ...p,
    body: cut.text,
    body_truncated: cut.truncated,
    url: `/api/olympiad/proposals/${id}`,
    page: `/olympiad/proposals/${id}`,
  };
}

export const proposalsViewSchema = z.object({
  view: z.literal("proposals"),
  open: z.number().int().describe("open proposals (all of them, not only this page's)"),
  closed: z.number().int().describe("closed proposals (all of them)"),
  limit: z.number().int().describe("the page size asked for (default 20, at most 100)"),
  next_cursor: nextCursorSchema,
  proposals: z.array(proposalListItemSchema).describe("one page, newest first"),
});
export type ProposalsView = z.infer<typeof proposalsViewSchema>;

export const ROLES = ["steward", "integrity"] as const;
export type Role = (typeof ROLES)[number];

export const roleActionSchema = z.object({
  participant_id: idText(100).describe("the participant's id (par_…)"),
  role: z.enum(ROLES).describe("steward → lab_stewards; integrity → residual_integrity"),
  op: z.enum(["appoint", "remove"]),
});

export const roleSchema = z.object({
  participant_id: z.string(),
  role: z.enum(ROLES),
  appointed_by: z.string(),
  appointed_at: z.string(),
});

export const rolesListSchema = z.object({ roles: z.array(roleSchema) });

export const roleResultSchema = z.object({
  participant_id: z.string(),
  role: z.enum(ROLES),
  op: z.enum(["appoint", "remove"]),
  changed: z.boolean().describe("false when the participant already held (appoint) or did not hold (remove) the role"),
  roles: z.array(roleSchema).describe("the participant's roles after the change"),
});

import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.js";
import { Problem } from "../http/problem.js";
import { captainedTeam, heldConstituencies, largest } from "./constituencies.js";
import type {
  ProposalsView,
  ProposalView,
  ProposeAction,
  ProposeResult,
  VoteAction,
  VoteResult,
} from "./governance-schemas.js";
import { governanceStore as store } from "./governance-store.js";
import type { Constituency } from "./governance-weights.js";
import type { ParticipantRow, ProposalRow, RoleRow, VoteRow } from "./tables.js";
import { DECISION_RULES, type TallyJson, tally, tallyJson } from "./tally.js";

const HOUR_MS = 3_600_000;
/** Open proposals one participant may have at a time (spam guard). */
export const MAX_OPEN_PER_PROPOSER = 3;

export interface GovernanceOptions {
  /** The clock (tests inject one). */
  now?: () => Date;
  /** Records an operator's role change in the audit log (OrderService.audit). */
  audit?: (actor: string, action: string, subject: string, detail: Record<string, unknown>) => Promise<void>;
}

/**
 * Proposals, votes and the weighted tally (docs/olympiad-governance.md). A vote's constituency is
 * decided when it is cast (the voter's largest-weight constituency at that moment) and kept; the
 * tally and the outcome are fixed once, when the first read or vote after `closes_at` closes the
 * proposal. The outcome depends only on the votes cast inside the window.
 */
export class Governance {
  readonly now: () => Date;
  private readonly audit: NonNullable<GovernanceOptions["audit"]>;

  constructor(
    readonly db: Kysely<Database>,
    options: GovernanceOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.audit = options.audit ?? (async () => {});
  }

  /** POST /api/olympiad { action: "propose" } for an authenticated participant. */
  async propose(participant: ParticipantRow, body: ProposeAction): Promise<ProposeResult> {
    const rule = DECISION_RULES[body.kind];
    const title = body.title.trim();
    const text = body.body.trim();
    if (title.length < 3) throw new Problem(400, "invalid_title", "The title needs at least 3 characters.");
    if (text.length === 0) throw new Problem(400, "invalid_body", "The proposal's body is empty.");
    const now = this.now();
    const nowIso = now.toISOString();
    await this.closeDue();
    const open = await store.openCountBy(this.db, participant.id, nowIso);
    if (open >= MAX_OPEN_PER_PROPOSER) {
      throw new Problem(
        409,
        "too_many_open_proposals",
        `A participant may have at most ${MAX_OPEN_PER_PROPOSER} open proposals; wait until one closes.`,
        { open, max: MAX_OPEN_PER_PROPOSER },
      );
    }
    const hours = body.window_hours ?? rule.default_window_hours;
    const row: ProposalRow = {
      id: `prop_${randomBytes(12).toString("base64url")}`,
      kind: body.kind,
      title,
      body: text,
      proposer_id: participant.id,
      opens_at: nowIso,
      closes_at: new Date(now.getTime() + hours * HOUR_MS).toISOString(),
      state: "open",
      outcome: null,
      tally: null,
      created_at: nowIso,
    };
    await store.insertProposal(this.db, row);
    return { action: "propose", proposal: this.view(row, [], nowIso) };
  }

  /** POST /api/olympiad { action: "vote" } for an authenticated participant. */
  async vote(participant: ParticipantRow, body: VoteAction): Promise<VoteResult> {
    const found = await store.proposal(this.db, body.proposal_id);
    if (!found) throw new Problem(404, "proposal_not_found", `No proposal ${body.proposal_id}.`);
    const nowIso = this.now().toISOString();
    if (found.state === "closed" || found.closes_at <= nowIso) {
      const closed = await this.closeIfDue(found.id);
      throw votingClosed(closed ?? found);
    }

    const result = await this.db.transaction().execute(async (trx) => {
      if (!(await store.lockOpen(trx, found.id, nowIso))) return undefined;
      const held = (await heldConstituencies(trx, [participant.id])).get(participant.id);
      if (!held) throw new Problem(404, "participant_not_found", "The participant no longer exists.");
      // One captain's vote per team: after a captaincy transfer, the new captain votes in their next constituency.
      if (held.has("team_captains")) {
        const team = await captainedTeam(trx, participant.id);
        if (team && (await store.teamCaptainVoted(trx, found.id, team, participant.id))) {
          held.delete("team_captains");
          if (held.size === 0) held.add("public_community");
        }
      }
      const constituency: Constituency = largest(held);
      const previous = await store.vote(trx, found.id, participant.id);
      const row: VoteRow = {
        proposal_id: found.id,
        voter_id: participant.id,
        choice: body.choice,
        constituency,
        cast_at: previous?.cast_at ?? nowIso,
        updated_at: nowIso,
      };
      await store.upsertVote(trx, row);
      return { row, replaced: previous !== undefined };
    });
    if (!result) {
      const closed = await this.closeIfDue(found.id);
      throw votingClosed(closed ?? found);
    }
    const votes = await store.votes(this.db, found.id);
    return {
      action: "vote",
      proposal_id: found.id,
      voter_id: participant.id,
      choice: result.row.choice,
      constituency: result.row.constituency as Constituency,
      replaced: result.replaced,
      cast_at: result.row.cast_at,
      updated_at: result.row.updated_at,
      closes_at: found.closes_at,
      tally: this.liveTally(found, votes, nowIso),
    };
  }

  /** GET /api/olympiad?view=proposals: every proposal, live tallies while open, fixed ones once closed. */
  async proposalsView(): Promise<ProposalsView> {
    await this.closeDue();
    const nowIso = this.now().toISOString();
    const rows = await store.proposals(this.db);
    const votes = await store.votesOf(
      this.db,
      rows.filter((r) => r.state === "open").map((r) => r.id),
    );
    const proposals = rows.map((r) => this.view(r, votes.get(r.id) ?? [], nowIso));
    const open = proposals.filter((p) => p.state === "open").length;
    return { view: "proposals", open, closed: proposals.length - open, proposals };
  }

  /** One proposal (GET /api/olympiad/proposals/:id). */
  async proposal(id: string): Promise<ProposalView> {
    const found = await store.proposal(this.db, id);
    if (!found) throw new Problem(404, "proposal_not_found", `No proposal ${id}.`);
    const row = (await this.closeIfDue(id)) ?? found;
    const votes = row.state === "open" ? await store.votes(this.db, id) : [];
    return this.view(row, votes, this.now().toISOString());
  }

  /** Closes every open proposal whose window has ended (each exactly once). */
  async closeDue(): Promise<number> {
    const ids = await store.due(this.db, this.now().toISOString());
    let closed = 0;
    for (const id of ids) if ((await this.closeIfDue(id))?.state === "closed") closed++;
    return closed;
  }

  /**
   * Closes the proposal if its window has ended: in one transaction, the state goes to closed only
   * where it is still open (one caller wins), then the tally of the votes cast inside the window and
   * the outcome are written. Returns the proposal as it is afterwards.
   */
  async closeIfDue(id: string): Promise<ProposalRow | undefined> {
    const nowIso = this.now().toISOString();
    await this.db.transaction().execute(async (trx) => {
      if (!(await store.claimClose(trx, id, nowIso))) return;
      const row = await store.proposal(trx, id);
      if (!row) return;
      const votes = await store.votes(trx, id);
      const fixed = tallyJson(tally(tallyVotes(votes), DECISION_RULES[row.kind]), row.closes_at);
      await store.fixOutcome(trx, id, fixed.outcome, JSON.stringify(fixed));
    });
    return store.proposal(this.db, id);
  }

  // Operator appointments (POST/GET /api/admin/olympiad/roles).

  async roles(participantId?: string): Promise<RoleRow[]> {
    return store.roles(this.db, participantId);
  }

  async changeRole(
    actor: string,
    input: { participant_id: string; role: RoleRow["role"]; op: "appoint" | "remove" },
  ): Promise<{ changed: boolean; roles: RoleRow[] }> {
    if (!(await store.participantExists(this.db, input.participant_id))) {
      throw new Problem(404, "participant_not_found", `No participant ${input.participant_id}.`);
    }
    const changed =
      input.op === "appoint"
        ? await store.appoint(this.db, {
            participant_id: input.participant_id,
            role: input.role,
            appointed_by: actor,
            appointed_at: this.now().toISOString(),
          })
        : await store.remove(this.db, input.participant_id, input.role);
    if (changed) {
      await this.audit(actor, `olympiad.role.${input.op}`, input.participant_id, { role: input.role });
    }
    return { changed, roles: await store.roles(this.db, input.participant_id) };
  }

  private liveTally(row: ProposalRow, votes: readonly VoteRow[], nowIso: string): TallyJson {
    return tallyJson(tally(tallyVotes(votes), DECISION_RULES[row.kind]), nowIso);
  }

  private view(row: ProposalRow, votes: readonly VoteRow[], nowIso: string): ProposalView {
    const fixed = row.state === "closed" && row.tally ? (JSON.parse(row.tally) as TallyJson) : undefined;
    return {
      proposal_id: row.id,
      kind: row.kind,
      title: row.title,
      body: row.body,
      proposer_id: row.proposer_id,
      opens_at: row.opens_at,
      closes_at: row.closes_at,
      state: row.state,
      outcome: row.state === "closed" ? row.outcome : null,
      tally: fixed ?? this.liveTally(row, votes, nowIso),
      created_at: row.created_at,
    };
  }
}

const tallyVotes = (votes: readonly VoteRow[]) =>
  votes.map((v) => ({ constituency: v.constituency as Constituency, choice: v.choice }));

function votingClosed(row: ProposalRow): Problem {
  return new Problem(409, "voting_closed", `Voting on ${row.id} closed at ${row.closes_at}.`, {
    proposal_id: row.id,
    closes_at: row.closes_at,
    outcome: row.outcome,
  });
}

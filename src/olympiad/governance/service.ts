import { randomBytes } from "node:crypto";
import { type Kysely, PostgresAdapter, sql, type Transaction } from "kysely";
import { isUniqueViolation } from "../../db/database.js";
import type { KeysetRequest } from "../../db/paginate.js";
import type { Database } from "../../db/schema.js";
import { Problem } from "../../http/problem.js";
import type { ParticipantRow, ProposalRow, RoleRow, VoteRow } from "../tables.js";
import { captainedTeam, heldConstituencies, largest, memberTeam, paidIds } from "./constituencies.js";
import type { ProposalsView, ProposalView, ProposeAction, ProposeResult, VoteAction, VoteResult } from "./schemas.js";
import { proposalListItem } from "./schemas.js";
import { governanceStore as store } from "./store.js";
import { DECISION_RULES, type TallyJson, tally, tallyJson } from "./tally.js";
import type { Constituency } from "./weights.js";

const HOUR_MS = 3_600_000;
/** Open proposals one participant (or one join-work identity) may have at a time, by default (spam guard). */
export const MAX_OPEN_PER_PROPOSER = 3;

/** Caps on open proposals (0 = no cap): OLYMPIAD_MAX_OPEN_PROPOSALS[_PER_TEAM|_PER_PARTICIPANT]. */
export interface ProposalCaps {
  /** open proposals in all (default 50) */
  maxOpen: number;
  /** open proposals made by the members of one team (default 3) */
  perTeam: number;
  /** open proposals of one participant, and of one join-work identity (default 3) */
  perParticipant: number;
}

export const DEFAULT_PROPOSAL_CAPS: ProposalCaps = { maxOpen: 50, perTeam: 3, perParticipant: MAX_OPEN_PER_PROPOSER };

/** The PostgreSQL advisory lock that serialises the caps' count-then-insert (one proposer at a time). */
const PROPOSE_LOCK_SQL = sql`select pg_advisory_xact_lock(hashtext('labphi:olympiad-propose'))`;

export interface GovernanceOptions {
  /** The clock (tests inject one). */
  now?: () => Date;
  /** Caps on open proposals (default DEFAULT_PROPOSAL_CAPS). */
  caps?: Partial<ProposalCaps>;
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
  readonly caps: ProposalCaps;
  private readonly audit: NonNullable<GovernanceOptions["audit"]>;

  constructor(
    readonly db: Kysely<Database>,
    options: GovernanceOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.caps = { ...DEFAULT_PROPOSAL_CAPS, ...options.caps };
    this.audit = options.audit ?? (async () => {});
  }

  /**
   * POST /api/olympiad { action: "propose" } for an authenticated participant. Needs the same
   * standing as a vote (403 `governance_standing_required`), then room under the caps on open
   * proposals: per participant (and per join-work identity when that is the standing), per team of
   * the proposer, and in all (409 `too_many_open_proposals`, `too_many_open_team_proposals`,
   * `too_many_open_proposals_global`).
   */
  async propose(participant: ParticipantRow, body: ProposeAction): Promise<ProposeResult> {
    const rule = DECISION_RULES[body.kind];
    const title = body.title.trim();
    const text = body.body.trim();
    if (title.length < 3) throw new Problem(400, "invalid_title", "The title needs at least 3 characters.");
    if (text.length === 0) throw new Problem(400, "invalid_body", "The proposal's body is empty.");
    const now = this.now();
    const nowIso = now.toISOString();
    await this.closeDue();
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
    await this.db.transaction().execute(async (trx) => {
      if (trx.getExecutor().adapter instanceof PostgresAdapter) {
        // the caps count, then insert: one proposer at a time (SQLite runs one write transaction at a time)
        await PROPOSE_LOCK_SQL.execute(trx);
      }
      const standing = await this.standing(trx, participant.id);
      row.team_id = (await memberTeam(trx, participant.id)) ?? null;
      row.identity_id = standing.identityBacked ? standing.identityId : null;
      await this.checkCaps(trx, participant.id, row, nowIso);
      await store.insertProposal(trx, row);
    });
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

    const cast = () =>
      this.db.transaction().execute(async (trx) => {
        if (!(await store.lockOpen(trx, found.id, nowIso))) return undefined;
        const standing = await this.standing(trx, participant.id);
        const held = standing.held;
        // One captain's vote per team: after a captaincy transfer, the new captain votes in their next constituency.
        if (held.has("team_captains")) {
          const team = await captainedTeam(trx, participant.id);
          if (team && (await store.teamCaptainVoted(trx, found.id, team, participant.id))) {
            held.delete("team_captains");
            if (held.size === 0) held.add("public_community"); // a counted captain is paid
          }
        }
        const constituency = largest(held) as Constituency;
        // One join-work identity backs one public vote per proposal (a paid voter is backed by their order).
        const identityId = constituency === "public_community" && standing.identityBacked ? standing.identityId : null;
        if (identityId !== null && (await store.identityVotedAs(trx, found.id, identityId, participant.id))) {
          throw identityVoted(found.id);
        }
        const previous = await store.vote(trx, found.id, participant.id);
        const row: VoteRow = {
          proposal_id: found.id,
          voter_id: participant.id,
          choice: body.choice,
          constituency,
          cast_at: previous?.cast_at ?? nowIso,
          updated_at: nowIso,
          identity_id: identityId,
        };
        await store.upsertVote(trx, row);
        return { row, replaced: previous !== undefined };
      });
    let result: Awaited<ReturnType<typeof cast>>;
    try {
      result = await cast();
    } catch (err) {
      // two participants behind one identity voting at once: the unique (proposal, identity) index decides
      if (isUniqueViolation(err)) throw identityVoted(found.id);
      throw err;
    }
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

  /**
   * The participant's standing now: the constituencies they hold (403 `governance_standing_required`
   * when none), whether they paid, and the join-work identity they are bound to.
   */
  private async standing(
    db: Kysely<Database> | Transaction<Database>,
    participantId: string,
  ): Promise<{ held: Set<Constituency>; identityId: string | null; identityBacked: boolean }> {
    const held = (await heldConstituencies(db, [participantId])).get(participantId);
    if (!held) throw new Problem(404, "participant_not_found", "The participant no longer exists.");
    if (held.size === 0) throw noStanding();
    const bound = await store.participantIdentity(db, participantId);
    const paid = (await paidIds(db, [participantId])).has(participantId);
    return { held, identityId: bound, identityBacked: !paid && bound !== null };
  }

  /** 409 when a cap on open proposals is reached (each cap 0 = off). Runs under the propose lock. */
  private async checkCaps(
    trx: Transaction<Database>,
    participantId: string,
    row: ProposalRow,
    nowIso: string,
  ): Promise<void> {
    const { maxOpen, perTeam, perParticipant } = this.caps;
    if (perParticipant > 0) {
      const open = await store.openCount(trx, { proposer_id: participantId }, nowIso);
      if (open >= perParticipant) {
        throw new Problem(
          409,
          "too_many_open_proposals",
          `A participant may have at most ${perParticipant} open proposals; wait until one closes.`,
          { open, max: perParticipant, scope: "participant" },
        );
      }
      if (row.identity_id) {
        const byIdentity = await store.openCount(trx, { identity_id: row.identity_id }, nowIso);
        if (byIdentity >= perParticipant) {
          throw new Problem(
            409,
            "too_many_open_proposals",
            `One join-work identity may back at most ${perParticipant} open proposals, whichever participants made them; wait until one closes.`,
            { open: byIdentity, max: perParticipant, scope: "identity" },
          );
        }
      }
    }
    if (perTeam > 0 && row.team_id) {
      const open = await store.openCount(trx, { team_id: row.team_id }, nowIso);
      if (open >= perTeam) {
        throw new Problem(
          409,
          "too_many_open_team_proposals",
          `The members of one team may have at most ${perTeam} open proposals together; wait until one closes.`,
          { open, max: perTeam, team_id: row.team_id },
        );
      }
    }
    if (maxOpen > 0) {
      const open = await store.openCount(trx, {}, nowIso);
      if (open >= maxOpen) {
        const next = await store.nextClose(trx, nowIso);
        throw new Problem(
          409,
          "too_many_open_proposals_global",
          `At most ${maxOpen} proposals may be open at once; the next one closes at ${next ?? "(unknown)"}.`,
          { open, max: maxOpen, next_closes_at: next ?? null },
        );
      }
    }
  }

  /**
   * GET /api/olympiad?view=proposals: one page of proposals, newest first (default 20, at most 100,
   * `next_cursor` for the next), texts cut (the whole one is on the proposal's own page), live
   * tallies while open, fixed ones once closed; `open` and `closed` count all of them.
   */
  async proposalsView(page: KeysetRequest = {}): Promise<ProposalsView> {
    await this.closeDue();
    const nowIso = this.now().toISOString();
    const listed = await store.proposalsPage(this.db, page);
    const rows = listed.items;
    const votes = await store.votesOf(
      this.db,
      rows.filter((r) => r.state === "open").map((r) => r.id),
    );
    const proposals = rows.map((r) => proposalListItem(this.view(r, votes.get(r.id) ?? [], nowIso)));
    const counts = await store.stateCounts(this.db);
    return { view: "proposals", ...counts, limit: listed.limit, next_cursor: listed.next_cursor, proposals };
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

function noStanding(): Problem {
  return new Problem(
    403,
    "governance_standing_required",
    "Free registration gives no vote and no proposal. Standing comes from an active paid gao-entry order bound to you (action enter, or bind_order before open registration), from a locked eligible team you captain (with that order), from an operator's appointment, or, for the public community, from a join-work identity (POST /api/join-work; send its token as X-Identity-Token).",
    {
      how: [
        'Pay gao-entry and bind it: { "action": "enter", "access_token": "…" } or { "action": "bind_order", "access_token": "…" }.',
        'Public community: get an identity at POST /api/join-work, then send X-Identity-Token: <token> with this request (or { "action": "bind_identity" }).',
      ],
    },
  );
}

function identityVoted(proposalId: string): Problem {
  return new Problem(
    409,
    "identity_already_voted",
    "Another participant bound to the same join-work identity already voted on this proposal in the public community: one identity, one public vote per proposal.",
    { proposal_id: proposalId },
  );
}

function votingClosed(row: ProposalRow): Problem {
  return new Problem(409, "voting_closed", `Voting on ${row.id} closed at ${row.closes_at}.`, {
    proposal_id: row.id,
    closes_at: row.closes_at,
    outcome: row.outcome,
  });
}

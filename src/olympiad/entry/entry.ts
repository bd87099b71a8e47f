import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { isUniqueViolation } from "../../db/database.js";
import type { Executor } from "../../db/executor.js";
import type { Database } from "../../db/schema.js";
import { badRequest, conflict, Problem } from "../../http/problem.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import type { OrderRow } from "../../orders/tables.js";
import type { VerifiedCredential } from "../../payments/mpp/service.js";
import { railReadiness } from "../../payments/readiness.js";
import {
  type Challenge,
  type Pending,
  type ProductPurchaseBody,
  type Purchase,
  RECOVERY_PATH,
} from "../../payments/x402/answers.js";
import type { X402Service } from "../../payments/x402/service.js";
import { assertRegistrationOpen, seasonOf } from "../season.js";
import type { EntryRow, IntentRow, OrderBindingRow, ParticipantRow } from "../tables.js";

/**
 * Intents and paid entries (POST /api/olympiad { action: "intent" | "enter" }).
 *
 * An entry is a paid `gao-entry` order that the caller proves it holds, attached to one participant
 * for one season: by the order's access token (the tail of its access URL), or by an x402 purchase
 * made inside the authenticated `enter` call. An order id alone is never proof. One order enters one
 * participant once (olympiad_entries.order_id is unique).
 *
 * "Entered" is never stored as a flag: it is computed by joining the order, whose status must be
 * `active`. A refunded or revoked order therefore withdraws the entry everywhere at once; the
 * participant may then enter again with another order (the entry row takes the new order).
 */

export const ENTRY_SKU = "gao-entry";
/** The tail of an access URL: `${baseUrl}/access/<token>` (tokens are base64url HMACs). */
const ACCESS_PATH = /\/access\/([A-Za-z0-9_-]{16,128})\/?$/;
export const ACCESS_TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

export interface EntryWithOrder extends EntryRow {
  order_status: OrderRow["status"];
}

export const entryStore = {
  /** The participant's entry row for a season (whatever its order's status), with the order's status. */
  forParticipant(db: Executor, participantId: string, seasonId: string): Promise<EntryWithOrder | undefined> {
    return db
      .selectFrom("olympiad_entries as e")
      .innerJoin("orders as o", "o.id", "e.order_id")
      .selectAll("e")
      .select("o.status as order_status")
      .where("e.participant_id", "=", participantId)
      .where("e.season_id", "=", seasonId)
      .executeTakeFirst();
  },

  byOrder(db: Executor, orderId: string): Promise<EntryRow | undefined> {
    return db.selectFrom("olympiad_entries").selectAll().where("order_id", "=", orderId).executeTakeFirst();
  },

  /** Inserts unless the order or the (participant, season) pair is taken; true when this call inserted. */
  async insertIfAbsent(db: Executor, row: EntryRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_entries")
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  /** A withdrawn entry takes a new order, only if it still holds `fromOrder` (of two racing re-entries one wins). */
  async replaceOrder(
    db: Executor,
    id: string,
    fromOrder: string,
    set: Pick<EntryRow, "order_id" | "proof" | "created_at">,
  ): Promise<boolean> {
    const r = await db
      .updateTable("olympiad_entries")
      .set(set)
      .where("id", "=", id)
      .where("order_id", "=", fromOrder)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** Participants whose entry for the season is held by an active order (the entered ones). */
  async enteredIds(db: Executor, seasonId: string): Promise<string[]> {
    const rows = await db
      .selectFrom("olympiad_entries as e")
      .innerJoin("orders as o", "o.id", "e.order_id")
      .select("e.participant_id")
      .where("e.season_id", "=", seasonId)
      .where("o.status", "=", "active")
      .execute();
    return rows.map((r) => r.participant_id);
  },

  async intent(db: Executor, participantId: string, seasonId: string): Promise<IntentRow | undefined> {
    return db
      .selectFrom("olympiad_intents")
      .selectAll()
      .where("participant_id", "=", participantId)
      .where("season_id", "=", seasonId)
      .executeTakeFirst();
  },

  binding(db: Executor, orderId: string): Promise<OrderBindingRow | undefined> {
    return db.selectFrom("olympiad_order_bindings").selectAll().where("order_id", "=", orderId).executeTakeFirst();
  },

  /** Binds an order to a participant unless it is bound already (to anyone); true when this call bound it. */
  async bindIfAbsent(db: Executor, row: OrderBindingRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_order_bindings")
      .values(row)
      .onConflict((oc) => oc.column("order_id").doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },

  async insertIntent(db: Executor, row: IntentRow): Promise<boolean> {
    const r = await db
      .insertInto("olympiad_intents")
      .values(row)
      .onConflict((oc) => oc.columns(["participant_id", "season_id"]).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) === 1;
  },
};

/** Proof of a held order sent in the `enter` body. */
export interface EnterInput {
  access_token?: string | undefined;
  access_url?: string | undefined;
}

/** A purchase made inside the call: the x402 payment header or an MPP credential, and the buyer's Idempotency-Key. */
export interface EnterPayment {
  header?: string | undefined;
  /** an MPP credential (Payment-Authorization), already checked to be one of our challenges */
  mpp?: VerifiedCredential | undefined;
  idempotencyKey?: string | undefined;
}

export interface EntryView {
  entry_id: string;
  order_id: string;
  proof: EntryRow["proof"];
  entered_at: string;
}

export interface EnteredBody {
  action: "enter";
  participant_id: string;
  season_id: string;
  entered: true;
  /** false when this participant had already entered with this order (an idempotent retry) */
  created: boolean;
  entry: EntryView;
  /** the order an x402 purchase inside this call bought (keep its access_url) */
  purchase?: ProductPurchaseBody;
}

export type EntryGuidance = {
  checkout_url: string;
  other_ways_url: string;
  recover_url: string;
  rails_configured: string[];
  how: string[];
};

/** 402 without any proof: the x402 challenge for gao-entry (when x402 is configured) plus the other ways. */
export type GuidanceBody = Partial<Omit<Challenge["body"], "status">> &
  EntryGuidance & {
    type: string;
    title: string;
    status: 402;
    code: string;
    detail: string;
    sku: string;
    amount_usd: string;
    amount_cents: number;
  };

export type EnterOutcome =
  /** Entered; `purchase` when this call bought the order (its settlement goes out as the paid answer's headers). */
  | { kind: "entered"; body: EnteredBody; purchase?: Purchase }
  | { kind: "pending"; pending: Pending }
  /** The guidance, with the x402 challenge when x402 is configured (the edge sends its headers). */
  | { kind: "payment_required"; body: GuidanceBody; challenge?: Challenge };

export interface EntryState {
  season_id: string;
  registration_open: boolean;
  registration_opens: string | null;
  /** true only while the entry's order is active */
  entered: boolean;
  /** an entry whose order was refunded or revoked */
  withdrawn: boolean;
  entry: (EntryView & { order_status: OrderRow["status"] }) | null;
  intent: { note: string | null; recorded_at: string } | null;
}

export interface BindOrderBody {
  action: "bind_order";
  participant_id: string;
  order_id: string;
  season_id: string;
  /** false when this order was already bound to this participant (a retry, or the order entered them) */
  created: boolean;
  /** the order is active: the participant has paid standing in governance while it stays active */
  paid: true;
}

export interface IntentBody {
  action: "intent";
  participant_id: string;
  season_id: string;
  note: string | null;
  recorded_at: string;
  /** false when an intent for this season was already recorded (the first one is kept) */
  created: boolean;
  registration_open: boolean;
  registration_opens: string | null;
}

const AGENT_NOTE_ID = /^[A-Za-z0-9._:@-]{1,200}$/;

export class OlympiadEntry {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: {
      config: Config;
      catalog: Catalog;
      orders: OrderService;
      x402: X402Service;
    },
    private readonly now: () => Date = () => new Date(),
  ) {}

  private season() {
    return seasonOf(this.deps.config, this.now());
  }

  private product(): Product {
    return this.deps.catalog.resolve(ENTRY_SKU);
  }

  /** What an entry purchase pays for (the 402's challenges of both dialects are built from it). */
  entryItem(): PricedItem {
    return productItem(this.product(), this.deps.x402.answers.resourceUrl());
  }

  /** Records an intent to enter the current season; idempotent (the first note is kept). */
  async intent(participant: ParticipantRow, note: string | undefined): Promise<IntentBody> {
    const season = this.season();
    const created = await entryStore.insertIntent(this.db, {
      participant_id: participant.id,
      season_id: season.id,
      note: note?.trim() || null,
      created_at: this.now().toISOString(),
    });
    const row = await entryStore.intent(this.db, participant.id, season.id);
    if (!row) throw new Error("olympiad: intent vanished");
    return {
      action: "intent",
      participant_id: participant.id,
      season_id: season.id,
      note: row.note,
      recorded_at: row.created_at,
      created,
      registration_open: season.registration_open,
      registration_opens: season.registration_opens,
    };
  }

  /**
   * Enters the participant into the current season with a held gao-entry order: by access token
   * (or access URL), or by an x402 purchase made now. Without either: the 402 guidance.
   */
  async enter(participant: ParticipantRow, input: EnterInput, payment: EnterPayment = {}): Promise<EnterOutcome> {
    const season = this.season();
    assertRegistrationOpen(season);
    const token = accessTokenOf(input);
    const paying = payment.header !== undefined || payment.mpp !== undefined;
    if (token !== null && paying) {
      throw badRequest(
        "entry_proof_ambiguous",
        "Send either an access token (or access URL) of a paid order, or an x402 payment header, not both.",
      );
    }
    if (token !== null) {
      const order = await this.deps.orders.open(token); // 404 access_not_found, 410 access_revoked | access_refunded
      this.checkProduct(order);
      const { entry, created } = await this.attach(participant, season.id, order, "access_token");
      return { kind: "entered", body: this.entered(participant, season.id, entry, created) };
    }
    if (paying) return this.buyAndEnter(participant, season.id, payment);
    // No proof: an entered participant is told so (nothing to pay); anyone else gets the 402 guidance.
    const current = await entryStore.forParticipant(this.db, participant.id, season.id);
    if (current && current.order_status === "active") {
      return {
        kind: "entered",
        body: this.entered(participant, season.id, stripStatus(current), false),
      };
    }
    return { kind: "payment_required", ...this.guidance() };
  }

  /**
   * POST /api/olympiad { action: "bind_order" }: binds a paid gao-entry order, proven by its access
   * token (or access URL), to the participant for governance, without entering. Works before open
   * registration (and after). One order is bound to one participant, whether by `enter` or by this:
   * another participant's order is 409 `entry_order_used`. A later `enter` with the same order by the
   * same participant enters them.
   */
  async bindOrder(participant: ParticipantRow, input: EnterInput): Promise<BindOrderBody> {
    const token = accessTokenOf(input);
    if (token === null) {
      throw badRequest(
        "order_proof_required",
        "bind_order needs the access_token (or access_url) of a paid gao-entry order you hold.",
      );
    }
    const order = await this.deps.orders.open(token); // 404 access_not_found, 410 access_revoked | access_refunded
    this.checkProduct(order);
    const season = this.season();
    const entered = await entryStore.byOrder(this.db, order.id);
    if (entered && entered.participant_id !== participant.id) throw orderUsed();
    const created = await this.bindOrderTo(participant, order, season.id, "bind_order");
    if (created) {
      await this.deps.orders.audit(`participant:${participant.id}`, "olympiad.order_bound", order.id, {
        participant_id: participant.id,
        season_id: season.id,
      });
    }
    return {
      action: "bind_order",
      participant_id: participant.id,
      order_id: order.id,
      season_id: season.id,
      created,
      paid: true,
    };
  }

  /** Claims the order for the participant (one order, one participant): true when bound now, 409 if another holds it. */
  private async bindOrderTo(
    participant: ParticipantRow,
    order: OrderRow,
    seasonId: string,
    via: OrderBindingRow["via"],
  ): Promise<boolean> {
    const created = await entryStore.bindIfAbsent(this.db, {
      order_id: order.id,
      participant_id: participant.id,
      season_id: seasonId,
      via,
      created_at: this.now().toISOString(),
    });
    if (created) return true;
    const holder = await entryStore.binding(this.db, order.id);
    if (holder && holder.participant_id !== participant.id) throw orderUsed();
    return false;
  }

  private async buyAndEnter(
    participant: ParticipantRow,
    seasonId: string,
    payment: EnterPayment,
  ): Promise<EnterOutcome> {
    const { x402 } = this.deps;
    // Already entered with an active order: a new payment is refused before anything is settled;
    // a proof the ledger has seen (the retry of the purchase that entered) is answered from it.
    const current = await entryStore.forParticipant(this.db, participant.id, seasonId);
    const seen = payment.mpp
      ? await x402.itemOfParsedProof(payment.mpp.proof)
      : await x402.itemOfProof(payment.header as string);
    if (current && current.order_status === "active" && !seen) {
      throw alreadyEntered(current);
    }
    const item = this.entryItem();
    const note =
      participant.agent_id !== null && AGENT_NOTE_ID.test(participant.agent_id)
        ? `agent:${participant.agent_id}`
        : null;
    const secrets = { idempotencyKey: payment.idempotencyKey };
    const outcome = payment.mpp
      ? await payment.mpp.buy(item, { email: participant.email, note }, secrets)
      : await x402.buy(item, { email: participant.email, note }, payment.header as string, secrets);
    if (outcome.kind === "pending") return { kind: "pending", pending: outcome.pending };
    if (outcome.kind === "challenge") {
      return { kind: "payment_required", ...this.guidance(outcome.challenge) };
    }
    const bought = outcome.purchase.body;
    if (!("order_id" in bought)) throw new Error("olympiad: a product purchase answered without an order");
    const order = await this.deps.orders.get(bought.order_id);
    if (order.status !== "active") {
      throw new Problem(410, `access_${order.status}`, `The order this payment bought was ${order.status}.`, {
        order_id: order.id,
        status: order.status,
      });
    }
    try {
      const { entry, created } = await this.attach(participant, seasonId, order, "x402");
      return {
        kind: "entered",
        body: { ...this.entered(participant, seasonId, entry, created), purchase: bought },
        purchase: outcome.purchase,
      };
    } catch (err) {
      // Paid but not entered (e.g. a concurrent entry won): the payer still holds the order.
      if (err instanceof Problem) {
        throw new Problem(err.status, err.code, err.detail, { ...err.extra, purchase: bought }, err.headers);
      }
      throw err;
    }
  }

  private checkProduct(order: OrderRow): void {
    if (order.sku !== this.product().sku) {
      throw badRequest(
        "entry_wrong_product",
        `This access token belongs to a ${order.sku} order; entry needs a paid ${ENTRY_SKU} order.`,
        { sku: order.sku },
      );
    }
  }

  /** Attaches an active order to the participant's entry for the season (exactly once per order). */
  private async attach(
    participant: ParticipantRow,
    seasonId: string,
    order: OrderRow,
    proof: EntryRow["proof"],
    attempt = 0,
  ): Promise<{ entry: EntryRow; created: boolean }> {
    const mine = await entryStore.forParticipant(this.db, participant.id, seasonId);
    if (mine && mine.order_id === order.id) return { entry: mine, created: false };
    if (mine && mine.order_status === "active") throw alreadyEntered(mine);
    const used = await entryStore.byOrder(this.db, order.id);
    if (used) throw orderUsed();
    // an order bound to another participant for governance (bind_order) enters nobody else
    await this.bindOrderTo(participant, order, seasonId, "enter");
    const at = this.now().toISOString();
    let done: boolean;
    let entry: EntryRow;
    if (mine) {
      // The earlier entry was withdrawn (its order refunded or revoked): it takes this order.
      entry = { ...stripStatus(mine), order_id: order.id, proof, created_at: at };
      try {
        done = await entryStore.replaceOrder(this.db, mine.id, mine.order_id, {
          order_id: order.id,
          proof,
          created_at: at,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw orderUsed();
        throw err;
      }
    } else {
      entry = {
        id: `ent_${randomBytes(12).toString("base64url")}`,
        participant_id: participant.id,
        season_id: seasonId,
        order_id: order.id,
        proof,
        created_at: at,
      };
      done = await entryStore.insertIfAbsent(this.db, entry);
    }
    if (!done) {
      // A concurrent call changed the entry or took the order: decide again on what is stored now.
      if (attempt >= 2) throw conflict("entry_conflict", "The entry changed concurrently; try again.");
      return this.attach(participant, seasonId, order, proof, attempt + 1);
    }
    await this.deps.orders.audit(`participant:${participant.id}`, "olympiad.entered", order.id, {
      participant_id: participant.id,
      season_id: seasonId,
      entry_id: entry.id,
      proof,
      replaced_order: mine?.order_id ?? null,
    });
    return { entry, created: true };
  }

  private entered(participant: ParticipantRow, seasonId: string, entry: EntryRow, created: boolean): EnteredBody {
    return {
      action: "enter",
      participant_id: participant.id,
      season_id: seasonId,
      entered: true,
      created,
      entry: entryView(entry),
    };
  }

  /** The 402 answer without proof: x402 challenge (if configured), card checkout, other ways, recovery. */
  guidance(challenge?: Challenge): { body: GuidanceBody; challenge?: Challenge } {
    const { config, x402 } = this.deps;
    const product = this.product();
    const base = config.baseUrl;
    const ready = railReadiness(config);
    const rails = Object.entries(ready)
      .filter(([id, r]) => r.configured && id !== "suite_metered")
      .map(([id]) => id);
    const guide: EntryGuidance = {
      checkout_url: `${base}/pay?sku=${product.sku}`,
      other_ways_url: `${base}/pay/cancel?sku=${product.sku}`,
      recover_url: `${base}${RECOVERY_PATH}/challenge`,
      rails_configured: rails,
      how: [
        `Agents (x402): repeat this request with an x402 payment for ${product.sku} (${product.amountUsd} USD) in PAYMENT-SIGNATURE or X-PAYMENT, and an Idempotency-Key; the order is bought and entered in one call.`,
        ...(x402.configured()
          ? [
              "Agents (MPP): pay one of the WWW-Authenticate: Payment challenges of this answer and repeat this request with the credential in Payment-Authorization (Authorization keeps your participant token), and an Idempotency-Key.",
            ]
          : []),
        `Humans (card): pay at ${base}/pay?sku=${product.sku}, then send { "action": "enter", "access_token": "<token of your access URL>" } (or "access_url").`,
        `Already paid (any rail): send the access token or access URL of the order. Lost it? Recover orders paid on chain at ${base}${RECOVERY_PATH}/challenge.`,
      ],
    };
    const code = "entry_payment_required";
    const detail = `Entry needs a paid ${product.sku} order (${product.amountUsd} USD) that you prove you hold: its access token, or an x402 payment made in this call. An order id alone is not proof.`;
    const priced = { sku: product.sku, amount_usd: product.amountUsd, amount_cents: product.amountCents };
    const c = challenge ?? (x402.configured() ? x402.challenge(product, { code, detail }) : undefined);
    if (c) {
      const { status: _s, ...wire } = c.body;
      return { body: { ...wire, status: 402, ...priced, ...guide }, challenge: c };
    }
    return {
      body: {
        type: `https://labphi.dev/problems/${code}`,
        title: "Payment Required",
        status: 402,
        code,
        detail: `${detail} x402 is not configured on this instance${rails.length ? `; configured rails: ${rails.join(", ")}` : "; no payment rail is configured"}.`,
        ...priced,
        ...guide,
      },
    };
  }

  /** The participant's entry state for the current season (entered only while the order is active). */
  async state(participantId: string): Promise<EntryState> {
    const season = this.season();
    const row = await entryStore.forParticipant(this.db, participantId, season.id);
    const intent = await entryStore.intent(this.db, participantId, season.id);
    return {
      season_id: season.id,
      registration_open: season.registration_open,
      registration_opens: season.registration_opens,
      entered: row?.order_status === "active",
      withdrawn: row !== undefined && row.order_status !== "active",
      entry: row ? { ...entryView(row), order_status: row.order_status } : null,
      intent: intent ? { note: intent.note, recorded_at: intent.created_at } : null,
    };
  }

  /** Ids of the participants entered in a season (default: the current one), by active order. */
  async enteredIds(seasonId?: string): Promise<string[]> {
    return entryStore.enteredIds(this.db, seasonId ?? this.season().id);
  }

  async isEntered(participantId: string, seasonId?: string): Promise<boolean> {
    const row = await entryStore.forParticipant(this.db, participantId, seasonId ?? this.season().id);
    return row?.order_status === "active";
  }
}

function entryView(e: EntryRow): EntryView {
  return { entry_id: e.id, order_id: e.order_id, proof: e.proof, entered_at: e.created_at };
}

function stripStatus(e: EntryWithOrder): EntryRow {
  const { order_status: _s, ...row } = e;
  return row;
}

/** The access token of the body: `access_token`, or the tail of `access_url`; null when neither is sent. */
export function accessTokenOf(input: EnterInput): string | null {
  if (input.access_token !== undefined && input.access_url !== undefined) {
    throw badRequest("entry_proof_ambiguous", "Send access_token or access_url, not both.");
  }
  if (input.access_token !== undefined) {
    const t = input.access_token.trim();
    if (!ACCESS_TOKEN_PATTERN.test(t)) {
      throw badRequest("invalid_access_token", "access_token must be the last segment of an order's access URL.");
    }
    return t;
  }
  if (input.access_url !== undefined) {
    let path: string;
    try {
      path = new URL(input.access_url.trim()).pathname;
    } catch {
      throw badRequest("invalid_access_url", "access_url must be an order's access URL: <base>/access/<token>.");
    }
    const m = ACCESS_PATH.exec(path);
    if (!m) throw badRequest("invalid_access_url", "access_url must be an order's access URL: <base>/access/<token>.");
    return m[1] as string;
  }
  return null;
}

function alreadyEntered(e: EntryRow): Problem {
  return conflict(
    "already_entered",
    `You are already entered in season ${e.season_id} with another order; one entry per participant and season.`,
    { season_id: e.season_id, entry_id: e.id },
  );
}

function orderUsed(): Problem {
  return conflict(
    "entry_order_used",
    "This order already entered a participant; one order enters one participant once. Buy another gao-entry.",
  );
}

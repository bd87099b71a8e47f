import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import { EVENTS } from "../../src/olympiad/events/events.js";
import { appOn } from "../support/app.js";
import { freshDatabase } from "../support/databases.js";

/**
 * Issue #26 item 3, on the pages: the public leaderboard of a scored event is rendered on the
 * server (/olympiad's "Scored events" and /olympiad/events/:event_id) with the task's description,
 * files and their SHA-256, the window and the key's SHA-256; no private score, key row or split
 * seed appears before the close; after it, the final ranking on the private part and the link to
 * the published key.
 */

const ADMIN_TOKEN = "admin-token-for-olympiad-event-pages-01";
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const ENV = { ADMIN_TOKEN, OLYMPIAD_SEASON_YEAR: "2026", OLYMPIAD_REGISTRATION_OPENS: "2026-01-08" };
const SEED = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const ev = (EVENTS.find((e) => e.entrants === "individual") as { id: string }).id;

// 40 rows, labels that appear nowhere else on a page (a leaked key row would show one)
const LABELS = ["kx-heron", "kx-otter", "kx-lynx"];
const IDS = Array.from({ length: 40 }, (_, i) => `q${String(i + 1).padStart(2, "0")}`);
const TRUTH = new Map(IDS.map((id, i) => [id, LABELS[i % 3] as string]));
const KEY_CSV = `id,prediction\n${IDS.map((id) => `${id},${TRUTH.get(id)}`).join("\n")}\n`;
const wrong = (l: string) => LABELS[(LABELS.indexOf(l) + 1) % 3] as string;
// the split, from the published rule (not from the code under test)
const isPublic = (id: string) =>
  Number.parseInt(createHash("sha256").update(`${SEED}:${id}`).digest("hex").slice(0, 8), 16) % 10_000 < 3000;
const PUBLIC = IDS.filter(isPublic);
const PRIVATE = IDS.filter((id) => !isPublic(id));
const csv = (pred: (id: string) => string) => `id,prediction\n${IDS.map((id) => `${id},${pred(id)}`).join("\n")}\n`;
const truth = (id: string) => TRUTH.get(id) as string;
/** right on every public row, wrong on the first three private ones */
const fileAda = csv((id) => (PRIVATE.slice(0, 3).includes(id) ? wrong(truth(id)) : truth(id)));
/** wrong on the first public row, right on every private row */
const fileBob = csv((id) => (id === PUBLIC[0] ? wrong(truth(id)) : truth(id)));
const FILE_TEXT = "id,text\nq01,the heron waits\n";
const DESCRIPTION = "Name the animal of each row <exactly> as in train.csv.";

/** k of n as the service publishes it: 9 decimals, trailing zeros dropped (worked out here). */
function fraction(k: number, n: number): string {
  const scaled = Math.round((k / n) * 1e9);
  const frac = String(scaled % 1e9)
    .padStart(9, "0")
    .replace(/0+$/, "");
  return frac ? `${Math.floor(scaled / 1e9)}.${frac}` : String(Math.floor(scaled / 1e9));
}
const ADA_PUBLIC = "1";
const ADA_PRIVATE = fraction(PRIVATE.length - 3, PRIVATE.length);
const BOB_PUBLIC = fraction(PUBLIC.length - 1, PUBLIC.length);
const BOB_PRIVATE = "1";

describe("scored event pages: the public leaderboard, nothing private before the close", () => {
  let db: Db;
  let app: App;
  let clock = new Date("2026-07-20T12:00:00Z");
  const people: Record<string, { id: string; token: string }> = {};
  const html = async (url: string) => {
    const r = await app.inject({ method: "GET", url, headers: { accept: "text/html" } });
    expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    return r.body;
  };
  const page = () => html(`/olympiad/events/${ev}`);
  /** Every secret of the task that must stay off the pages before the close. */
  const assertNothingPrivate = (body: string) => {
    expect(body).not.toContain(ADA_PRIVATE);
    expect(body).not.toContain(SEED);
    for (const l of LABELS) expect(body).not.toContain(l);
    expect(body).not.toContain('id="final-ranking"');
    expect(body).not.toContain("Private score</th>");
    expect(body).not.toContain(`/api/olympiad/events/${ev}/key"`);
  };

  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, ENV);
    app.services.olympiadTasks.now = () => clock;
    app.services.olympiadRecords.now = () => clock;
    // the documents' clock is read-only in the type (set at construction): the page cache's version reads it
    (app.services.olympiad as { now: () => Date }).now = () => clock;
    let n = 0;
    for (const name of ["ada", "bob"]) {
      const r = await app.inject({
        method: "POST",
        url: "/api/olympiad",
        payload: { action: "register", who: "agent_self", name: `${name} <b>`, agent_id: `agent-${name}` },
      });
      expect(r.statusCode, r.body).toBe(201);
      people[name] = { id: r.json().participant_id, token: r.json().participant_token };
      n++;
      const at = "2026-02-01T00:00:00.000Z";
      await db.kysely
        .insertInto("orders")
        .values({
          id: `ord_p${n}`,
          proof_key: `test:${n}`,
          sku: "gao-entry",
          amount_cents: 2500,
          currency: "USD",
          rail: "card_checkout",
          transaction_ref: null,
          email: null,
          agent_id: null,
          status: "active",
          access_token_hash: `hash-p${n}`,
          license_key: null,
          meta: "{}",
          created_at: at,
          updated_at: at,
          revoked_at: null,
          revoke_reason: null,
        })
        .execute();
      await db.kysely
        .insertInto("olympiad_entries")
        .values({
          id: `ent_p${n}`,
          participant_id: people[name]?.id as string,
          season_id: "2026",
          order_id: `ord_p${n}`,
          proof: "access_token",
          created_at: at,
        })
        .execute();
    }
    const put = await app.inject({
      method: "PUT",
      url: `/api/admin/olympiad/events/${ev}/task`,
      headers: admin,
      payload: {
        description: DESCRIPTION,
        metric: "accuracy",
        key: { format: "csv", content: KEY_CSV },
        files: [{ name: "train.csv", content: FILE_TEXT }],
        split_seed: SEED,
        opens_at: "2026-08-01T00:00:00.000Z",
        closes_at: "2026-08-20T00:00:00.000Z",
      },
    });
    expect(put.statusCode, put.body).toBe(201);
    expect(PUBLIC.length).toBeGreaterThan(3);
    expect(PRIVATE.length).toBeGreaterThan(3);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("before the opening: the task, its files with SHA-256, the window and the key's SHA-256; an empty board", async () => {
    const body = await page();
    expect(body).toContain("Opens soon");
    expect(body).toContain(DESCRIPTION.replace("<", "&lt;").replace(">", "&gt;"));
    expect(body).toContain(`href="/api/olympiad/events/${ev}/files/train.csv"`);
    expect(body).toContain(createHash("sha256").update(FILE_TEXT).digest("hex"));
    expect(body).toContain(`<code class="hash" id="key-sha256">${createHash("sha256").update(KEY_CSV).digest("hex")}`);
    expect(body).toContain('<time datetime="2026-08-01T00:00:00.000Z">2026-08-01 00:00 UTC</time>');
    expect(body).toContain('<time datetime="2026-08-20T00:00:00.000Z">2026-08-20 00:00 UTC</time>');
    expect(body).toContain('id="leaderboard-empty"');
    assertNothingPrivate(body);

    const olympiad = await html("/olympiad");
    expect(olympiad).toContain('id="scored-events"');
    expect(olympiad).toContain(`href="/olympiad/events/${ev}"`);
  });

  it("while open: the public leaderboard, best public score first, with names escaped, and no private score", async () => {
    clock = new Date("2026-08-10T12:00:00Z");
    for (const [who, file] of [
      ["bob", fileBob],
      ["ada", fileAda],
      ["bob", fileBob],
    ] as const) {
      const r = await app.inject({
        method: "POST",
        url: `/api/olympiad/events/${ev}/submissions`,
        headers: { authorization: `Bearer ${people[who]?.token}` },
        payload: { format: "csv", content: file },
      });
      expect(r.statusCode, r.body).toBe(202);
    }
    await app.services.olympiadTasks.sweep();
    // the private scores exist in the database already (they must not reach a page)
    const stored = await db.kysely
      .selectFrom("olympiad_submissions")
      .select(["participant_id", "private_score"])
      .execute();
    expect(stored.find((s) => s.participant_id === people.ada?.id)?.private_score).toBe(ADA_PRIVATE);

    const body = await page();
    expect(body).toContain("Open");
    const rows = [...body.matchAll(/<tr data-entrant="([^"]+)">[\s\S]*?<\/tr>/g)].map((m) => m[0]);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain(people.ada?.id as string);
    expect(rows[0]).toContain(`<strong>${ADA_PUBLIC}</strong>`);
    expect(rows[0]).toContain("ada &lt;b&gt;");
    expect(rows[1]).toContain(people.bob?.id as string);
    expect(rows[1]).toContain(`<strong>${BOB_PUBLIC}</strong>`);
    expect(rows[1]).toMatch(/<td class="num">2<\/td><\/tr>/); // bob: two scored submissions, one row
    expect(body).toContain('id="private-hidden"');
    expect(body).not.toContain("ada <b>");
    assertNothingPrivate(body);

    const olympiad = await html("/olympiad");
    const section = olympiad.slice(olympiad.indexOf('id="scored-events"'), olympiad.indexOf('id="charter"'));
    expect(section).toContain("2 entrants on the public leaderboard.");
    assertNothingPrivate(olympiad);
  });

  it("after the close: the final ranking on the private part, on the chain, and the link to the published key", async () => {
    clock = new Date("2026-08-21T00:00:00Z");
    const pending = await page();
    expect(pending).toContain('id="final-pending"');
    await app.services.olympiadTasks.sweep();
    const body = await page();
    expect(body).toContain('id="final-ranking"');
    const final = body.slice(body.indexOf('id="final-ranking"'));
    const rows = [...final.matchAll(/<tr data-entrant="([^"]+)">[\s\S]*?<\/tr>/g)].map((m) => m[0]);
    // private part: bob (all right) ranks first, ada second
    expect(rows[0]).toContain(people.bob?.id as string);
    expect(rows[0]).toContain(`<strong>${BOB_PRIVATE}</strong>`);
    expect(rows[1]).toContain(people.ada?.id as string);
    expect(rows[1]).toContain(`<strong>${ADA_PRIVATE}</strong>`);
    expect(body).toContain(`href="/api/olympiad/events/${ev}/key"`);
    const key = await app.inject({ method: "GET", url: `/api/olympiad/events/${ev}/key` });
    expect(key.statusCode).toBe(200);
    expect(key.json().content).toBe(KEY_CSV);
    expect(body).not.toContain('id="private-hidden"');
  });

  it("an unknown event is a 404 problem page; an event without a task says so", async () => {
    const r = await app.inject({
      method: "GET",
      url: "/olympiad/events/no-such-event",
      headers: { accept: "text/html" },
    });
    expect(r.statusCode).toBe(404);
    expect(r.body).toContain("unknown_event");
    const other = EVENTS.find((e) => e.id !== ev) as { id: string };
    expect(await html(`/olympiad/events/${other.id}`)).toContain('id="no-task"');
  });
});

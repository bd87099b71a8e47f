import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { entrantNames } from "../../../src/olympiad/entry/entrant-names.js";
import { type TestApp, testApp } from "../../support/app.js";
import { seedParticipants } from "../../support/olympiad.js";

describe("entrantNames: display names of standings entrants", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite");
  });
  afterAll(async () => t?.close());

  it("names participants and teams by id, leaves unknown ids out, needs no query for none", async () => {
    const db = t.app.services.db.kysely;
    await seedParticipants(db, ["par_one", "par_two"]);
    await db
      .insertInto("olympiad_teams")
      .values({
        id: "team_owls",
        name: "Night Owls",
        captain_id: "par_one",
        join_code_hash: "code-owls",
        member_count: 1,
        locked_at: null,
        season_id: null,
        created_at: "2026-01-02T00:00:00.000Z",
        updated_at: "2026-01-02T00:00:00.000Z",
      })
      .execute();
    const names = await entrantNames(db, ["par_two", "team_owls", "par_gone", "par_two"]);
    expect([...names.entries()].sort()).toEqual([
      ["par_two", "par_two"],
      ["team_owls", "Night Owls"],
    ]);
    expect((await entrantNames(db, [])).size).toBe(0);
  });
});

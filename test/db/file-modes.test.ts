import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import { migrateToLatest } from "../../src/db/migrate.js";

const mode = (file: string) => fs.statSync(file).mode & 0o777;

describe.skipIf(process.platform === "win32")("SQLite file modes", () => {
  let root: string;
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("creates DATA_DIR 0700 and the database, -wal and -shm files 0600, whatever the umask", async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-modes-"));
    const dataDir = path.join(root, "data");
    const previous = process.umask(0);
    let db: ReturnType<typeof openDatabase>;
    try {
      db = openDatabase({ dataDir });
      await migrateToLatest(db);
      await db.kysely
        .insertInto("settings")
        .values({ key: "k", value: "v", updated_at: new Date().toISOString() })
        .execute();
    } finally {
      process.umask(previous);
    }
    try {
      expect(mode(dataDir)).toBe(0o700);
      const file = path.join(dataDir, "labphi.sqlite");
      expect(mode(file)).toBe(0o600);
      expect(fs.existsSync(`${file}-wal`)).toBe(true);
      expect(mode(`${file}-wal`)).toBe(0o600);
      expect(mode(`${file}-shm`)).toBe(0o600);
    } finally {
      await db.close();
    }
  });

  it("narrows the modes of files left by an earlier version; leaves an existing folder as it is", async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-modes-"));
    fs.chmodSync(root, 0o755);
    const first = openDatabase({ dataDir: root });
    await migrateToLatest(first);
    await first.close();
    const file = path.join(root, "labphi.sqlite");
    fs.chmodSync(file, 0o644);
    fs.writeFileSync(`${file}-wal`, "");
    fs.chmodSync(`${file}-wal`, 0o664);
    const again = openDatabase({ dataDir: root });
    try {
      expect(mode(file)).toBe(0o600);
      expect(mode(`${file}-wal`)).toBe(0o600);
      expect(mode(root)).toBe(0o755);
      expect(await migrateToLatest(again)).toEqual([]);
    } finally {
      await again.close();
    }
  });
});

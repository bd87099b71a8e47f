import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CappedBody, checkKey } from "./cap.js";
import { type ObjectStore, ObjectTooLarge } from "./types.js";

/**
 * Job data as files under DATA_DIR (`DATA_DIR/jobs/<job_id>/input`, `…/out/<idx>`): folders 0700,
 * files 0600 like the rest of DATA_DIR. A put streams into a temporary name in the same folder,
 * then renames it into place: a reader never sees a half-written object.
 */
export class LocalObjectStore implements ObjectStore {
  readonly kind = "local" as const;

  constructor(private readonly root: string) {}

  private file(key: string): string {
    return path.join(this.root, ...checkKey(key));
  }

  async put(key: string, body: Readable, opts: { maxBytes?: number } = {}): Promise<{ bytes: number; sha256: string }> {
    const file = this.file(key);
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
    const capped = new CappedBody(opts.maxBytes);
    try {
      await pipeline(
        Readable.from(capped.read(body), { objectMode: false }),
        createWriteStream(tmp, { mode: 0o600, flags: "wx" }),
      );
      await fs.rename(tmp, file);
    } catch (err) {
      body.destroy();
      await fs.rm(tmp, { force: true });
      throw err;
    }
    if (capped.over) throw new ObjectTooLarge(opts.maxBytes ?? 0, capped.bytes);
    return { bytes: capped.bytes, sha256: capped.sha256 };
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable> {
    // Opened here, so a missing object rejects this call rather than erroring the stream later.
    const handle = await fs.open(this.file(key), "r");
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const st = await fs.stat(this.file(key));
      return st.isFile() ? st.size : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    const parts = checkKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix, "prefix");
    const target = path.join(this.root, ...parts);
    if (prefix.endsWith("/")) {
      await fs.rm(target, { recursive: true, force: true });
      return;
    }
    // A prefix that ends inside a name: every entry of its folder starting with that name.
    const dir = path.dirname(target);
    const start = path.basename(target);
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    await Promise.all(
      names.filter((n) => n.startsWith(start)).map((n) => fs.rm(path.join(dir, n), { recursive: true, force: true })),
    );
  }

  async close(): Promise<void> {}
}

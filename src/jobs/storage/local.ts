import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { CappedBody, checkKey } from "./cap.js";
import { type ObjectStore, ObjectTooLarge, type PositionalReader, type PutOptions } from "./types.js";

/**
 * Job data as files under DATA_DIR (`DATA_DIR/jobs/<job_id>/input`, `…/out/<idx>`): folders 0700,
 * files 0600 like the rest of DATA_DIR. A put streams into a temporary name in the same folder,
 * then renames it into place: a reader never sees a half-written object, unless it asks for one:
 * a put with `growing` writes to a name derived from its tag (`.<name>.<tag>.growing`), which
 * `get(key, range, { growing: tag })` reads until the rename, and the complete object after it
 * (the same file: renaming keeps an open file's bytes).
 */
export class LocalObjectStore implements ObjectStore {
  readonly kind = "local" as const;
  readonly readsGrowing = true;

  constructor(private readonly root: string) {}

  private file(key: string): string {
    return path.join(this.root, ...checkKey(key));
  }

  /** where a put with `growing` writes until it renames the file into place */
  private growingFile(key: string, tag: string): string {
    const file = this.file(key);
    checkKey(tag, "tag");
    return path.join(path.dirname(file), `.${path.basename(file)}.${tag}.growing`);
  }

  async put(key: string, body: Readable, opts: PutOptions = {}): Promise<{ bytes: number; sha256: string }> {
    const file = this.file(key);
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const growing = opts.growing;
    const tmp = growing
      ? this.growingFile(key, growing.tag)
      : path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
    if (growing) await this.removeEarlierGrowing(key, growing.tag);
    const capped = new CappedBody(opts.maxBytes);
    try {
      await pipeline(
        Readable.from(capped.read(body), { objectMode: false }),
        growing ? await reportingFile(tmp, growing.written) : createWriteStream(tmp, { mode: 0o600, flags: "wx" }),
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

  /**
   * A new growing put of `key` removes what earlier ones under other tags left (a process killed
   * during an upload leaves its growing file; the upload sent again is the one that counts). A
   * reader still holding such a file keeps its bytes until it closes it.
   */
  private async removeEarlierGrowing(key: string, tag: string): Promise<void> {
    const file = this.file(key);
    const prefix = `.${path.basename(file)}.`;
    const ours = path.basename(this.growingFile(key, tag));
    for (const name of await fs.readdir(path.dirname(file))) {
      if (name !== ours && name.startsWith(prefix) && name.endsWith(".growing")) {
        await fs.rm(path.join(path.dirname(file), name), { force: true });
      }
    }
  }

  async get(key: string, range?: { start: number; end: number }, opts: { growing?: string } = {}): Promise<Readable> {
    // Opened here, so a missing object rejects this call rather than erroring the stream later.
    const handle = await this.open(key, opts.growing);
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async openReader(key: string, opts: { growing?: string } = {}): Promise<PositionalReader> {
    const handle = await this.open(key, opts.growing);
    return {
      async read(into, position) {
        let n = 0;
        while (n < into.length) {
          const { bytesRead } = await handle.read(into, n, into.length - n, position + n);
          if (bytesRead === 0) break;
          n += bytesRead;
        }
        return n;
      },
      close: () => handle.close(),
    };
  }

  private async open(key: string, growing: string | undefined): Promise<fs.FileHandle> {
    if (growing) {
      try {
        return await fs.open(this.growingFile(key, growing), "r");
      } catch (err) {
        // renamed into place meanwhile: the complete object
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
    return fs.open(this.file(key), "r");
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

/**
 * A new file (0600) that tells `written` its length after each write has reached the file (and
 * so can be read by any process), in order. Writes gathered while one is under way go out together.
 */
async function reportingFile(file: string, written: (bytes: number) => void): Promise<Writable> {
  const handle = await fs.open(file, "wx", 0o600);
  let position = 0;
  const put = async (chunks: Buffer[]) => {
    const n = chunks.reduce((a, c) => a + c.length, 0);
    let done = 0;
    while (done < n) {
      const { bytesWritten } = await handle.writev(
        done === 0 ? chunks : [Buffer.concat(chunks).subarray(done)],
        position,
      );
      done += bytesWritten;
      position += bytesWritten;
    }
    written(position);
  };
  return new Writable({
    highWaterMark: 1024 * 1024,
    writev(entries, cb) {
      put(entries.map((e) => e.chunk as Buffer)).then(() => cb(), cb);
    },
    final(cb) {
      handle.close().then(() => cb(), cb);
    },
    destroy(err, cb) {
      handle.close().then(
        () => cb(err),
        () => cb(err),
      );
    },
  });
}

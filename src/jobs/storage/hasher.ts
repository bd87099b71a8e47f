import { Worker } from "node:worker_threads";

/**
 * SHA-256 of files being written, computed on a thread of its own (issue #23 item 6): the thread
 * reads each file's bytes as the writer reports them landed (`advance`) and hashes them, so the
 * process that receives an upload spends its main thread on HTTP and the writes only. On the
 * service's main thread the hash was 0.14 of its 0.37 CPU-s per 256 MB received: a single upload
 * stream is bounded by that thread, and many cores cannot help it. The bytes are read back from
 * the page cache (a copy in the kernel: about 0.02 CPU-s per 256 MB, on the hasher's thread).
 *
 * One thread per store, started on the first file and not keeping the process alive; it hashes
 * every file it is given in the order their bytes land. The digest is the same as hashing the
 * bytes as they pass (tested).
 */
export class FileHasher {
  private worker: Worker | undefined;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (sha256: string) => void; reject: (err: Error) => void }>();
  /** errors the thread reported for a file before its digest was asked for */
  private readonly failed = new Map<number, Error>();
  /** files open on the thread: while there are any it keeps the process alive, else not */
  private open_ = 0;

  private busy(delta: 1 | -1): void {
    this.open_ += delta;
    if (delta === 1 && this.open_ === 1) this.worker?.ref();
    if (delta === -1 && this.open_ === 0) this.worker?.unref();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(THREAD_CODE, { eval: true });
    w.on("message", (m: { id: number; sha256?: string; error?: string }) => {
      const p = this.waiting.get(m.id);
      const err = m.error === undefined ? undefined : new Error(`hashing a stored file: ${m.error}`);
      if (!p) {
        if (err) this.failed.set(m.id, err);
        return;
      }
      this.waiting.delete(m.id);
      if (err) p.reject(err);
      else p.resolve(m.sha256 as string);
    });
    const fail = (err: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const p of this.waiting.values()) p.reject(err);
      this.waiting.clear();
    };
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`the hashing thread exited (code ${code})`)));
    // after the listeners (adding one refs it again); `busy` refs it while a file is open
    w.unref();
    this.worker = w;
    return w;
  }

  /**
   * Starts hashing `file` (which exists: its writer created it). Tell it each new length with
   * `advance` (bytes [0, n) are in the file), then `digest` with the final length.
   */
  open(file: string): HashedFile {
    const id = this.next++;
    const w = this.thread();
    w.postMessage({ op: "open", id, file });
    this.busy(1);
    let told = 0;
    let ended = false;
    const done = () => this.busy(-1);
    return {
      advance: (n) => {
        // at most one message per MiB landed: the thread reads in 1 MiB steps anyway
        if (n - told < HASH_STEP) return;
        told = n;
        w.postMessage({ op: "to", id, n });
      },
      digest: (n) => {
        if (ended) return Promise.reject(new Error("digest asked twice"));
        ended = true;
        const err = this.failed.get(id) ?? (this.worker === w ? undefined : new Error("the hashing thread stopped"));
        if (err) {
          this.failed.delete(id);
          done();
          return Promise.reject(err);
        }
        return new Promise<string>((resolve, reject) => {
          this.waiting.set(id, { resolve, reject });
          w.postMessage({ op: "end", id, n });
        }).finally(done);
      },
      drop: () => {
        if (ended) return;
        ended = true;
        this.failed.delete(id);
        w.postMessage({ op: "drop", id });
        done();
      },
    };
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}

export interface HashedFile {
  /** bytes [0, n) of the file have been written */
  advance(n: number): void;
  /** the SHA-256 (hex) of bytes [0, n): the file's whole content once its writer is done */
  digest(n: number): Promise<string>;
  /** stop (the write failed): no digest will be asked for */
  drop(): void;
}

const HASH_STEP = 1024 * 1024;

/**
 * The thread: per file an fd, a hash and how far it got; reads [at, n) in 1 MiB steps into one
 * buffer. Plain CommonJS (an eval'd worker), so it runs the same under tsx, the bundled CLI and
 * both Node versions.
 */
const THREAD_CODE = `
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
const { createHash } = require("node:crypto");
const files = new Map();
const buf = Buffer.allocUnsafe(${HASH_STEP});
const close = (id) => {
  const f = files.get(id);
  files.delete(id);
  if (f) try { fs.closeSync(f.fd); } catch {}
};
parentPort.on("message", (m) => {
  try {
    if (m.op === "open") {
      files.set(m.id, { fd: fs.openSync(m.file, "r"), hash: createHash("sha256"), at: 0 });
      return;
    }
    if (m.op === "drop") return close(m.id);
    const f = files.get(m.id);
    if (!f) return;
    while (f.at < m.n) {
      const k = fs.readSync(f.fd, buf, 0, Math.min(buf.length, m.n - f.at), f.at);
      if (k === 0) throw new Error("the file ends at " + f.at + " of " + m.n + " bytes");
      f.hash.update(buf.subarray(0, k));
      f.at += k;
    }
    if (m.op === "end") {
      close(m.id);
      parentPort.postMessage({ id: m.id, sha256: f.hash.digest("hex") });
    }
  } catch (e) {
    close(m.id);
    parentPort.postMessage({ id: m.id, error: String((e && e.message) || e) });
  }
});
`;

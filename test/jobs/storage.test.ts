import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import { FileHasher } from "../../src/jobs/storage/hasher.js";
import { type ClosableObjectStore, createObjectStore, LocalObjectStore } from "../../src/jobs/storage/index.js";
import { partSizeFor } from "../../src/jobs/storage/s3.js";
import { jobKeys, ObjectTooLarge } from "../../src/jobs/storage/types.js";
import { startS3rver, type TestS3 } from "../support/s3rver.js";

const MiB = 1024 * 1024;

const BLOCKS = new Map<number, Buffer>();
/** A deterministic body of `total` bytes in `chunk`-byte pieces (per seed), produced lazily (never whole). */
function body(total: number, chunk = 64 * 1024, seed = 7): Readable {
  let block = BLOCKS.get(seed);
  if (!block) {
    block = Buffer.concat(Array.from({ length: 32 }, (_, i) => createHash("sha256").update(`${seed}:${i}`).digest()));
    block = Buffer.concat(Array.from({ length: (MiB + 13) / block.length + 1 }, () => block as Buffer)).subarray(
      0,
      MiB + 13,
    );
    BLOCKS.set(seed, block);
  }
  const src = block;
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; ) {
        const len = Math.min(chunk, total - sent);
        const at = sent % MiB;
        yield src.subarray(at, at + len);
        sent += len;
      }
    })(),
  );
}

async function collect(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

interface Subject {
  store: ClosableObjectStore;
  close(): Promise<void>;
}

const SUBJECTS: Record<string, () => Promise<Subject>> = {
  local: async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-store-"));
    const store = createObjectStore(testConfig({ DATA_DIR: dir }));
    expect(store.kind).toBe("local");
    return {
      store,
      close: async () => {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  s3: async () => {
    const s3: TestS3 = await startS3rver();
    const store = createObjectStore(testConfig({ DATA_DIR: os.tmpdir(), ...s3.env }));
    expect(store.kind).toBe("s3");
    return {
      store,
      close: async () => {
        await store.close();
        await s3.close();
      },
    };
  },
};

describe.each(Object.keys(SUBJECTS))("object store contract: %s", (kind) => {
  let subject: Subject;
  let store: ClosableObjectStore;
  beforeAll(async () => {
    subject = await (SUBJECTS[kind] as () => Promise<Subject>)();
    store = subject.store;
  });
  afterAll(async () => {
    await subject?.close();
  });

  it("streams a multi-part object in, reports bytes and SHA-256, reads it back whole and by range", async () => {
    const total = 17 * MiB + 123; // more than two 8 MiB parts on S3
    const expected = await collect(body(total));
    const key = jobKeys.input("job_contract1");
    const put = await store.put(key, body(total));
    expect(put).toEqual({ bytes: total, sha256: sha(expected) });
    expect(await store.size(key)).toBe(total);
    expect(sha(await collect(await store.get(key)))).toBe(sha(expected));
    const ranged = await collect(await store.get(key, { start: 8 * MiB - 10, end: 8 * MiB + 9 }));
    expect(ranged).toEqual(expected.subarray(8 * MiB - 10, 8 * MiB + 10));
    expect(await collect(await store.get(key, { start: total - 1, end: total - 1 }))).toEqual(
      expected.subarray(total - 1),
    );
  });

  it("stores small and empty objects", async () => {
    const small = randomBytes(1000);
    expect(await store.put("jobs/job_small/out/000000", Readable.from([small]))).toEqual({
      bytes: 1000,
      sha256: sha(small),
    });
    expect(await collect(await store.get("jobs/job_small/out/000000"))).toEqual(small);
    expect(await store.put("jobs/job_small/out/000001", Readable.from([]))).toEqual({
      bytes: 0,
      sha256: sha(Buffer.alloc(0)),
    });
    expect(await store.size("jobs/job_small/out/000001")).toBe(0);
  });

  it("overwrites an object with a new put", async () => {
    const key = "jobs/job_over/input";
    await store.put(key, Readable.from([Buffer.from("first version")]));
    await store.put(key, Readable.from([Buffer.from("second")]));
    expect((await collect(await store.get(key))).toString()).toBe("second");
  });

  it("cuts at maxBytes with ObjectTooLarge, keeping exactly what fit", async () => {
    const key = "jobs/job_cap/input";
    const total = 3 * MiB;
    const full = await collect(body(total, 100_000, 3));
    const err = await store.put(key, body(total, 100_000, 3), { maxBytes: MiB + 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectTooLarge);
    expect((err as ObjectTooLarge).limit).toBe(MiB + 5);
    expect((err as ObjectTooLarge).kept).toBe(MiB + 5);
    expect(await store.size(key)).toBe(MiB + 5);
    expect((await collect(await store.get(key))).equals(full.subarray(0, MiB + 5))).toBe(true);
    // exactly at the cap is fine
    expect((await store.put(key, body(1000), { maxBytes: 1000 })).bytes).toBe(1000);
  });

  it("a failing source rejects the put and leaves the previous object", async () => {
    const key = "jobs/job_fail/input";
    await store.put(key, Readable.from([Buffer.from("kept")]));
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(1000, 1);
        throw new Error("client went away");
      })(),
    );
    await expect(store.put(key, failing)).rejects.toThrow(/client went away/);
    expect((await collect(await store.get(key))).toString()).toBe("kept");
  });

  it("size is undefined and get rejects for a missing object", async () => {
    expect(await store.size("jobs/job_none/input")).toBeUndefined();
    await expect(store.get("jobs/job_none/input")).rejects.toBeTruthy();
  });

  it("deletes every object under a prefix, and nothing else", async () => {
    await store.put("jobs/job_del/input", Readable.from([Buffer.from("a")]));
    await store.put("jobs/job_del/out/000000", Readable.from([Buffer.from("b")]));
    await store.put("jobs/job_del2/input", Readable.from([Buffer.from("c")]));
    await store.deletePrefix(jobKeys.prefix("job_del"));
    expect(await store.size("jobs/job_del/input")).toBeUndefined();
    expect(await store.size("jobs/job_del/out/000000")).toBeUndefined();
    expect(await store.size("jobs/job_del2/input")).toBe(1);
    await store.deletePrefix(jobKeys.prefix("job_never_existed"));
  });

  it("refuses keys that could escape the store", async () => {
    for (const key of ["../x", "jobs/../../etc/passwd", "/abs", "jobs//x", "jobs/.hidden", ""]) {
      await expect(store.put(key, Readable.from([Buffer.from("x")])), key).rejects.toThrow(/invalid object key/);
    }
  });
});

describe("local store files", () => {
  it("lives under DATA_DIR/jobs with 0600 files and no temporary leftovers", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-store-"));
    try {
      const store = new LocalObjectStore(dir);
      await store.put(jobKeys.segmentOut("job_files", 3), Readable.from([Buffer.from("xyz")]));
      const file = path.join(dir, "jobs", "job_files", "out", "000003");
      expect(fs.readFileSync(file, "utf8")).toBe("xyz");
      if (process.platform !== "win32") {
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        expect(fs.statSync(path.join(dir, "jobs", "job_files")).mode & 0o777).toBe(0o700);
      }
      await store.put("jobs/job_files/input", body(2 * MiB), { maxBytes: MiB }).catch(() => {});
      expect(fs.readdirSync(path.join(dir, "jobs", "job_files")).sort()).toEqual(["input", "out"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("local store: growing puts hashed on the hasher's thread (issue #23 item 6)", () => {
  let dir: string;
  let store: LocalObjectStore;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-store-hasher-"));
    store = new LocalObjectStore(dir);
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("gives the SHA-256 of the bytes, whatever the chunks and sizes (also 0 and under one step)", async () => {
    for (const [i, [total, chunk]] of [
      [0, 1],
      [1, 1],
      [1000, 7],
      [MiB - 1, 65_536],
      [MiB, 333_333],
      [5 * MiB + 17, 100_003],
    ].entries()) {
      const key = `jobs/job_hash${i}/input`;
      const lengths: number[] = [];
      const full = await collect(body(total as number, chunk as number, i));
      const put = await store.put(key, body(total as number, chunk as number, i), {
        growing: { tag: `t${i}`, written: (n) => lengths.push(n) },
      });
      // (the body helper's pieces end at its 1 MiB block: `full` is what it yields)
      expect(put).toEqual({ bytes: full.length, sha256: sha(full) });
      expect((await collect(await store.get(key))).equals(full)).toBe(true);
      if (full.length > 0) expect(lengths.at(-1)).toBe(full.length);
    }
  });

  it("over maxBytes: the digest of exactly what fit, and ObjectTooLarge", async () => {
    const key = "jobs/job_hashcap/input";
    const full = await collect(body(3 * MiB, 100_000, 9));
    const err = await store
      .put(key, body(3 * MiB, 100_000, 9), { maxBytes: 2 * MiB + 3, growing: { tag: "cap", written: () => {} } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectTooLarge);
    expect((err as ObjectTooLarge).kept).toBe(2 * MiB + 3);
    expect(sha(await collect(await store.get(key)))).toBe(sha(full.subarray(0, 2 * MiB + 3)));
  });

  it("a failing source rejects, leaves no file behind, and the next put still hashes", async () => {
    const key = "jobs/job_hashfail/input";
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(3 * MiB, 1);
        throw new Error("client went away");
      })(),
    );
    await expect(store.put(key, failing, { growing: { tag: "f1", written: () => {} } })).rejects.toThrow(
      /client went away/,
    );
    expect(fs.readdirSync(path.join(dir, "jobs", "job_hashfail"))).toEqual([]);
    const again = await store.put(key, body(2 * MiB, 65_536, 4), { growing: { tag: "f2", written: () => {} } });
    expect(again.sha256).toBe(sha(await collect(body(2 * MiB, 65_536, 4))));
  });

  it("a hashing thread that stopped rejects the digest (never a hang), and the next file gets a new thread", async () => {
    const hasher = new FileHasher();
    const file = path.join(dir, "hasher-stop.bin");
    fs.writeFileSync(file, Buffer.alloc(3 * MiB, 5));
    const first = hasher.open(file);
    first.advance(2 * MiB);
    await hasher.close();
    await expect(first.digest(3 * MiB)).rejects.toThrow(/hashing thread/);
    const second = hasher.open(file);
    second.advance(3 * MiB);
    expect(await second.digest(3 * MiB)).toBe(sha(Buffer.alloc(3 * MiB, 5)));
    // a file shorter than the length asked for: an error, not a digest of fewer bytes
    const third = hasher.open(file);
    await expect(third.digest(4 * MiB)).rejects.toThrow(/ends at 3145728 of 4194304 bytes/);
    await hasher.close();
  });

  it("several growing puts at once each get their own digest", async () => {
    const puts = [0, 1, 2].map((i) =>
      store.put(`jobs/job_par${i}/input`, body((i + 1) * MiB + i, 50_000 + i, 20 + i), {
        growing: { tag: `p${i}`, written: () => {} },
      }),
    );
    const got = await Promise.all(puts);
    for (const [i, r] of got.entries()) {
      expect(r.sha256).toBe(sha(await collect(body((i + 1) * MiB + i, 50_000 + i, 20 + i))));
    }
  });
});

describe("S3 part size", () => {
  it("is 8 MiB, growing to stay under the part limit of large objects", () => {
    expect(partSizeFor(undefined)).toBe(8 * MiB);
    expect(partSizeFor(10 * MiB)).toBe(8 * MiB);
    const big = 500 * 1024 * MiB;
    expect(big / partSizeFor(big)).toBeLessThan(10_000);
    expect(partSizeFor(big) % MiB).toBe(0);
  });
});

describe("S3 settings", () => {
  it("are off when unset, and read when given", () => {
    expect(testConfig().s3).toBeUndefined();
    expect(testConfig({ S3_BUCKET: "jobs-data" }).s3).toEqual({
      endpoint: undefined,
      region: "us-east-1",
      bucket: "jobs-data",
      credentials: undefined,
      forcePathStyle: false,
    });
    expect(
      testConfig({
        S3_BUCKET: "jobs-data",
        S3_ENDPOINT: "http://127.0.0.1:9000/",
        S3_ACCESS_KEY_ID: "id",
        S3_SECRET_ACCESS_KEY: "secret",
        S3_REGION: "eu-west-3",
      }).s3,
    ).toEqual({
      endpoint: "http://127.0.0.1:9000",
      region: "eu-west-3",
      bucket: "jobs-data",
      credentials: { accessKeyId: "id", secretAccessKey: "secret" },
      forcePathStyle: true,
    });
    expect(
      testConfig({ S3_BUCKET: "b-1", S3_ENDPOINT: "http://h:1", S3_FORCE_PATH_STYLE: "false" }).s3?.forcePathStyle,
    ).toBe(false);
  });

  it("given by halves, refuse to start naming the missing setting", () => {
    expect(() => testConfig({ S3_ENDPOINT: "http://127.0.0.1:9000" })).toThrow(/^invalid setting S3_BUCKET: required/);
    expect(() => testConfig({ S3_BUCKET: "b-1", S3_ACCESS_KEY_ID: "id" })).toThrow(
      /^invalid setting S3_SECRET_ACCESS_KEY: /,
    );
    expect(() => testConfig({ S3_BUCKET: "b-1", S3_SECRET_ACCESS_KEY: "s" })).toThrow(
      /^invalid setting S3_ACCESS_KEY_ID: /,
    );
    expect(() => testConfig({ S3_BUCKET: "No_Such Bucket" })).toThrow(/^invalid setting S3_BUCKET: must be a bucket/);
    expect(() => testConfig({ S3_BUCKET: "b-1", S3_ENDPOINT: "ftp://x" })).toThrow(/^invalid setting S3_ENDPOINT: /);
  });
});

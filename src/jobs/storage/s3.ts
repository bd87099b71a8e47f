import { Readable } from "node:stream";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { S3Settings } from "../../config.js";
import { CappedBody, checkKey } from "./cap.js";
import { type LinkOptions, type ObjectStore, ObjectTooLarge, type StoredPart } from "./types.js";

const MiB = 1024 * 1024;
/** Smallest part: 8 MiB (S3's minimum is 5 MiB). */
export const MIN_PART_BYTES = 8 * MiB;
/** Parts in flight per upload: memory of one put is at most about QUEUE × part size. */
export const UPLOAD_QUEUE = 2;
/** S3 allows 10,000 parts; keep a margin. */
const MAX_PARTS = 9_000;

/** Part size for an object of at most `maxBytes`: 8 MiB, or larger (whole MiB) to stay under the part limit. */
export function partSizeFor(maxBytes: number | undefined): number {
  if (maxBytes === undefined) return MIN_PART_BYTES;
  return Math.max(MIN_PART_BYTES, Math.ceil(maxBytes / MAX_PARTS / MiB) * MiB);
}

function isNotFound(err: unknown): boolean {
  if (err instanceof S3ServiceException) {
    return err.$metadata.httpStatusCode === 404 || err.name === "NotFound" || err.name === "NoSuchKey";
  }
  return false;
}

/**
 * Job data in an S3-compatible bucket (S3_* settings). Puts stream through lib-storage's Upload
 * (multipart above one part, bounded part size and queue: nothing is buffered whole); reads are
 * ranged GetObject calls, so a download or a segment task fetches only the bytes it needs.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = "s3" as const;
  /** an object exists only once its upload completes */
  readonly readsGrowing = false;
  readonly client: S3Client;
  private readonly bucket: string;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      // Checksums only where S3 requires them: many S3-compatible servers reject the newer ones.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  async put(key: string, body: Readable, opts: { maxBytes?: number } = {}): Promise<{ bytes: number; sha256: string }> {
    checkKey(key);
    const capped = new CappedBody(opts.maxBytes);
    const source = Readable.from(capped.read(body), { objectMode: false });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: source, ContentType: "application/octet-stream" },
      partSize: partSizeFor(opts.maxBytes),
      queueSize: UPLOAD_QUEUE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      source.destroy();
      body.destroy();
      throw err;
    }
    if (capped.over) throw new ObjectTooLarge(opts.maxBytes ?? 0, capped.bytes);
    return { bytes: capped.bytes, sha256: capped.sha256 };
  }

  async get(key: string, range?: { start: number; end: number }): Promise<Readable> {
    checkKey(key);
    const res = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    const body = res.Body;
    if (!(body instanceof Readable)) throw new Error(`GetObject ${key}: no body stream`);
    return body;
  }

  async size(key: string): Promise<number | undefined> {
    checkKey(key);
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return res.ContentLength;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    checkKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix, "prefix");
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length > 0) {
        const res = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }),
        );
        const failed = res.Errors ?? [];
        if (failed.length > 0) {
          throw new Error(`could not delete ${failed.length} object(s) under ${prefix}: ${failed[0]?.Code ?? "error"}`);
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /**
   * A presigned GetObject URL (SigV4 in the query: the signature covers the bucket, the key and
   * X-Amz-Expires, so a link cannot be turned into another object's or made to last longer).
   * Several parts: joined into `opts.combined` first (see `combine`), once; later calls presign it.
   */
  async linkTo(parts: readonly StoredPart[], opts: LinkOptions): Promise<string> {
    const single = parts.length === 1 ? parts[0] : undefined;
    const key = single ? single.key : opts.combined;
    checkKey(key);
    if (!single) {
      const total = parts.reduce((n, p) => n + p.bytes, 0);
      if ((await this.size(key)) !== total) await this.combineOnce(key, parts, opts.sha256 ?? undefined);
    }
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      expiresIn: opts.expiresInSeconds,
      ...(opts.now ? { signingDate: opts.now } : {}),
    });
  }

  /** joins under way in this process, by key: concurrent first links wait for the same one */
  private readonly combining = new Map<string, Promise<void>>();

  private combineOnce(key: string, parts: readonly StoredPart[], sha256: string | undefined): Promise<void> {
    let running = this.combining.get(key);
    if (!running) {
      running = this.combine(key, parts, sha256).finally(() => this.combining.delete(key));
      this.combining.set(key, running);
    }
    return running;
  }

  /**
   * Writes the parts, in order, as one object: read part by part (ranged GetObject streams) into a
   * multipart Upload (bounded memory: UPLOAD_QUEUE parts of partSizeFor(total)). The object appears
   * only once complete (S3 semantics), so a reader never gets half of it. Not UploadPartCopy:
   * S3 needs every copied part but the last to be at least 5 MiB (a segment's output of
   * compressible data is often smaller), and s3rver, the S3 of the tests, does not implement it.
   */
  private async combine(key: string, parts: readonly StoredPart[], sha256: string | undefined): Promise<void> {
    const total = parts.reduce((n, p) => n + p.bytes, 0);
    const self = this;
    const joined = Readable.from(
      (async function* () {
        for (const part of parts) if (part.bytes > 0) yield* await self.get(part.key);
      })(),
      { objectMode: false },
    );
    const put = await this.put(key, joined, { maxBytes: total });
    if (put.bytes !== total || (sha256 !== undefined && put.sha256 !== sha256)) {
      await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: [{ Key: key }] } }));
      throw new Error(
        `joining ${parts.length} parts into ${key}: ${put.bytes} bytes (sha256 ${put.sha256}), expected ${total}${sha256 ? ` (sha256 ${sha256})` : ""}`,
      );
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

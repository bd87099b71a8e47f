import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { S3ObjectStore } from "../../../jobs/storage/s3.js";
import { type Check, displayUrl, errorLine, fail, ok, skipped } from "../check.js";

/**
 * Where suite-job data goes: the S3 bucket (S3_*), proven writable by putting, reading back and
 * deleting one small probe object under `doctor/`; or, without S3, DATA_DIR/jobs on this machine
 * (a probe file created and removed).
 */

const PROBE = "labphi doctor probe: safe to delete\n";

function s3Fix(name: string | undefined, bucket: string): string {
  switch (name) {
    case "NoSuchBucket":
      return `create the bucket ${bucket} (or set S3_BUCKET to an existing one)`;
    case "AccessDenied":
    case "InvalidAccessKeyId":
    case "SignatureDoesNotMatch":
      return `check S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY and that they may put, get and delete objects in ${bucket}`;
    default:
      return "check S3_ENDPOINT, S3_REGION and S3_FORCE_PATH_STYLE, and that the object store is up";
  }
}

export const s3Writable: Check = {
  id: "storage.s3",
  part: "storage",
  check: "s3 bucket writable",
  applies: (config) => config.s3 !== undefined,
  notConfigured: "not configured (job data under DATA_DIR/jobs; S3_BUCKET and S3_* use a bucket)",
  async run(ctx) {
    const s3 = ctx.config.s3;
    if (!s3) return skipped("S3 not configured");
    const store = new S3ObjectStore(s3);
    const where = `${s3.bucket} at ${s3.endpoint ? displayUrl(s3.endpoint) : `AWS ${s3.region}`}`;
    const key = `doctor/probe-${randomBytes(8).toString("hex")}`;
    const opts = { abortSignal: AbortSignal.timeout(ctx.timeoutMs) };
    let step = "put";
    try {
      await store.client.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: PROBE, ContentType: "text/plain" }),
        opts,
      );
      step = "get";
      const got = await store.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }), opts);
      const text = await got.Body?.transformToString();
      step = "delete";
      await store.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }), opts);
      if (text !== PROBE) {
        return fail(`${where}: the probe object read back differs`, s3Fix(undefined, s3.bucket));
      }
      return ok(`${where}: put, read back and deleted a ${PROBE.length}-byte probe`);
    } catch (err) {
      const name = (err as { name?: string }).name;
      return fail(`${where}: ${step} failed: ${name ?? ""} ${errorLine(err)}`.trim(), s3Fix(name, s3.bucket));
    } finally {
      await store.close().catch(() => {});
    }
  },
};

export const localWritable: Check = {
  id: "storage.local",
  part: "storage",
  check: "data dir writable",
  applies: (config) => config.s3 === undefined,
  notConfigured: "S3 in use (job data in the bucket)",
  async run(ctx) {
    const dir = ctx.config.dataDir;
    if (!fs.existsSync(dir)) return skipped(`DATA_DIR ${dir} not created yet (labphi serve creates it)`);
    const probe = path.join(dir, `.doctor-probe-${randomBytes(6).toString("hex")}`);
    try {
      fs.writeFileSync(probe, PROBE, { mode: 0o600, flag: "wx" });
      fs.rmSync(probe);
      return ok(`DATA_DIR ${dir} is writable (job data under ${path.join(dir, "jobs")})`);
    } catch (err) {
      return fail(
        `DATA_DIR ${dir} is not writable: ${errorLine(err)}`,
        `give the service's user write access to ${dir} (chown), or set DATA_DIR to a writable folder`,
      );
    }
  },
};

export const STORAGE_CHECKS: Check[] = [s3Writable, localWritable];

import fs from "node:fs/promises";
import { Problem } from "../http/problem.js";

/**
 * The disk floor of uploads (issue #21 item 3): while the free space of the file system under
 * DATA_DIR is below JOB_MIN_FREE_DISK_BYTES, new upload requests (`PUT …/input`, tus `POST` and
 * `PATCH`) are refused with 507 `insufficient_storage` before a byte is read, so uploads cannot
 * fill the disk the database, the tus spool and the local object store share. Space is read with
 * statfs(2) (`fs.statfs`, bigint: no float rounding), the blocks available to this (unprivileged)
 * process.
 */

/** Free bytes for this process on the file system holding `dir`. */
export async function freeDiskBytes(dir: string): Promise<bigint> {
  const st = await fs.statfs(dir, { bigint: true });
  return st.bavail * st.bsize;
}

/** Seconds a client is told to wait before trying again (the retention sweep frees space). */
export const DISK_FLOOR_RETRY_AFTER_SECONDS = 300;

export class DiskFloor {
  constructor(
    private readonly dir: string,
    /** 0: no floor */
    readonly minFreeBytes: number,
    private readonly free: (dir: string) => Promise<bigint> = freeDiskBytes,
  ) {}

  /** 507 insufficient_storage when the free space is below the floor. */
  async assertRoom(): Promise<void> {
    if (this.minFreeBytes <= 0) return;
    let free: bigint;
    try {
      free = await this.free(this.dir);
    } catch {
      // DATA_DIR unreadable for statfs: the write itself will say what is wrong
      return;
    }
    if (free >= BigInt(this.minFreeBytes)) return;
    throw new Problem(
      507,
      "insufficient_storage",
      "The service is low on disk space and takes no new uploads for now; nothing was stored. Retry later.",
      { min_free_bytes: this.minFreeBytes, retry_after: DISK_FLOOR_RETRY_AFTER_SECONDS },
      { "Retry-After": String(DISK_FLOOR_RETRY_AFTER_SECONDS) },
    );
  }
}

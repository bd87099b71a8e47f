import type { Config } from "../../config.js";
import { LocalObjectStore } from "./local.js";
import { S3ObjectStore } from "./s3.js";
import type { ObjectStore } from "./types.js";

export type ClosableObjectStore = ObjectStore & { close(): Promise<void> };

/** The store of job data: the S3 bucket when S3_BUCKET is set, else files under DATA_DIR (jobs/…). */
export function createObjectStore(config: Pick<Config, "dataDir" | "s3">): ClosableObjectStore {
  return config.s3 ? new S3ObjectStore(config.s3) : new LocalObjectStore(config.dataDir);
}

/** The same, under the name the runner looks for (src/jobs/runner.ts `objectStoreFor`). */
export const openObjectStore = createObjectStore;

export { LocalObjectStore } from "./local.js";
export { S3ObjectStore } from "./s3.js";
export * from "./types.js";

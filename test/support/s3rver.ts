import fs from "node:fs";
import type { Server } from "node:http";
import os from "node:os";
import path from "node:path";
// @ts-expect-error: s3rver ships no types
import S3rver from "s3rver";

/**
 * A real S3-compatible server in-process (s3rver from npm) on a loopback port, with its own
 * temporary folder and a bucket, for the S3 half of the storage and upload tests. Its env block is
 * what the app needs (S3_*). Started per test file; `close()` stops it and removes the folder.
 */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3rver(bucket = "labphi-test"): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-s3rver-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: "S3RVER",
      S3_SECRET_ACCESS_KEY: "S3RVER",
      S3_FORCE_PATH_STYLE: "true",
    },
    close: async () => {
      const http = (server as { httpServer?: Server }).httpServer;
      http?.closeAllConnections();
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}

import { PassThrough, Readable } from "node:stream";
import type { Locker } from "@tus/server";
import { z } from "zod";
import { Problem, problemSchema } from "../http/problem.js";
import { idText } from "../http/text.js";
import type { App } from "../http/types.js";
import { DiskFloor } from "./disk-floor.js";
import { inclusive, parseContentRange } from "./input-parts.js";
import { parseRange, reprDigest } from "./output-headers.js";
import { assertNotExpired } from "./retention.js";
import { jobViewSchema } from "./schemas.js";
import type { JobService } from "./service.js";
import { jobKeys } from "./storage/types.js";
import type { JobState } from "./tables.js";
import { TUS_PATH, tusRoutes } from "./tus.js";

/**
 * Suite jobs over HTTP (issue #10): the job's state, its input (raw streaming PUT, or resumable
 * tus uploads) and its output (streamed, with ranges). Every route needs the job's token
 * (`Authorization: Bearer <job_token>`). Bodies are never read by Fastify here: a passthrough
 * parser hands the request stream to the store, which counts bytes against the quote (Fastify's
 * body limit does not apply to a stream nobody reads). The tus routes: tus.ts.
 */

const jobIdParam = idText(80).describe("job id (job_…)");
/** The states in which `output?follow=1` streams the output as it is coded (done: the plain answer). */
const FOLLOWABLE: JobState[] = ["awaiting_input", "uploading", "queued", "running"];
const AUTH = "Needs `Authorization: Bearer <job_token>` (the token returned once with the job).";

export function jobRoutes(
  app: App,
  deps: {
    jobs: JobService;
    dataDir: string;
    baseUrl: string;
    /** JOB_MIN_FREE_DISK_BYTES: new uploads get 507 below it (0 or absent: no floor) */
    minFreeDiskBytes?: number;
    /** The tus upload lock (PostgreSQL: shared by every instance, tus-locker.ts); absent: in the process */
    locker?: Locker | undefined;
    /** JOB_OUTPUT_URL_TTL_SECONDS: how long the link of `output?redirect=1` (S3 store) is valid (default 300) */
    outputUrlTtlSeconds?: number;
  },
) {
  const { jobs, baseUrl } = deps;
  /** Receiving inputs and serving outputs (src/jobs/transfer.ts), built in src/services.ts. */
  const { transfers } = app.services;
  const diskFloor = new DiskFloor(deps.dataDir, deps.minFreeDiskBytes ?? 0);

  app.register(async (instance) => {
    const scope = instance as unknown as App;
    // Raw bodies are streams here: never read, parsed or limited by Fastify; other types get 415.
    scope.removeAllContentTypeParsers();
    const RAW_TYPES = ["application/octet-stream", "application/offset+octet-stream"];
    scope.addContentTypeParser(RAW_TYPES, (_request, _payload, done) => done(null));
    // A 415 here names the raw types (src/http/errors.ts reads `config.accepts`).
    scope.addHook("onRoute", (route) => {
      route.config = { ...(route.config ?? {}), accepts: RAW_TYPES } as typeof route.config;
    });
    // A refusal before the body was read closes the connection rather than draining gigabytes.
    scope.addHook("onSend", async (request, reply, payload) => {
      if (reply.statusCode >= 400 && !request.raw.complete && request.raw.readableFlowing !== true) {
        reply.header("Connection", "close");
      }
      return payload;
    });

    scope.get(
      "/api/jobs/:id",
      {
        schema: {
          summary: "A suite job: state, bytes in and out, progress, ratio, level, attempts, errors, webhook deliveries",
          description: `${AUTH} Once the job's data has expired (JOB_RETENTION_HOURS after it ended, or an upload abandoned for JOB_ABANDONED_UPLOAD_HOURS) this answers 410 job_expired, with the job's final state, finished_at, expired_at and output_sha256 in the problem. A job deleted by DELETE /api/jobs/{id}: 410 job_deleted (every job route).`,
          tags: ["jobs"],
          security: [{ jobBearer: [] }],
          params: z.object({ id: jobIdParam }),
          response: { 200: jobViewSchema, 401: problemSchema, 410: problemSchema },
        },
      },
      async (request) => {
        const job = await jobs.authorize(request.params.id, request.headers.authorization);
        assertNotExpired(job);
        // with its webhook deliveries and their attempts (src/webhooks)
        return jobs.detail(job);
      },
    );

    scope.put(
      "/api/jobs/:id/input",
      {
        schema: {
          summary: "Send a suite job's input (raw bytes, streamed): whole, or in parts with Content-Range",
          description: `Content-Type: application/octet-stream; at most the quoted bytes (a larger Content-Length: 413 at once; more bytes arriving: 413, the part that fit is kept and recorded as bytes_in). Accepted while the job is awaiting_input or uploading (an expired job: 410 job_expired); refused with 507 insufficient_storage while the free disk under DATA_DIR is below JOB_MIN_FREE_DISK_BYTES; on success the job is queued. A request must arrive within REQUEST_TIMEOUT_SECONDS: for large inputs use the resumable tus endpoint ${TUS_PATH}, or parts. **In parts** (several streams at once, any order; local store only: on S3 400 input_parts_unsupported): each request carries \`Content-Range: bytes first-last/total\` (400 input_range_invalid otherwise; its body exactly that many bytes, else 400 input_range_mismatch and the part does not count); \`total\` must be the same for every part (409 input_total_changed) and within the quote (413 input_too_large); every part but the last is at least JOB_UPLOAD_MIN_PART_BYTES (400 input_part_too_small); a range overlapping a landed part or one being received: 409 input_range_overlaps (with the landed ranges); at most JOB_UPLOAD_MAX_PARTS parts (409 input_too_many_parts) and JOB_UPLOAD_MAX_STREAMS at once (409 input_streams_busy); a part whose lease ran out while it arrived: 409 input_part_lost. A part that lands answers 202 with the ranges landed so far; segments are coded as soon as their bytes have landed; the part that completes the input answers 200 with the job (queued), as a whole PUT does. Landed parts survive a restart; a part cut off is sent again. ${AUTH}`,
          tags: ["jobs"],
          security: [{ jobBearer: [] }],
          params: z.object({ id: jobIdParam }),
          headers: z.object({
            "content-range": z
              .string()
              .optional()
              .describe(
                "bytes first-last/total: this request is one part of the input (see the description); absent: the whole input",
              ),
          }),
          response: {
            200: jobViewSchema,
            202: z
              .object({
                job_id: z.string(),
                state: z.string().describe("uploading"),
                bytes_total: z.number().int().describe("the whole input's size, as the parts declare it"),
                bytes_landed: z.number().int().describe("bytes of the input landed so far"),
                landed: z
                  .array(z.object({ start: z.number().int(), end: z.number().int() }))
                  .describe("the ranges landed so far, merged, inclusive (as in Content-Range)"),
              })
              .describe("a part landed; the input is not complete yet"),
            400: problemSchema,
            401: problemSchema,
            409: problemSchema,
            410: problemSchema,
            413: problemSchema,
            415: problemSchema,
            507: problemSchema,
          },
        },
      },
      async (request, reply) => {
        const job = await jobs.authorize(request.params.id, request.headers.authorization);
        transfers.assertAcceptsInput(job);
        const declared = request.headers["content-length"];
        const contentRange = request.headers["content-range"];
        const part = contentRange === undefined ? undefined : parseContentRange(contentRange);
        if (part) {
          transfers.assertFits(job, part.total);
          if (declared !== undefined && Number(declared) !== part.end - part.start + 1) {
            throw new Problem(
              400,
              "input_range_mismatch",
              `Content-Length ${declared} is not the ${part.end - part.start + 1} bytes of Content-Range ${contentRange}.`,
              { bytes_expected: part.end - part.start + 1 },
            );
          }
        } else if (declared !== undefined) transfers.assertFits(job, Number(declared));
        await diskFloor.assertRoom();
        const raw = request.raw;
        // The store reads a proxy: when it stops early (over the quote) the request itself stays
        // open, so the 413 can still be sent.
        const proxy = new PassThrough();
        const aborted = () => {
          if (!raw.complete) proxy.destroy(new Error("the client closed the upload before its end"));
        };
        raw.on("close", aborted);
        raw.pipe(proxy);
        try {
          if (part) {
            const r = await transfers.receivePart(job.id, part, proxy);
            if (r.complete) return reply.code(200).send(jobs.view(r.job));
            return reply.code(202).send({
              job_id: job.id,
              state: r.job.state,
              bytes_total: part.total,
              bytes_landed: r.landed.reduce((n, x) => n + x.end - x.start, 0),
              landed: inclusive(r.landed),
            });
          }
          const done = await transfers.receive(job.id, proxy);
          return reply.code(200).send(jobs.view(done));
        } catch (err) {
          raw.unpipe(proxy);
          // Drain what is still coming (bounded by the request timeout) so the client reads the answer.
          if (!raw.complete && !raw.destroyed) raw.resume();
          throw err;
        } finally {
          raw.off("close", aborted);
        }
      },
    );

    scope.get(
      "/api/jobs/:id/output",
      {
        schema: {
          summary: "A done suite job's output (streamed; Range supported)",
          description: `The segment outputs in order. \`Range: bytes=a-b\` (one range, suffix \`bytes=-n\` too) → 206 with Content-Range; outside the output → 416. ETag is the output's SHA-256 (hex), \`Repr-Digest: sha-256=:<base64>:\` the same digest (RFC 9530, also on a 206). \`?redirect=1\` on the S3 store: 303 to a presigned GET URL of the whole output (no credentials needed; valid JOB_OUTPUT_URL_TTL_SECONDS, default 300 s; Range goes to that URL), with the same ETag and Repr-Digest; on the local store it is ignored (the bytes, as without it). \`?follow=1\` before the job is done (awaiting_input, uploading, queued, running): 200 at once, the segments' outputs streamed in order as they finish (the download overlaps the coding), \`Repr-Digest\` as an HTTP trailer once the job is done; a job that fails or is cancelled meanwhile cuts the response (check the job's state). A deleted job: 410 job_deleted. ${AUTH}`,
          tags: ["jobs"],
          security: [{ jobBearer: [] }],
          params: z.object({ id: jobIdParam }),
          querystring: z.object({
            redirect: z
              .enum(["0", "1"])
              .optional()
              .describe("1: on the S3 store, answer 303 to a presigned download URL instead of the bytes"),
            follow: z
              .enum(["0", "1"])
              .optional()
              .describe(
                "1: start the download while the job runs: each segment's output is sent as soon as it is done (chunked, no Content-Length; Repr-Digest comes as a trailer); the response is cut if the job fails or is cancelled",
              ),
          }),
          response: {
            200: z.any().describe("the output bytes (application/octet-stream)"),
            206: z.any().describe("the requested range of the output"),
            303: z
              .string()
              .describe("redirect (S3 store, `redirect=1`): `Location` is a presigned GET URL of the output"),
            401: problemSchema,
            409: problemSchema,
            410: problemSchema,
            416: problemSchema,
          },
        },
      },
      async (request, reply) => {
        const job = await jobs.authorize(request.params.id, request.headers.authorization);
        if (request.query.follow === "1" && FOLLOWABLE.includes(job.state) && request.method === "GET") {
          assertNotExpired(job);
          const abort = new AbortController();
          request.raw.once("close", () => abort.abort());
          reply.trailer("Repr-Digest", async () => {
            const done = await jobs.get(job.id);
            return done.output_sha256 ? reprDigest(done.output_sha256) : "";
          });
          return reply
            .code(200)
            .type("application/octet-stream")
            .header("Cache-Control", "private, no-store")
            .send(transfers.follow(job.id, { signal: abort.signal }));
        }
        const { parts, total } = await transfers.output(job);
        const etag = job.output_sha256 ? `"${job.output_sha256}"` : undefined;
        reply.header("Accept-Ranges", "bytes").header("Cache-Control", "private, no-store");
        if (etag) reply.header("ETag", etag);
        // RFC 9530: the SHA-256 of the whole output (also on a 206: it describes the representation)
        if (job.output_sha256) reply.header("Repr-Digest", reprDigest(job.output_sha256));
        const storage = transfers.storage;
        if (request.query.redirect === "1" && storage.linkTo) {
          // the link names the bytes the digests describe: a single segment, or the joined output
          const location = await storage.linkTo(parts, {
            combined: jobKeys.output(job.id),
            expiresInSeconds: deps.outputUrlTtlSeconds ?? 300,
            sha256: job.output_sha256,
          });
          // deleted or expired while its output was being joined: the joined copy goes too (a
          // deletion marked later removes it itself: its deletePrefix runs after this join)
          try {
            assertNotExpired(await jobs.get(job.id));
          } catch (err) {
            await storage.deletePrefix(jobKeys.output(job.id));
            throw err;
          }
          return reply.code(303).header("Location", location).type("text/plain").send("see Location");
        }
        let range = parseRange(request.headers.range, total);
        const ifRange = request.headers["if-range"];
        if (range !== undefined && ifRange !== undefined && ifRange !== etag) range = undefined;
        if (range === "unsatisfiable") {
          throw new Problem(
            416,
            "range_not_satisfiable",
            `The range ${request.headers.range} is outside the ${total}-byte output.`,
            { bytes_total: total },
            { "Content-Range": `bytes */${total}` },
          );
        }
        const [start, end] = range ?? [0, total - 1];
        const length = total === 0 ? 0 : end - start + 1;
        reply.type("application/octet-stream").header("Content-Length", String(length));
        if (range) reply.code(206).header("Content-Range", `bytes ${start}-${end}/${total}`);
        else reply.code(200);
        // HEAD: an empty stream keeps our Content-Length (Fastify's HEAD handler counts a string body).
        if (request.method === "HEAD") return reply.send(Readable.from([]));
        if (length === 0) return reply.send("");
        return reply.send(transfers.openOutput(parts, start, end));
      },
    );

    tusRoutes(scope, { jobs, dataDir: deps.dataDir, baseUrl, diskFloor, locker: deps.locker });
  });
}

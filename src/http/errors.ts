import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { wantsHtml } from "../web/html.js";
import { problemPage } from "../web/problem-page.js";
import { safeError } from "./logger.js";
import { PROBLEM_CONTENT_TYPE, Problem } from "./problem.js";
import type { RouteTable } from "./route-table.js";
import { isTextIssue } from "./text.js";

const FASTIFY_CODES: Record<string, { status: number; code: string; detail: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: "unsupported_media_type",
    detail: "This content type is not accepted here; send application/json.",
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: "body_too_large",
    detail: "The request body exceeds the size limit.",
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: "empty_json_body",
    detail: "The content type says JSON but the body is empty.",
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: "malformed_json", detail: "The body is not valid JSON." },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: "bad_content_length",
    detail: "Content-Length does not match the body.",
  },
  FST_ERR_CTP_INVALID_TYPE: { status: 415, code: "unsupported_media_type", detail: "The content type is not valid." },
  FST_ERR_BAD_URL: { status: 400, code: "bad_url", detail: "The request URL is malformed." },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: "uri_too_long", detail: "A path segment of the URL is too long." },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: "bad_request", detail: "The request could not be routed." },
};

/** The stable code of the problem each reply carried (read by the metrics' onResponse hook). */
export const sentProblems = new WeakMap<FastifyReply, string>();

export function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: Problem): FastifyReply {
  sentProblems.set(reply, problem.code);
  for (const [k, v] of Object.entries(problem.headers)) reply.header(k, v);
  // A browser (a page, a form) gets the problem as an HTML page in the site's layout.
  const html = wantsHtml(request.headers.accept) ? htmlProblem(problem, request.url) : undefined;
  if (html !== undefined) {
    return reply
      .code(problem.status)
      .type("text/html; charset=utf-8")
      .header("Cache-Control", "no-store")
      .serializer(String)
      .send(html);
  }
  return reply
    .code(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(problem.body(request.url.split("?")[0]));
}

function htmlProblem(problem: Problem, url: string): string | undefined {
  try {
    const body = problem.body(url.split("?")[0]) as { title?: string; detail?: string };
    return problemPage(
      { status: problem.status, title: body.title ?? problem.title, detail: body.detail ?? "", code: problem.code },
      url,
    );
  } catch {
    return undefined; // no built assets in this process (a unit test without the app): JSON then
  }
}

// F14 begin: infrastructure faults as problems (docs/reliability.md "Faults")
/** Socket errors of the PostgreSQL driver and SQLSTATEs of a server that is down, starting or shutting down. */
const DB_DOWN_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down)
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "53300", // too_many_connections
]);
const DB_DOWN_MESSAGE =
  /^Connection terminated|^Client has encountered a connection error|timeout exceeded when trying to connect/;
/** A full disk (or a file-size limit) under DATA_DIR, from the file system or from SQLite. */
const DISK_FULL_CODES = new Set(["ENOSPC", "EFBIG", "EDQUOT", "SQLITE_FULL"]);

/** 503 database_unavailable / 507 insufficient_storage for such errors, else undefined. */
export function infrastructureProblem(err: unknown): Problem | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && DISK_FULL_CODES.has(code)) {
    return new Problem(
      507,
      "insufficient_storage",
      "The service's storage is full; nothing was stored for this request and nothing stored earlier is lost. Retry later.",
    );
  }
  if (code === "57014") {
    // query_canceled: DATABASE_STATEMENT_TIMEOUT_SECONDS passed (or an operator cancelled it)
    return new Problem(
      503,
      "database_timeout",
      "The database took too long to answer this request and it was cancelled; retry shortly (nothing was changed by this request unless a later retry says so).",
      { retry_after: 5 },
      { "Retry-After": "5" },
    );
  }
  if ((typeof code === "string" && DB_DOWN_CODES.has(code)) || DB_DOWN_MESSAGE.test(err.message)) {
    return new Problem(
      503,
      "database_unavailable",
      "The database is not reachable right now; retry shortly (nothing was changed by this request unless a later retry says so).",
      { retry_after: 5 },
      { "Retry-After": "5" },
    );
  }
  return undefined;
}
// F14 end

/** Turns any thrown error into an RFC 9457 problem. Unknown errors become a logged 500. */
export function toProblem(err: FastifyError | Error): Problem {
  if (err instanceof Problem) return err;
  const infra = infrastructureProblem(err);
  if (infra) return infra;
  const fe = err as FastifyError;
  if (hasZodFastifySchemaValidationErrors(fe)) {
    const issues = fe.validation.map((v) => ({
      in: fe.validationContext ?? "body",
      path: v.instancePath || "/",
      message: v.message ?? "invalid",
    }));
    const at = (i: (typeof issues)[number] | undefined) => (i ? `${i.in}${i.path === "/" ? "" : i.path}` : "request");
    // A control character in user text (src/http/text.ts) gets its own code, naming the field.
    const textIndex = fe.validation.findIndex((v) => isTextIssue(v as never));
    if (textIndex >= 0) {
      const bad = issues[textIndex];
      return new Problem(400, "invalid_text", `Invalid ${at(bad)}: text ${bad?.message ?? "is not valid"}.`, {
        errors: issues,
      });
    }
    const first = issues[0];
    return new Problem(400, "validation_failed", `Invalid ${at(first)}: ${first?.message ?? "invalid value"}.`, {
      errors: issues,
    });
  }
  if (fe.validation) {
    return new Problem(400, "validation_failed", fe.message, { errors: fe.validation });
  }
  const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (known) return new Problem(known.status, known.code, known.detail);
  if (err instanceof SyntaxError || fe.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    return new Problem(400, "malformed_json", "The body is not valid JSON.");
  }
  const status = fe.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return new Problem(status, "bad_request", fe.message || "The request is not valid.");
  }
  return new Problem(500, "internal_error", "An unexpected error occurred; it has been logged.");
}

const CLIENT_ERRORS: Record<string, { status: number; code: string; detail: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: "request_timeout",
    detail: "The request (headers and body) did not arrive within REQUEST_TIMEOUT_SECONDS; the connection is closed.",
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: "headers_too_large",
    detail: "The request headers are too large.",
  },
};

/**
 * Fastify's `clientErrorHandler` option: errors Node raises on the socket before any route runs
 * (a request or its headers not received in time, oversized headers, unparsable HTTP) answered
 * as problems too, then the connection is closed. Nothing is written when a response has
 * already started on that socket.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const known = (err.code && CLIENT_ERRORS[err.code]) || {
    status: 400,
    code: "bad_request",
    detail: "The request is not valid HTTP/1.1.",
  };
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const problem = new Problem(known.status, known.code, known.detail);
    const body = JSON.stringify(problem.body());
    socket.write(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Fastify's `frameworkErrors` option: router-level errors (bad URL, over-long parameter) as problems. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  sendProblem(reply, request, toProblem(err));
}

/**
 * `wire`: turns a domain error into the problem that goes out, at the edge (a refused x402 payment
 * gets its challenge's PAYMENT-REQUIRED header from src/payments/x402/http.ts); identity by default.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  routes: RouteTable,
  wire: (err: unknown) => unknown = (err) => err,
): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let problem = toProblem(wire(err) as FastifyError);
    if (problem.code === "unsupported_media_type" && !(err instanceof Problem)) {
      // Name what this route takes: JSON by default; raw-byte routes say so in their config.
      const accepts = (request.routeOptions.config as { accepts?: string[] } | undefined)?.accepts ?? [
        "application/json",
      ];
      problem = new Problem(
        415,
        problem.code,
        `This content type is not accepted here; send ${accepts.join(" or ")}.`,
        {
          accepts,
        },
      );
    }
    if (problem.status >= 500 && !(err instanceof Problem)) {
      request.log.error({ reqId: request.id, err: safeError(err) }, "unhandled error");
    }
    return sendProblem(reply, request, problem);
  });

  app.setNotFoundHandler((request, reply) => {
    const allowed = routes.allowedMethods(request.url);
    if (allowed.length > 0) {
      return sendProblem(
        reply,
        request,
        new Problem(
          405,
          "method_not_allowed",
          `${request.method} is not allowed on this path; allowed: ${allowed.join(", ")}.`,
          { allow: allowed },
          { Allow: allowed.join(", ") },
        ),
      );
    }
    return sendProblem(reply, request, new Problem(404, "not_found", `No resource at ${request.url.split("?")[0]}.`));
  });
}

import { LogController } from "fastify";
import { logPath } from "./logger.js";

/**
 * One JSON log line per request (on completion) instead of Fastify's two: method, path,
 * route, status and duration, with the request id from the child logger.
 *
 * `path` is the route pattern (`/access/:token`), never the raw URL: parameters of routes like
 * `/access/:token`, `/api/licenses/:key` and `/api/claims/:id` are secrets. A request that
 * matched no route (404, 405) logs its path with every unknown segment as a keyed hash
 * (`logPath` in ./logger.ts), without query string.
 */
export class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: { id: string; method: string; url: string; routeOptions?: { url?: string } },
    reply: {
      statusCode: number;
      elapsedTime: number;
      log: { info: (o: object, m: string) => void; error: (o: object, m: string) => void };
    },
  ): void {
    const line = {
      reqId: request.id,
      method: request.method,
      path: logPath(request),
      route: request.routeOptions?.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "request");
  }

  /** Fastify's default 404 line names the raw URL; ours (the request line) does not. */
  override routeNotFound(): void {}
}

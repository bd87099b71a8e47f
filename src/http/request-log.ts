import { LogController } from "fastify";

/**
 * One JSON log line per request (on completion) instead of Fastify's two: method, path,
 * route, status and duration, with the request id from the child logger.
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
      path: request.url.split("?")[0],
      route: request.routeOptions?.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "request");
  }
}

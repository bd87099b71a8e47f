import type { FastifyInstance, RouteOptions } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { STATIC_SEGMENTS } from "./logger.js";

export interface RouteInfo {
  method: string;
  url: string;
  summary?: string;
  tags?: string[];
  hidden: boolean;
}

const METHODS: HTTPMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * Every route the app registers, collected as it is added. Used for 405 answers
 * (which methods a path does allow) and by the discovery documents.
 */
export class RouteTable {
  private readonly router = FindMyWay({ ignoreTrailingSlash: false });
  readonly routes: RouteInfo[] = [];

  attach(app: FastifyInstance): void {
    app.addHook("onRoute", (route: RouteOptions) => {
      if (route.url === "*" || route.url.includes("*")) return;
      // The words a logged 404 path may show (src/http/logger.ts); everything else is hashed.
      for (const seg of route.url.split("/")) if (seg && !seg.includes(":")) STATIC_SEGMENTS.add(seg);
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const schema = (route.schema ?? {}) as { summary?: string; tags?: string[]; hide?: boolean };
      for (const method of methods) {
        if (!METHODS.includes(method as HTTPMethod)) continue;
        this.router.on(method as HTTPMethod, route.url, () => {});
        if (method === "HEAD" || method === "OPTIONS") continue;
        const info: RouteInfo = { method, url: route.url, hidden: schema.hide === true };
        if (schema.summary) info.summary = schema.summary;
        if (schema.tags) info.tags = schema.tags;
        this.routes.push(info);
      }
    });
  }

  /** Methods registered for a concrete path (with parameters filled in). */
  allowedMethods(path: string): string[] {
    const clean = path.split("?")[0] ?? path;
    return METHODS.filter((m) => this.router.find(m, clean) !== null);
  }

  public(): RouteInfo[] {
    return this.routes.filter((r) => !r.hidden);
  }
}

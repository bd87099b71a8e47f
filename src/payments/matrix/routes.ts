import { z } from "zod";
import type { Catalog } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { problemSchema } from "../../http/problem.js";
import type { RouteTable } from "../../http/route-table.js";
import type { App } from "../../http/types.js";
import { paymentsMatrixSchema, type SuitePricing } from "./schemas.js";
import { type HasRoute, paymentsMatrix } from "./service.js";

/** A HasRoute backed by the app's route table (read at request time, when every route is registered). */
export function routeTableLookup(routes: RouteTable): HasRoute {
  return (method, path) => routes.allowedMethods(path).includes(method.toUpperCase());
}

export function paymentsMatrixRoutes(
  app: App,
  deps: { config: Config; catalog: Catalog; routes: RouteTable; suitePricing: SuitePricing },
) {
  const { config, catalog } = deps;
  const hasRoute = routeTableLookup(deps.routes);
  app.get(
    "/api/payments",
    {
      schema: {
        summary: "Payments matrix: every rail, whether it is configured, and how to pay each product (one with ?sku=)",
        tags: ["payments"],
        querystring: z.object({ sku: z.string().min(1).max(100).optional() }),
        response: { 200: paymentsMatrixSchema, 400: problemSchema, 404: problemSchema, 410: problemSchema },
      },
    },
    async (request, reply) => {
      const product = request.query.sku === undefined ? undefined : catalog.resolve(request.query.sku);
      reply.header("Cache-Control", "public, max-age=60");
      return paymentsMatrix({ config, catalog, hasRoute, suitePricing: deps.suitePricing }, product);
    },
  );
}

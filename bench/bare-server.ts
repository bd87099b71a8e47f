// The peer of bench:http: a bare Fastify route serving given bytes as JSON, nothing else.
// With LOG_REQUESTS=1 it writes the same one-line JSON request log as the service, so the two
// can also be compared at equal logging.
import fs from "node:fs";
import Fastify from "fastify";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/http/logger.js";
import { OneLineRequestLog } from "../src/http/request-log.js";

const body = fs.readFileSync(process.env.BODY_FILE ?? "", "utf8");
const logger = process.env.LOG_REQUESTS === "1" ? createLogger(loadConfig({ LOG_LEVEL: "info" })) : false;
const app = logger
  ? Fastify({ loggerInstance: logger, logController: new OneLineRequestLog(), childLoggerFactory: (l) => l })
  : Fastify();
app.get("/api/x402-products", (_req, reply) => {
  reply.type("application/json; charset=utf-8").send(body);
});
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });

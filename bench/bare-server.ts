// The peer of bench:http: a bare Fastify route serving given bytes as JSON, nothing else.
import fs from "node:fs";
import Fastify from "fastify";

const body = fs.readFileSync(process.env.BODY_FILE ?? "", "utf8");
const app = Fastify();
app.get("/api/x402-products", (_req, reply) => {
  reply.type("application/json; charset=utf-8").send(body);
});
await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });

import http from "node:http";
import type { AddressInfo } from "node:net";
import type { x402Facilitator } from "@x402/core/facilitator";

/**
 * A hosted-style x402 facilitator for tests: the real in-process x402Facilitator behind the
 * standard HTTP API (POST /verify, POST /settle, GET /supported), like the reference example.
 * `beforeSettle` lets a test act between verification and settlement (e.g. the payer draining
 * its balance), so a real settlement fails with HTTP 200 and success:false.
 */
export interface TestFacilitator {
  url: string;
  beforeSettle?: (body: { paymentPayload: unknown; paymentRequirements: unknown }) => Promise<void>;
  calls: { verify: number; settle: number; supported: number };
  stop(): Promise<void>;
}

export async function startHttpFacilitator(facilitator: x402Facilitator): Promise<TestFacilitator> {
  const state: TestFacilitator = {
    url: "",
    calls: { verify: 0, settle: 0, supported: 0 },
    stop: async () => {},
  };
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (d) => {
      raw += String(d);
    });
    req.on("end", async () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
      };
      try {
        if (req.method === "GET" && req.url === "/supported") {
          state.calls.supported++;
          return send(200, facilitator.getSupported());
        }
        const body = JSON.parse(raw || "{}");
        if (req.method === "POST" && req.url === "/verify") {
          state.calls.verify++;
          return send(200, await facilitator.verify(body.paymentPayload, body.paymentRequirements));
        }
        if (req.method === "POST" && req.url === "/settle") {
          state.calls.settle++;
          if (state.beforeSettle) await state.beforeSettle(body);
          return send(200, await facilitator.settle(body.paymentPayload, body.paymentRequirements));
        }
        send(404, { error: "not found" });
      } catch (err) {
        send(500, { error: String(err) });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.stop = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

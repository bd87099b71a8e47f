import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";

/** A 415 names the content type the route takes (issue #23 item 5): JSON routes, raw-byte uploads. */
describe("415 names what the route accepts", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", {});
  });
  afterAll(async () => t?.close());

  it("a JSON route told application/xml answers 415 naming application/json", async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/api/orders/recover/challenge",
      payload: "<chain>base</chain>",
      headers: { "content-type": "application/xml" },
    });
    expect(r.statusCode).toBe(415);
    expect(r.json()).toMatchObject({ code: "unsupported_media_type", accepts: ["application/json"] });
    expect(r.json().detail).toContain("application/json");
  });

  it("a raw upload told application/json answers 415 naming application/octet-stream, not JSON", async () => {
    const r = await t.app.inject({
      method: "PUT",
      url: "/api/jobs/job_aaaaaaaaaaaaaaaaaaaaaaaa/input",
      payload: JSON.stringify({ bytes: "x" }),
      headers: { "content-type": "application/json", authorization: "Bearer jt_x" },
    });
    expect(r.statusCode).toBe(415);
    expect(r.json().accepts).toEqual(["application/octet-stream", "application/offset+octet-stream"]);
    expect(r.json().detail).toContain("application/octet-stream");
    expect(r.json().detail).not.toContain("application/json");
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, testConfig } from "../../src/config.js";
import { infrastructureProblem, toProblem } from "../../src/http/errors.js";

/** Issue #14 "Faults": infrastructure errors become problems with stable codes, not 500s. */

const sysError = (code: string, message = code) => Object.assign(new Error(message), { code });

describe("toProblem for infrastructure faults", () => {
  it.each(["ENOSPC", "EFBIG", "EDQUOT", "SQLITE_FULL"])("%s → 507 insufficient_storage", (code) => {
    const p = toProblem(sysError(code));
    expect(p.status).toBe(507);
    expect(p.code).toBe("insufficient_storage");
    expect(p.title).toBe("Insufficient Storage");
  });

  it.each([
    sysError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"),
    sysError("57P01", "terminating connection due to administrator command"),
    sysError("57P03", "the database system is starting up"),
    sysError("08006", "connection failure"),
    new Error("Connection terminated unexpectedly"),
    new Error("timeout exceeded when trying to connect"),
  ])("PostgreSQL down (%s) → 503 database_unavailable with Retry-After", (err) => {
    const p = toProblem(err);
    expect(p.status).toBe(503);
    expect(p.code).toBe("database_unavailable");
    expect(p.headers["Retry-After"]).toBe("5");
  });

  it("a statement cancelled by the server (57014, DATABASE_STATEMENT_TIMEOUT_SECONDS) → 503 database_timeout", () => {
    const p = toProblem(sysError("57014", "canceling statement due to statement timeout"));
    expect(p.status).toBe(503);
    expect(p.code).toBe("database_timeout");
    expect(p.headers["Retry-After"]).toBe("5");
  });

  it("other errors stay as they were: a unique violation or a plain bug is a 500, a SQL error too", () => {
    expect(infrastructureProblem(sysError("23505", "duplicate key"))).toBeUndefined();
    expect(infrastructureProblem(new TypeError("x is undefined"))).toBeUndefined();
    expect(infrastructureProblem("ENOSPC")).toBeUndefined();
    expect(toProblem(sysError("42P01", 'relation "x" does not exist')).status).toBe(500);
  });
});

describe("DATABASE_STATEMENT_TIMEOUT_SECONDS", () => {
  it("defaults to 30 s, takes 0 (no limit) to 86,400 s, refuses anything else", () => {
    expect(testConfig().statementTimeoutSeconds).toBe(30);
    expect(testConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: "0" }).statementTimeoutSeconds).toBe(0);
    for (const bad of ["-1", "86401", "long"]) {
      expect(() => testConfig({ DATABASE_STATEMENT_TIMEOUT_SECONDS: bad })).toThrow(ConfigError);
    }
  });
});

describe("X402_RPC_TIMEOUT_SECONDS", () => {
  it("defaults to 10 s, takes 1–120 s, refuses anything else", () => {
    expect(testConfig().x402.rpcTimeoutSeconds).toBe(10);
    expect(testConfig({ X402_RPC_TIMEOUT_SECONDS: "3" }).x402.rpcTimeoutSeconds).toBe(3);
    for (const bad of ["0", "121", "soon"]) {
      expect(() => testConfig({ X402_RPC_TIMEOUT_SECONDS: bad })).toThrow(ConfigError);
    }
  });
});

describe("LABPHI_CRASH_AT (src/ops/crash-points.ts)", () => {
  it("is refused at configuration load under NODE_ENV=production, and when it names no crash point", () => {
    expect(() => loadConfig({ NODE_ENV: "production", LABPHI_CRASH_AT: "after_grant" })).toThrow(
      /LABPHI_CRASH_AT: is a fault-test setting and is refused when NODE_ENV=production/,
    );
    expect(() => testConfig({ LABPHI_CRASH_AT: "whenever" })).toThrow(ConfigError);
    expect(() => testConfig({ LABPHI_CRASH_AT: "after_grant" })).not.toThrow();
  });
});

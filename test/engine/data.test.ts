import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64Size, decodeBase64, decodeData, decodeText, encodeOutput } from "../../src/engine/data.js";
import { Problem } from "../../src/http/problem.js";

const code = (fn: () => unknown): string => {
  try {
    fn();
    return "ok";
  } catch (e) {
    return e instanceof Problem ? e.code : "other";
  }
};

describe("data encodings", () => {
  it("decodes any bytes from standard or URL-safe base64, padded or not", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const std = Buffer.from(bytes).toString("base64");
        const url = Buffer.from(bytes).toString("base64url");
        expect(Buffer.from(decodeBase64(std)).equals(Buffer.from(bytes))).toBe(true);
        expect(Buffer.from(decodeBase64(url)).equals(Buffer.from(bytes))).toBe(true);
        expect(Buffer.from(decodeBase64(std.replace(/=+$/, ""))).equals(Buffer.from(bytes))).toBe(true);
        expect(base64Size(std)).toBe(bytes.length);
      }),
    );
  });

  it("refuses what is not canonical base64", () => {
    for (const bad of ["a", "ab=c", "QR==", "QQ=", "!!!!", "QUJD=", "QUJD===", "é"]) {
      expect(
        code(() => decodeBase64(bad)),
        bad,
      ).toBe("bad_base64");
    }
    expect(code(() => decodeBase64("QUJD\nREVG"))).toBe("ok");
  });

  it("keeps text exactly and refuses what UTF-8 cannot carry", () => {
    expect(Buffer.from(decodeText("\ufeffé✓😀")).toString("hex")).toBe("efbbbfc3a9e29c93f09f9880");
    expect(code(() => decodeText("a\udc00b"))).toBe("data_not_utf8");
    expect(encodeOutput(decodeText("\ufeffhi"), "utf8")).toBe("\ufeffhi");
    expect(code(() => encodeOutput(Uint8Array.of(0xc3, 0x28), "utf8"))).toBe("output_not_utf8");
  });

  it("checks the size before decoding", () => {
    let seen = -1;
    const tooLarge = (n: number): never => {
      seen = n;
      throw new Problem(413, "too_large", "x");
    };
    expect(code(() => decodeData("x".repeat(11), "utf8", 10, tooLarge))).toBe("too_large");
    expect(seen).toBe(11);
    expect(code(() => decodeData("éééééé", "utf8", 10, tooLarge))).toBe("too_large");
    expect(seen).toBe(12);
    expect(code(() => decodeData(Buffer.alloc(12).toString("base64"), "base64", 10, tooLarge))).toBe("too_large");
    expect(decodeData("aGk=", "base64", 10, tooLarge)).toEqual(Uint8Array.of(0x68, 0x69));
  });
});

import { describe, expect, it } from "vitest";
import { fieldName, issueSentence, ruleWords, validationSentence } from "../../web/src/_field-words.js";

/** Form errors in plain words (web/src/_field-words.ts, issue #25 item 4). */
describe("form errors in plain words", () => {
  it("names the field from its path, or from the form's label", () => {
    expect(fieldName("/name")).toBe("Name");
    expect(fieldName("/callback_url")).toBe("Callback URL");
    expect(fieldName("/agent_id")).toBe("Agent id");
    expect(fieldName("/dataClass")).toBe("Data class");
    expect(fieldName("/items/0")).toBe("Items (item 1)");
    expect(fieldName("/name", { name: "Display name" })).toBe("Display name");
    expect(fieldName("/")).toBe("The request");
  });

  it("turns zod's rule into what to do", () => {
    expect(ruleWords("Too small: expected string to have >=1 characters")).toBe("enter at least 1 character");
    expect(ruleWords("Too small: expected string to have >=3 characters")).toBe("enter at least 3 characters");
    expect(ruleWords("Too big: expected string to have <=80 characters")).toBe("use at most 80 characters");
    expect(ruleWords("Too small: expected number to be >=1")).toBe("enter a number of at least 1");
    expect(ruleWords("Too big: expected number to be <=336")).toBe("enter a number of at most 336");
    expect(ruleWords("Invalid input: expected string, received undefined")).toBe("fill this in");
    expect(ruleWords("Invalid input: expected number, received string")).toBe("enter a number");
    expect(ruleWords('Invalid option: expected one of "compress"|"decompress"')).toBe(
      "choose one of compress, decompress",
    );
    expect(ruleWords("Invalid email address")).toBe("enter an e-mail address such as name@example.com");
    expect(ruleWords("Invalid URL")).toBe("enter a full web address starting with https://");
    expect(ruleWords("must not contain control characters (U+0000-U+001F, U+007F-U+009F)")).toContain(
      "remove the control characters",
    );
    // an unknown message stays, as a clause
    expect(ruleWords("Something else")).toBe("something else");
  });

  it("reads a validation problem from its errors, else from its detail; other problems are left alone", () => {
    const olympiad = {
      code: "validation_failed",
      detail: "Invalid body/name: Too small: expected string to have >=1 characters.",
      errors: [{ in: "body", path: "/name", message: "Too small: expected string to have >=1 characters" }],
    };
    expect(validationSentence(olympiad)).toBe("Name: enter at least 1 character.");
    expect(validationSentence({ code: olympiad.code, detail: olympiad.detail })).toBe(
      "Name: enter at least 1 character.",
    );
    expect(
      validationSentence({
        code: "invalid_text",
        detail: "Invalid body/email: text must not contain control characters (U+0000-U+001F, U+007F-U+009F).",
      }),
    ).toBe("E-mail: remove the control characters (such as a tab or a line break): plain text only.");
    expect(validationSentence({ code: "unknown_sku", detail: 'No product has the sku or alias "x".' })).toBeUndefined();
    expect(issueSentence({ path: "/", message: "Invalid input" })).toBe("Enter a valid input.");
  });
});

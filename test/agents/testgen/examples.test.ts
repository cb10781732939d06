import { describe, expect, it } from "vitest";
import { assertionFor, exampleCases } from "../../../agents/testgen/examples.js";

/** A doc comment's `value`, as the parser hands it over (between the comment markers). */
const doc = (lines: string[]): string => `*\n${lines.map((l) => ` * ${l}`).join("\n")}\n `;

describe("exampleCases", () => {
  it("turns `// =>`, `// returns` and console.log result comments into assertions", () => {
    const value = doc([
      "Converts to camel case.",
      "@example",
      "```ts",
      'camelCase("foo-bar") // => "fooBar"',
      'camelCase("a_b"); // returns "aB"',
      'console.log(camelCase("x-y")); // "xY"',
      'camelCase("n", { upper: true })',
      '// => ["N", 1]',
      "```",
      "@param s the input",
    ]);
    const cases = exampleCases(value, "camelCase");
    expect(cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      'expect(camelCase("foo-bar")).toBe("fooBar");',
      'expect(camelCase("a_b")).toBe("aB");',
      'expect(camelCase("x-y")).toBe("xY");',
      'expect(camelCase("n", { upper: true })).toEqual(["N", 1]);',
    ]);
    expect(assertionFor(cases[3]!, "node:test", true)).toBe(
      'assert.deepStrictEqual(await camelCase("n", { upper: true }), ["N", 1]);',
    );
  });

  it("undefined, null and NaN get their own matchers; awaited calls stay awaited", () => {
    const value = doc(["@example", "await find(2) // => undefined", "find(0) // => null", "ratio(0, 0) // NaN"]);
    expect(exampleCases(value, "find").map((c) => assertionFor(c, "vitest", true))).toEqual([
      "expect(await find(2)).toBeUndefined();",
      "expect(await find(0)).toBeNull();",
    ]);
    // A bare value after a plain call (not console.log) is not a stated result.
    expect(exampleCases(value, "ratio")).toEqual([]);
  });

  it("skips lines that are not a literal result of a call with literal arguments", () => {
    const value = doc([
      "@example",
      "const user = load() // => a user",
      'greet(user) // => "hi"',
      'greet("a") // => `hi ${name}`',
      'other("a") // => "x"',
      'greet("b") // prints hi',
      'greet(new Date(0)) // => "hi 1970"',
      'Text.greet("c") // => "hi c"',
    ]);
    expect(exampleCases(value, "greet").map((c) => c.call)).toEqual(["greet(new Date(0))"]);
    expect(exampleCases(value, "Text.greet").map((c) => c.call)).toEqual(['Text.greet("c")']);
  });

  it("no @example, no cases; text outside @example blocks is not read", () => {
    expect(exampleCases(doc(["add(1, 2) // => 3", "@returns the sum"]), "add")).toEqual([]);
  });
});

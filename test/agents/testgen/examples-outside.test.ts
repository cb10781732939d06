/**
 * @example styles met on libraries read from outside the corpus (radashi, ufo, remeda, date-fns): each
 * becomes the assertion it states, or is reported with why not.
 */
import { describe, expect, it } from "vitest";
import { assertionFor, printedDates, readDocExamples, readExamples } from "../../../agents/testgen/examples.js";

/** A doc comment's `value`, as the parser hands it over (between the comment markers). */
const doc = (lines: string[]): string => `*\n${lines.map((l) => ` * ${l}`).join("\n")}\n `;
const asserts = (value: string, callee: string, returns?: string): string[] =>
  readExamples(value, callee, returns !== undefined ? { returns } : {}).cases.map((c) =>
    assertionFor(c, "vitest", false),
  );

describe("readExamples: styles of libraries outside the corpus", () => {
  it("drops a remark after the stated value (`// => [1, 2, [3]] // Note: …`)", () => {
    const value = doc([
      "@example",
      "const result = _.concat(1, [2, [3]], null)",
      "// => [1, 2, [3]] // Note: one level",
    ]);
    expect(asserts(value, "concat")).toEqual(["expect(concat(1, [2, [3]], null)).toEqual([1, 2, [3]]);"]);
  });

  it("reads `// yields a, b, c` as what iterating the result gives", () => {
    const value = doc([
      "@example",
      "range(3)                  // yields 0, 1, 2, 3",
      "range(0, 6, i => i, 2)    // yields 0, 2, 4, 6",
    ]);
    expect(asserts(value, "range")).toEqual([
      "expect([...range(3)]).toEqual([0, 1, 2, 3]);",
      "expect([...range(0, 6, i => i, 2)]).toEqual([0, 2, 4, 6]);",
    ]);
  });

  it("never reads a printed list (`// 0, 1, 2, 3`) as one value, nor its first item", () => {
    const value = doc(["@example", "list(3) // 0, 1, 2, 3"]);
    const read = readExamples(value, "list");
    expect(read.cases).toEqual([]);
    expect(read.skipped.map((s) => s.reason)).toEqual([
      "no comment in it states a value of a call of list that a test can write",
    ]);
  });

  it("reads results stated above calls whose arguments hold `//` in a string (`http://…`)", () => {
    const value = doc([
      "@example",
      "// Result: 'filename.ext'",
      'parseFilename("http://example.com/path/to/filename.ext");',
      "",
      "// Result: undefined",
      'parseFilename("/path/to/.hidden-file", { strict: true });',
    ]);
    expect(asserts(value, "parseFilename")).toEqual([
      `expect(parseFilename("http://example.com/path/to/filename.ext")).toBe('filename.ext');`,
      `expect(parseFilename("/path/to/.hidden-file", { strict: true })).toBeUndefined();`,
    ]);
  });

  it("reads an unquoted result of a function that returns a string as that string", () => {
    const value = doc([
      "@example",
      'withHttp("https://example.com"); // http://example.com',
      "",
      "// Result: filename.ext",
      'parseFilename("http://example.com/path/to/filename.ext");',
    ]);
    expect(asserts(value, "withHttp", "string")).toEqual([
      'expect(withHttp("https://example.com")).toBe("http://example.com");',
    ]);
    const parse = doc(["@example", "// Result: filename.ext", 'parseFilename("http://a.com/to/filename.ext");']);
    expect(asserts(parse, "parseFilename", "string | undefined")).toEqual([
      'expect(parseFilename("http://a.com/to/filename.ext")).toBe("filename.ext");',
    ]);
    // A line of ASCII art printed by a function that returns a string is no text to compare.
    const art = doc([
      "@example",
      "const stream = 'abc';",
      "console.log(await getStream(stream));",
      "//     ,,))))));,",
      "//  __)))))))))),",
    ]);
    expect(readExamples(art, "getStream", { returns: "Promise<string>" }).cases).toEqual([]);
    // Without the return type the same words are names the example never defines: reported, not guessed.
    expect(asserts(parse, "parseFilename")).toEqual([]);
    expect(readExamples(parse, "parseFilename").skipped[0]?.reason).toMatch(/`filename\.ext` is not a value/);
    // A function that returns something else keeps its names: `user` of the block stays a reference.
    const other = doc(["@example", "const user = { a: 1 }", "pick(user, 'a') // => user"]);
    expect(asserts(other, "pick", "object")).toEqual([
      "const user = { a: 1 };\nexpect(pick(user, 'a')).toEqual(user);",
    ]);
  });

  it("takes the return type from the signature testgen hands over", () => {
    const value = doc(["@example", "withHttps('http://a.com') // https://a.com"]);
    const read = readDocExamples(value, { name: "withHttps", returns: "string" }, false, false, "withHttps");
    expect(read.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      `expect(withHttps('http://a.com')).toBe("https://a.com");`,
    ]);
  });

  it("reads dates as printed (date-fns) as the `new Date(…)` they show, alone and in arrays", () => {
    const value = doc([
      "@example",
      "// Add 10 days to 1 September 2014:",
      "const result = addDays(new Date(2014, 8, 1), 10)",
      "//=> Thu Sep 11 2014 00:00:00",
      "",
      "const result = endOfMonth(new Date(2014, 8, 2, 11, 55, 0))",
      "//=> Tue Sep 30 2014 23:59:59.999",
      "",
      "const result = each({ start: new Date(2014, 9, 6), end: new Date(2014, 9, 7) })",
      "//=> [",
      "//   Mon Oct 06 2014 00:00:00,",
      "//   Tue Oct 07 2014 00:00:00",
      "// ]",
    ]);
    expect(asserts(value, "addDays")).toEqual([
      "expect(addDays(new Date(2014, 8, 1), 10)).toEqual(new Date(2014, 8, 11, 0, 0, 0));",
    ]);
    expect(asserts(value, "endOfMonth")).toEqual([
      "expect(endOfMonth(new Date(2014, 8, 2, 11, 55, 0))).toEqual(new Date(2014, 8, 30, 23, 59, 59, 999));",
    ]);
    expect(asserts(value, "each")).toEqual([
      "expect(each({ start: new Date(2014, 9, 6), end: new Date(2014, 9, 7) })).toEqual([\n  new Date(2014, 9, 6, 0, 0, 0),\n  new Date(2014, 9, 7, 0, 0, 0)\n]);",
    ]);
    // The instant where the offset is printed; `Invalid Date`; a date inside a string stays a string.
    expect(printedDates("Wed June 16 2021 10:00:00 GMT+0200 (CEST)")).toBe(
      'new Date("Wed June 16 2021 10:00:00 GMT+0200 (CEST)")',
    );
    expect(printedDates("Invalid Date")).toBe("new Date(NaN)");
    expect(printedDates("'Thu Sep 11 2014'")).toBe("'Thu Sep 11 2014'");
    // Years before 100 would be read as 19xx by the constructor: left as printed (not a value).
    expect(printedDates("Tue Jan 01 0075 00:00:00")).toBe("Tue Jan 01 0075 00:00:00");
  });

  it("reads `//=> RangeError: message` as a throw of that class, and a printed error as no throw", () => {
    const value = doc([
      "@example",
      "const result = parse('23 AM', 'HH a', new Date())",
      "//=> RangeError: The format string mustn't contain `HH` and `a` at the same time",
    ]);
    expect(asserts(value, "parse")).toEqual(["expect(() => parse('23 AM', 'HH a', new Date())).toThrow(RangeError);"]);
    const logged = doc(["@example", "console.log(toError('x'))", "// Error: x"]);
    expect(asserts(logged, "toError")).toEqual([`expect(toError('x')).toBe("Error: x");`]);
  });

  it("imports the module's other exports an example reaches through its namespace (`R.multiply`)", () => {
    const value = doc([
      "@example",
      "R.map([1, 2, 3], R.multiply(2)); // => [2, 4, 6]",
      "R.map([0], R.nope(1)); // => [1]",
    ]);
    const read = readExamples(value, "map", { exports: new Set(["map", "multiply"]) });
    expect(read.cases.map((c) => [assertionFor(c, "vitest", false), c.imports])).toEqual([
      ["expect(map([1, 2, 3], multiply(2))).toEqual([2, 4, 6]);", ["multiply"]],
    ]);
    expect(read.skipped.map((s) => s.reason)).toEqual(["it uses `R`, which the example does not define"]);
  });

  it('reads a value followed by a remark in brackets (`"abc" (typed string)`)', () => {
    const value = doc(["@example", "R.join(['a', 'b'], ''); // => \"ab\" (typed `string`)"]);
    expect(asserts(value, "join")).toEqual([`expect(join(['a', 'b'], '')).toBe("ab");`]);
  });

  it("a statement of the example that only uses the module's other exports is no declaration to follow", () => {
    const value = doc(["@example", "reset();", "const n = 2;", "count(n) // => 3"]);
    const read = readExamples(value, "count", { exports: new Set(["count", "reset"]) });
    expect(read.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      "const n = 2;\nexpect(count(n)).toBe(3);",
    ]);
  });

  it("reads an object followed by a remark in brackets (`{ cat: 3 } (typed as …)`)", () => {
    const value = doc([
      "@example",
      'fromKeys(["cat"], len()); // { cat: 3 } (typed as Partial<Record<"cat", number>>)',
    ]);
    const read = readExamples(value, "fromKeys", { exports: new Set(["fromKeys", "len"]) });
    expect(read.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      'expect(fromKeys(["cat"], len())).toEqual({ cat: 3 });',
    ]);
  });

  it("reads `00` arguments, `Thur` days and an unquoted `10/4/2019` of a string function (date-fns)", () => {
    const value = doc([
      "@example",
      "const result = startOfYear(new Date(2014, 8, 2, 11, 55, 00))",
      "//=> Wed Jan 01 2014 00:00:00",
      "",
      "const result = nextThursday(new Date(2020, 2, 22))",
      "//=> Thur Mar 26 2020 00:00:00",
    ]);
    expect(asserts(value, "startOfYear")).toEqual([
      "expect(startOfYear(new Date(2014, 8, 2, 11, 55, 0))).toEqual(new Date(2014, 0, 1, 0, 0, 0));",
    ]);
    expect(asserts(value, "nextThursday")).toEqual([
      "expect(nextThursday(new Date(2020, 2, 22))).toEqual(new Date(2020, 2, 26, 0, 0, 0));",
    ]);
    const intl = doc([
      "@example",
      "const result = intlFormat(new Date(2019, 9, 4, 12, 30, 13, 456))",
      "//=> 10/4/2019",
    ]);
    expect(asserts(intl, "intlFormat", "string")).toEqual([
      'expect(intlFormat(new Date(2019, 9, 4, 12, 30, 13, 456))).toBe("10/4/2019");',
    ]);
    // Not a string function: the stated arithmetic stays what it is.
    expect(asserts(intl, "intlFormat")).toEqual([
      "expect(intlFormat(new Date(2019, 9, 4, 12, 30, 13, 456))).toEqual(10/4/2019);",
    ]);
  });

  it("leaves a result of the example's own random draw, and printed prose that opens with a quote, unasserted", () => {
    const value = doc(["@example", "const fn = once(() => Math.random())", "fn() // 0.5", "fn() // 0.5"]);
    const read = readExamples(value, "once");
    expect(read.cases).toEqual([]);
    expect(read.skipped[0]?.reason).toBe(
      "its result depends on the environment: the example draws a random value (`Math.random`), and states the author's draw",
    );
    const printed = doc([
      "@example",
      'console.log(calc(2, 3)) // "Calculating..." then 5',
      "console.log(calc(1, 1)) // 2",
    ]);
    expect(asserts(printed, "calc")).toEqual(["expect(calc(1, 1)).toBe(2);"]);
  });
});

/**
 * @example blocks as popular libraries write them (lodash, date-fns, ms, pretty-bytes, es-toolkit, remeda,
 * Node's docs), alone and mixed in one block, each turned into the assertion it states or reported with why not.
 */
import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  assertionFor,
  exampleCases,
  readDocExamples,
  readExamples,
  workspaceResolves,
} from "../../../agents/testgen/examples.js";

/** A doc comment's `value`, as the parser hands it over (between the comment markers). */
const doc = (lines: string[]): string => `*\n${lines.map((l) => ` * ${l}`).join("\n")}\n `;
/** A sindresorhus-style doc comment: tab-indented, no `*` gutter. */
const bare = (lines: string[]): string => `*\n${lines.map((l) => `\t${l}`).join("\n")}\n`;
const asserts = (value: string, callee: string, async = false): string[] =>
  exampleCases(value, callee).map((c) => assertionFor(c, "vitest", async));

describe("exampleCases: one style at a time", () => {
  it("`// =>` on the same line or the next (lodash, remeda), through a namespace (`_.chunk`, `R.add`)", () => {
    const value = doc([
      "Creates an array of elements split into groups the length of `size`.",
      "@since 3.0.0",
      "@example",
      "",
      "_.chunk(['a', 'b', 'c', 'd'], 2);",
      "// => [['a', 'b'], ['c', 'd']]",
      "",
      "_.chunk(['a', 'b', 'c', 'd'], 3);",
      "// => [['a', 'b', 'c'], ['d']]",
      "R.chunk([1], 1) // => [[1]]",
    ]);
    expect(asserts(value, "chunk")).toEqual([
      "expect(chunk(['a', 'b', 'c', 'd'], 2)).toEqual([['a', 'b'], ['c', 'd']]);",
      "expect(chunk(['a', 'b', 'c', 'd'], 3)).toEqual([['a', 'b', 'c'], ['d']]);",
      "expect(chunk([1], 1)).toEqual([[1]]);",
    ]);
  });

  it('`fn(x); // value` with the semicolon and a bare value (ms), `// Returns v`, `// returns "v"`, `// → v`', () => {
    const value = doc([
      "@example",
      "ms('2 days')  // 172800000",
      "ms('1d');     // 86400000",
      'ms(60000); // Returns "1m"',
      'ms(-3 * 60000) // returns "-3m"',
      "ms(2 * 60000) // → '2m'",
      "ms('1h') //=> 3600000",
    ]);
    expect(asserts(value, "ms")).toEqual([
      "expect(ms('2 days')).toBe(172800000);",
      "expect(ms('1d')).toBe(86400000);",
      'expect(ms(60000)).toBe("1m");',
      'expect(ms(-3 * 60000)).toBe("-3m");',
      "expect(ms(2 * 60000)).toBe('2m');",
      "expect(ms('1h')).toBe(3600000);",
    ]);
  });

  it("the call alone, the value alone on the next line (pretty-bytes, with import lines and remarks between)", () => {
    const value = bare([
      "Convert bytes to a human readable string: `1337` → `1.34 kB`.",
      "@example",
      "```",
      "import prettyBytes from 'pretty-bytes';",
      "",
      "prettyBytes(1337);",
      "//=> '1.34 kB'",
      "",
      "// Display with units of bits",
      "prettyBytes(1337, {bits: true});",
      "//=> '1.34 kbit'",
      "",
      "prettyBytes(100)",
      "// '100 B'",
      "```",
    ]);
    expect(asserts(value, "prettyBytes")).toEqual([
      "expect(prettyBytes(1337)).toBe('1.34 kB');",
      "expect(prettyBytes(1337, {bits: true})).toBe('1.34 kbit');",
      "expect(prettyBytes(100)).toBe('100 B');",
    ]);
  });

  it("console.log with the output on its line or the next; printed strings need no quotes", () => {
    const value = doc([
      "@example",
      'console.log(slug("Hello World")); // "hello-world"',
      'console.log(slug("A B"))',
      "// a-b",
      'console.log(slug("x"), slug("y")) // x y',
    ]);
    expect(asserts(value, "slug")).toEqual([
      'expect(slug("Hello World")).toBe("hello-world");',
      'expect(slug("A B")).toBe("a-b");',
    ]);
  });

  it("a result over several comment lines (an object, an array), after the call or after console.log", () => {
    const value = doc([
      "@example",
      "parse('a=1&b=2')",
      "// => {",
      "//   a: '1',",
      "//   b: ['2', '3']",
      "// }",
      "console.log(parse('x=1'));",
      "// {",
      "//   x: '1'",
      "// }",
      "parse('')",
      "// => [",
      "//   1,",
      "//   2",
      "// ]",
    ]);
    expect(asserts(value, "parse")).toEqual([
      "expect(parse('a=1&b=2')).toEqual({\n  a: '1',\n  b: ['2', '3']\n});",
      "expect(parse('x=1')).toEqual({\n  x: '1'\n});",
      "expect(parse('')).toEqual([\n  1,\n  2\n]);",
    ]);
  });

  it("arguments that are earlier declarations of the block are repeated in the test (lodash `var users`, es-toolkit)", () => {
    const value = doc([
      "@example",
      "var users = [",
      "  { 'user': 'barney',  'active': false },",
      "  { 'user': 'pebbles', 'active': true }",
      "];",
      "",
      "_.findIndex(users, function(o) { return o.user == 'barney'; });",
      "// => 0",
      "",
      "// The `_.matches` iteratee shorthand.",
      "_.findIndex(users, { 'user': 'pebbles', 'active': true });",
      "// => 1",
    ]);
    const users =
      "let users = [\n  { 'user': 'barney',  'active': false },\n  { 'user': 'pebbles', 'active': true }\n];";
    expect(asserts(value, "findIndex")).toEqual([
      `${users}\nexpect(findIndex(users, function(o) { return o.user == 'barney'; })).toBe(0);`,
      `${users}\nexpect(findIndex(users, { 'user': 'pebbles', 'active': true })).toBe(1);`,
    ]);
    const es = doc([
      "@example",
      "const array = [1, 2, 3, 4, 5];",
      "const size = 2;",
      "const result = chunk(array, size);",
      "// result will be [[1, 2], [3, 4], [5]]",
    ]);
    expect(asserts(es, "chunk")).toEqual([
      "const array = [1, 2, 3, 4, 5];\nconst size = 2;\nexpect(chunk(array, size)).toEqual([[1, 2], [3, 4], [5]]);",
    ]);
  });

  it("a name bound to the call and printed later, an `expect` line in the example, awaited calls, throws", () => {
    const value = doc([
      "@example",
      "const total = await sum([1, 2]);",
      "console.log(total); // 3",
      "expect(sum([])).toBe(0);",
      "sum(null) // throws TypeError",
      "sum([NaN]) // => NaN",
      "sum([undefined]) // => undefined",
    ]);
    expect(asserts(value, "sum")).toEqual([
      "expect(await sum([1, 2])).toBe(3);",
      "expect(sum([])).toBe(0);",
      "expect(() => sum(null)).toThrow(TypeError);",
      "expect(sum([NaN])).toBeNaN();",
      "expect(sum([undefined])).toBeUndefined();",
    ]);
    expect(assertionFor(exampleCases(value, "sum")[2]!, "vitest", true)).toBe(
      "await expect(sum(null)).rejects.toThrow(TypeError);",
    );
    expect(assertionFor(exampleCases(value, "sum")[0]!, "node:test", false)).toBe(
      "assert.equal(await sum([1, 2]), 3);",
    );
  });
});

describe("exampleCases: mixed blocks, and what is not converted", () => {
  it("every style in one block, with prose, other functions and a remark before the result", () => {
    const value = doc([
      "Formats a duration.",
      "@example",
      "```ts",
      "import { fmt } from 'durations';",
      "// Plain numbers are milliseconds:",
      "fmt(1000) // => '1s'",
      "fmt(60000); // '1m'",
      "fmt(0); // Returns '0ms'",
      "const opts = { long: true };",
      "fmt(1000, opts) // with the long form",
      "// → '1 second'",
      "console.log(fmt(2000))",
      "// 2s",
      "other(1) // => 'x'",
      "fmt(3600000, { parts: 2 })",
      "// => ['1h',",
      "//     '0m']",
      "```",
      "@param ms the duration",
    ]);
    expect(asserts(value, "fmt")).toEqual([
      "expect(fmt(1000)).toBe('1s');",
      "expect(fmt(60000)).toBe('1m');",
      "expect(fmt(0)).toBe('0ms');",
      "const opts = { long: true };\nexpect(fmt(1000, opts)).toBe('1 second');",
      'expect(fmt(2000)).toBe("2s");',
      "expect(fmt(3600000, { parts: 2 })).toEqual(['1h',\n    '0m']);",
    ]);
    expect(readExamples(value, "fmt").skipped).toEqual([]);
  });

  it("a stated result that is no value, or an argument the example never defines, is reported with the reason", () => {
    const value = doc([
      "@example",
      "// Add 10 days to 1 September 2014:",
      "const result = addDays(new Date(2014, 8, 1), 10)",
      "//=> Thu Sep 11 2014 00:00:00",
      "addDays(date, 1) // => '2014-09-02'",
      "addDays(new Date(0), 0) // => new Date(0)",
      "addDays(new Date(0), 1) // does not touch its argument",
    ]);
    const r = readExamples(value, "addDays");
    // A date as printed is the `new Date(…)` it shows (see examples-outside.test.ts).
    expect(r.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      "expect(addDays(new Date(2014, 8, 1), 10)).toEqual(new Date(2014, 8, 11, 0, 0, 0));",
      "expect(addDays(new Date(0), 0)).toEqual(new Date(0));",
    ]);
    expect(r.skipped).toEqual([
      { line: 6, code: "addDays(date, 1)", reason: "it uses `date`, which the example does not define" },
    ]);
  });

  it("static methods through their class (renamed on import); instance methods are noted, not asserted", () => {
    const value = doc(["@example", 'Text.greet("c") // => "hi c"', 'greet("d") // => "hi d"']);
    const s = readDocExamples(value, { name: "greet", class: "Text" }, true, true, "Texts");
    expect(s.cases.map((c) => c.call)).toEqual(['Texts.greet("c")']);
    const inst = readDocExamples(
      doc(["@example", "const t = new Text();", 't.greet("c") // => "hi c"']),
      { name: "greet", class: "Text" },
      true,
      false,
      "Text",
    );
    expect(inst.cases).toEqual([]);
    expect(inst.notes).toEqual([
      "@example of Text.greet not asserted: the receiver of an instance method's example is not known",
    ]);
    // A function exported under another name is called by that name.
    expect(
      readDocExamples(doc(["@example", "add(1, 2) // => 3"]), { name: "add" }, false, false, "plus").cases[0]!.call,
    ).toBe("plus(1, 2)");
  });

  it("no @example, no cases; text outside @example blocks is not read", () => {
    expect(exampleCases(doc(["add(1, 2) // => 3", "@returns the sum"]), "add")).toEqual([]);
  });
});

describe("exampleCases: expressions around the call", () => {
  it("a method called on the result, or the call inside another value's method; a match compared as its strings (ansi-regex)", () => {
    const value = bare([
      "@example",
      "```",
      "import ansiRegex from 'ansi-regex';",
      "",
      "ansiRegex().test('\\u001B[4mcake\\u001B[0m');",
      "//=> true",
      "",
      "'\\u001B[4mcake\\u001B[0m'.match(ansiRegex({onlyFirst: true}));",
      "//=> ['\\u001B[4m']",
      "```",
    ]);
    expect(asserts(value, "ansiRegex")).toEqual([
      "expect(ansiRegex().test('\\u001B[4mcake\\u001B[0m')).toBe(true);",
      "expect([...'\\u001B[4mcake\\u001B[0m'.match(ansiRegex({onlyFirst: true}))]).toEqual(['\\u001B[4m']);",
    ]);
  });

  it("printed output stated as alternatives (figures) is no single value: not asserted", () => {
    const value = doc([
      "@example",
      "console.log(replaceSymbols('✔ check'));",
      "// On terminals with Unicode symbols:  ✔ check",
      "// On other terminals:                 √ check",
    ]);
    expect(asserts(value, "replaceSymbols")).toEqual([]);
  });

  it("alternatives that all state the same output are that one value (figures with `useFallback`)", () => {
    const value = doc([
      "@example",
      "console.log(replaceSymbols('✔ check', {useFallback: true}));",
      "// On terminals with Unicode symbols:  √ check",
      "// On other terminals:                 √ check",
    ]);
    expect(asserts(value, "replaceSymbols")).toEqual([
      `expect(replaceSymbols('✔ check', {useFallback: true})).toBe("√ check");`,
    ]);
  });
});

describe("exampleCases: state the example builds, imports, and async wrappers", () => {
  it("a call of what the function returned, after the statements that changed the state (onetime)", () => {
    const value = bare([
      "@example",
      "```",
      "import onetime from 'onetime';",
      "let index = 0;",
      "const foo = onetime(() => ++index);",
      "foo(); //=> 1",
      "foo(); //=> 1",
      "```",
    ]);
    expect(asserts(value, "onetime")).toEqual([
      "let index = 0;\nconst foo = onetime(() => ++index);\nexpect(foo()).toBe(1);",
    ]);
    const count = bare([
      "@example",
      "const foo = onetime(() => {});",
      "foo();",
      "foo();",
      "foo();",
      "console.log(onetime.callCount(foo));",
      "//=> 3",
    ]);
    expect(asserts(count, "onetime.callCount")).toEqual([
      "const foo = onetime(() => {});\nfoo();\nfoo();\nfoo();\nexpect(onetime.callCount(foo)).toBe(3);",
    ]);
  });

  it("what the function did to its arguments, read after the call (mimic-function), with function declarations", () => {
    const value = bare([
      "@example",
      "function foo() {}",
      "foo.unicorn = '🦄';",
      "function wrapper() {",
      "\treturn foo();",
      "}",
      "console.log(wrapper.name);",
      "//=> 'wrapper'",
      "mimicFunction(wrapper, foo);",
      "console.log(wrapper.name);",
      "//=> 'foo'",
    ]);
    const [c] = asserts(value, "mimicFunction");
    expect(asserts(value, "mimicFunction")).toHaveLength(1);
    expect(c).toContain("function foo() {}\nfoo.unicorn = '🦄';\nfunction wrapper() {");
    expect(c).toMatch(/mimicFunction\(wrapper, foo\);\nexpect\(wrapper\.name\)\.toBe\('foo'\);$/);
  });

  it("a Node built-in without side effects is imported by the test; other imports are reported", () => {
    const value = bare([
      "@example",
      "import fs from 'node:fs';",
      "import {Duplex as DuplexStream} from 'node:stream';",
      "import {runInNewContext} from 'node:vm';",
      "import {execSync} from 'node:child_process';",
      "import StringifyStream from 'streaming-json-stringify';",
      "isStream(new DuplexStream());",
      "//=> true",
      "isStream(runInNewContext('({})'));",
      "//=> false",
      "isStream(execSync('ls'));",
      "//=> false",
      "isStream(StringifyStream());",
      "//=> true",
    ]);
    const read = readExamples(value, "isStream");
    expect(read.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      'const { Duplex: DuplexStream } = await import("node:stream");\nexpect(isStream(new DuplexStream())).toBe(true);',
      "const { runInNewContext } = await import(\"node:vm\");\nexpect(isStream(runInNewContext('({})'))).toBe(false);",
    ]);
    expect(read.cases.every((c) => c.asyncSetup)).toBe(true);
    expect(read.skipped.map((s) => s.reason)).toEqual([
      "it uses `execSync` (from `node:child_process`, a Node built-in with side effects), which the test does not import",
      "it uses `StringifyStream` (from `streaming-json-stringify`, a package the workspace does not have), which the test does not import",
    ]);
  });

  it("a package the workspace resolves is imported as the example imports it (import, import = require, require)", () => {
    const value = bare([
      "@example",
      "import StringifyStream from 'streaming-json-stringify';",
      "import pathExists = require('path-exists');",
      "const {join: j} = require('@scope/paths');",
      "import helper from './helper';",
      "isStream(StringifyStream());",
      "//=> true",
      "isStream(pathExists);",
      "//=> false",
      "isStream(j);",
      "//=> false",
      "isStream(helper());",
      "//=> false",
    ]);
    const installed = new Set(["streaming-json-stringify", "path-exists", "@scope/paths"]);
    const read = readExamples(value, "isStream", { resolves: (spec) => installed.has(spec) });
    expect(read.cases.map((c) => c.setup)).toEqual([
      ['const { default: StringifyStream } = await import("streaming-json-stringify");'],
      ['const { default: pathExists } = await import("path-exists");'],
      ['const { join: j } = await import("@scope/paths");'],
    ]);
    expect(read.skipped).toMatchObject([
      {
        code: "isStream(helper());",
        reason: "it uses `helper` (from `./helper`, a file of the author's project), which the test does not import",
      },
    ]);
  });

  it("workspaceResolves: a package is resolved when the workspace's node_modules has it", () => {
    const root = mkdtempSync(join(tmpdir(), "testgen-resolves-"));
    try {
      mkdirSync(join(root, "node_modules", "path-exists"), { recursive: true });
      writeFileSync(join(root, "node_modules", "path-exists", "package.json"), "{}");
      mkdirSync(join(root, "node_modules", "@s", "p"), { recursive: true });
      writeFileSync(join(root, "node_modules", "@s", "p", "package.json"), "{}");
      const resolves = workspaceResolves(root);
      expect(["path-exists", "path-exists/sub", "@s/p", "@s/q", "p-locate", "./path-exists"].map(resolves)).toEqual([
        true,
        true,
        true,
        false,
        false,
        false,
      ]);
      expect(workspaceResolves(undefined)("path-exists")).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("node:fs: a read stream of a path gets an error listener; writes, other reads and misspelt names are reported", () => {
    const value = bare([
      "@example",
      "import fs from 'node:fs';",
      "import {createReadStream} from 'node:fs';",
      "isStream(fs.createReadStream('unicorn.png'));",
      "//=> true",
      "isStream(createReadStream('a.txt'));",
      "//=> true",
      "isWritableStream(fs.createWriteStream('unicorn.txt'));",
      "//=> true",
      "isWritableStream(fs.createWriteStrem('unicorn.txt'));",
      "//=> true",
      "isStream(fs.readFileSync('unicorn.png'));",
      "//=> false",
    ]);
    const stream = readExamples(value, "isStream");
    expect(stream.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      'const { default: fs } = await import("node:fs");\nexpect(isStream(fs.createReadStream(\'unicorn.png\').once("error", () => {}))).toBe(true);',
      'const { createReadStream } = await import("node:fs");\nexpect(isStream(createReadStream(\'a.txt\').once("error", () => {}))).toBe(true);',
    ]);
    expect(stream.skipped.map((s) => s.reason)).toEqual([
      "it reads the file system (`fs.readFileSync`): the result depends on the files of the author's machine",
    ]);
    const writable = readExamples(value, "isWritableStream");
    expect(writable.cases).toEqual([]);
    expect(writable.skipped.map((s) => s.reason)).toEqual([
      "it writes files (`fs.createWriteStream`), outside a temp dir",
      "`fs.createWriteStrem` is not in `node:fs` (a typo in the example?)",
    ]);
  });

  it("a call whose comment is no value a test can write is reported, not dropped (get-stream, execa)", () => {
    const art = bare([
      "@example",
      "```",
      "const stream = fs.createReadStream('unicorn.txt');",
      "console.log(await getStream(stream));",
      "//               ,,))))))));,",
      "//            __)))))))))))))),",
      "```",
    ]);
    expect(readExamples(art, "getStream").cases).toEqual([]);
    expect(readExamples(art, "getStream").skipped.map((s) => [s.code, s.reason])).toContainEqual([
      "console.log(await getStream(stream));",
      "no comment in it states a value of a call of getStream that a test can write",
    ]);
    const tagged = bare([
      "@example",
      "```",
      "const {stdout} = await execa`npm run build`;",
      "// Print command's output",
      "```",
    ]);
    expect(readExamples(tagged, "execa").skipped.map((s) => s.reason)).toEqual([
      "no comment in it states a value of a call of execa that a test can write",
    ]);
    // A call nobody comments on is plain usage: nothing to report.
    expect(readExamples(bare(["@example", "```", "run(execa`ls`);", "```"]), "execa").skipped).toEqual([]);
  });

  it("`console(x)` followed by a result is read as printing x (locate-path)", () => {
    const value = bare([
      "@example",
      "(async () => {",
      "\tconsole(await first(['a', 'b']));",
      "\t//=> 'a'",
      "})();",
      "console(last(['a', 'b']));",
    ]);
    expect(asserts(value, "first")).toEqual(["expect(await first(['a', 'b'])).toBe('a');"]);
    expect(readExamples(value, "last")).toEqual({ cases: [], skipped: [] });
  });

  it("a RegExp match is compared as its matched strings; other calls showing arrays are not", () => {
    const value = doc([
      "@example",
      "re().exec('ab') // => ['a']",
      "'ab'.match(re()) // => null",
      "split('a-b', '-') // => ['a', 'b']",
    ]);
    expect(asserts(value, "re")).toEqual([
      "expect([...re().exec('ab')]).toEqual(['a']);",
      "expect('ab'.match(re())).toBeNull();",
    ]);
    expect(asserts(value, "split")).toEqual(["expect(split('a-b', '-')).toEqual(['a', 'b']);"]);
  });

  it("a result stated for the author's command line, process, paths or files is reported, not asserted", () => {
    const command = bare([
      "@example",
      "// $ ts-node foo.ts -f --unicorn",
      "import hasFlag = require('has-flag');",
      "hasFlag('unicorn');",
      "//=> true",
    ]);
    expect(readExamples(command, "hasFlag")).toEqual({
      cases: [],
      skipped: [
        {
          line: 5,
          code: "hasFlag('unicorn');",
          reason:
            "the example runs as the command `ts-node foo.ts -f --unicorn`: its results depend on that command line",
        },
      ],
    });
    const state = doc([
      "@example",
      "resolve(process.cwd(), 'a') // => '/Users/me/a'",
      "resolve('/x', 'a') // => '/x/a'",
    ]);
    const read = readExamples(state, "resolve");
    expect(read.cases.map((c) => c.call)).toEqual(["resolve('/x', 'a')"]);
    expect(read.skipped.map((s) => s.reason)).toEqual([
      "it reads `process.cwd`: the result depends on the environment the example ran in",
    ]);
    const paths = doc([
      "@example",
      "findUp('unicorn.png') // => '/Users/sindresorhus/unicorn.png'",
      "findUp('a.png', {cwd: '/Users/me'}) // => '/Users/me/a.png'",
      "findUp('a.png', {cwd: 'C:\\\\Users\\\\me'}) // => 'C:\\\\Users\\\\me\\\\a.png'",
      "runPath() // => '/home/u/node_modules/.bin:/usr/bin'",
      "rootDirectory('/Users/x/y') // => '/'",
      "rootDirectory('dir/x.png') // => '.'",
    ]);
    expect(readExamples(paths, "findUp").skipped.map((s) => s.reason)).toEqual([
      "it states a path under `/Users/sindresorhus`, a directory of the author's machine",
      "it names the Windows path `C:\\Users\\me`: the result depends on the platform, and this is not Windows",
    ]);
    // A path the arguments name is the function's to compute.
    expect(asserts(paths, "findUp")).toEqual(["expect(findUp('a.png', {cwd: '/Users/me'})).toBe('/Users/me/a.png');"]);
    expect(readExamples(paths, "runPath").skipped.map((s) => s.reason)).toEqual([
      "it states a path under `/home/u`, a directory of the author's machine",
    ]);
    // A file name is only the author's file where the example says the files are on disk.
    expect(asserts(paths, "rootDirectory")).toEqual([
      "expect(rootDirectory('/Users/x/y')).toBe('/');",
      "expect(rootDirectory('dir/x.png')).toBe('.');",
    ]);
    const files = bare([
      "@example",
      "const files = [",
      "\t'unicorn.png',",
      "\t'rainbow.png', // Only this one actually exists on disk",
      "];",
      "console.log(locate(files));",
      "//=> 'rainbow.png'",
    ]);
    expect(readExamples(files, "locate").skipped.map((s) => s.reason)).toEqual([
      "it names `unicorn.png`, a file the example has on the author's disk",
    ]);
    const header = bare(["@example", "// foo.ts", "console.log(exists('foo.ts'));", "//=> true"]);
    expect(readExamples(header, "exists").skipped.map((s) => s.reason)).toEqual([
      "it names `foo.ts`, a file the example has on the author's disk",
    ]);
  });

  it("a function that reads its environment (the caller says which) has its stated results reported", () => {
    const value = bare(["@example", "isInteractive();", "//=> true"]);
    expect(asserts(value, "isInteractive")).toEqual(["expect(isInteractive()).toBe(true);"]);
    expect(readExamples(value, "isInteractive", { environment: "a stream's isTTY" })).toEqual({
      cases: [],
      skipped: [
        {
          line: 3,
          code: "isInteractive();",
          reason:
            "its result depends on the environment: the function reads a stream's isTTY, and the example states the author's",
        },
      ],
    });
  });

  it("an async IIFE around the example is read as the block; a result inside a function is reported", () => {
    const value = bare([
      "@example",
      "const files = ['a.png', 'b.png'];",
      "(async () => {",
      "\tconsole.log(await first(files));",
      "\t//=> 'a.png'",
      "})();",
      "function unicorn() {",
      "\tconsole.log(first(files));",
      "\t//=> 'a.png'",
      "}",
    ]);
    const read = readExamples(value, "first");
    expect(read.cases.map((c) => assertionFor(c, "vitest", false))).toEqual([
      "const files = ['a.png', 'b.png'];\nexpect(await first(files)).toBe('a.png');",
    ]);
    expect(read.skipped).toMatchObject([{ reason: expect.stringContaining("inside a function or block") }]);
  });

  it("results stated of other expressions than the call (a stream's chunks, what a callback set) are reported", () => {
    const value = bare([
      "@example",
      "const stream = mergeStreams([streamA, streamB]);",
      "for await (const chunk of stream) {",
      "\tconsole.log(chunk);",
      "\t//=> 'A1'",
      "}",
    ]);
    // The loop's values are what iterating the result gives, but the streams are the author's.
    expect(readExamples(value, "mergeStreams")).toMatchObject({
      cases: [],
      skipped: [{ line: 4, reason: "it uses `streamA`, `streamB`, which the example does not define" }],
    });
  });

  it("a bare result comment inside a callback of the example is reported too (hono)", () => {
    const value = doc([
      "@example",
      "app.use('*', (c, next) => {",
      "  console.log(routePath(c)) // '*'",
      "  return next()",
      "})",
      "app.get('/', (c) => c.text(routePath(c)))",
    ]);
    expect(readExamples(value, "routePath")).toMatchObject({
      cases: [],
      skipped: [
        {
          line: 3,
          reason: "the call is inside a function or block of the example: its result depends on how that code runs",
        },
      ],
    });
  });
});

describe("exampleCases: results in callbacks, promises, loops, and the module's other exports", () => {
  const one = (lines: string[], callee = "fetchIt", exports?: string[]): string[] =>
    readExamples(doc(["@example", ...lines]), callee, exports ? { exports: new Set(exports) } : {}).cases.map((c) =>
      assertionFor(c, "vitest", false),
    );

  it("a promise's result: `.then(r => console.log(r)) // v`, `.then(console.log)`, a `.then` body, `await`", () => {
    expect(one(["fetchIt(2).then(r => console.log(r)) // 4"])).toEqual(["expect(await fetchIt(2)).toBe(4);"]);
    expect(one(["fetchIt(2).then(console.log);", "//=> 4"])).toEqual(["expect(await fetchIt(2)).toBe(4);"]);
    expect(one(["fetchIt('a').then((r) => {", "  console.log(r); // { a: 1 }", "});"])).toEqual([
      "expect(await fetchIt('a')).toEqual({ a: 1 });",
    ]);
    expect(one(["const r = await fetchIt(2);", "r // 4"])).toEqual(["expect(await fetchIt(2)).toBe(4);"]);
  });

  it("Node's callback `(err, r) => …` becomes a promise of r; a body of comments alone states r", () => {
    const settle = "(err, result) => (err ? reject(err) : resolve(result))";
    expect(one(["fetchIt('a', 2, (err, r) => {", "  console.log(r); // 4", "});"])).toEqual([
      `expect(await new Promise((resolve, reject) => fetchIt('a', 2, ${settle}))).toBe(4);`,
    ]);
    expect(one(["fetchIt(2, function (error, data) {", "  // data is 'four'", "});"])).toEqual([
      `expect(await new Promise((resolve, reject) => fetchIt(2, ${settle}))).toBe('four');`,
    ]);
    expect(one(["fetchIt(2, (err, r) => { /* r is [1, 2] */ });"])).toEqual([
      `expect(await new Promise((resolve, reject) => fetchIt(2, ${settle}))).toEqual([1, 2]);`,
    ]);
    // A callback that is not Node's (one parameter) is the function's input, not its result.
    expect(one(["fetchIt([1], (x) => {", "  console.log(x); // 1", "});"])).toEqual([]);
  });

  it("`// => Promise<v>`, `// Promise { v }`, `// resolves to v` state the awaited value; `Promise<void>` states none", () => {
    expect(one(["fetchIt(2) // => Promise<4>"])).toEqual(["expect(await fetchIt(2)).toBe(4);"]);
    expect(one(["fetchIt(2); // Promise { 'a' }"])).toEqual(["expect(await fetchIt(2)).toBe('a');"]);
    expect(one(["fetchIt(2) // resolves to [1, 2]"])).toEqual(["expect(await fetchIt(2)).toEqual([1, 2]);"]);
    const read = readExamples(doc(["@example", "fetchIt(2) // => Promise<void>"]), "fetchIt");
    expect(read.cases).toEqual([]);
    expect(read.skipped).toMatchObject([{ reason: expect.stringContaining("not a value a test can write") }]);
  });

  it("what the block computes from the result, after several statements: properties, destructuring, arithmetic", () => {
    expect(one(["const a = fetchIt(2);", "a.b // 4", "console.log(a.c.length); // 2"])).toEqual([
      "const a = fetchIt(2);\nexpect(a.b).toBe(4);",
      "const a = fetchIt(2);\nexpect(a.c.length).toBe(2);",
    ]);
    expect(one(["const {x, y} = fetchIt(2);", "x //=> 1", "const sum = x + y;", "sum; // => 3"])).toEqual([
      "const {x, y} = fetchIt(2);\nexpect(x).toBe(1);",
      "const {x, y} = fetchIt(2);\nconst sum = x + y;\nexpect(sum).toBe(3);",
    ]);
    const awaited = readExamples(doc(["@example", "const r = await fetchIt(2);", "r.size // 3"]), "fetchIt").cases;
    expect(awaited).toMatchObject([{ call: "r.size", setup: ["const r = await fetchIt(2);"], asyncSetup: true }]);
  });

  it("node:assert lines written in the example: `assert.strictEqual`, `assert.deepStrictEqual`, `assert.equal`", () => {
    expect(
      one([
        "assert.strictEqual(fetchIt(1), 'a');",
        "assert.deepStrictEqual(await fetchIt(2), [2]);",
        "assert.equal(fetchIt(3), null);",
      ]),
    ).toEqual([
      "expect(fetchIt(1)).toBe('a');",
      "expect(await fetchIt(2)).toEqual([2]);",
      "expect(fetchIt(3)).toBeNull();",
    ]);
  });

  it("`//=>` without a space, `// returns: v`, `// output: v`, a trailing block comment, a template literal over lines", () => {
    expect(
      one(["fetchIt(1) //=> 1", "fetchIt(2) // returns: 2", "fetchIt(3) // output: 3", "fetchIt(4) /* => 4 */"]),
    ).toEqual([
      "expect(fetchIt(1)).toBe(1);",
      "expect(fetchIt(2)).toBe(2);",
      "expect(fetchIt(3)).toBe(3);",
      "expect(fetchIt(4)).toBe(4);",
    ]);
    expect(one(["fetchIt('a\\nb')", "// => `a", "//   b`"])).toEqual(["expect(fetchIt('a\\nb')).toBe(`a\n  b`);"]);
  });

  it("a loop that prints each value the result yields (unicorn-magic's traversePathUp), sync and `for await`", () => {
    const value = bare([
      "@example",
      "import {traversePathUp} from 'unicorn-magic';",
      "",
      "for (const directory of traversePathUp('/Users/x/y')) {",
      "\tconsole.log(directory);",
      "\t//=> '/Users/x/y'",
      "\t//=> '/Users/x'",
      "}",
    ]);
    expect(exampleCases(value, "traversePathUp").map((c) => assertionFor(c, "vitest", false))).toEqual([
      "expect([...traversePathUp('/Users/x/y')]).toEqual(['/Users/x/y', '/Users/x']);",
    ]);
    expect(one(["for await (const n of fetchIt(2)) {", "  console.log(n);", "  // => 1", "  // => 2", "}"])).toEqual([
      "expect(await (async () => { const all = []; for await (const item of fetchIt(2)) all.push(item); return all; })()).toEqual([1, 2]);",
    ]);
    // A loop that stops early shows less than the result yields: not asserted.
    expect(one(["for (const n of fetchIt(2)) {", "  if (n > 1) break;", "  console.log(n); // 1", "}"])).toEqual([]);
  });

  it("other exports of the module the example uses unimported are imported by the test (node-llama-cpp)", () => {
    const value = doc(["@example", "LlamaLogLevelGreaterThan(LlamaLogLevel.error, LlamaLogLevel.info); // true"]);
    const read = readExamples(value, "LlamaLogLevelGreaterThan", {
      exports: new Set(["LlamaLogLevel", "LlamaLogLevelGreaterThan", "other"]),
    });
    expect(read.cases).toMatchObject([
      {
        call: "LlamaLogLevelGreaterThan(LlamaLogLevel.error, LlamaLogLevel.info)",
        expected: "true",
        imports: ["LlamaLogLevel"],
      },
    ]);
    // Without the module's exports, the name is undefined; a name the block declares shadows the export.
    expect(readExamples(value, "LlamaLogLevelGreaterThan").skipped).toMatchObject([
      { reason: "it uses `LlamaLogLevel`, which the example does not define" },
    ]);
    const shadow = ["const Level = { a: 1 };", "fetchIt(Level.a) // 2"];
    expect(readExamples(doc(["@example", ...shadow]), "fetchIt", { exports: new Set(["Level"]) }).cases).toMatchObject([
      { setup: ["const Level = { a: 1 };"] },
    ]);
    expect(
      readExamples(doc(["@example", ...shadow]), "fetchIt", { exports: new Set(["Level"]) }).cases[0],
    ).not.toHaveProperty("imports");
  });

  it("every stating block not asserted says why: a home path inside a function, remarks on other code only", () => {
    const callsites = bare([
      "@example",
      "function unicorn() {",
      "\tconsole.log(callsites()[0].getFileName());",
      "\t//=> '/Users/sindresorhus/dev/callsites/test.js'",
      "}",
    ]);
    expect(readExamples(callsites, "callsites").skipped).toMatchObject([
      { line: 3, reason: "it states a path under `/Users/sindresorhus`, a directory of the author's machine" },
    ]);
    const hono = doc([
      "@example",
      "app.use(requestId())",
      "app.get('/', (c) => {",
      "  console.log(c.get('requestId')) // Debug",
      "  return c.text('Hello World!')",
      "})",
    ]);
    expect(readExamples(hono, "requestId")).toEqual({
      cases: [],
      skipped: [
        {
          line: 3,
          code: "app.use(requestId())",
          reason: "its comments are on other code than the call of requestId: none states the call's result",
        },
      ],
    });
  });

  it("a result of the example's own function around the call, timed by the example, is reported (lifecycle-utils)", () => {
    const value = doc([
      "@example",
      "const scope = {};",
      "async function getValue() {",
      "  return await withSingleFlight([scope, 'k'], async () => 1);",
      "}",
      "const first = getValue();",
      "console.log(await first); // 1",
    ]);
    expect(readExamples(value, "withSingleFlight").skipped).toEqual([
      {
        line: 8,
        code: "console.log(await first);",
        reason:
          "the result it states is of `console.log(await first);`, not of a call of withSingleFlight the test can make: `first` is what the example's own `getValue` returned, run as the example times it",
      },
    ]);
  });
});

describe("exampleCases: values as authors punctuate them, and state changed after the call", () => {
  it("a sentence's full stop after the value is no part of it (`// result will be true.`)", () => {
    const value = doc([
      "@example",
      "const result = inRange(3, 5); // result will be true.",
      "const result2 = inRange(5, 5); // result2 will be false.",
      "clamp(12, 10) // => 10.",
    ]);
    expect(asserts(value, "inRange")).toEqual([
      "expect(inRange(3, 5)).toBe(true);",
      "expect(inRange(5, 5)).toBe(false);",
    ]);
    expect(asserts(value, "clamp")).toEqual(["expect(clamp(12, 10)).toBe(10);"]);
  });

  it("a stated string whose backslashes escape nothing keeps them, as the author printed it", () => {
    const value = doc([
      "@example",
      "escapeRe('[a](b.c)'); // returns '\\[a\\]\\(b\\.c\\)'",
      "escapeRe('a\\nb'); // => 'a\\nb'",
    ]);
    expect(asserts(value, "escapeRe")).toEqual([
      "expect(escapeRe('[a](b.c)')).toBe('\\\\[a\\\\]\\\\(b\\\\.c\\\\)');",
      "expect(escapeRe('a\\nb')).toBe('a\\nb');",
    ]);
  });

  it("a value read after a statement changed the call's argument is the bound name, set up in the block's order", () => {
    const value = doc([
      "@example",
      "const arr = [1, { a: 1 }];",
      "const copy = cloneDeep(arr);",
      "arr[1].a = 2;",
      "console.log(copy); // [1, { a: 1 }]",
      "console.log(copy === arr); // false",
    ]);
    const setup = "const arr = [1, { a: 1 }];\nconst copy = cloneDeep(arr);\narr[1].a = 2;\n";
    expect(asserts(value, "cloneDeep")).toEqual([
      `${setup}expect(copy).toEqual([1, { a: 1 }]);`,
      `${setup}expect(copy === arr).toBe(false);`,
    ]);
  });

  it("a stated value that makes a new symbol is reported; typed arrays, Proxy, Blob and Buffer are globals", () => {
    const value = doc([
      "@example",
      "invert({ a: Symbol('s') }); // { [Symbol('s')]: 'a' }",
      "isFunction(Proxy); // true",
      "isFunction(Int8Array); // true",
      "const b = new Blob();",
      "console.log(isFunction(b)); // false",
    ]);
    expect(asserts(value, "invert")).toEqual([]);
    expect(readExamples(value, "invert").skipped).toEqual([
      {
        line: 3,
        code: "invert({ a: Symbol('s') });",
        reason: "the stated result makes a new symbol (`Symbol('s')`): no result is equal to it",
      },
    ]);
    expect(asserts(value, "isFunction")).toEqual([
      "expect(isFunction(Proxy)).toBe(true);",
      "expect(isFunction(Int8Array)).toBe(true);",
      "const b = new Blob();\nexpect(isFunction(b)).toBe(false);",
    ]);
  });
});

describe("exampleCases: results stated above the call", () => {
  it("a marked result on the line above each call is that call's (es-toolkit `// Returns [0, 1, 2, 3]`)", () => {
    const value = doc(["@example", "// Returns [0, 1, 2, 3]", "range(4);", "// Returns [1, 2, 3]", "range(1, 4);"]);
    expect(asserts(value, "range")).toEqual([
      "expect(range(4)).toEqual([0, 1, 2, 3]);",
      "expect(range(1, 4)).toEqual([1, 2, 3]);",
    ]);
  });

  it("a heading above a call whose result follows it is no result: the comment below is read", () => {
    const value = doc([
      "@example",
      "// Clone an array",
      "clone([1]);",
      "// => [1]",
      "// Returns a copy",
      "clone([]) // => []",
    ]);
    expect(asserts(value, "clone")).toEqual(["expect(clone([1])).toEqual([1]);", "expect(clone([])).toEqual([]);"]);
  });
});

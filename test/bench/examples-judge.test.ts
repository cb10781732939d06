/**
 * The eval's own judgement of which @example states a result (bench/eval/examples-real.ts), apart from
 * the reader it measures: comments on code that uses the call, or a value that flows from it, count;
 * comments on other code and prose do not.
 */
import { describe, expect, it } from "vitest";
import { statesResult } from "../../bench/eval/examples-real.js";

describe("statesResult", () => {
  it("a result comment on the call, below it, on a printed call, or on what flows from it", () => {
    expect(statesResult("add(1, 2) // => 3", "add")).toBe(true);
    expect(statesResult("add(1, 2);\n// 3", "add")).toBe(true);
    expect(statesResult("const r = inRange(3, 5); // result will be true.", "inRange")).toBe(true);
    expect(statesResult("console.log(kebab('a b')) // a-b", "kebab")).toBe(true);
    expect(
      statesResult("const s = merge([a, b]);\nfor await (const c of s) {\n  console.log(c);\n  //=> 'A1'\n}", "merge"),
    ).toBe(true);
    expect(statesResult("let done = false;\nrun(() => { done = true; });\nconsole.log(done); // true", "run")).toBe(
      true,
    );
    expect(
      statesResult("async function get() { return once(f); }\nconst a = get();\nconsole.log(await a); // 1", "once"),
    ).toBe(true);
  });

  it("a result above the call that opens its lines, and what the function did to a name it was given", () => {
    expect(statesResult("// Returns [0, 1, 2, 3]\nrange(4);", "range")).toBe(true);
    expect(statesResult("mimic(wrapper, foo);\nconsole.log(wrapper.name);\n//=> 'foo'", "mimic")).toBe(true);
    expect(statesResult("x.run();\n// => 1\nadd(1, 2);", "add")).toBe(false);
  });

  it("a call through the module as a namespace, not a method of a value", () => {
    expect(statesResult("R.add(1, 2) // => 3", "add")).toBe(true);
    expect(statesResult("_.chunk([1, 2], 1);\n// => [[1], [2]]", "chunk")).toBe(true);
    expect(statesResult("list.add(1) // => 3", "add")).toBe(false);
  });

  it("prose, bullets, an option's comment and a handler's log state nothing of the function", () => {
    expect(statesResult("app.post('/u', bodyLimit({\n  maxSize: 50 * 1024, // 50kb\n}))", "bodyLimit")).toBe(false);
    expect(
      statesResult(
        "app.use(requestId())\napp.get('/', (c) => {\n  console.log(c.get('requestId')) // Debug\n})",
        "requestId",
      ),
    ).toBe(false);
    expect(statesResult("const f = { id: make(['*.js']) },\n// The handler is called for:\n// - foo.js", "make")).toBe(
      false,
    );
    expect(
      statesResult(
        "const {stdout} = await execa`npm run build`;\n// Print command's output\nconsole.log(stdout);",
        "execa",
      ),
    ).toBe(false);
    expect(
      statesResult("console.log(stdout);\n// Output of `npm run build | sort`\nconsole.log(other);", "stdout"),
    ).toBe(false);
    expect(statesResult("add(1, 2); // adds the numbers", "add")).toBe(false);
  });
});

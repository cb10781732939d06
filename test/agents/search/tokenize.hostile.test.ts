/**
 * Search under hostile input: tokenizing is linear (a run of capitals once took quadratic time and
 * blocked the agent), and over-long queries and globs that could backtrack get a clear 400.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_QUERY_CHARS, checkGlobs } from "../../../agents/search/handler.js";
import { splitIdentifier } from "../../../agents/search/tokenize.js";
import { SEARCH, copyFixture, startAgent, type RunningAgent } from "../code-helpers.js";

describe("tokenizer", () => {
  it(
    "splits a million capitals followed by a word in linear time (quadratic took minutes)",
    { timeout: 10_000 },
    () => {
      const parts = splitIdentifier(`${"A".repeat(1_000_000)}Bc`);
      expect(parts).toHaveLength(2);
      expect(parts[0]).toHaveLength(1_000_000);
      expect(parts[1]).toBe("Bc");
      expect(splitIdentifier("HTTPServerXMLParser")).toEqual(["HTTP", "Server", "XML", "Parser"]);
    },
  );
});

describe("glob bounds", () => {
  it("accepts ordinary globs", () => {
    expect(() => checkGlobs(["src/**", "**/*.test.ts", "lib/*foo*.ts", "{src,test}/**/*.ts"])).not.toThrow();
  });
  it("refuses many stars in a segment, extglobs, long globs and too many globs, naming the glob", () => {
    expect(() => checkGlobs(["**/*a*a*a*a*a*a*a*b"])).toThrow(
      /"\*\*\/\*a\*a\*a\*a\*a\*a\*a\*b" has 8 '\*' in the segment/,
    );
    expect(() => checkGlobs(["+(a|aa)+(a|aa)"])).toThrow(/extglob/);
    expect(() => checkGlobs(["a".repeat(300)])).toThrow(/300 characters; the limit is 256/);
    expect(() => checkGlobs(Array.from({ length: 40 }, (_, i) => `d${i}/**`))).toThrow(/one glob too many/);
  });
});

describe("agent-search refuses what it cannot answer quickly", () => {
  let agent: RunningAgent;
  let w: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    w = copyFixture("pool-workspace");
    agent = await startAgent(SEARCH);
  });
  afterAll(async () => {
    await agent.stop();
    w.cleanup();
  });

  it("an over-long query: 400 AIP_ERR_INVALID_FIELD naming the limit", async () => {
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "A".repeat(200_000) },
      constraints: {},
    });
    expect(res.error).toMatchObject({
      type: "AIP_ERR_INVALID_FIELD",
      status: 400,
      detail: `context.query is 200000 characters; the limit is ${MAX_QUERY_CHARS}`,
    });
  });

  it("a backtracking glob: 400 naming it; the agent goes on serving", async () => {
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "pool" },
      constraints: { paths: ["**/*a*a*a*a*a*a*a*b"] },
    });
    expect(res.error).toMatchObject({ type: "AIP_ERR_INVALID_FIELD", status: 400 });
    expect(res.error.detail).toContain("constraints.paths");
    const ok = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "pool" },
      constraints: { paths: ["orchestrator/**"] },
    });
    expect(ok.status).toBe("success");
  });

  it("a file holding a 200,000-capital identifier is indexed and searched", async () => {
    writeFileSync(join(w.dir, "shout.ts"), `export const ${"Q".repeat(200_000)}Zed = 1;\n`);
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "zed" },
      constraints: { refresh_ms: 0 },
    });
    expect(res.status).toBe("success");
    expect(res.payload.hits.map((h: { path: string }) => h.path)).toContain("shout.ts");
  });
});

import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IndexRegistry } from "../../../agents/search/registry.js";
import { runConformance, type Sample } from "../../../tools/conformance/kit.js";
import { conformanceSuite } from "../../conformance.js";
import { ROOT } from "../../helpers.js";
import { SEARCH, copyFixture, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

/** The pool fixture in a temp dir, plus what must never be found: ignored, binary and oversized files. */
function poolWorkspace(): { dir: string; cleanup: () => void } {
  const w = copyFixture("pool-workspace");
  mkdirSync(join(w.dir, "generated"));
  writeFileSync(
    join(w.dir, "generated/pool-adaptive-grow.ts"),
    "/** adaptive pool grow, adaptive pool grow */\nexport function adaptivePoolGrow(): void {}\n",
  );
  writeFileSync(join(w.dir, "debug.log"), "adaptive pool grow adaptive pool grow\n");
  writeFileSync(
    join(w.dir, "src/blob.ts"),
    Buffer.concat([Buffer.from("adaptive pool grow "), Buffer.from([0, 1, 2])]),
  );
  return w;
}

const paths = (res: Json): string[] => (res.payload.hits as { path: string }[]).map((h) => h.path);

let conformanceWorkspace: { dir: string; cleanup: () => void } | undefined;
conformanceSuite(
  "agent-search conformance",
  () => {
    conformanceWorkspace = poolWorkspace();
    // The request docs/agents.md tells users to run the kit with, on this suite's workspace.
    const shipped = JSON.parse(readFileSync(join(ROOT, "manifests/requests/search.json"), "utf8")) as Sample;
    return runConformance(SEARCH, undefined, {
      ...shipped,
      context: { ...shipped.context, workspace_root: conformanceWorkspace.dir },
    });
  },
  () => conformanceWorkspace?.cleanup(),
);

describe("agent-search", () => {
  let agent: RunningAgent;
  let w: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    w = poolWorkspace();
    agent = await startAgent(SEARCH);
  });
  afterAll(async () => {
    await agent.stop();
    w.cleanup();
  });

  it('"adaptive pool grow" ranks the pool source first; ignored, binary files never appear', async () => {
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "adaptive pool grow" },
      constraints: {},
    });
    expect(res.status).toBe("success");
    const hits = res.payload.hits as Json[];
    expect(hits[0]).toMatchObject({
      path: "orchestrator/pool.ts",
      symbol: "AdaptivePool",
      kind: "class",
      line_start: 8,
      line_end: 15,
    });
    expect(hits[0]!.snippet).toContain("Adaptive sizing: grow by one");
    expect(hits.slice(0, 3)).toContainEqual(
      expect.objectContaining({
        path: "orchestrator/pool.ts",
        symbol: "grow",
        kind: "method",
        line_start: 16,
        line_end: 24,
      }),
    );
    expect(hits[0]!.score).toBeGreaterThan(hits[hits.length - 1]!.score);
    for (const p of paths(res)) expect(p).not.toMatch(/generated|debug\.log|blob/);
    expect(res.payload.index).toMatchObject({ files: 6, refreshed: { added: 6, skipped: 1 } });
  });

  it("definitions outrank mentions of the same words", async () => {
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "ThreadPool" },
      constraints: {},
    });
    expect(res.payload.hits[0]).toMatchObject({ path: "lib/thread-pool.ts", symbol: "ThreadPool", kind: "class" });
  });

  it("splits identifiers: camelCase, snake_case and digits", async () => {
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "grow buffer" },
      constraints: { limit: 1 },
    });
    expect(res.payload.hits).toEqual([expect.objectContaining({ path: "src/grow-buffer.ts", symbol: "growBuffer" })]);
    const p95 = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "p95 ms" },
      constraints: { limit: 3 },
    });
    expect(paths(p95)[0]).toBe("orchestrator/pool.ts");
  });

  it("filters by path globs and languages; finds Markdown headings", async () => {
    const md = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "pool queue" },
      constraints: { languages: ["markdown"] },
    });
    expect(md.payload.hits[0]).toMatchObject({ path: "docs/pool.md", kind: "heading" });
    expect(paths(md).every((p) => p.endsWith(".md"))).toBe(true);
    const lib = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "pool" },
      constraints: { paths: ["lib/**"] },
    });
    expect([...new Set(paths(lib))]).toEqual(["lib/thread-pool.ts"]);
  });

  it("refreshes incrementally by size and mtime: changed, added and deleted files", async () => {
    const q = (query: string): Promise<Json> =>
      agent.invoke({ action: "search", context: { workspace_root: w.dir, query }, constraints: { refresh_ms: 0 } });
    expect((await q("zebracorn")).payload.hits).toEqual([]);
    writeFileSync(join(w.dir, "lib/thread-pool.ts"), "/** Zebracorn threads. */\nexport class ThreadPool {}\n");
    utimesSync(join(w.dir, "lib/thread-pool.ts"), new Date(), new Date(Date.now() + 5_000));
    writeFileSync(join(w.dir, "src/new.ts"), "export function zebracornHelper(): void {}\n");
    const after = await q("zebracorn");
    expect(after.payload.index.refreshed).toMatchObject({ added: 1, changed: 1, removed: 0 });
    expect(paths(after).sort()).toEqual(["lib/thread-pool.ts", "src/new.ts"]);
    rmSync(join(w.dir, "src/new.ts"));
    const gone = await q("zebracorn");
    expect(gone.payload.index.refreshed).toMatchObject({ added: 0, changed: 0, removed: 1 });
    expect(paths(gone)).toEqual(["lib/thread-pool.ts"]);
  });

  it("on this repo: a query for the path-containment predicate finds protocol/util/paths.ts among the first three", async () => {
    const res = await agent.invoke({
      action: "search",
      context: { workspace_root: ROOT, query: "path containment predicate" },
      constraints: { paths: ["protocol/**", "agents/**"], limit: 5 },
    });
    // Among the first three: this repository changes under the test, and "path" is in every other file.
    const hit = (res.payload.hits as Json[]).slice(0, 3).find((h) => h.path === "protocol/util/paths.ts");
    expect(hit).toMatchObject({ line_start: 1 });
  });

  it("names missing and invalid fields", async () => {
    const noRoot = await agent.invoke({ action: "search", context: { query: "x" }, constraints: {} });
    expect(noRoot.error).toMatchObject({ type: "AIP_ERR_MISSING_FIELD", fields: ["context.workspace_root"] });
    const noQuery = await agent.invoke({ action: "search", context: { workspace_root: w.dir }, constraints: {} });
    expect(noQuery.error).toMatchObject({ type: "AIP_ERR_MISSING_FIELD", fields: ["context.query"] });
    const empty = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "  " },
      constraints: {},
    });
    expect(empty.error.detail).toBe('context.query: expected a non-empty string, got "  "');
    const limit = await agent.invoke({
      action: "search",
      context: { workspace_root: w.dir, query: "x" },
      constraints: { limit: 0 },
    });
    expect(limit.error.type).toBe("AIP_ERR_INVALID_FIELD");
    const missing = await agent.invoke({
      action: "search",
      context: { workspace_root: join(w.dir, "nope"), query: "x" },
      constraints: {},
    });
    expect(missing.error.detail).toMatch(/context\.workspace_root .* does not exist/);
  });
});

describe("IndexRegistry", () => {
  it("keeps one index per workspace and evicts the least recently used", async () => {
    const a = copyFixture("pool-workspace");
    const b = copyFixture("pool-workspace");
    try {
      const reg = new IndexRegistry({ maxWorkspaces: 1 });
      const first = await reg.get(a.dir, 60_000);
      expect(first.refreshed?.added).toBe(5);
      expect((await reg.get(a.dir, 60_000)).refreshed).toBeUndefined(); // fresh: no rescan
      await reg.get(b.dir, 60_000);
      expect(reg.roots()).toEqual([b.dir]);
      expect((await reg.get(a.dir, 60_000)).refreshed?.added).toBe(5); // evicted: rebuilt
    } finally {
      a.cleanup();
      b.cleanup();
    }
  });

  it("concurrent first requests share one build", async () => {
    const a = copyFixture("pool-workspace");
    try {
      const reg = new IndexRegistry();
      const [x, y] = await Promise.all([reg.get(a.dir, 0), reg.get(a.dir, 0)]);
      expect(x.index).toBe(y.index);
      expect(x.refreshed).toBe(y.refreshed);
      expect(x.index.builds).toBe(1);
    } finally {
      a.cleanup();
    }
  });
});

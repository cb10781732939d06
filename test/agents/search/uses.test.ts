/** search's `uses` field across files (docs/agents.md "search"): a definition is found by the words of its callers in other files, and the incremental index keeps them right. */
import { rmSync, utimesSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importedNames, moduleKey, reexports, specifierKey } from "../../../agents/search/imports.js";
import { runQuery } from "../../../agents/search/query.js";
import { WorkspaceIndex } from "../../../agents/search/workspace-index.js";
import { tempDir } from "../../helpers.js";

describe("importedNames", () => {
  it("reduces relative specifiers to module keys (extension and index dropped; bare specifiers left out)", () => {
    expect(moduleKey("source/core/retry-timing.ts")).toBe("source/core/retry-timing");
    expect(moduleKey("src/utils/index.ts")).toBe("src/utils");
    expect(moduleKey("index.d.ts")).toBe("");
    expect(specifierKey("source/core/Ky.ts", "./retry-timing.js")).toBe("source/core/retry-timing");
    expect(specifierKey("source/core/Ky.ts", "../utils/index.js")).toBe("source/utils");
    expect(specifierKey("source/core/Ky.ts", "../utils")).toBe("source/utils");
    expect(specifierKey("a.ts", "../outside.js")).toBeUndefined();
    expect(specifierKey("a.ts", "node:path")).toBeUndefined();
  });

  it("reads named imports (wrapped, renamed), default imports, destructured requires; not types or namespaces", () => {
    const names = importedNames("src/a.ts", [
      'import { delay, timeout as withTimeout, type Options } from "./utils/delay.js";',
      "import {",
      "  mergeHeaders,",
      "  deepMerge as merge,",
      '} from "../lib/merge";',
      'import type { Hooks } from "./hooks.js";',
      'import Ky from "./Ky.js";',
      'import * as ns from "./ns.js";',
      'import retry, { stop } from "./retry.js";',
      'import defaultLib from "some-package";',
      'import { readFile } from "node:fs";',
      'const { parse, format: fmt } = require("./dates");',
    ]);
    expect(Object.fromEntries([...names].map(([local, t]) => [local, `${t.key}#${t.name}`]))).toEqual({
      delay: "src/utils/delay#delay",
      withTimeout: "src/utils/delay#timeout",
      mergeHeaders: "lib/merge#mergeHeaders",
      merge: "lib/merge#deepMerge",
      Ky: "src/Ky#default",
      retry: "src/retry#default",
      stop: "src/retry#stop",
      parse: "src/dates#parse",
      fmt: "src/dates#format",
    });
  });
});

describe("reexports", () => {
  it("reads a barrel's named re-exports (wrapped, renamed) and export *; not types, namespaces or local clauses", () => {
    const rx = reexports("src/lib/index.ts", [
      'export { nextWait, pause as sleep, type Options } from "./timing.js";',
      "export {",
      "  deepMerge as merge,",
      '} from "../merge";',
      'export * from "./more.js";',
      'export * as ns from "./ns.js";',
      'export type { Hooks } from "./hooks.js";',
      'export { readFile } from "node:fs";',
      "export { local };",
    ]);
    expect(Object.fromEntries([...rx.named].map(([name, t]) => [name, `${t.key}#${t.name}`]))).toEqual({
      nextWait: "src/lib/timing#nextWait",
      sleep: "src/lib/timing#pause",
      merge: "src/merge#deepMerge",
    });
    expect(rx.stars).toEqual(["src/lib/more"]);
  });
});

describe("uses: calls through a barrel", () => {
  let ws: { dir: string; cleanup: () => void };
  let index: WorkspaceIndex;
  let tick = 0;
  const write = (rel: string, lines: string[]): void => {
    const abs = join(ws.dir, rel);
    writeFileSync(abs, lines.join("\n"));
    const t = new Date(Date.UTC(2026, 0, 1, 0, 0, ++tick));
    utimesSync(abs, t, t);
  };
  const ranked = (q: string): string[] => runQuery(index, q, { limit: 5 }).map((h) => `${h.path}#${h.symbol ?? ""}`);
  const barrel = ['export { nextWait as wait } from "./timing.js";', 'export * from "./more.js";', ""];

  beforeAll(async () => {
    ws = tempDir("aips-barrel-");
    mkdirSync(join(ws.dir, "src/lib"), { recursive: true });
    mkdirSync(join(ws.dir, "test"), { recursive: true });
    write("src/lib/timing.ts", ["export function nextWait(n: number): number {", "  return n * 2;", "}", ""]);
    write("src/lib/more.ts", ["export function tally(n: number): number {", "  return n + 1;", "}", ""]);
    write("src/lib/index.ts", barrel);
    write("src/app.ts", [
      'import { wait, tally } from "./lib";',
      "export function run(): number {",
      "  const backoffMs = wait(1);",
      "  const votesCast = tally(2);",
      "  return backoffMs + votesCast;",
      "}",
      "",
    ]);
    // A test calling through the package's barrel: its words are a test's, not a use.
    write("test/app.test.ts", ['import { tally } from "../src/lib";', "const flakyProbe = tally(3);", ""]);
    index = new WorkspaceIndex(ws.dir);
    await index.refresh();
  });
  afterAll(() => ws.cleanup());

  it("a call through a named re-export (renamed) or an export * reaches the definition", () => {
    expect(ranked("backoff")[0]).toBe("src/lib/timing.ts#nextWait");
    expect(ranked("votes")[0]).toBe("src/lib/more.ts#tally");
    expect(ranked("flaky")).not.toContain("src/lib/more.ts#tally");
  });

  it("the barrel edited or removed takes the words away, and added back brings them again", async () => {
    write("src/lib/index.ts", ['export { nextWait as wait } from "./timing.js";', ""]);
    await index.refresh();
    expect(ranked("votes")).not.toContain("src/lib/more.ts#tally");
    expect(ranked("backoff")[0]).toBe("src/lib/timing.ts#nextWait");
    rmSync(join(ws.dir, "src/lib/index.ts"));
    await index.refresh();
    expect(ranked("backoff")).not.toContain("src/lib/timing.ts#nextWait");
    write("src/lib/index.ts", barrel);
    await index.refresh();
    expect(ranked("backoff")[0]).toBe("src/lib/timing.ts#nextWait");
    expect(ranked("votes")[0]).toBe("src/lib/more.ts#tally");
  });
});

describe("uses: call sites in other files", () => {
  let ws: { dir: string; cleanup: () => void };
  let index: WorkspaceIndex;
  let tick = 0;
  /** Write a file with an mtime that differs from its last one, so a refresh sees the change. */
  const write = (rel: string, lines: string[]): void => {
    const abs = join(ws.dir, rel);
    writeFileSync(abs, lines.join("\n"));
    const t = new Date(Date.UTC(2026, 0, 1, 0, 0, ++tick));
    utimesSync(abs, t, t);
  };
  const ranked = (q: string): string[] => runQuery(index, q, { limit: 5 }).map((h) => `${h.path}#${h.symbol ?? ""}`);

  beforeAll(async () => {
    ws = tempDir("aips-uses-");
    mkdirSync(join(ws.dir, "src/core"), { recursive: true });
    // Neither name nor body of nextWait says backoff or jitter; its callers in another file do.
    write("src/timing.ts", [
      "export function nextWait(attempt: number): number {",
      "  return 2 ** attempt * 100;",
      "}",
      "",
      "export function pause(ms: number): number {",
      "  return ms;",
      "}",
      "",
    ]);
    write("src/core/client.ts", [
      'import { nextWait, pause as sleepFor } from "../timing.js";',
      "",
      "export function send(attempt: number): number {",
      "  const backoffMs = nextWait(attempt);",
      "  return sleepFor(backoffMs);",
      "}",
      "",
    ]);
    index = new WorkspaceIndex(ws.dir);
    await index.refresh();
  });
  afterAll(() => ws.cleanup());

  it("finds a definition by the variable another file stores its result in, and by the calling function", () => {
    expect(ranked("backoff")[0]).toBe("src/timing.ts#nextWait");
    // A renamed import: `sleepFor` is timing.ts's pause, called from send.
    expect(ranked("send")).toContain("src/timing.ts#pause");
  });

  it("a caller edited in another file updates the callee's uses words (and only the callee's)", async () => {
    write("src/core/client.ts", [
      'import { nextWait } from "../timing.js";',
      "",
      "export function send(attempt: number): number {",
      "  const jitteredDelay = nextWait(attempt);",
      "  return jitteredDelay;",
      "}",
      "",
    ]);
    const stats = await index.refresh();
    expect(stats.changed).toBe(1);
    expect(ranked("jittered")[0]).toBe("src/timing.ts#nextWait");
    expect(ranked("backoff")).not.toContain("src/timing.ts#nextWait");
    // pause is no longer imported: its `send` word left with the call.
    expect(ranked("send")).not.toContain("src/timing.ts#pause");
  });

  it("the callee's file re-indexed keeps the words of its callers, and a deleted caller takes them away", async () => {
    write("src/timing.ts", [
      "/** Milliseconds to wait. */",
      "export function nextWait(attempt: number): number {",
      "  return 3 ** attempt * 100;",
      "}",
      "",
    ]);
    await index.refresh();
    expect(ranked("jittered")[0]).toBe("src/timing.ts#nextWait");
    rmSync(join(ws.dir, "src/core/client.ts"));
    const stats = await index.refresh();
    expect(stats.removed).toBe(1);
    expect(ranked("jittered")).toEqual([]);
  });

  it("a default export is found by the words of the files that call it through a default import", async () => {
    write("src/wait.ts", ["export default function wait(ms: number): number {", "  return ms;", "}", ""]);
    write("src/named.ts", [
      "function settle(ms: number): number {",
      "  return ms;",
      "}",
      "",
      "export default settle;",
      "",
    ]);
    write("src/core/poll.ts", [
      'import wait from "../wait.js";',
      'import pauseFor, { type Ms } from "../named";',
      "export function poll(): number {",
      "  const heartbeatGap = wait(5);",
      "  const drainGap = pauseFor(1);",
      "  return heartbeatGap + drainGap;",
      "}",
      "",
    ]);
    await index.refresh();
    expect(ranked("heartbeat")[0]).toBe("src/wait.ts#wait");
    // `export default settle;` names the default export; the caller's local name differs.
    expect(ranked("drain")[0]).toBe("src/named.ts#settle");
    // The caller edited away: its words leave the default export.
    write("src/core/poll.ts", [
      'import wait from "../wait.js";',
      "export function poll(): number {",
      "  return 0;",
      "}",
      "",
    ]);
    await index.refresh();
    expect(ranked("heartbeat")).not.toContain("src/wait.ts#wait");
  });

  it("a caller added later reaches a definition indexed before it", async () => {
    write("src/core/late.ts", [
      'import { nextWait } from "../timing";',
      "export function schedule(): number {",
      "  const cooldownMs = nextWait(2);",
      "  return cooldownMs;",
      "}",
      "",
    ]);
    const stats = await index.refresh();
    expect(stats.added).toBe(1);
    expect(ranked("cooldown")[0]).toBe("src/timing.ts#nextWait");
  });
});

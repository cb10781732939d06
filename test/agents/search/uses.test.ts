/** search's `uses` field across files (docs/agents.md "search"): a definition is found by the words of its callers in other files, and the incremental index keeps them right. */
import { rmSync, utimesSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importedNames, moduleKey, specifierKey } from "../../../agents/search/imports.js";
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

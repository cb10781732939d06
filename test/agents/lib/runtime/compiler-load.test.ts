/**
 * When a code agent loads the TypeScript compiler, seen from outside through a `node -r` hook that logs
 * every require of it: never for `--manifest` or a one-shot refusal (what vetting and the conformance kit
 * run, many times per agent), before the socket exists in listen mode (so that no request pays for it
 * inside its deadline), with the converter; what can wait (`warmLater`) is warmed once the first
 * readiness probe is answered.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { httpRequest, invokeHttp, waitForSocket } from "../../../../protocol/transport/client.js";
import { typescriptLoaded } from "../../../../agents/lib/code/typescript.js";
import { warmParser } from "../../../../agents/lib/code/parse.js";
import { ParseCache } from "../../../../agents/lib/code/cache.js";
import { defaultOptions } from "../../../../agents/lib/code/project.js";
import { TypedEngine } from "../../../../agents/lib/completion/engine.js";
import "../../../../agents/lib/code/service.js";
import "../../../../agents/lib/diagnose/check.js";
import "../../../../agents/testgen/verify.js";
import { DIST, ROOT, ndjsonSession, tempDir } from "../../../helpers.js";

const HOOK = join(ROOT, "test/fixtures/agents/require-log.cjs");
const CODE_AGENTS = ["summarize", "testgen", "complete-lite", "complete", "diagnose"];
const ACTION: Record<string, string> = { "complete-lite": "complete", complete: "complete" };
const LIMIT = 1024 * 1024;

/** What the hook logged: one line per require of the compiler (empty when there was none). */
const required = (log: string): string => (existsSync(log) ? readFileSync(log, "utf8") : "");

/** Run `agent` once under the hook with `args` and `stdin`; its stdout and what the hook logged. */
function runHooked(agent: string, args: string[], stdin: string, log: string): Promise<{ out: string; ts: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ["-r", HOOK, join(DIST, `agents/${agent}/main.js`), ...args],
      { env: { ...process.env, AIP_MODEL: "", REQUIRE_LOG: log }, maxBuffer: 8 << 20 },
      (err, stdout) => (err ? reject(err) : resolve({ out: stdout, ts: required(log) })),
    );
    child.stdin!.end(stdin);
  });
}

/** An agent serving `sock` under the hook, with its log events as they come. */
function listenHooked(
  agent: string,
  sock: string,
  env: Record<string, string>,
): { child: ChildProcess; events: string[]; event(name: string): Promise<void> } {
  const child = spawn(process.execPath, ["-r", HOOK, join(DIST, `agents/${agent}/main.js`), "--listen", sock], {
    env: { ...process.env, AIP_MODEL: "", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const events: string[] = [];
  let onEvent = (): void => undefined;
  createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      events.push(String((JSON.parse(line) as { event?: unknown }).event));
      onEvent();
    } catch {
      // not a log line
    }
  });
  const event = (name: string): Promise<void> =>
    new Promise((resolve) => {
      onEvent = () => events.includes(name) && resolve();
      onEvent();
    });
  return { child, events, event };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

describe("the compiler, loaded on first use", () => {
  it("is not loaded by importing the modules that use it, and is by the first parse", () => {
    new ParseCache();
    new TypedEngine();
    expect(typescriptLoaded()).toBe(false);
    warmParser();
    expect(typescriptLoaded()).toBe(true);
    expect(defaultOptions()).toMatchObject({ strict: true, noEmit: true, target: 9 });
  });

  /** The one-shot refusals, each with the error it must get: what vetting and the conformance kit send. */
  const refusals = (agent: string): [string, string, string][] => [
    ["empty stdin", "", "AIP_ERR_INVALID_JSON"],
    ["a broken object", "{", "AIP_ERR_INVALID_JSON"],
    ["no fields", "{}", "AIP_ERR_MISSING_FIELD"],
    [
      "a wrong type",
      JSON.stringify({ action: ACTION[agent] ?? agent, context: "x", constraints: {} }),
      "AIP_ERR_INVALID_FIELD",
    ],
    ["an unknown action", JSON.stringify({ action: "frobnicate", context: {}, constraints: {} }), "AIP_ERR_NO_ROUTE"],
    ["a body over the limit", " ".repeat(LIMIT + 1), "AIP_ERR_PAYLOAD_TOO_LARGE"],
  ];

  async function expectRefusedWithoutCompiler(agent: string, which: string[], dir: string): Promise<void> {
    const chosen = refusals(agent).filter(([name]) => which.includes(name));
    expect(chosen).toHaveLength(which.length);
    for (const [name, stdin, type] of chosen) {
      const r = await runHooked(agent, [], stdin, join(dir, `${name.replaceAll(" ", "-")}.log`));
      expect(JSON.parse(r.out)).toMatchObject({ status: "error", error: { type } });
      expect(r.ts, `${agent} loaded the compiler answering ${name} (${type})`).toBe("");
    }
  }

  // What an agent imports decides whether the compiler loads before any request: --manifest shows it. The
  // refusals all go through the shared runtime before any handler, so every agent gets the one that goes
  // furthest (its action's contract), and one agent gets them all.
  it.each(CODE_AGENTS)(
    "agent-%s answers --manifest and a refusal of its action's contract without loading it",
    async (agent) => {
      const t = tempDir("aipcl-");
      try {
        const manifest = await runHooked(agent, ["--manifest"], "", join(t.dir, "manifest.log"));
        expect(JSON.parse(manifest.out)).toMatchObject({ name: agent });
        expect(manifest.ts).toBe("");
        await expectRefusedWithoutCompiler(agent, ["a wrong type"], t.dir);
      } finally {
        t.cleanup();
      }
    },
    120_000,
  );

  it("agent-complete-lite answers every one-shot refusal without loading it", async () => {
    const t = tempDir("aipcl-");
    try {
      await expectRefusedWithoutCompiler(
        "complete-lite",
        ["empty stdin", "a broken object", "no fields", "an unknown action", "a body over the limit"],
        t.dir,
      );
    } finally {
      t.cleanup();
    }
  }, 120_000);

  it("is loaded by a one-shot request that parses TypeScript (the hook sees it)", async () => {
    const t = tempDir("aipcl-");
    try {
      const r = await runHooked(
        "summarize",
        [],
        JSON.stringify({
          action: "summarize",
          context: {
            source_code: "export function twice(n: number): number {\n  return 2 * n;\n}\n",
            language: "typescript",
          },
          constraints: { timeout_ms: 60_000 },
        }),
        join(t.dir, "served.log"),
      );
      expect(JSON.parse(r.out)).toMatchObject({ status: "success" });
      expect(r.ts).toMatch(/^typescript main .*agents\/lib\/code\/typescript\.js/);
    } finally {
      t.cleanup();
    }
  }, 120_000);

  it("is loaded by agent-complete-lite before its socket exists, and its first requests are answered", async () => {
    const t = tempDir("aipcl-");
    const sock = join(t.dir, "c.sock");
    const log = join(t.dir, "require.log");
    writeFileSync(join(t.dir, "a.ts"), "export const alpha = 1;\nexport const beta = al;\n");
    const agent = listenHooked("complete-lite", sock, { AIP_WORKSPACE_ROOTS: t.dir, REQUIRE_LOG: log });
    try {
      await waitForSocket(sock, 60_000);
      // Before any request: the socket exists only once the compiler is loaded, by the preload step.
      const before = required(log);
      expect(before).toMatch(/^typescript main .*agents\/lib\/code\/typescript\.js/);
      const session = await ndjsonSession(sock);
      try {
        const answers = await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            session.send({
              action: "complete",
              context: { workspace_root: t.dir, file_path: "a.ts", cursor: { line: 2, column: 22 } },
              // The deadline is the test's patience, not a measure: the loaded compiler is asserted above.
              constraints: { timeout_ms: 60_000 },
              trace_id: `first-${i}`,
            }),
          ),
        );
        for (const a of answers)
          expect(a, JSON.stringify(a.error)).toMatchObject({
            status: "success",
            payload: { items: [{ label: "alpha" }] },
          });
      } finally {
        session.close();
      }
      // The requests loaded no second copy in the main thread (the checker's worker loads its own).
      expect(
        required(log)
          .split("\n")
          .filter((l) => l.startsWith("typescript main")),
      ).toEqual([before.trim()]);
      expect(agent.events.indexOf("preloaded")).toBeGreaterThan(-1);
      expect(agent.events.indexOf("preloaded")).toBeLessThan(agent.events.indexOf("ready"));
    } finally {
      await stop(agent.child);
      t.cleanup();
    }
  }, 120_000);

  it("warms agent-testgen's prettier once its first /healthz is answered, once, and the agent answers as before", async () => {
    const t = tempDir("aipwl-");
    const sock = join(t.dir, "t.sock");
    const agent = listenHooked("testgen", sock, { AIP_WORKSPACE_ROOTS: t.dir });
    const { events, event } = agent;
    try {
      await waitForSocket(sock, 60_000);
      await event("ready");
      expect(events.indexOf("preloaded")).toBeLessThan(events.indexOf("ready"));
      expect(events).not.toContain("warmed_later");
      expect((await httpRequest(sock, { path: "/healthz", timeoutMs: 60_000 })).status).toBe(200);
      await event("warmed_later");
      expect((await httpRequest(sock, { path: "/healthz", timeoutMs: 60_000 })).status).toBe(200);
      const answer = await invokeHttp(sock, {
        action: "testgen",
        constraints: { function: "twice", timeout_ms: 60_000 },
        context: {
          source_code: "export function twice(n: number): number {\n  return 2 * n;\n}\n",
          file_path: "a.ts",
          language: "typescript",
        },
      });
      expect(answer).toMatchObject({ status: 200, json: { payload: { test_path: "a.test.ts", framework: "vitest" } } });
      expect(String((answer.json.payload as { content?: unknown }).content)).toContain('import { twice } from "./a";');
      expect(events.filter((e) => e === "warmed_later")).toHaveLength(1);
    } finally {
      await stop(agent.child);
      t.cleanup();
    }
  }, 120_000);
});

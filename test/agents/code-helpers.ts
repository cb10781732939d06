/** Shared by the code-agent suites: executables, one-shot runs, a served agent, temp workspaces. */
import { cpSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { runOnce, serve, type Served } from "../../tools/conformance/process.js";
import { invokeHttp } from "../../protocol/transport/client.js";
import { DIST, ROOT, SUITE_TIMEOUT_MS, tempDir } from "../helpers.js";

export const SUMMARIZE = join(DIST, "agents/summarize/main.js");
export const SEARCH = join(DIST, "agents/search/main.js");
export const TESTGEN = join(DIST, "agents/testgen/main.js");
export const COMPLETE_LITE = join(DIST, "agents/complete-lite/main.js");
export const DIAGNOSE = join(DIST, "agents/diagnose/main.js");
export const FIXTURES = join(ROOT, "test/fixtures/code");

export type Json = Record<string, any>;

/**
 * One request through the one-shot executable (SUITE_TIMEOUT_MS as its deadline if it sets none); asserts
 * the AIP-1 one-shot contract (exit 0, nothing on stderr).
 */
export async function oneShot(exe: string, request: unknown): Promise<Json> {
  const r = await runOnce(exe, [], JSON.stringify(withDeadline(request).request));
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Json;
}

export interface RunningAgent {
  invoke(request: unknown): Promise<Json>;
  stop(): Promise<void>;
}

/** `request` with SUITE_TIMEOUT_MS as its deadline if it sets none, and how long to wait for its answer. */
function withDeadline(request: unknown): { request: unknown; waitMs: number } {
  const r = request as Json | null;
  const c = r?.constraints as unknown;
  if (typeof c !== "object" || c === null || Array.isArray(c)) return { request, waitMs: SUITE_TIMEOUT_MS };
  const set = (c as Json).timeout_ms as unknown;
  if (typeof set === "number") return { request, waitMs: Math.max(set, SUITE_TIMEOUT_MS) + 10_000 };
  return {
    request: { ...r, constraints: { ...c, timeout_ms: SUITE_TIMEOUT_MS } },
    waitMs: SUITE_TIMEOUT_MS + 10_000,
  };
}

/** Serve `exe` on a socket in a temp dir until `stop`; requests without a deadline get SUITE_TIMEOUT_MS. */
export async function startAgent(exe: string): Promise<RunningAgent> {
  const t = tempDir("aipc-");
  let served: Served;
  try {
    served = await serve(exe, join(t.dir, "a.sock"));
  } catch (err) {
    t.cleanup();
    throw err;
  }
  return {
    invoke: async (request) => {
      const sent = withDeadline(request);
      return (await invokeHttp(served.socketPath, sent.request, sent.waitMs)).json as Json;
    },
    stop: async () => {
      await served.stop();
      expect(served.stderr()).toBe("");
      t.cleanup();
    },
  };
}

/** A temp copy of a fixture folder; removed by `cleanup`. */
export function copyFixture(name: string): { dir: string; cleanup: () => void } {
  const t = tempDir("aipw-");
  cpSync(join(FIXTURES, name), t.dir, { recursive: true });
  return t;
}

/** The 1-based line and 0-based column of the first occurrence of `needle` (plus `delta` columns). */
export function cursorOf(source: string, needle: string, delta = 0): { line: number; column: number } {
  const at = source.indexOf(needle);
  if (at === -1) throw new Error(`${needle} not in source`);
  const before = source.slice(0, at);
  const line = before.split("\n").length;
  return { line, column: at - (before.lastIndexOf("\n") + 1) + delta };
}

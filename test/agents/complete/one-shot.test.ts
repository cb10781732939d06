/**
 * agent-complete's one-shot mode with a model: one request from stdin, the whole answer on stdout, exit 0,
 * nothing left behind. The model's bindings load only for a request that reaches the handler, and the
 * warm-up types no keystrokes (they would only pay off over later requests).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../../helpers.js";
import { COMPLETE, modelEnv } from "../lib/llm/tiny-model.js";

const HOOK = join(ROOT, "test/fixtures/agents/import-log.mjs");
const BINDINGS = "node_modules/node-llama-cpp/";
const tmp = tempDir("aipt-complete-once-");
const REQUEST = {
  action: "complete",
  context: {
    language: "typescript",
    file_path: "src/sample.ts",
    source_code: "export function add(a: number, b: number): number {\n  // note: \n  return a + b;\n}\n",
    cursor: { line: 2, column: 11 },
  },
  // Generous limits: the test asserts the mode's behaviour on a busy host, not its speed.
  constraints: { timeout_ms: 60_000, max_tokens: 4, inference_timeout_ms: 50_000 },
};
afterAll(() => tmp.cleanup());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The lines of AIP_LOG_FILE, parsed. */
  log: Record<string, unknown>[];
  /** Paths (from the package root) of the modules the process loaded. */
  modules: string[];
  /** What the process left in its own TMPDIR. */
  leftInTmp: string[];
}

/** Run agent-complete once on `body` with the tiny model and the default warm-up settings. */
function once(name: string, body: unknown): Promise<Run> {
  const dir = join(tmp.dir, name);
  const tmpdir = join(dir, "tmp");
  mkdirSync(tmpdir, { recursive: true });
  const logFile = join(dir, "agent.log");
  const importLog = join(dir, "imports.log");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...modelEnv(true),
    AIP_LOG_FILE: logFile,
    IMPORT_LOG: importLog,
    TMPDIR: tmpdir,
  };
  delete env.AIP_WARMUP_KEYSTROKES;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ["--import", HOOK, COMPLETE], { env }, (_err, stdout, stderr) => {
      const root = new URL(`file://${ROOT}/`).href;
      resolve({
        code: child.exitCode,
        stdout,
        stderr,
        log: existsSync(logFile)
          ? readFileSync(logFile, "utf8")
              .split("\n")
              .filter(Boolean)
              .map((l) => JSON.parse(l) as Record<string, unknown>)
          : [],
        modules: existsSync(importLog)
          ? readFileSync(importLog, "utf8")
              .split("\n")
              .filter((url) => url.startsWith(root))
              .map((url) => url.slice(root.length))
          : [],
        leftInTmp: readdirSync(tmpdir),
      });
    });
    child.stdin!.end(JSON.stringify(body));
  });
}

describe("agent-complete one-shot with a model", () => {
  it("answers from the model, exits 0 and leaves nothing behind, without warm-up keystrokes", async () => {
    const run = await once("complete", REQUEST);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const lines = run.stdout.split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("");
    const response = JSON.parse(lines[0]!) as { status: string; payload: Record<string, unknown> };
    expect(response.status).toBe("success");
    expect(response.payload.engine).toBe("model");
    const events = run.log.map((l) => l.event);
    expect(events).toContain("model_loaded");
    expect(run.log.find((l) => l.event === "warmup")).toMatchObject({ model_state: "ready", warmup_keystrokes: 0 });
    expect(run.log.find((l) => l.event === "request")).toMatchObject({ outcome: "success" });
    expect(run.modules.some((m) => m.startsWith(BINDINGS))).toBe(true);
    expect(run.leftInTmp).toEqual([]);
  });

  it("refuses an action it does not serve without loading the model's bindings", async () => {
    const run = await once("refused", { action: "summarize", context: { source_code: "x" }, constraints: {} });
    expect(run.code).toBe(0);
    const response = JSON.parse(run.stdout) as { status: string; error: { type: string } };
    expect(response.status).toBe("error");
    expect(response.error.type).toBe("AIP_ERR_NO_ROUTE");
    expect(run.log.map((l) => l.event)).not.toContain("model_loaded");
    expect(run.modules.filter((m) => m.startsWith(BINDINGS))).toEqual([]);
    expect(run.leftInTmp).toEqual([]);
  });
});

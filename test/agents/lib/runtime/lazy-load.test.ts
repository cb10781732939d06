/**
 * Which modules each mode of an agent executable loads, seen from outside through a `node --import`
 * loader hook that logs every module: `--help` loads neither mode's module nor the logger, a one-shot run
 * not the socket server and its framings (the conformance kit and vetting start many one-shot runs), nor
 * pino unless it has a log file to write; a server not the one-shot path. A one-shot run loads the
 * agent's definition even for input it refuses: vetting's empty-input run must trace the agent's code.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../../protocol/contract/limits.js";
import { DIST, ROOT, tempDir } from "../../../helpers.js";

const HOOK = join(ROOT, "test/fixtures/agents/import-log.mjs");
const MAIN = join(DIST, "agents/dummy/main.js");
const tmp = tempDir("aipt-lazy-");
afterAll(() => tmp.cleanup());

/** The modules of this package and the packages it depends on that the hook logged, as paths from the root. */
function loaded(log: string): string[] {
  if (!existsSync(log)) return [];
  const root = new URL(`file://${ROOT}/`).href;
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((url) => url.startsWith(root))
    .map((url) => url.slice(root.length));
}

const SERVER = [
  "dist/protocol/transport/server.js",
  "dist/protocol/transport/http.js",
  "dist/protocol/transport/ndjson.js",
];
const PINO = "node_modules/pino/pino.js";
const DEFINITION = "dist/agents/dummy/agent.js";

/** Run the dummy agent once under the hook; its stdout and the modules it loaded. */
function runLogged(
  name: string,
  args: string[],
  stdin: string,
  env: Record<string, string> = {},
): Promise<{ out: string; modules: string[] }> {
  const log = join(tmp.dir, `${name}.log`);
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ["--import", HOOK, MAIN, ...args],
      { env: { ...process.env, AIP_LOG_FILE: "", ...env, IMPORT_LOG: log } },
      (err, stdout) => (err ? reject(err) : resolve({ out: stdout, modules: loaded(log) })),
    );
    child.stdin!.end(stdin);
  });
}

describe("an agent executable's modes, loaded on demand", () => {
  it("answers --help without either mode's module or the logger", async () => {
    const { out, modules } = await runLogged("help", ["--help"], "");
    expect(out).toContain("Usage: agent-dummy");
    expect(modules).toContain("dist/agents/lib/runtime/run.js");
    expect(modules).toContain("dist/agents/dummy/agent.js");
    for (const m of ["dist/agents/lib/runtime/one-shot.js", "dist/agents/lib/runtime/serve.js", ...SERVER, PINO])
      expect(modules).not.toContain(m);
  });

  it("answers one request from stdin without the socket server or the logger", async () => {
    const request = { action: "echo", context: { source_code: "a\nb\n" }, constraints: {} };
    const { out, modules } = await runLogged("one-shot", [], JSON.stringify(request));
    const response = JSON.parse(out) as { status: string; payload: Record<string, unknown> };
    expect(response.status).toBe("success");
    expect(response.payload.received_action).toBe("echo");
    expect(modules).toContain("dist/agents/lib/runtime/one-shot.js");
    expect(modules).toContain("dist/agents/lib/runtime/invoke.js");
    expect(modules).toContain(DEFINITION);
    for (const m of ["dist/agents/lib/runtime/serve.js", ...SERVER, PINO]) expect(modules).not.toContain(m);
  });

  it.each([
    ["empty stdin", "", "AIP_ERR_INVALID_JSON"],
    ["invalid JSON", '{"action": ', "AIP_ERR_INVALID_JSON"],
    ["a missing field", JSON.stringify({ action: "echo", context: {} }), "AIP_ERR_MISSING_FIELD"],
    [
      "a field of the wrong type",
      JSON.stringify({ action: "echo", context: [], constraints: {} }),
      "AIP_ERR_INVALID_FIELD",
    ],
  ])("refuses %s after loading the agent's definition, which vetting traces", async (_what, stdin, code) => {
    const { out, modules } = await runLogged(`refusal-${code}`, [], stdin);
    const response = JSON.parse(out) as { status: string; error: { type: string } };
    expect(response).toMatchObject({ status: "error", error: { type: code } });
    if (code !== "AIP_ERR_INVALID_JSON") expect(response).toMatchObject({ agent: "dummy", version: "1.0.0" });
    expect(modules).toContain("dist/agents/lib/runtime/one-shot.js");
    expect(modules).toContain(DEFINITION);
    expect(modules).not.toContain(PINO);
  });

  it("answers a body over the limit after loading the agent's definition", async () => {
    const { out, modules } = await runLogged("too-large", [], "x".repeat(DEFAULT_LIMITS.maxBodyBytes + 1));
    expect((JSON.parse(out) as { error: { type: string } }).error.type).toBe("AIP_ERR_PAYLOAD_TOO_LARGE");
    expect(modules).toContain(DEFINITION);
  });

  it("loads the definition for an action it does not serve, and says which it serves", async () => {
    const request = { action: "summarize", context: {}, constraints: {} };
    const { out, modules } = await runLogged("no-route", [], JSON.stringify(request));
    const response = JSON.parse(out) as { error: { type: string; detail: string } };
    expect(response.error.type).toBe("AIP_ERR_NO_ROUTE");
    expect(response.error.detail).toContain("it serves echo");
    expect(modules).toContain(DEFINITION);
  });

  it("loads the logger for a one-shot run that has a log file, and writes its line", async () => {
    const file = join(tmp.dir, "one-shot-agent.log");
    const request = { action: "echo", context: {}, constraints: {}, trace_id: "lazy-load-logged" };
    const { out, modules } = await runLogged("one-shot-logged", [], JSON.stringify(request), { AIP_LOG_FILE: file });
    expect((JSON.parse(out) as { status: string }).status).toBe("success");
    expect(modules).toContain(PINO);
    const line = readFileSync(file, "utf8")
      .split("\n")
      .map((l) => (l ? (JSON.parse(l) as Record<string, unknown>) : {}))
      .find((l) => l.event === "request");
    expect(line).toMatchObject({ agent_name: "dummy", trace_id: "lazy-load-logged", outcome: "success" });
  });

  it("serves a socket without the one-shot path", async () => {
    const log = join(tmp.dir, "listen.log");
    const child = spawn(process.execPath, ["--import", HOOK, MAIN, "--listen", join(tmp.dir, "dummy.sock")], {
      env: { ...process.env, AIP_LOG_FILE: "", IMPORT_LOG: log },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line.includes('"event":"ready"')) resolve();
      });
      child.once("exit", (code) => reject(new Error(`agent exited with ${code} before it was ready`)));
    });
    child.kill("SIGTERM");
    await exited;
    const modules = loaded(log);
    for (const m of ["dist/agents/lib/runtime/serve.js", ...SERVER, PINO]) expect(modules).toContain(m);
    expect(modules).not.toContain("dist/agents/lib/runtime/one-shot.js");
  });
});

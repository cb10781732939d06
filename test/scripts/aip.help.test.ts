/**
 * `aip --help` lists every command without loading any command's module, and `aip COMMAND` loads that
 * command's module alone, seen from outside through a hook that logs every ES module the process loads.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { DIST, ROOT, tempDir } from "../helpers.js";

const run = promisify(execFile);
const AIP = join(DIST, "scripts/aip.js");
const HOOK = pathToFileURL(join(ROOT, "test/fixtures/esm-load-log.mjs")).href;
const t = tempDir();
afterAll(t.cleanup);

const HELP = `Usage: aip COMMAND [options]   (aip COMMAND --help for details; aip --version)

Commands:
  up         run the agency: the orchestrator and (embedded mode) its agents
  invoke     send one request built from a file and print the answer
  health     table of agents from /healthz
  agents     registered agents with their capabilities and languages
  check      health-check every agent now; unresponsive agents are restarted, failed ones started again
  reload     restart the orchestrator on its socket without refusing a client; agents keep running
  canary     canary rollouts: start, status, promote, rollback
  vet        vet an agent executable before it may join (links, behaviour under strace, manifest)
  trust      trust a workspace: its test runner and configs may run, sandboxed (--list: the trusted)
  untrust    stop trusting a workspace recorded by aip trust
  systemd    render the systemd units and per-agent drop-ins (limits from the manifests)
  lsp        a Language Server over stdio in front of the agency (completion, symbols, hover, tests)
  mcp        an MCP server over stdio for coding agents (summarize, search, tests, completion, diagnosis)

Every command that talks to the orchestrator takes --socket PATH (default: $AIP_SOCKET or ./run/aip.sock).
`;

let runs = 0;
/** `aip ...args` under the hook: its stdout and the modules under dist/tools/aip it loaded. */
async function aipHooked(args: string[]): Promise<{ stdout: string; tools: string[] }> {
  const log = join(t.dir, `modules-${++runs}.log`);
  const { stdout } = await run(process.execPath, ["--import", HOOK, AIP, ...args], {
    encoding: "utf8",
    env: { ...process.env, ESM_LOAD_LOG: log },
  });
  const tools = readFileSync(log, "utf8")
    .split("\n")
    .filter((url) => url.includes("/dist/tools/aip/"))
    .map((url) => url.slice(url.indexOf("/dist/tools/aip/") + "/dist/tools/aip/".length));
  return { stdout, tools };
}

describe("aip --help", () => {
  it("prints the commands with their summaries and loads no command's module", async () => {
    const { stdout, tools } = await aipHooked(["--help"]);
    expect(stdout).toBe(HELP);
    expect(tools).toEqual(["command.js"]);
  });

  it("aip invoke --help loads invoke's module, none of the other commands'", async () => {
    const { stdout, tools } = await aipHooked(["invoke", "--help"]);
    expect(stdout).toContain("Usage: aip invoke ACTION");
    expect(tools).toContain("invoke.js");
    for (const other of ["up.js", "status.js", "canary.js", "vet.js", "trust.js", "lsp.js", "mcp.js", "systemd.js"]) {
      expect(tools).not.toContain(other);
    }
  });
});

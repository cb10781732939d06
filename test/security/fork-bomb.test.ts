/**
 * A fork bomb in a trusted workspace's runner is contained: the sandbox sets RLIMIT_NPROC (counted by
 * the kernel per sandbox, threads included), and the run's watchdog kills the whole tree once it has
 * more processes than the limit, which holds even where RLIMIT_NPROC does not (an agency running as
 * root: the kernel exempts uid 0, and the sandbox's nobody is the agency's uid outside it).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkspaceCode } from "../../agents/lib/sandbox/workspace-run.js";
import { TRUSTED_ENV } from "../../agents/lib/sandbox/trust.js";
import { procTable } from "../../protocol/util/process-tree.js";
import { hasBwrap } from "../helpers.js";

let ws: string;
const saved = process.env[TRUSTED_ENV];
beforeAll(() => {
  ws = mkdtempSync(join(tmpdir(), "aip-sec-bomb-"));
  process.env[TRUSTED_ENV] = ws;
});
afterAll(() => {
  if (saved === undefined) delete process.env[TRUSTED_ENV];
  else process.env[TRUSTED_ENV] = saved;
  rmSync(ws, { recursive: true, force: true });
});

describe.skipIf(!hasBwrap)("process limit of a workspace run", () => {
  it("names RLIMIT_NPROC inside the sandbox", async () => {
    const r = await runWorkspaceCode({
      workspaceRoot: ws,
      argv: ["/bin/sh", "-c", "grep 'Max processes' /proc/self/limits"],
      timeoutMs: 10_000,
      maxProcesses: 64,
    });
    expect(r.status === "ran" && r.stdout).toMatch(/Max processes\s+64\s+64\s+processes/);
  });

  it("contains a fork bomb: the run is stopped and none of its processes is left", async () => {
    const before = procTable().size;
    const r = await runWorkspaceCode({
      workspaceRoot: ws,
      argv: ["/bin/sh", "-c", "f() { f | f & }; f; sleep 30"],
      timeoutMs: 30_000,
      maxProcesses: 64,
    });
    expect(r.status).toBe("ran");
    if (r.status !== "ran") return;
    // As root only the watchdog holds it ("processes"); otherwise RLIMIT_NPROC keeps it at 64 and the
    // watchdog may not fire before the time limit: either way the run is stopped, never finishing on its own.
    const root = process.getuid?.() === 0;
    if (root) expect(r.killed).toBe("processes");
    else expect(["processes", "timeout", "cpu"]).toContain(r.killed);
    // The run answers once its processes are gone: no shell of the bomb is left.
    const bombs = [...procTable().keys()].filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("f | f &");
      } catch {
        return false;
      }
    });
    expect(bombs).toEqual([]);
    expect(procTable().size).toBeLessThan(before + 20);
  }, 60_000);
});

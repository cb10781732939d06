import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DUMMY, ROOT, tempDir, until } from "../../helpers.js";
import { sh } from "../systemd/helpers.js";
import { CORPUS } from "../../orchestrator/lifecycle/vet/helpers.js";

const AIP = join(ROOT, "dist/scripts/aip.js");

describe("aip vet", () => {
  it("exit 0 and a table of passing checks for agent-dummy", () => {
    const r = sh(process.execPath, [AIP, "vet", DUMMY]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/sha256 [0-9a-f]{64}/);
    expect(r.stdout).toMatch(/runs as .*main\.js → \/usr\/bin\/env → \S*node/);
    expect(r.stdout).toMatch(/PASS {2}network/);
    expect(r.stdout).toMatch(/^PASSED \(\d+ ms\)$/m);
  });

  it("exit 1 with the violation and its evidence; --json carries the same report", () => {
    const table = sh(process.execPath, [AIP, "vet", join(CORPUS, "spawn-shell.cjs")]);
    expect(table.status).toBe(1);
    expect(table.stdout).toMatch(/FAIL {2}exec/);
    expect(table.stdout).toMatch(/evidence: \d+\s+execve\("\/bin\/sh"/);
    expect(table.stdout).toMatch(/^REJECTED: 1 violation in exec$/m);
    const json = sh(process.execPath, [AIP, "vet", "--json", join(CORPUS, "spawn-shell.cjs")]);
    expect(json.status).toBe(1);
    const report = JSON.parse(json.stdout) as {
      ok: boolean;
      sha256: string;
      checks: { name: string; ok: boolean; violations: { rule: string; evidence?: string }[] }[];
    };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.name === "exec")!.violations[0]).toMatchObject({
      rule: "exec",
      evidence: expect.stringMatching(/execve\("\/bin\/sh"/),
    });
  });

  it("exit 2 when strace is missing, naming the install command", () => {
    const r = sh(process.execPath, [AIP, "vet", DUMMY], { env: { PATH: "/nonexistent" } });
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/COULD NOT VET: strace is not installed .*apt-get install -y strace/);
  });

  it("exit 2 on usage errors", () => {
    expect(sh(process.execPath, [AIP, "vet"]).status).toBe(2);
    expect(sh(process.execPath, [AIP, "vet", DUMMY, "--timeout-ms", "soon"]).stderr).toMatch(
      /expected --timeout-ms to be a positive integer, got "soon"/,
    );
  });
});

/** Pids whose command line mentions `needle` and that are not zombies. */
function livePids(needle: string): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        if (!readFileSync(`/proc/${d}/cmdline`, "utf8").includes(needle)) return [];
        return / Z /.test(readFileSync(`/proc/${d}/stat`, "utf8")) ? [] : [Number(d)];
      } catch {
        return [];
      }
    });
}

/** `pid`, its state and its command, for a failure message. */
function describePid(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return `${pid} ${stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)} ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 200)}`;
  } catch {
    return `${pid} (gone)`;
  }
}

describe("aip vet interrupted", () => {
  it("Ctrl-C (SIGINT) kills the agent under vetting too, though it runs in its own process group, and removes its scratch", async () => {
    const t = tempDir("aipvi-");
    try {
      // A private copy, so that only this test's agent matches the needle.
      const exe = join(t.dir, "hang-copy.cjs");
      copyFileSync(join(CORPUS, "hang.cjs"), exe);
      copyFileSync(join(CORPUS, "_agent.cjs"), join(t.dir, "_agent.cjs"));
      chmodSync(exe, 0o755);
      const scratch = join(t.dir, "tmp");
      mkdirSync(scratch);
      const cli = spawn(process.execPath, [AIP, "vet", exe, "--timeout-ms", "60000"], {
        stdio: "ignore",
        env: { ...process.env, TMPDIR: scratch },
      });
      const exited = new Promise<number | null>((r) => cli.on("exit", (code) => r(code)));
      await until(() => livePids(exe).length >= 2, 20_000, "strace and the agent (both runs)");
      cli.kill("SIGINT");
      expect(await exited).toBe(130);
      // Generous: on a loaded machine a killed sandbox takes a moment to be torn down and reaped.
      await until(() => livePids(exe).length === 0, 15_000, "the sandbox torn down").catch(() => undefined);
      expect(livePids(exe).map(describePid)).toEqual([]);
      expect(readdirSync(scratch)).toEqual([]);
    } finally {
      t.cleanup();
    }
  });
});

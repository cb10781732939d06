/**
 * `npm test` on a fresh machine: its pretest names every missing system tool and the one command that
 * installs them, instead of many unrelated failures.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";

describe("the test preflight", () => {
  const t = tempDir("aippre-");
  afterAll(() => t.cleanup());

  it("is npm test's pretest, and names every missing tool with the apt-get line and the root script", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.pretest).toBe("node scripts/test-tools.mjs");
    // A PATH with nothing but a shell: every command-line tool is missing.
    const bin = join(t.dir, "bin");
    mkdirSync(bin);
    symlinkSync("/bin/sh", join(bin, "sh"));
    const r = spawnSync(process.execPath, [join(ROOT, "scripts/test-tools.mjs")], {
      env: { PATH: bin },
      encoding: "utf8",
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/missing: strace, socat, curl, jq, readelf, gcc, systemd-analyze, bwrap, nvim, promtool/);
    expect(r.stderr).toContain(
      "sudo apt-get install -y strace socat curl jq binutils gcc systemd bubblewrap neovim prometheus",
    );
    expect(r.stderr).toContain("scripts/install-test-tools");
    const packages = spawnSync(process.execPath, [join(ROOT, "scripts/test-tools.mjs"), "--packages"], {
      env: { PATH: bin },
      encoding: "utf8",
    });
    expect(packages.stdout.trim().split(" ")).toEqual(
      expect.arrayContaining(["strace", "binutils", "bubblewrap", "neovim", "prometheus"]),
    );
  });

  it("passes quietly where everything is installed (this machine)", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "scripts/test-tools.mjs")], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

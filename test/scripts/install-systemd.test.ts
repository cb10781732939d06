import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";
import { bundledAgents, sh } from "../tools/systemd/helpers.js";

const SCRIPT = join(ROOT, "scripts/install-systemd");

describe("scripts/install-systemd", () => {
  const t = tempDir("aipin-");
  afterAll(() => t.cleanup());

  it("--dry-run prints every step and changes nothing", () => {
    // Point every target into the temp dir: even a broken --dry-run could not touch this host.
    const dirs = {
      SYSTEMD_UNIT_DIR: join(t.dir, "dry/units"),
      SYSUSERS_DIR: join(t.dir, "dry/sysusers"),
      TMPFILES_DIR: join(t.dir, "dry/tmpfiles"),
    };
    const r = sh(SCRIPT, ["--dry-run", "--install-dir", ROOT], { env: { ...process.env, ...dirs } });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const steps = r.stdout.split("\n").filter((l) => l.startsWith("+ "));
    expect(steps.some((s) => s.includes(`${dirs.SYSTEMD_UNIT_DIR}/aip-agent@summarize.service.d/50-aip.conf`))).toBe(
      true,
    );
    expect(steps).toContain(`+ systemd-sysusers ${dirs.SYSUSERS_DIR}/aip.conf`);
    expect(steps).toContain(`+ systemd-tmpfiles --create ${dirs.TMPFILES_DIR}/aip.conf`);
    expect(steps).toContain("+ systemctl daemon-reload");
    expect(steps.at(-1)).toBe(
      `+ systemctl enable --now ${bundledAgents()
        .map((n) => `aip-agent@${n}.service`)
        .join(" ")} aip-orchestrator.socket aip-orchestrator.service`,
    );
    expect(steps.some((s) => s.includes("dummy"))).toBe(false);
    expect(existsSync(join(t.dir, "dry"))).toBe(false);
  });

  it("DESTDIR stages units, drop-ins, sysusers and tmpfiles, with users and enablement applied offline", () => {
    const dest = join(t.dir, "stage");
    const r = sh(SCRIPT, ["--install-dir", ROOT], { env: { ...process.env, DESTDIR: dest } });
    expect(r.status, r.stderr).toBe(0);
    const units = join(dest, "etc/systemd/system");
    expect(readdirSync(units).sort()).toEqual(
      [
        "aip-agent@.service",
        ...bundledAgents().map((n) => `aip-agent@${n}.service.d`),
        "aip-orchestrator.service",
        "aip-orchestrator.socket",
        "multi-user.target.wants",
        "sockets.target.wants",
      ].sort(),
    );
    expect(readFileSync(join(units, "aip-orchestrator.service"), "utf8")).toContain(
      `ExecStart=${process.execPath} ${ROOT}/dist/scripts/aip.js up --mode systemd`,
    );
    expect(readFileSync(join(units, "aip-agent@testgen.service.d/50-aip.conf"), "utf8")).toContain(
      `ExecStart=${ROOT}/dist/agents/testgen/main.js --listen /run/aip/agents/%i.sock`,
    );
    expect(readFileSync(join(dest, "usr/lib/sysusers.d/aip.conf"), "utf8")).toBe(
      readFileSync(join(ROOT, "systemd/aip.sysusers.conf"), "utf8"),
    );
    expect(readFileSync(join(dest, "usr/lib/tmpfiles.d/aip.conf"), "utf8")).toBe(
      readFileSync(join(ROOT, "systemd/aip.tmpfiles.conf"), "utf8"),
    );
    expect(readFileSync(join(dest, "etc/passwd"), "utf8")).toMatch(/^aip:x:\d+:\d+:/m);
    const wants = join(units, "multi-user.target.wants");
    expect(lstatSync(join(wants, "aip-agent@testgen.service")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(wants, "aip-agent@testgen.service"))).toBe("/etc/systemd/system/aip-agent@.service");
    expect(readlinkSync(join(units, "sockets.target.wants/aip-orchestrator.socket"))).toBe(
      "/etc/systemd/system/aip-orchestrator.socket",
    );
    expect(readlinkSync(join(wants, "aip-orchestrator.service"))).toBe("/etc/systemd/system/aip-orchestrator.service");
    expect(r.stdout).toMatch(/staged in .* \(not started\)/);
  });

  it("rejects an unknown option with usage and status 2", () => {
    const r = sh(SCRIPT, ["--bogus"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown option --bogus/);
  });
});

/**
 * `aip up` refuses to start on a state or socket directory that someone else owns or may write: the
 * planted-symlink attack on a 0777 state_dir owned by another user. Each refusal names the path and
 * the fix, happens before anything is written or listened on, and a safe layout still starts.
 */
import { execFile } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDirectories } from "../../orchestrator/entry.js";
import { parseConfig } from "../../orchestrator/core/config.js";
import { DIST, ROOT, tempDir, writeDummyConfig } from "../helpers.js";

const AIP = join(DIST, "scripts/aip.js");
const temps: { cleanup: () => void }[] = [];
afterAll(() => temps.forEach((t) => t.cleanup()));

/** A fresh layout: `dir`/agency.json naming `dir`/run/aip.sock, `dir`/run/agents and `dir`/state. */
function layout(): { dir: string; config: string; state: string; agents: string; run: string } {
  const t = tempDir("aipsec-dirs-");
  temps.push(t);
  const run = join(t.dir, "run");
  const state = join(t.dir, "state");
  const agents = join(run, "agents");
  const config = writeDummyConfig(t.dir, {
    socket: join(run, "aip.sock"),
    agent_socket_dir: agents,
    state_dir: state,
    vetting: "off",
  });
  return { dir: t.dir, config, state, agents, run };
}

function up(config: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AIP, "up", "--config", config], { timeout: 60_000 }, (err, _out, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
    );
  });
}

const OTHER_UID = 65534;

describe("safe directories at start", { timeout: 120_000 }, () => {
  it("a 0777 state_dir owned by another user: start refused, naming the path and the fix", async () => {
    const l = layout();
    mkdirSync(l.state, { mode: 0o777 });
    chmodSync(l.state, 0o777);
    chownSync(l.state, OTHER_UID, OTHER_UID);
    const r = await up(l.config);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`state_dir ${l.state} is owned by uid ${OTHER_UID}`);
    expect(r.stderr).toContain(`chown ${process.getuid!()} ${l.state}`);
    // Refused before anything was created: no lock, no socket, nothing in the state directory.
    expect(existsSync(l.run)).toBe(false);
    expect(readdirSync(l.state)).toEqual([]);
  });

  it("a world-writable agent_socket_dir, a group-writable socket directory, a symlinked state_dir", async () => {
    const a = layout();
    mkdirSync(a.agents, { recursive: true });
    chmodSync(a.agents, 0o1777);
    let r = await up(a.config);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`agent_socket_dir ${a.agents} is writable by every user (mode 1777)`);
    expect(r.stderr).toContain(`chmod o-w ${a.agents}`);
    expect(readdirSync(a.agents)).toEqual([]);

    const g = layout();
    mkdirSync(g.run);
    chownSync(g.run, process.getuid!(), OTHER_UID);
    chmodSync(g.run, 0o770);
    r = await up(g.config);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`socket's directory ${g.run} is writable by group ${OTHER_UID}`);
    expect(r.stderr).toContain(`chmod g-w ${g.run}`);
    expect(existsSync(join(g.run, "aip.sock"))).toBe(false);

    const s = layout();
    const elsewhere = join(s.dir, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, s.state);
    r = await up(s.config);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`state_dir ${s.state} is a symlink (to ${elsewhere})`);
  });

  it("a safe layout passes, its missing directories created owner-only", () => {
    const l = layout();
    const config = parseConfig(
      {
        socket: join(l.run, "aip.sock"),
        agent_socket_dir: l.agents,
        state_dir: l.state,
        agents: [{ name: "dummy", command: ["x"], manifest: join(ROOT, "manifests/dummy.json") }],
      },
      l.dir,
    );
    checkDirectories(config);
    for (const d of [l.state, l.agents]) expect(existsSync(d)).toBe(true);
    expect(() => checkDirectories(config)).not.toThrow();
    chmodSync(l.state, 0o757);
    expect(() => checkDirectories(config)).toThrow(/state_dir .* is writable by every user/);
  });
});

/**
 * The workspace runner's sandbox, attacked with real bubblewrap and real processes: an untrusted
 * workspace runs nothing; a trusted one runs as nobody, without network, home, agency state, secrets
 * or a writable workspace; an abort kills the whole tree at once and removes the private files.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runWorkspaceCode, startWorkspaceProcess, workspaceTrust } from "../../agents/lib/sandbox/workspace-run.js";
import { TRUST_FILE_ENV, TRUSTED_ENV, TRUSTED_SOURCE_ENV } from "../../agents/lib/sandbox/trust.js";
import { hasBwrap } from "../helpers.js";

let ws: string;
let outside: string;
const saved = { ...process.env };

beforeEach(() => {
  ws = mkdtempSync(join(tmpdir(), "aip-sec-ws-"));
  outside = mkdtempSync(join(tmpdir(), "aip-sec-out-"));
  delete process.env[TRUSTED_ENV];
  delete process.env[TRUSTED_SOURCE_ENV];
  delete process.env[TRUST_FILE_ENV];
});
afterEach(() => {
  process.env = { ...saved };
  rmSync(ws, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** A workspace "runner" that tries everything an attacker's script would, reporting each outcome. */
function plantRunner(): string {
  const marker = join(outside, "pwned");
  const script = [
    "#!/bin/sh",
    `echo uid=$(id -u)`,
    `touch ${marker} 2>/dev/null && echo wrote-marker`,
    `echo x > ${join(ws, "written")} 2>/dev/null && echo wrote-workspace`,
    `head -c 20 /etc/shadow 2>/dev/null | grep -q . && echo read-shadow`,
    `ls /root >/dev/null 2>&1 && echo saw-root-home`,
    `cat ${join(outside, "secret")} 2>/dev/null && echo read-outside`,
    `grep -v ' lo:' /proc/net/dev | grep -q ':' && echo network`,
    `grep -q '^CapEff:.*[1-9a-f]' /proc/self/status && echo caps`,
    `echo tmp > /tmp/t && echo private-tmp`,
    `echo done`,
  ].join("\n");
  mkdirSync(join(ws, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(ws, "node_modules", ".bin", "vitest"), script, { mode: 0o755 });
  writeFileSync(join(outside, "secret"), "top secret\n");
  return marker;
}

describe("workspace trust", () => {
  it("trusts nothing by default, and names how to trust", () => {
    const d = workspaceTrust(ws);
    expect(d.trusted).toBe(false);
    expect(d.hint).toContain(`aip trust ${ws}`);
  });

  it("trusts a listed path and what is below it, a glob, and the trust file; nothing else", () => {
    process.env[TRUSTED_ENV] = `${outside}:${tmpdir()}/aip-sec-ws-*`;
    process.env[TRUSTED_SOURCE_ENV] = "config";
    expect(workspaceTrust(ws)).toMatchObject({ trusted: true, source: "config" });
    mkdirSync(join(outside, "sub"));
    expect(workspaceTrust(join(outside, "sub"))).toMatchObject({ trusted: true, source: "config" });
    expect(workspaceTrust(tmpdir()).trusted).toBe(false);
    process.env[TRUSTED_ENV] = "";
    const file = join(outside, "trust.json");
    writeFileSync(file, JSON.stringify({ workspaces: [ws] }), { mode: 0o600 });
    process.env[TRUST_FILE_ENV] = file;
    expect(workspaceTrust(ws)).toMatchObject({ trusted: true, source: "aip trust" });
    // A trust file others could write trusts nothing.
    chmodSync(file, 0o666);
    expect(workspaceTrust(ws).trusted).toBe(false);
  });

  it("does not trust a symlink into a trusted directory by its own name only", () => {
    process.env[TRUSTED_ENV] = join(outside, "link");
    symlinkSync(ws, join(outside, "link"));
    // The link's target is what is trusted: the workspace it points at.
    expect(workspaceTrust(ws).trusted).toBe(true);
    expect(workspaceTrust(outside).trusted).toBe(false);
  });
});

describe.skipIf(!hasBwrap)("runWorkspaceCode", () => {
  it("runs nothing from an untrusted workspace, every time", async () => {
    const marker = plantRunner();
    for (let i = 0; i < 3; i++) {
      const r = await runWorkspaceCode({ workspaceRoot: ws, argv: ["node_modules/.bin/vitest"], timeoutMs: 5000 });
      expect(r).toMatchObject({ status: "skipped", reason: "skipped: workspace not trusted" });
      expect(r.status === "skipped" && r.hint).toContain(`aip trust ${ws}`);
      expect(existsSync(marker)).toBe(false);
    }
  });

  it("runs a trusted workspace's code as nobody, with no network, secrets, home or writable workspace", async () => {
    const marker = plantRunner();
    process.env[TRUSTED_ENV] = ws;
    for (let i = 0; i < 2; i++) {
      const r = await runWorkspaceCode({ workspaceRoot: ws, argv: ["./node_modules/.bin/vitest"], timeoutMs: 10_000 });
      expect(r.status).toBe("ran");
      if (r.status !== "ran") return;
      expect(r.stdout).toContain("uid=65534");
      expect(r.stdout).toContain("private-tmp");
      expect(r.stdout).toContain("done");
      for (const bad of [
        "wrote-marker",
        "wrote-workspace",
        "read-shadow",
        "saw-root-home",
        "top secret",
        "network",
        "caps",
      ])
        expect(r.stdout).not.toContain(bad);
      expect(existsSync(marker)).toBe(false);
      expect(existsSync(join(ws, "written"))).toBe(false);
    }
  });

  it("mounts generated files at their paths without writing them into the workspace", async () => {
    process.env[TRUSTED_ENV] = ws;
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src", "a.ts"), "export const a = 1;\n");
    symlinkSync("/etc/passwd", join(ws, "src", "evil"));
    const r = await runWorkspaceCode({
      workspaceRoot: ws,
      argv: [
        "/bin/sh",
        "-c",
        "cat a.ts a.test.ts; ls; head -c 4 evil || echo no-evil; echo y > new && echo private-write",
      ],
      cwd: "src",
      files: { "src/a.test.ts": "generated test\n" },
      timeoutMs: 10_000,
    });
    expect(r.status).toBe("ran");
    if (r.status !== "ran") return;
    expect(r.stdout).toContain("export const a = 1;");
    expect(r.stdout).toContain("generated test");
    expect(r.stdout).toContain("private-write");
    expect(readdirSync(join(ws, "src")).sort()).toEqual(["a.ts", "evil"]);
  });

  it("a long-lived process answers requests, writes only into private copies, and dies with kill()", async () => {
    mkdirSync(join(ws, "src"));
    writeFileSync(join(ws, "src", "a.ts"), "export const a = 1;\n");
    const untrusted = await startWorkspaceProcess({ workspaceRoot: ws, argv: ["/bin/sh"], cpuLimitMs: 10_000 });
    expect(untrusted).toMatchObject({ status: "skipped", reason: "skipped: workspace not trusted" });
    process.env[TRUSTED_ENV] = ws;
    const script = [
      "while read name; do",
      '  echo "$name" > "src/$name" && echo "wrote $name" || echo "refused $name";',
      '  echo "root" > "$name" 2>/dev/null && echo "wrote root" || echo "refused root";',
      "  echo uid=$(id -u) $(ls src);",
      "done",
    ].join("\n");
    const p = await startWorkspaceProcess({
      workspaceRoot: ws,
      argv: ["/bin/sh", "-c", script],
      writable: ["src"],
      cpuLimitMs: 60_000,
    });
    expect("pid" in p).toBe(true);
    if (!("pid" in p)) return;
    const lines: string[] = [];
    let wake: () => void = () => undefined;
    p.onLine((l) => {
      lines.push(l);
      wake();
    });
    const answer = async (name: string): Promise<string[]> => {
      const from = lines.length;
      p.stdin.write(`${name}\n`);
      while (lines.length < from + 3) await new Promise<void>((r) => (wake = r));
      return lines.slice(from, from + 3);
    };
    // The directories on the way to a writable one are private copies too: nothing reaches the workspace.
    expect(await answer("one.test.ts")).toEqual(["wrote one.test.ts", "wrote root", "uid=65534 a.ts one.test.ts"]);
    // The same process: what it wrote before is still there.
    expect(await answer("two.test.ts")).toEqual([
      "wrote two.test.ts",
      "wrote root",
      "uid=65534 a.ts one.test.ts two.test.ts",
    ]);
    p.kill();
    expect((await p.ended).killed).toBe("cancelled");
    expect(readdirSync(join(ws, "src"))).toEqual(["a.ts"]);
    expect(readdirSync(ws).sort()).toEqual(["src"]);
  });

  it("hides the agency's state and sockets inside a workspace", async () => {
    process.env[TRUSTED_ENV] = ws;
    mkdirSync(join(ws, "state"));
    writeFileSync(join(ws, "state", "canary.json"), "state!");
    process.env.AIP_SANDBOX_HIDE = join(ws, "state");
    const r = await runWorkspaceCode({
      workspaceRoot: ws,
      argv: ["/bin/sh", "-c", "cat state/canary.json; echo end"],
      timeoutMs: 10_000,
    });
    expect(r.status === "ran" && r.stdout).toBe("end\n");
  });

  it("kills the whole tree within 100 ms of an abort and removes its private files", async () => {
    process.env[TRUSTED_ENV] = ws;
    const before = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith("aip-run-")));
    for (let i = 0; i < 3; i++) {
      const ac = new AbortController();
      // Unique to this run: other processes on the machine may sleep too.
      const token = `60.${process.pid}${i}`;
      const p = runWorkspaceCode({
        workspaceRoot: ws,
        argv: ["/bin/sh", "-c", `sleep ${token} & sleep ${token} & echo started; wait`],
        files: { "gen.test.ts": "x" },
        timeoutMs: 60_000,
        signal: ac.signal,
      });
      // Wait for the sandbox's sleepers to exist, then abort.
      let sleepers: number[] = [];
      while (sleepers.length < 2) {
        await new Promise((r) => setImmediate(r));
        sleepers = pgrepSleep(token);
      }
      // The kill is synchronous in the abort: once abort() returns, every process has had SIGKILL.
      ac.abort();
      const pending = sleepers.filter((s) => !signalled(s));
      expect(pending).toEqual([]);
      const r = await p;
      expect(r).toMatchObject({ status: "ran", killed: "cancelled" });
      expect(sleepers.filter((s) => alive(s))).toEqual([]);
    }
    const after = readdirSync(tmpdir()).filter((n) => n.startsWith("aip-run-") && !before.has(n));
    expect(after).toEqual([]);
  });

  it("stops a run at its time limit", async () => {
    process.env[TRUSTED_ENV] = ws;
    const r = await runWorkspaceCode({
      workspaceRoot: ws,
      argv: ["/bin/sh", "-c", "while :; do :; done"],
      timeoutMs: 300,
    });
    expect(r).toMatchObject({ status: "ran", timedOut: true });
  });
});

function pgrepSleep(token: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, "utf8") === `sleep\u0000${token}\u0000`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function statusOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
}

/** Gone, a zombie, exiting (PF_EXITING), or with SIGKILL pending (bit 9 of SigPnd/ShdPnd). */
function signalled(pid: number): boolean {
  const st = statusOf(pid);
  if (st === undefined || /^State:\s+[ZX]/m.test(st)) return true;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    if ((Number(f[6]) & 0x4) !== 0) return true;
  } catch {
    return true;
  }
  return [...st.matchAll(/^(?:SigPnd|ShdPnd):\s+([0-9a-f]+)$/gm)].some((m) => (BigInt(`0x${m[1]}`) & 0x100n) !== 0n);
}

function alive(pid: number): boolean {
  const st = statusOf(pid);
  return st !== undefined && !/^State:\s+[ZX]/m.test(st);
}

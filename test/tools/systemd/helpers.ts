import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentManifest } from "../../../protocol/contract/schemas.js";
import { ROOT } from "../../helpers.js";

/** Run a command; stdout, stderr and status (never throws). */
export function sh(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8", ...opts });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `systemd-analyze security --offline=true UNIT` → the overall exposure score. */
export function exposure(unitPath: string, cwd: string): number {
  const r = sh("systemd-analyze", ["security", "--offline=true", unitPath], { cwd });
  const m = /Overall exposure level for \S+: (\d+(?:\.\d+)?)/.exec(r.stdout);
  if (!m) throw new Error(`no exposure score for ${unitPath}: ${r.stdout.slice(-500)} ${r.stderr}`);
  return Number(m[1]);
}

/** A package root in `dir` with the real templates and the given agents (manifest + an executable bin). */
export function fakePackage(dir: string, manifests: AgentManifest[]): string {
  cpSync(join(ROOT, "systemd"), join(dir, "systemd"), { recursive: true });
  mkdirSync(join(dir, "manifests"), { recursive: true });
  const bin: Record<string, string> = {};
  for (const m of manifests) {
    writeFileSync(join(dir, "manifests", `${m.name}.json`), JSON.stringify(m));
    const rel = `dist/agents/${m.name}/main.js`;
    mkdirSync(join(dir, "dist/agents", m.name), { recursive: true });
    writeFileSync(join(dir, rel), "#!/usr/bin/env node\n");
    chmodSync(join(dir, rel), 0o755);
    bin[`agent-${m.name}`] = rel;
  }
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "fake", bin }));
  return dir;
}

export function manifest(name: string, over: Partial<AgentManifest["resources"]> = {}): AgentManifest {
  return {
    aip: "1",
    name,
    version: "1.2.3",
    description: name,
    capabilities: ["echo"],
    languages: ["*"],
    resources: { cpu: "250m", memory: "512Mi", gpu: false, ...over },
    max_concurrent: 4,
    timeouts_ms: { default: 1000 },
  };
}

/** The production agents, as the renderer finds them: the `agent-*` bins of package.json, in order, without the echo test agent. */
export function bundledAgents(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> };
  return Object.keys(pkg.bin)
    .filter((b) => b.startsWith("agent-"))
    .map((b) => b.slice("agent-".length))
    .filter((n) => n !== "dummy");
}

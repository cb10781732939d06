/**
 * `aip systemd render`: the units from systemd/templates with the install directory and node filled in,
 * and one drop-in per agent (aip-agent@NAME.service.d/50-aip.conf) from its manifest: MemoryMax from
 * resources.memory, CPUQuota and CPUWeight from resources.cpu, IOWeight, the hardening set.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  ManifestSchema,
  cpuMillicores,
  formatIssues,
  memoryBytes,
  type AgentManifest,
} from "../../protocol/contract/schemas.js";
import { hardening } from "./hardening.js";

/** The package root: the nearest directory above this file with a package.json (source or dist/). */
export function packageRoot(from = import.meta.dirname): string {
  for (let dir = from; dir !== "/"; dir = dirname(dir)) if (existsSync(join(dir, "package.json"))) return dir;
  throw new Error(`No package.json above ${from}`);
}

export interface RenderOptions {
  /** Where the agency is installed (dist/, manifests/, node_modules/ below it). */
  installDir: string;
  /** The node binary the orchestrator runs with. */
  node: string;
  /** Package root to read templates, package.json and manifests from (default: this package). */
  root?: string;
  /** Only these agents (default: every `agent-*` bin with a manifest). */
  agents?: string[];
  /** Name instances `<name>-<version>` (a canary runs beside the stable instance). */
  versioned?: boolean;
  /** A .gguf model: `Environment=AIP_MODEL=` in the drop-ins of the agents that load one. */
  model?: string;
  /** Serve the probes (/livez, /readyz, /healthz, /metrics) on 127.0.0.1:PORT from the orchestrator. */
  probePort?: number;
}

/** Test agents: never rendered (so never installed) unless named in `agents`. agent-dummy is the echo agent. */
export const TEST_AGENTS: ReadonlySet<string> = new Set(["dummy"]);

/** Agents that load a model through `AIP_MODEL` (docs/agents.md "Model-backed completion"). */
export const MODEL_AGENTS: ReadonlySet<string> = new Set(["complete", "summarize", "diagnose"]);

export interface DiscoveredAgent {
  name: string;
  /** The executable, relative to the package root (package.json's bin entry). */
  binRel: string;
  manifestPath: string;
  manifest: AgentManifest;
}

/** A file to write: path relative to the output directory, and content. */
export interface RenderedFile {
  path: string;
  content: string;
}

function fill(template: string, vars: Record<string, string>): string {
  return template.replace(/@([A-Z_]+)@/g, (m, k: string) => {
    if (!(k in vars)) throw new Error(`Template placeholder ${m} has no value`);
    return vars[k]!;
  });
}

/** CPUQuota from millicores: 250m → 25% (of one CPU); 2 → 200%. */
export function cpuQuota(cpu: string): string {
  return `${Math.max(1, Math.round(cpuMillicores(cpu) / 10))}%`;
}

/** CPUWeight from millicores, 100 (systemd's default) = one CPU; clamped to systemd's 1..10000. */
export function cpuWeight(cpu: string): number {
  return Math.min(10_000, Math.max(1, Math.round(cpuMillicores(cpu) / 10)));
}

/** The agents to render: `agent-*` bins of package.json whose manifests/<name>.json exists and is valid. */
export function discoverAgents(root: string, only?: string[]): DiscoveredAgent[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin?: Record<string, string> };
  const out: DiscoveredAgent[] = [];
  for (const [bin, rel] of Object.entries(pkg.bin ?? {})) {
    if (!bin.startsWith("agent-")) continue;
    const name = bin.slice("agent-".length);
    if (only ? !only.includes(name) : TEST_AGENTS.has(name)) continue;
    const manifestPath = join(root, "manifests", `${name}.json`);
    if (!existsSync(manifestPath)) continue;
    const parsed = ManifestSchema.safeParse(JSON.parse(readFileSync(manifestPath, "utf8")));
    if (!parsed.success)
      throw new Error(
        `${manifestPath}: ${formatIssues(parsed.error)
          .map((i) => `${i.path}: ${i.message}`)
          .join("; ")}`,
      );
    out.push({ name, binRel: rel, manifestPath, manifest: parsed.data });
  }
  const missing = (only ?? []).filter((n) => !out.some((a) => a.name === n));
  if (missing.length > 0) throw new Error(`No agent-* bin with a manifest for: ${missing.join(", ")}`);
  return out;
}

/** Every file `aip systemd render` writes, relative to the output directory. */
export function renderAll(o: RenderOptions): RenderedFile[] {
  const root = o.root ?? packageRoot();
  const installDir = resolve(o.installDir);
  const template = (name: string): string => readFileSync(join(root, "systemd/templates", name), "utf8");
  const hardened = (gpu: boolean): string => hardening({ gpu }).join("\n");
  const probe =
    o.probePort === undefined
      ? ""
      : [
          `# 127.0.0.1:${o.probePort} serves only the probes (/livez, /readyz, /healthz, /metrics); loopback only.`,
          `Environment=AIP_HEALTH_PORT=${o.probePort}`,
          "PrivateNetwork=no",
          "RestrictAddressFamilies=AF_INET",
          "IPAddressAllow=localhost",
          "",
        ].join("\n");
  const files: RenderedFile[] = [
    {
      path: "aip-orchestrator.service",
      content: fill(template("aip-orchestrator.service.in"), {
        INSTALL_DIR: installDir,
        NODE: o.node,
        HARDENING: hardened(false),
        PROBE_PORT: probe,
      }),
    },
    {
      path: "aip-orchestrator.socket",
      content: fill(template("aip-orchestrator.socket.in"), { INSTALL_DIR: installDir }),
    },
    {
      path: "aip-agent@.service",
      content: fill(template("aip-agent@.service.in"), { INSTALL_DIR: installDir, HARDENING: hardened(false) }),
    },
    { path: "aip.sysusers.conf", content: readFileSync(join(root, "systemd/aip.sysusers.conf"), "utf8") },
    { path: "aip.tmpfiles.conf", content: readFileSync(join(root, "systemd/aip.tmpfiles.conf"), "utf8") },
  ];
  const instances: string[] = [];
  for (const a of discoverAgents(root, o.agents)) {
    const m = a.manifest;
    const instance = o.versioned ? `${m.name}-${m.version}` : m.name;
    instances.push(instance);
    files.push({
      path: `aip-agent@${instance}.service.d/50-aip.conf`,
      content: fill(template("agent-dropin.conf.in"), {
        MANIFEST: `manifests/${m.name}.json`,
        NAME: m.name,
        VERSION: m.version,
        BIN: join(installDir, a.binRel),
        MODEL: o.model !== undefined && MODEL_AGENTS.has(m.name) ? `Environment=AIP_MODEL=${resolve(o.model)}\n` : "",
        MEMORY: m.resources.memory,
        MEMORY_MAX: String(memoryBytes(m.resources.memory)),
        CPU: m.resources.cpu,
        CPU_QUOTA: cpuQuota(m.resources.cpu),
        CPU_WEIGHT: String(cpuWeight(m.resources.cpu)),
        IO_WEIGHT: "50",
        // node runs ~10 threads; the rest is headroom for the agent's own workers.
        TASKS_MAX: "64",
        HARDENING: hardened(m.resources.gpu),
      }),
    });
  }
  files.push({ path: "agents.list", content: instances.map((i) => `${i}\n`).join("") });
  return files;
}

/**
 * What the rendered units would fail to run: each absolute path in an ExecStart= that does not exist
 * or is not executable (the orchestrator's node and aip.js, each agent's bin), and a model file that is
 * not there. One line each, naming the file and the unit.
 */
export function missingExecutables(files: RenderedFile[]): string[] {
  const problems: string[] = [];
  for (const f of files) {
    for (const line of f.content.split("\n")) {
      const exec = /^ExecStart=(.+)$/.exec(line);
      const model = /^Environment=AIP_MODEL=(.+)$/.exec(line);
      if (model && !existsSync(model[1]!)) problems.push(`${f.path}: AIP_MODEL ${model[1]} does not exist`);
      if (!exec) continue;
      const words = exec[1]!.split(/\s+/);
      words.forEach((w, i) => {
        if (!w.startsWith("/") || w.includes("%") || words[i - 1] === "--listen") return;
        if (!existsSync(w)) problems.push(`${f.path}: ExecStart ${w} does not exist`);
        else if (i === 0 && (!statSync(w).isFile() || !isExecutable(w)))
          problems.push(`${f.path}: ExecStart ${w} is not an executable file`);
      });
    }
  }
  return problems;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Write the rendered files under `out`; returns their absolute paths. */
export function writeRendered(out: string, files: RenderedFile[]): string[] {
  return files.map((f) => {
    const path = join(out, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.content);
    return path;
  });
}

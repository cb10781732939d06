/** Registration: the checked-in manifest, compared with what the agent itself prints (`--manifest`, run sandboxed). */
import { execa } from "execa";
import { commandPaths, findSandbox, sandboxArgs, type SandboxLayout } from "./vet/sandbox.js";
import { limitCpu, WALL_FACTOR } from "./vet/dynamic.js";
import { isDeepStrictEqual } from "node:util";
import { readManifestFile } from "../../protocol/contract/manifest.js";
import type { AgentManifest } from "../../protocol/contract/schemas.js";
import type { AgentConfig } from "../core/config.js";

/** Keys whose values differ between two manifests (top level, and resources.* one level down). */
export function manifestDiff(checkedIn: Record<string, unknown>, printed: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(checkedIn), ...Object.keys(printed)])].sort();
  const out: string[] = [];
  for (const k of keys) {
    const a = checkedIn[k];
    const b = printed[k];
    if (isDeepStrictEqual(a, b)) continue;
    if (typeof a === "object" && a !== null && typeof b === "object" && b !== null && !Array.isArray(a)) {
      out.push(...manifestDiff(a as Record<string, unknown>, b as Record<string, unknown>).map((s) => `${k}.${s}`));
    } else {
      out.push(`${k}: checked-in ${JSON.stringify(a)}, agent prints ${JSON.stringify(b)}`);
    }
  }
  return out;
}

export interface Registration {
  manifest: AgentManifest;
  /** Differences between the checked-in manifest and `--manifest`; empty when they agree. */
  mismatch: string[];
}

/**
 * Run `command --manifest` inside the vetting sandbox (bwrap), with the agent's real environment, and
 * decode its output. Without bubblewrap it runs only when `unsandboxed` allows it (vetting off): the
 * command then is the operator's own config, never a client's. Rejects saying what went wrong.
 */
export async function printedManifest(
  command: string[],
  env: Record<string, string>,
  opts: {
    layout: Omit<SandboxLayout, "keep">;
    configEnv: Record<string, string>;
    unsandboxed: boolean;
    timeoutMs?: number;
  },
): Promise<unknown> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const argv = [...command, "--manifest"];
  const sandbox = await findSandbox();
  // The limit is the run's CPU time, as in vetting (vet/dynamic.ts limitCpu), so that a busy host does
  // not turn a slow start into a mismatch; a run that waits idle is stopped after WALL_FACTOR times it.
  // Its own process group, so that a kill takes bwrap's sandbox with it.
  const common = { reject: false, env, extendEnv: false, stdin: "ignore", detached: true } as const;
  let child;
  if (typeof sandbox !== "string") {
    const layout = { ...opts.layout, keep: commandPaths(command, opts.configEnv) };
    child = execa(sandbox.bwrap, sandboxArgs(layout, argv), common);
  } else if (opts.unsandboxed) {
    child = execa(argv[0]!, argv.slice(1), { ...common, cwd: opts.layout.cwd });
  } else {
    throw new Error(`--manifest not run: ${sandbox}`);
  }
  let over: "cpu" | "wall" | undefined;
  const watch = child.pid === undefined ? undefined : limitCpu(child.pid, timeoutMs, (why) => (over = why));
  const run = await child.finally(() => watch?.stop());
  if (run.exitCode !== 0 || run.failed) {
    const why =
      over === "cpu"
        ? `no answer within ${timeoutMs} ms of CPU time`
        : over === "wall"
          ? `no answer within ${timeoutMs * WALL_FACTOR} ms`
          : `exit ${run.exitCode ?? run.signal}`;
    throw new Error(`--manifest failed: ${why} ${String(run.stderr).slice(0, 200)}`.trim());
  }
  try {
    return JSON.parse(String(run.stdout));
  } catch {
    throw new Error("--manifest printed something that is not JSON");
  }
}

/** The checked-in manifest of a configured agent (its name must be the agent's). */
export function checkedInManifest(agent: AgentConfig): AgentManifest {
  const manifest = readManifestFile(agent.manifestPath);
  if (manifest.name !== agent.name) {
    throw new Error(`Agent "${agent.name}": its manifest ${agent.manifestPath} is for "${manifest.name}"`);
  }
  return manifest;
}

/** Compare the checked-in manifest with what the agent printed (or why it printed nothing). */
export function registration(manifest: AgentManifest, printed: unknown): Registration {
  if (printed instanceof Error) return { manifest, mismatch: [printed.message] };
  return {
    manifest,
    mismatch: manifestDiff(manifest as unknown as Record<string, unknown>, printed as Record<string, unknown>),
  };
}

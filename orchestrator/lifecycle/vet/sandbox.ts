/**
 * The vetting sandbox (docs/security.md, "Vetting"): every run of a candidate, `--manifest` included,
 * happens inside bubblewrap with new user, pid, network, ipc, uts and cgroup namespaces, a read-only
 * root, a private /tmp, home and /run, no capabilities and no-new-privileges (bwrap always sets it).
 * The environment, the HOME and TMPDIR paths and the cwd are the real run's: only the sandbox differs.
 */
import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import { isInside } from "../../../protocol/util/paths.js";
import { execa } from "execa";
import { INSTALL_BWRAP } from "../../../protocol/util/bwrap.js";
import { TOOL_TIMEOUT_MS, which } from "./tools.js";

export interface SandboxLayout {
  /** HOME as the real run sees it (the sandbox mounts an empty private directory there). */
  home: string;
  /** TMPDIR as the real run sees it (private too). */
  tmpdir: string;
  /** The working directory of the real run. */
  cwd: string;
  /** Further directories to hide behind empty ones (agent socket dirs, the orchestrator's socket dir). */
  hide: string[];
  /** Paths the candidate needs (its executable, interpreter chain, script arguments): kept visible, read-only. */
  keep: string[];
}

export { INSTALL_BWRAP };

let probed: Promise<string | { bwrap: string }> | undefined;

/** bwrap's path, or why the sandbox cannot run here. A success is remembered; a failure is re-probed next time. */
export function findSandbox(): Promise<string | { bwrap: string }> {
  if (probed) return probed;
  const p = probe();
  probed = p;
  void p.then((r) => {
    if (typeof r === "string") probed = undefined;
  });
  return p;
}

async function probe(): Promise<string | { bwrap: string }> {
  const bwrap = which("bwrap");
  if (!bwrap)
    return `bubblewrap is not installed (vetting runs every candidate inside it); install it: ${INSTALL_BWRAP}`;
  const argv = sandboxArgs({ home: homedir(), tmpdir: "/tmp", cwd: "/", hide: [], keep: [] }, ["/bin/true"]);
  const r = await execa(bwrap, argv, { timeout: TOOL_TIMEOUT_MS, reject: false });
  if (!r.failed) return { bwrap };
  return `bubblewrap cannot create its namespaces here (${(r.stderr || r.message || "").trim()}); allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run the orchestrator where they are allowed`;
}

/** The top-level directory below `mount` that holds `path` (what must stay visible when `mount` is hidden). */
function anchorBelow(mount: string, path: string): string | undefined {
  if (!isInside(mount, path) || resolve(path) === resolve(mount)) return undefined;
  const rel = resolve(path).slice(resolve(mount).length).split(sep).filter(Boolean);
  return resolve(mount, rel[0]!);
}

/** bwrap arguments that run `command` (argv) inside the sandbox. */
export function sandboxArgs(layout: SandboxLayout, command: string[]): string[] {
  const hidden = [
    ...new Set(
      ["/tmp", "/run", layout.home, layout.tmpdir, ...layout.hide]
        .filter((p) => isAbsolute(p) && p !== "/")
        .map((p) => resolve(p)),
    ),
  ];
  // Mount order: outer directories first, so that an inner private directory is not covered again.
  hidden.sort((a, b) => a.length - b.length);
  const keep = new Set<string>();
  for (const path of [...layout.keep, layout.cwd]) {
    if (!isAbsolute(path) || !existsSync(path)) continue;
    for (const p of new Set([path, safeRealpath(path)])) {
      for (const mount of hidden) {
        const anchor = anchorBelow(mount, p);
        if (anchor !== undefined) keep.add(anchor);
      }
    }
  }
  const args = [
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
  ];
  for (const mount of hidden) if (existsSync(mount)) args.push("--tmpfs", mount);
  // Kept paths come back read-only, each at its own path, after every private mount above them;
  // then what must stay hidden inside a kept directory (a socket dir in a test's temp dir) is hidden again.
  const kept = [...keep].filter((k) => existsSync(k)).sort((a, b) => a.length - b.length);
  for (const k of kept) args.push("--ro-bind", k, k);
  for (const mount of hidden)
    if (kept.some((k) => isInside(k, mount) && k !== mount) && existsSync(mount)) args.push("--tmpfs", mount);
  if (
    !existsSync(layout.cwd) ||
    hidden.some((m) => isInside(m, layout.cwd) && ![...keep].some((k) => isInside(k, layout.cwd)))
  ) {
    args.push("--dir", layout.cwd);
  }
  args.push("--chdir", layout.cwd, "--", ...command);
  return args;
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * The paths a candidate needs to see: the executable, every absolute argument that exists, and every
 * value of its configured env that is an existing absolute path (a model file, a manifest).
 */
export function commandPaths(command: readonly string[], env: Record<string, string> = {}): string[] {
  return [...command, ...Object.values(env)]
    .filter((a) => isAbsolute(a) && existsSync(a))
    .flatMap((a) => [a, dirname(a)]);
}

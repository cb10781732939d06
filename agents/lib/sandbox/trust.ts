/**
 * Workspace trust (docs/security.md, "Workspace trust"): nothing of a workspace runs (its test runner,
 * its config files, its package scripts) unless its owner trusted it. The decision is the operator's:
 * the orchestrator passes the config's `trusted_workspaces` (or its own AIP_TRUSTED_WORKSPACES, which
 * overrides the config) to every agent, and the file `aip trust DIR` writes in the state dir is read at
 * each decision, so a new trust needs no reload. No request field can trust anything.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import { isAbsolute, resolve, sep } from "node:path";

/** The effective `trusted_workspaces` list (colon-separated paths or globs), as the agent sees it. */
export const TRUSTED_ENV = "AIP_TRUSTED_WORKSPACES";
/** Where that list came from: "config" or "env" (set by the orchestrator beside it). */
export const TRUSTED_SOURCE_ENV = "AIP_TRUSTED_WORKSPACES_SOURCE";
/** The file `aip trust` writes (in the state dir), passed to agents by the orchestrator. */
export const TRUST_FILE_ENV = "AIP_TRUST_FILE";
/** The trust file's name inside the state dir. */
export const TRUST_FILE_NAME = "trusted-workspaces.json";
/** The trust file is read only up to this size. */
export const TRUST_FILE_MAX_BYTES = 256 * 1024;

export interface TrustDecision {
  trusted: boolean;
  source?: "config" | "env" | "aip trust";
  /** How to trust it (or, when trusted, what trusted it). */
  hint: string;
}

/** True when `entry` is a glob rather than a plain path. */
function isGlob(entry: string): boolean {
  return /[*?[]/.test(entry);
}

/** A glob as a whole-path regular expression: `**` any run of characters, `*` and `?` within one segment. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      out += ".*";
      i++;
      if (glob[i + 1] === "/") i++;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end === -1) out += "\\[";
      else {
        out += `[${glob
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

function inside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** True when `root` (a real path) is `entry`, inside it, or matches it as a glob. */
export function matchesTrustEntry(entry: string, root: string): boolean {
  if (!isAbsolute(entry)) return false;
  if (isGlob(entry)) {
    const re = globToRegExp(resolve(entry));
    // A glob naming a directory trusts what is below it too, as a path does.
    let p = root;
    for (;;) {
      if (re.test(p)) return true;
      const up = resolve(p, "..");
      if (up === p) return false;
      p = up;
    }
  }
  return inside(resolve(entry), root) || inside(real(entry), root);
}

/** The entries of a colon-separated list. */
export function parseTrustList(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(":")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * The directories `aip trust` recorded in `file`, or [] when it is missing, unreadable, too large, not
 * a regular file, or writable by anyone but its owner (who must be this user or root): a trust file
 * someone else could have written trusts nothing.
 */
export function readTrustFile(file: string | undefined): string[] {
  if (!file) return [];
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const st = fstatSync(fd);
    const uid = process.getuid?.() ?? 0;
    if (!st.isFile() || st.size > TRUST_FILE_MAX_BYTES) return [];
    if ((st.uid !== uid && st.uid !== 0) || (st.mode & 0o022) !== 0) return [];
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0) break;
      n += r;
    }
    const parsed = JSON.parse(buf.subarray(0, n).toString("utf8")) as unknown;
    const list = (parsed as { workspaces?: unknown } | null)?.workspaces;
    return Array.isArray(list) ? list.filter((e): e is string => typeof e === "string" && isAbsolute(e)) : [];
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

/** How to trust `root`: the one line every skipped answer carries. */
export function trustHint(root: string): string {
  return `run \`aip trust ${root}\` (or list it in trusted_workspaces in the agency config, or in AIP_TRUSTED_WORKSPACES) to let the agency run this workspace's code, sandboxed`;
}

/** Whether code of the workspace at `root` may run (sandboxed), and why. */
export function workspaceTrust(root: string, env: NodeJS.ProcessEnv = process.env): TrustDecision {
  if (!isAbsolute(root)) return { trusted: false, hint: `workspace root must be absolute; ${trustHint(root)}` };
  const realRoot = real(root);
  const listed = parseTrustList(env[TRUSTED_ENV]);
  const listSource = env[TRUSTED_SOURCE_ENV] === "config" ? "config" : "env";
  const hit = listed.find((e) => matchesTrustEntry(e, realRoot));
  if (hit !== undefined)
    return {
      trusted: true,
      source: listSource,
      hint: `trusted by ${listSource === "config" ? "trusted_workspaces in the agency config" : TRUSTED_ENV} (${hit})`,
    };
  const recorded = readTrustFile(env[TRUST_FILE_ENV]).find((e) => matchesTrustEntry(e, realRoot));
  if (recorded !== undefined)
    return { trusted: true, source: "aip trust", hint: `trusted by \`aip trust ${recorded}\`` };
  return { trusted: false, hint: trustHint(realRoot) };
}

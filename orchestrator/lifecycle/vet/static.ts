/**
 * Static inspection: what an executable is (ELF or `#!` script), the interpreter chain that really runs
 * (`#!/usr/bin/env node` → /usr/bin/env → the node ELF found on PATH), and the shared libraries the ELF
 * and any native addons pull in (`readelf -d` NEEDED, resolved through RPATH/RUNPATH, the ld.so cache
 * and the default directories, transitively). Nothing here executes the agent.
 */
import { accessSync, constants, existsSync, openSync, readSync, closeSync, realpathSync, statSync } from "node:fs";
import { posix } from "node:path";
import { execa } from "execa";
import { TOOL_TIMEOUT_MS } from "./tools.js";

export interface Library {
  /** The NEEDED name, e.g. "libcuda.so.1". */
  name: string;
  /** Where it resolves to; absent when not found on this host. */
  path?: string;
  /** The ELF that needs it. */
  neededBy: string;
}

export interface ExecutableInfo {
  format: "elf" | "script" | "other" | "missing";
  /** The executable, then each interpreter in turn (as written, then resolved): what exec may legitimately run. */
  chain: string[];
  /** Every path whose execve counts as the agent starting its own interpreter (env's PATH candidates included). */
  allowedExecs: Set<string>;
  /** The ELF that finally runs; undefined when the chain does not end in one. */
  elf?: string;
  /** Why the chain is broken, when it is. */
  problem?: string;
}

/** The first bytes of a file ("" when unreadable). */
function head(path: string, bytes = 512): Buffer {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, readSync(fd, buf, 0, bytes, 0));
  } catch {
    return Buffer.alloc(0);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isElf(path: string): boolean {
  const h = head(path, 4);
  return h.length === 4 && h[0] === 0x7f && h.toString("latin1", 1, 4) === "ELF";
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Split a `#!` line the way `env -S` would; Linux itself passes everything after the interpreter as one argument. */
export function parseShebang(line: string): { interpreter: string; args: string[] } | undefined {
  const m = /^#!\s*(\S+)\s*(.*)$/.exec(line.replace(/\r$/, ""));
  if (!m) return undefined;
  return { interpreter: m[1]!, args: m[2]!.length > 0 ? m[2]!.split(/\s+/) : [] };
}

/** The program `env ARGS` runs: options (-S splits, -i, -u NAME, -C DIR) and NAME=VALUE skipped. */
export function envProgram(args: string[]): string | undefined {
  const words = args.flatMap((a) => a.split(/\s+/)).filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === "-u" || w === "-C" || w === "--unset" || w === "--chdir") i++;
    else if (w.startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) continue;
    else return w;
  }
  return undefined;
}

/** Resolve the interpreter chain of `exe` with the PATH the agent will run with. */
export function inspectExecutable(exe: string, pathEnv: string): ExecutableInfo {
  const info: ExecutableInfo = { format: "missing", chain: [exe], allowedExecs: new Set([exe]) };
  if (!existsSync(exe)) return { ...info, problem: `${exe} does not exist` };
  if (!executable(exe)) return { ...info, format: "other", problem: `${exe} is not an executable file (chmod +x?)` };
  let current = exe;
  for (let depth = 0; depth < 4; depth++) {
    if (isElf(current)) {
      if (depth === 0) info.format = "elf";
      info.elf = current;
      return info;
    }
    const firstLine = head(current).toString("utf8").split("\n")[0] ?? "";
    const sb = parseShebang(firstLine);
    if (!sb) {
      info.format = depth === 0 ? "other" : info.format;
      return { ...info, problem: `${current} is neither an ELF binary nor a #! script` };
    }
    if (depth === 0) info.format = "script";
    let next = sb.interpreter;
    add(info, next);
    if (posix.basename(next) === "env") {
      const prog = envProgram(sb.args);
      if (!prog) return { ...info, problem: `${current}: #!${sb.interpreter} names no program` };
      const dirs = pathEnv.split(":").filter((d) => d.startsWith("/"));
      // env tries every PATH entry in turn; each of those attempts is the agent starting its own interpreter.
      for (const d of dirs) info.allowedExecs.add(posix.join(d, prog));
      const found = prog.includes("/") ? prog : dirs.map((d) => posix.join(d, prog)).find(executable);
      if (!found) return { ...info, problem: `${current}: ${prog} is not on PATH (${pathEnv})` };
      const shim = versionManagerShim(found);
      if (shim !== undefined) {
        const real = prog.includes("/")
          ? undefined
          : dirs.map((d) => posix.join(d, prog)).find((c) => executable(c) && versionManagerShim(c) === undefined);
        return {
          ...info,
          problem:
            `${current}: ${prog} resolves to ${found}, a ${shim} shim (a script that asks ${shim} which interpreter to run, and runs it); ` +
            `vetting cannot vouch for what it picks. Point the #! line at the real interpreter${real ? `, e.g. #!${real}` : ` (${shim} which ${prog} prints it)`}`,
        };
      }
      next = found;
      add(info, next);
    }
    if (!executable(next)) return { ...info, problem: `${current}: interpreter ${next} is not executable` };
    current = next;
  }
  return { ...info, problem: `${exe}: interpreter chain deeper than 4` };
}

/** Version managers whose `shims/` directories hold scripts that pick an interpreter at run time. */
const SHIM_MANAGERS: [RegExp, string][] = [
  [/\/\.pyenv\/shims\//, "pyenv"],
  [/\/\.asdf\/shims\//, "asdf"],
  [/\/\.rbenv\/shims\//, "rbenv"],
  [/\/\.nodenv\/shims\//, "nodenv"],
  [/\/mise\/shims\//, "mise"],
  [/\/\.volta\/bin\//, "volta"],
];

/** The version manager whose shim `path` is, or undefined. */
export function versionManagerShim(path: string): string | undefined {
  for (const [re, name] of SHIM_MANAGERS) if (re.test(path)) return name;
  const text = head(path).toString("utf8");
  const m = /\b(pyenv|asdf|rbenv|nodenv|mise) exec\b/.exec(text);
  return text.startsWith("#!") && m ? m[1] : undefined;
}

function add(info: ExecutableInfo, path: string): void {
  info.chain.push(path);
  info.allowedExecs.add(path);
  try {
    info.allowedExecs.add(realpathSync(path));
  } catch {
    // a missing interpreter is reported by the caller
  }
}

/** `readelf -d` of one ELF: NEEDED names and RPATH/RUNPATH directories ($ORIGIN expanded). */
export async function dynamicSection(
  elf: string,
  readelf = "readelf",
): Promise<{ needed: string[]; searchDirs: string[] }> {
  const { stdout } = await execa(readelf, ["-dW", elf], { maxBuffer: 4 << 20, timeout: TOOL_TIMEOUT_MS });
  const needed: string[] = [];
  const searchDirs: string[] = [];
  for (const line of stdout.split("\n")) {
    const m = /\((NEEDED|RPATH|RUNPATH)\)\s+[^[]*\[(.*)\]\s*$/.exec(line);
    if (!m) continue;
    if (m[1] === "NEEDED") needed.push(m[2]!);
    else for (const d of m[2]!.split(":")) searchDirs.push(d.replace(/\$(ORIGIN|\{ORIGIN\})/g, posix.dirname(elf)));
  }
  return { needed, searchDirs };
}

/** The ld.so cache (`ldconfig -p`): library name → path, 64-bit entries preferred. */
export async function ldCache(): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for (const ldconfig of ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]) {
    try {
      const { stdout } = await execa(ldconfig, ["-p"], { maxBuffer: 16 << 20, timeout: TOOL_TIMEOUT_MS });
      for (const line of stdout.split("\n")) {
        const m = /^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)$/.exec(line);
        if (m && (!map.has(m[1]!) || m[2]!.includes("64"))) map.set(m[1]!, m[3]!);
      }
      return map;
    } catch {
      // try the next location
    }
  }
  return map;
}

const DEFAULT_LIB_DIRS = [
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
  "/lib64",
  "/usr/lib64",
  "/lib",
  "/usr/lib",
  "/lib/aarch64-linux-gnu",
  "/usr/lib/aarch64-linux-gnu",
];

/** Every library `elves` need, transitively, each resolved where this host's loader would find it. */
export async function libraryClosure(
  elves: string[],
  readelf = "readelf",
  cache?: Map<string, string>,
): Promise<Library[]> {
  const ld = cache ?? (await ldCache());
  const out: Library[] = [];
  const seen = new Set<string>();
  const queue = [...elves];
  while (queue.length > 0) {
    const elf = queue.shift()!;
    if (seen.has(elf)) continue;
    seen.add(elf);
    let section: { needed: string[]; searchDirs: string[] };
    try {
      section = await dynamicSection(elf, readelf);
    } catch (err) {
      // The agent's own ELF must be readable; a dependency that is not is merely unresolved.
      if (elves.includes(elf))
        throw new Error(
          `readelf could not read ${elf}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`,
        );
      continue;
    }
    const { needed, searchDirs } = section;
    for (const name of needed) {
      // The loader's order: RPATH/RUNPATH, the ld.so cache, then the default directories.
      const inDirs = (dirs: string[]): string | undefined =>
        dirs.map((d) => posix.join(d, name)).find((p) => existsSync(p) && isElf(p));
      const path = name.includes("/") ? name : (inDirs(searchDirs) ?? ld.get(name) ?? inDirs(DEFAULT_LIB_DIRS));
      out.push({ name, neededBy: elf, ...(path !== undefined ? { path } : {}) });
      if (path !== undefined && !seen.has(path)) queue.push(path);
    }
  }
  return out;
}

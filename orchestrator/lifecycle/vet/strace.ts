/**
 * `strace -f -y` output → what the traced processes tried to do: file accesses (read or write) with
 * absolute paths, socket operations with decoded addresses, and execs. Paths are resolved relative to
 * their dirfd: the kernel's `<path>` annotation (-y) when strace printed one, else the process's
 * tracked cwd (initial cwd, chdir, fchdir) or the fd table built from earlier opens. Threads and
 * children share or copy that state as their clone flags say. Failed calls are kept: vetting judges
 * what an agent tried, not what succeeded (root bypasses permission checks anyway).
 */
import { posix } from "node:path";
import {
  arrayArg,
  fdArg,
  flagSet,
  joinResumed,
  parseLine,
  parseReturn,
  splitTopLevel,
  stringArg,
  structArg,
  type StraceLine,
} from "./strace-syntax.js";

/** The syscalls vetting traces (`strace -e trace=…`). */
export const TRACED_SYSCALLS = [
  "open",
  "openat",
  "openat2",
  "creat",
  "truncate",
  "rename",
  "renameat",
  "renameat2",
  "unlink",
  "unlinkat",
  "rmdir",
  "mkdir",
  "mkdirat",
  "link",
  "linkat",
  "symlink",
  "symlinkat",
  "mknod",
  "mknodat",
  "chmod",
  "fchmodat",
  "chown",
  "lchown",
  "fchownat",
  "socket",
  "connect",
  "bind",
  "sendto",
  "sendmsg",
  "execve",
  "execveat",
  "chdir",
  "fchdir",
  "clone",
  "clone3",
  "fork",
  "vfork",
  ...["io_uring_setup", "open_by_handle_at", "ptrace", "process_vm_readv", "process_vm_writev"],
] as const;

/**
 * Calls that would let an agent act unseen by this trace (io_uring opens and connects bypass syscalls;
 * open_by_handle_at opens without a path) or reach into other processes: refused outright.
 */
export const EVASIVE_SYSCALLS = new Set([
  "io_uring_setup",
  "open_by_handle_at",
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
]);

interface Base {
  pid: number;
  syscall: string;
  ok: boolean;
  errno?: string;
  /** The strace line(s), as evidence. */
  line: string;
}
/** `path` is absolute and lexically normalised; `kernelPath` is what the kernel reported for the opened fd. */
export interface FileEvent extends Base {
  kind: "file";
  access: "read" | "write";
  path: string;
  kernelPath?: string;
  /** True when the dirfd could not be resolved: `path` is then only the relative part. */
  unresolved?: boolean;
  flags: Set<string>;
}
export interface NetEvent extends Base {
  kind: "net";
  op: "socket" | "connect" | "bind" | "send";
  family: string;
  /** "127.0.0.1:80", "[::1]:9", a Unix path (absolute), or "@name" for an abstract Unix socket. */
  address?: string;
  abstract?: boolean;
}
export interface ExecEvent extends Base {
  kind: "exec";
  path: string;
  argv: string[];
}
export interface EvasiveEvent extends Base {
  kind: "evasive";
}
export type TraceEvent = FileEvent | NetEvent | ExecEvent | EvasiveEvent;

const WRITE_OPEN_FLAGS = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE"];
const MUTATING: Record<string, { dirfd?: number; paths: number[] }> = {
  truncate: { paths: [0] },
  creat: { paths: [0] },
  unlink: { paths: [0] },
  rmdir: { paths: [0] },
  mkdir: { paths: [0] },
  chmod: { paths: [0] },
  chown: { paths: [0] },
  lchown: { paths: [0] },
  mknod: { paths: [0] },
  unlinkat: { dirfd: 0, paths: [1] },
  mkdirat: { dirfd: 0, paths: [1] },
  mknodat: { dirfd: 0, paths: [1] },
  fchmodat: { dirfd: 0, paths: [1] },
  fchownat: { dirfd: 0, paths: [1] },
  symlink: { paths: [1] },
  symlinkat: { dirfd: 1, paths: [2] },
  rename: { paths: [0, 1] },
  link: { paths: [1] },
};

interface Proc {
  cwd: { value: string | undefined };
  fds: Map<number, string>;
}

/** Parse a whole trace. `cwd` is the directory the first process started in. */
export function parseStrace(text: string, cwd: string): TraceEvent[] {
  const procs = new Map<number, Proc>();
  const pending = new Map<number, { name: string; args: string; line: string }>();
  const events: TraceEvent[] = [];
  let rootPid: number | undefined;

  const proc = (pid: number): Proc => {
    let p = procs.get(pid);
    if (p) return p;
    rootPid ??= pid;
    // A child can print before its parent's clone returns; inherit from the one pid with a clone in flight.
    const parents = [...pending.entries()].filter(([, c]) => /^(clone3?|v?fork)$/.test(c.name)).map(([ppid]) => ppid);
    const from = parents.length === 1 ? procs.get(parents[0]!) : procs.get(rootPid);
    p = from ? { cwd: { value: from.cwd.value }, fds: new Map(from.fds) } : { cwd: { value: cwd }, fds: new Map() };
    procs.set(pid, p);
    return p;
  };

  for (const raw of text.split("\n")) {
    if (raw.length === 0) continue;
    let line: StraceLine = parseLine(raw);
    let evidence = raw;
    if (line.kind === "unfinished") {
      proc(line.pid);
      pending.set(line.pid, { name: line.name, args: line.args, line: raw });
      continue;
    }
    if (line.kind === "resumed") {
      const start = pending.get(line.pid);
      pending.delete(line.pid);
      if (!start) continue;
      line = joinResumed(line.pid, start.name, start.args, line.rest);
      evidence = `${start.line}\n${raw}`;
    }
    if (line.kind !== "call") continue;
    const p = proc(line.pid);
    interpret(line.pid, line.name, line.args, line.ret, evidence, p, procs, events);
  }
  return events;
}

function interpret(
  pid: number,
  name: string,
  argsText: string,
  retText: string,
  line: string,
  p: Proc,
  procs: Map<number, Proc>,
  out: TraceEvent[],
): void {
  const args = splitArgs(argsText);
  const ret = parseReturn(retText);
  const ok = ret.value !== undefined && ret.value >= 0 && ret.errno === undefined;
  const base = { pid, syscall: name, ok, line, ...(ret.errno !== undefined ? { errno: ret.errno } : {}) };
  const file = (
    access: FileEvent["access"],
    dirfd: string | undefined,
    pathText: string | undefined,
    flags: Set<string>,
    kernelPath?: string,
  ): void => {
    const path = stringArg(pathText)?.value;
    if (path === undefined) return;
    const r = resolveAt(p, dirfd, path);
    out.push({
      kind: "file",
      ...base,
      access,
      path: r.path,
      flags,
      ...(r.unresolved ? { unresolved: true } : {}),
      ...(kernelPath !== undefined ? { kernelPath } : {}),
    });
  };

  if (EVASIVE_SYSCALLS.has(name)) {
    out.push({ kind: "evasive", ...base });
    return;
  }
  if (name === "open" || name === "openat" || name === "openat2" || name === "creat") {
    const dirfd = name === "openat" || name === "openat2" ? args[0] : undefined;
    const pathText = dirfd !== undefined ? args[1] : args[0];
    const flags =
      name === "creat"
        ? new Set(["O_CREAT", "O_WRONLY", "O_TRUNC"])
        : name === "openat2"
          ? flagSet(structArg(args[2])?.get("flags"))
          : flagSet(dirfd !== undefined ? args[2] : args[1]);
    const write = WRITE_OPEN_FLAGS.some((f) => flags.has(f));
    file(write ? "write" : "read", dirfd, pathText, flags, ret.path);
    const opened = out[out.length - 1];
    if (ok && ret.value !== undefined && opened?.kind === "file") p.fds.set(ret.value, ret.path ?? opened.path);
    return;
  }
  const mut = MUTATING[name];
  if (mut) {
    for (const i of mut.paths) file("write", mut.dirfd !== undefined ? args[mut.dirfd] : undefined, args[i], new Set());
    if (name === "link") file("read", undefined, args[0], new Set());
    return;
  }
  if (name === "renameat" || name === "renameat2") {
    file("write", args[0], args[1], new Set());
    file("write", args[2], args[3], new Set());
    return;
  }
  if (name === "linkat") {
    file("read", args[0], args[1], new Set());
    file("write", args[2], args[3], new Set());
    return;
  }
  if (name === "execve" || name === "execveat") {
    const at = name === "execveat";
    const path = stringArg(at ? args[1] : args[0])?.value;
    if (path === undefined) return;
    const argv = (arrayArg(at ? args[2] : args[1]) ?? []).map((a) => stringArg(a)?.value ?? a);
    out.push({ kind: "exec", ...base, path: resolveAt(p, at ? args[0] : undefined, path).path, argv });
    return;
  }
  if (name === "socket") {
    out.push({ kind: "net", ...base, op: "socket", family: (args[0] ?? "?").trim() });
    return;
  }
  if (name === "connect" || name === "bind" || name === "sendto" || name === "sendmsg") {
    const addrText = name === "sendto" ? args[4] : name === "sendmsg" ? structArg(args[1])?.get("msg_name") : args[1];
    const addr = sockaddr(p, addrText);
    if (!addr) return; // sendto/sendmsg without a destination: the socket's connect was already seen
    out.push({ kind: "net", ...base, op: name === "sendto" || name === "sendmsg" ? "send" : name, ...addr });
    return;
  }
  if (name === "chdir" && ok) {
    const path = stringArg(args[0])?.value;
    if (path !== undefined) p.cwd.value = resolveAt(p, undefined, path).path;
    return;
  }
  if (name === "fchdir" && ok) {
    const fd = fdArg(args[0]);
    const dir = fd?.path ?? (typeof fd?.fd === "number" ? p.fds.get(fd.fd) : undefined);
    if (dir !== undefined) p.cwd.value = dir;
    return;
  }
  if (
    (name === "clone" || name === "clone3" || name === "fork" || name === "vfork") &&
    ok &&
    ret.value !== undefined &&
    ret.value > 0
  ) {
    if (procs.has(ret.value)) return; // the child already printed and inherited
    const flags =
      name === "clone3"
        ? flagSet(structArg(args[0]?.split(" => ")[0])?.get("flags"))
        : flagSet(args.find((a) => a.startsWith("flags="))?.slice(6));
    procs.set(ret.value, {
      cwd: flags.has("CLONE_FS") ? p.cwd : { value: p.cwd.value },
      fds: flags.has("CLONE_FILES") ? p.fds : new Map(p.fds),
    });
  }
}

function splitArgs(text: string): string[] {
  return text.length === 0 ? [] : splitTopLevel(text);
}

/** Resolve `path` against a dirfd argument text (undefined = cwd). */
function resolveAt(p: Proc, dirfdText: string | undefined, path: string): { path: string; unresolved?: boolean } {
  if (path.startsWith("/")) return { path: posix.normalize(path) };
  const fd = dirfdText === undefined ? { fd: "AT_FDCWD" as const } : fdArg(dirfdText);
  let base: string | undefined;
  if (fd?.fd === "AT_FDCWD") {
    base = "path" in fd && fd.path !== undefined ? fd.path : p.cwd.value;
    if ("path" in fd && fd.path !== undefined) p.cwd.value = fd.path;
  } else if (fd) {
    base = fd.path ?? p.fds.get(fd.fd);
  }
  if (base === undefined) return { path, unresolved: true };
  return { path: posix.resolve(base, path) };
}

/** Decode a sockaddr struct: family and a printable address (Unix paths resolved against cwd). */
function sockaddr(p: Proc, text: string | undefined): Pick<NetEvent, "family" | "address" | "abstract"> | undefined {
  const s = structArg(text);
  const family = s?.get("sa_family");
  if (!s || !family) return undefined;
  if (family === "AF_UNIX") {
    const path = stringArg(s.get("sun_path"));
    if (!path) return { family };
    if (path.abstract) return { family, address: `@${path.value.replace(/\0+$/, "")}`, abstract: true };
    return { family, address: resolveAt(p, undefined, path.value).path };
  }
  const port = /htons\((\d+)\)/.exec(s.get("sin_port") ?? s.get("sin6_port") ?? "")?.[1];
  if (family === "AF_INET") {
    const ip = /inet_addr\("([^"]*)"\)/.exec(s.get("sin_addr") ?? "")?.[1];
    return { family, address: `${ip ?? "?"}:${port ?? "?"}` };
  }
  if (family === "AF_INET6") {
    const pton = [...s.keys()].find((k) => k.startsWith("inet_pton("));
    const ip = pton ? /"([^"]*)"/.exec(pton)?.[1] : undefined;
    return { family, address: `[${ip ?? "?"}]:${port ?? "?"}` };
  }
  return { family };
}

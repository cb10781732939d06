import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  TRACED_SYSCALLS,
  parseStrace,
  type ExecEvent,
  type FileEvent,
  type NetEvent,
} from "../../../../orchestrator/lifecycle/vet/strace.js";
import {
  parseLine,
  splitTopLevel,
  stringArg,
  unescapeC,
} from "../../../../orchestrator/lifecycle/vet/strace-syntax.js";
import { tempDir } from "../../../helpers.js";

const files = (t: string, cwd = "/start"): FileEvent[] =>
  parseStrace(t, cwd).filter((e): e is FileEvent => e.kind === "file");
const nets = (t: string): NetEvent[] => parseStrace(t, "/").filter((e): e is NetEvent => e.kind === "net");

describe("strace line syntax", () => {
  it("classifies complete, unfinished, resumed, exit and signal lines", () => {
    expect(parseLine('12 openat(AT_FDCWD, "/a", O_RDONLY) = 3')).toMatchObject({
      kind: "call",
      pid: 12,
      name: "openat",
      args: 'AT_FDCWD, "/a", O_RDONLY',
      ret: "3",
    });
    expect(parseLine('12 openat(AT_FDCWD, "/a", O_RDONLY <unfinished ...>')).toMatchObject({
      kind: "unfinished",
      name: "openat",
    });
    expect(parseLine("12 <... openat resumed>) = 3</a>")).toMatchObject({
      kind: "resumed",
      name: "openat",
      rest: ") = 3</a>",
    });
    expect(parseLine("12 +++ exited with 0 +++").kind).toBe("exit");
    expect(parseLine("12 --- SIGCHLD {si_signo=SIGCHLD} ---").kind).toBe("signal");
  });

  it("finds the closing parenthesis past strings, annotations and clone3's => notation", () => {
    const l = parseLine("7 clone3({flags=CLONE_VM|CLONE_FILES, stack_size=0x7e80} => {parent_tid=[8]}, 88) = 8");
    expect(l).toMatchObject({ kind: "call", ret: "8" });
    const o = parseLine('7 openat(3</d/x\\76y(z)>, "a)b\\"c", O_RDONLY) = 4</d/x\\76y(z)/a)b"c>');
    expect(o).toMatchObject({ kind: "call", ret: '4</d/x\\76y(z)/a)b"c>' });
  });

  it("decodes C escapes, including the octal \\74 \\76 strace uses inside fd annotations", () => {
    expect(unescapeC('a\\76b \\"q\\"\\n\\x41\\303\\251')).toBe('a>b "q"\nAé');
    expect(stringArg('"abc"...')).toEqual({ value: "abc", abstract: false, truncated: true });
    expect(stringArg('@"sock\\0"')).toEqual({ value: "sock\0", abstract: true, truncated: false });
    expect(splitTopLevel('3<socket:[1]>, {sa_family=AF_UNIX, sun_path="/a,b"}, 110')).toEqual([
      "3<socket:[1]>",
      '{sa_family=AF_UNIX, sun_path="/a,b"}',
      "110",
    ]);
  });
});

describe("strace semantics", () => {
  it("decodes open flags into reads and writes, and keeps failed attempts", () => {
    const ev = files(
      [
        '1 openat(AT_FDCWD</w>, "r", O_RDONLY|O_CLOEXEC) = 3</w/r>',
        '1 openat(AT_FDCWD</w>, "/x/new", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = -1 EACCES (Permission denied)',
        '1 open("/x/rw", O_RDWR) = 4',
        '1 creat("c", 0644) = 5',
        '1 openat2(AT_FDCWD</w>, "t", {flags=O_RDWR|O_TMPFILE, resolve=0, mode=0600}, 24) = 6</w/#123 (deleted)>',
      ].join("\n"),
    );
    expect(ev.map((e) => [e.syscall, e.access, e.path, e.ok])).toEqual([
      ["openat", "read", "/w/r", true],
      ["openat", "write", "/x/new", false],
      ["open", "write", "/x/rw", true],
      ["creat", "write", "/w/c", true], // the kernel's AT_FDCWD</w> annotation taught the cwd
      ["openat2", "write", "/w/t", true],
    ]);
    expect(ev[1]!.errno).toBe("EACCES");
    expect([...ev[1]!.flags]).toEqual(["O_WRONLY", "O_CREAT", "O_TRUNC", "O_CLOEXEC"]);
  });

  it("resolves dirfd-relative paths: AT_FDCWD, fds from earlier opens, chdir and fchdir, without -y annotations", () => {
    const ev = files(
      [
        '1 openat(AT_FDCWD, "/srv/dir", O_RDONLY|O_DIRECTORY) = 3',
        '1 openat(3, "../etc/passwd", O_RDONLY) = 4',
        '1 unlinkat(3, "old", 0) = 0',
        '1 chdir("sub") = 0',
        '1 mkdir("made", 0777) = 0',
        "1 fchdir(3) = 0",
        '1 renameat2(AT_FDCWD, "a", 3, "b", RENAME_NOREPLACE) = 0',
        '1 openat(9, "lost", O_WRONLY|O_CREAT, 0600) = 5',
      ].join("\n"),
    );
    expect(ev.map((e) => e.path)).toEqual([
      "/srv/dir",
      "/srv/etc/passwd",
      "/srv/dir/old",
      "/start/sub/made",
      "/srv/dir/a",
      "/srv/dir/b",
      "lost",
    ]);
    expect(ev.at(-1)!.unresolved).toBe(true);
  });

  it("joins unfinished and resumed halves across interleaved pids, keeping both lines as evidence", () => {
    const ev = files(
      [
        '5 openat(AT_FDCWD</a>, "x", O_RDONLY <unfinished ...>',
        '6 openat(AT_FDCWD</b>, "y", O_WRONLY|O_CREAT, 0600) = 3</b/y>',
        "5 <... openat resumed>) = 4</a/x>",
      ].join("\n"),
    );
    expect(ev.map((e) => [e.pid, e.path, e.access])).toEqual([
      [6, "/b/y", "write"],
      [5, "/a/x", "read"],
    ]);
    expect(ev[1]!.line.split("\n")).toHaveLength(2);
  });

  it("threads share the fd table and cwd (CLONE_FILES|CLONE_FS); forked children get copies", () => {
    const ev = files(
      [
        '1 openat(AT_FDCWD, "/d", O_RDONLY|O_DIRECTORY) = 3',
        "1 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_THREAD, exit_signal=0} => {parent_tid=[2]}, 88) = 2",
        "1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x1) = 3",
        '2 chdir("/t") = 0',
        '1 mkdir("m1", 0777) = 0',
        '3 mkdir("m2", 0777) = 0',
        '3 openat(3, "f", O_WRONLY|O_CREAT, 0600) = 4',
      ].join("\n"),
    );
    expect(ev.slice(1).map((e) => e.path)).toEqual(["/t/m1", "/start/m2", "/d/f"]);
  });

  it("decodes sockaddr families: AF_INET, AF_INET6, AF_UNIX paths and abstract names, sendmsg destinations", () => {
    const n = nets(
      [
        "1 socket(AF_INET6, SOCK_STREAM, IPPROTO_IP) = 3",
        '1 connect(3<socket:[1]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("10.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)',
        '1 connect(3<socket:[1]>, {sa_family=AF_INET6, sin6_port=htons(9), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        '1 connect(4<socket:[2]>, {sa_family=AF_UNIX, sun_path="rel.sock"}, 110) = 0',
        '1 connect(4<socket:[2]>, {sa_family=AF_UNIX, sun_path=@"abs\\0\\0"}, 110) = 0',
        '1 sendmsg(5<socket:[3]>, {msg_name={sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, msg_namelen=16, msg_iov=[{iov_base="x", iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1',
        '1 sendto(5<socket:[3]>, "x", 1, 0, NULL, 0) = 1',
      ].join("\n"),
    );
    expect(n.map((e) => [e.op, e.family, e.address])).toEqual([
      ["socket", "AF_INET6", undefined],
      ["connect", "AF_INET", "10.0.0.1:443"],
      ["connect", "AF_INET6", "[::1]:9"],
      ["connect", "AF_UNIX", "/rel.sock"],
      ["connect", "AF_UNIX", "@abs"],
      ["send", "AF_INET", "8.8.8.8:53"],
    ]);
  });

  it("reports calls that would act unseen (io_uring, open_by_handle_at) or on other processes", () => {
    const ev = parseStrace(
      [
        "1 io_uring_setup(64, {flags=IORING_SETUP_SQPOLL, sq_thread_cpu=0}) = 4",
        "1 open_by_handle_at(3</>, {handle_bytes=8, handle_type=FILEID_INO32_GEN}, O_RDONLY) = 5",
        "1 ptrace(PTRACE_ATTACH, 77) = -1 EPERM (Operation not permitted)",
      ].join("\n"),
      "/",
    );
    expect(ev.map((e) => [e.kind, e.syscall, e.ok])).toEqual([
      ["evasive", "io_uring_setup", true],
      ["evasive", "open_by_handle_at", true],
      ["evasive", "ptrace", false],
    ]);
  });

  it("decodes execve paths and argv", () => {
    const ev = parseStrace(
      '1 execve("/usr/bin/env", ["/usr/bin/env", "node", "a b"], 0x7ff /* 3 vars */) = 0',
      "/",
    ).filter((e): e is ExecEvent => e.kind === "exec");
    expect(ev).toMatchObject([{ path: "/usr/bin/env", argv: ["/usr/bin/env", "node", "a b"], ok: true }]);
  });
});

describe("strace semantics on a real trace", () => {
  const t = tempDir("aipst-");
  afterAll(() => t.cleanup());

  it("resolves a shell's relative write after cd, and a relative mkdir, from real strace output (no -y)", () => {
    mkdirSync(join(t.dir, "d"));
    const out = join(t.dir, "trace");
    execFileSync(
      "strace",
      [
        "-f",
        "-qq",
        "-e",
        `trace=${TRACED_SYSCALLS.join(",")}`,
        "-o",
        out,
        "--",
        "/bin/sh",
        "-c",
        "cd d && : > f && mkdir -p n",
      ],
      { cwd: t.dir },
    );
    const text = execFileSync("cat", [out], { encoding: "utf8" });
    const writes = files(text, t.dir)
      .filter((e) => e.access === "write")
      .map((e) => e.path);
    expect(writes).toContain(join(t.dir, "d/f"));
    expect(writes).toContain(join(t.dir, "d/n"));
  });
});

/**
 * The syntax of `strace -f -y` output: one line → pid, call name, argument texts and the return value;
 * argument texts → strings, fds with their `<path>` annotations, flag sets, structs and arrays.
 * Only syntax here; what a call means (paths, writes, sockets) is decided in strace.ts.
 */

/** One physical line, classified. `unfinished`/`resumed` halves are joined by the caller. */
export type StraceLine =
  | { kind: "call"; pid: number; name: string; args: string; ret: string }
  | { kind: "unfinished"; pid: number; name: string; args: string }
  | { kind: "resumed"; pid: number; name: string; rest: string }
  | { kind: "exit"; pid: number; text: string }
  | { kind: "signal"; pid: number; text: string }
  | { kind: "other"; text: string };

const UNFINISHED = " <unfinished ...>";

/** Classify one line of `strace -f -o FILE` output (each line starts with the pid). */
export function parseLine(line: string): StraceLine {
  const m = /^(\d+)\s+(.*)$/.exec(line);
  if (!m) return { kind: "other", text: line };
  const pid = Number(m[1]);
  const body = m[2]!;
  if (body.startsWith("+++")) return { kind: "exit", pid, text: body };
  if (body.startsWith("---")) return { kind: "signal", pid, text: body };
  const resumed = /^<\.\.\. ([a-z0-9_?]+) resumed>(.*)$/.exec(body);
  if (resumed) return { kind: "resumed", pid, name: resumed[1]!, rest: resumed[2]! };
  const call = /^([a-z0-9_?]+)\((.*)$/.exec(body);
  if (!call) return { kind: "other", text: line };
  const name = call[1]!;
  const tail = call[2]!;
  if (tail.endsWith(UNFINISHED)) return { kind: "unfinished", pid, name, args: tail.slice(0, -UNFINISHED.length) };
  const close = closingParen(tail);
  if (close === -1) return { kind: "other", text: line };
  const ret = /^\s*=\s*(.*)$/.exec(tail.slice(close + 1));
  return { kind: "call", pid, name, args: tail.slice(0, close), ret: ret ? ret[1]! : "?" };
}

/** Join an unfinished call's argument text with its resumed remainder into a complete call. */
export function joinResumed(pid: number, name: string, args: string, rest: string): StraceLine {
  // The remainder may itself be unfinished again (the process died mid-call): treat as a call with no result.
  const tail = rest.endsWith(UNFINISHED) ? rest.slice(0, -UNFINISHED.length) + ") = ?" : rest;
  const joined = parseLine(`${pid} ${name}(${args}${tail}`);
  return joined.kind === "call" ? joined : { kind: "call", pid, name, args, ret: "?" };
}

/**
 * Index of the parenthesis closing the argument list (depth 0), skipping quoted strings, nested
 * brackets and `<…>` fd annotations (strace escapes `<` and `>` inside them as \74 and \76).
 */
function closingParen(text: string): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') i = skipString(text, i);
    else if (c === "(" || c === "[" || c === "{" || c === "<") depth++;
    else if (c === "]" || c === "}" || (c === ">" && !isArrow(text, i))) depth--;
    else if (c === ")") {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** `=>` (clone3's "in => out" struct notation) and `->` are not annotation ends. */
function isArrow(text: string, i: number): boolean {
  return i > 0 && (text[i - 1] === "=" || text[i - 1] === "-");
}

/** Index of the closing quote of the string opening at `start`. */
function skipString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

/** Split an argument list (or struct body) on its top-level commas. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') i = skipString(text, i);
    else if (c === "(" || c === "[" || c === "{" || c === "<") depth++;
    else if (c === ")" || c === "]" || c === "}" || (c === ">" && !isArrow(text, i))) depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last.length > 0 || parts.length > 0) parts.push(last);
  return parts;
}

/** Decode strace's C-style escapes (\n \t \" \\ \ooo \xHH) into a byte-faithful latin1-free string. */
export function unescapeC(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "\\") {
      for (const b of Buffer.from(c, "utf8")) bytes.push(b);
      continue;
    }
    const n = text[++i] ?? "";
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, a: 7, b: 8, '"': 34, "\\": 92, "'": 39 };
    if (n in simple) bytes.push(simple[n]!);
    else if (n === "x") {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (/[0-7]/.test(n)) {
      const oct = /^[0-7]{1,3}/.exec(text.slice(i))![0];
      bytes.push(parseInt(oct, 8));
      i += oct.length - 1;
    } else bytes.push(92, n.charCodeAt(0));
  }
  return Buffer.from(bytes).toString("utf8");
}

/** A quoted string argument (`"…"`, maybe `@"…"` for abstract sockets, maybe truncated `"…"...`); undefined if not one. */
export function stringArg(
  text: string | undefined,
): { value: string; abstract: boolean; truncated: boolean } | undefined {
  if (text === undefined) return undefined;
  const m = /^(@?)"((?:[^"\\]|\\.)*)"(\.\.\.)?$/s.exec(text.trim());
  if (!m) return undefined;
  return { value: unescapeC(m[2]!), abstract: m[1] === "@", truncated: m[3] !== undefined };
}

/** An fd argument or return value: `3`, `AT_FDCWD`, `3</path>`, `AT_FDCWD</cwd>` (annotation decoded). */
export function fdArg(text: string | undefined): { fd: number | "AT_FDCWD"; path?: string } | undefined {
  if (text === undefined) return undefined;
  const m = /^(-?\d+|AT_FDCWD)(?:<(.*)>)?$/s.exec(text.trim());
  if (!m) return undefined;
  const fd = m[1] === "AT_FDCWD" ? "AT_FDCWD" : Number(m[1]);
  if (m[2] === undefined) return { fd };
  // -yy adds device/socket details inside a nested <…>; the path is what comes before it.
  const inner = m[2].replace(/<[^<>]*>$/, "");
  return { fd, path: unescapeC(inner) };
}

/** A flags expression `O_WRONLY|O_CREAT|0x80000` as a set of names (numbers kept as text). */
export function flagSet(text: string | undefined): Set<string> {
  if (text === undefined) return new Set();
  return new Set(
    text
      .trim()
      .split("|")
      .map((f) => f.trim())
      .filter((f) => f.length > 0),
  );
}

/** A struct `{a=1, b={…}, inet_pton(…)}` as key → raw value text; bare members are keyed by their text. */
export function structArg(text: string | undefined): Map<string, string> | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (!t.startsWith("{") || !t.endsWith("}")) return undefined;
  const fields = new Map<string, string>();
  for (const part of splitTopLevel(t.slice(1, -1))) {
    const eq = /^([a-z_][a-z0-9_]*)=(.*)$/s.exec(part);
    if (eq) fields.set(eq[1]!, eq[2]!);
    else fields.set(part, part);
  }
  return fields;
}

/** An array `["a", "b"]` as its element texts; undefined if not an array. */
export function arrayArg(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const t = text.trim();
  if (!t.startsWith("[") || !t.endsWith("]")) return undefined;
  return splitTopLevel(t.slice(1, -1));
}

/** The return value: number (or undefined for `?`), the fd annotation path, and errno name on failure. */
export function parseReturn(text: string): { value?: number; path?: string; errno?: string } {
  const m = /^(-?\d+|0x[0-9a-f]+|\?)(<.*>)?(?:\s+(E[A-Z0-9]+)\b.*)?/s.exec(text.trim());
  if (!m || m[1] === "?") return {};
  const out: { value?: number; path?: string; errno?: string } = { value: Number(m[1]) };
  if (m[2]) {
    const fd = fdArg(`${m[1]}${m[2]}`);
    if (fd?.path !== undefined) out.path = fd.path;
  }
  if (m[3]) out.errno = m[3];
  return out;
}

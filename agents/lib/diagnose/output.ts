/**
 * Tool output as text (docs/agents.md, "diagnose"): `tsc` errors, vitest / jest / node:test failures,
 * Node stack traces and Python tracebacks, parsed into compile errors and failures with their frames.
 * Parsing only: nothing here reads a file (the handler maps frames to the workspace, through the
 * race-free reader).
 */

/** Limits of the output parser (docs/agents.md, "diagnose"). */
export const OUTPUT_LIMITS = {
  /** Output scanned: longer output is scanned at its head and its tail, half each (failures are summarised at the end). */
  maxScanChars: 2 * 1024 * 1024,
  /** Compile errors kept. */
  maxCompileErrors: 200,
  /** Failures kept. */
  maxFailures: 20,
  /** Frames kept per failure. */
  maxFrames: 40,
  /** A line longer than this is cut before it is matched (a minified bundle's line). */
  maxLineChars: 4096,
};

export type Tool = "tsc" | "vitest" | "jest" | "node:test" | "node" | "python" | "unknown";

export interface CompileError {
  file: string;
  line: number;
  column: number;
  code: string;
  message: string;
  severity: "error" | "warning";
}

export interface RawFrame {
  /** The line as it appeared (trimmed). */
  raw: string;
  function?: string;
  /** The path or URL as written. */
  file: string;
  line: number;
  column?: number;
}

export interface Failure {
  /** The test's name (suite > test), when a test runner reported it. */
  test?: string;
  /** `TypeError`, `AssertionError`, `ValueError`… */
  error?: string;
  message: string;
  expected?: string;
  actual?: string;
  /** Innermost first (Python tracebacks are reversed to match). */
  frames: RawFrame[];
}

export interface ParsedOutput {
  tool: Tool;
  compile: CompileError[];
  failures: Failure[];
  /** Characters left out of the middle of long output. */
  skipped_chars: number;
  notes: string[];
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

const TSC = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/;
const TSC_PRETTY = /^(.+?):(\d+):(\d+) - (error|warning) (TS\d+): (.*)$/;
/** `at fn (file:line:col)`, `at file:line:col`, `at async fn (file:line:col)`. */
const NODE_FRAME =
  /^at (?:(?:async )?(.+?) \()?((?:file:\/\/|\/|\.{1,2}\/|[A-Za-z]:\\|node:|[\w@.-]+\/)[^()]*?):(\d+)(?::(\d+))?\)?$/;
/** vitest's `❯ fn file:line:col` / `❯ file:line:col`. */
const VITEST_FRAME = /^❯ (?:(\S+) )?(\S+?):(\d+):(\d+)$/;
const JEST_MATCHER = /^(expect\(.+?\)\.(?:not\.)?\w+\(.*?\))(?:\s*\/\/.*)?$/;
const PY_FRAME = /^File "(.+)", line (\d+)(?:, in (.+))?$/;
/** `TypeError: msg`, `AssertionError [ERR_ASSERTION]: msg`, `Error: msg`. */
const ERROR_HEAD = /^((?:[\w$.]*Error|Exception|[\w$.]*Exception)(?: \[[\w_]+\])?):\s?(.*)$/;
const PY_ERROR = /^([\w.]+(?:Error|Exception|Exit|Interrupt|Warning)|AssertionError)(?::\s?(.*))?$/;

function lines(text: string): { lines: string[]; skipped: number } {
  let t = text.replace(ANSI, "").replace(/\r\n?/g, "\n");
  let skipped = 0;
  if (t.length > OUTPUT_LIMITS.maxScanChars) {
    const half = OUTPUT_LIMITS.maxScanChars / 2;
    skipped = t.length - OUTPUT_LIMITS.maxScanChars;
    t = `${t.slice(0, half)}\n${t.slice(t.length - half)}`;
  }
  return {
    lines: t
      .split("\n")
      .map((l) => (l.length > OUTPUT_LIMITS.maxLineChars ? l.slice(0, OUTPUT_LIMITS.maxLineChars) : l)),
    skipped,
  };
}

function frameOf(line: string): RawFrame | undefined {
  const s = line.trim();
  let m = NODE_FRAME.exec(s);
  if (m)
    return {
      raw: s,
      ...(m[1] ? { function: m[1] } : {}),
      file: m[2]!,
      line: Number(m[3]),
      ...(m[4] ? { column: Number(m[4]) - 1 } : {}),
    };
  m = VITEST_FRAME.exec(s);
  if (m)
    return { raw: s, ...(m[1] ? { function: m[1] } : {}), file: m[2]!, line: Number(m[3]), column: Number(m[4]) - 1 };
  return undefined;
}

/** `- Expected` / `+ Received` diff blocks (vitest, jest) and `Expected: x` / `Received: y` lines (jest). */
function expectedActual(block: string[]): { expected?: string; actual?: string } {
  const out: { expected?: string; actual?: string } = {};
  for (let i = 0; i < block.length; i++) {
    const l = block[i]!.trim();
    let m = /^Expected:\s+(.*)$/.exec(l) ?? /^expected:\s+(.*)$/.exec(l);
    if (m && out.expected === undefined) out.expected = m[1]!;
    m = /^Received:\s+(.*)$/.exec(l) ?? /^actual:\s+(.*)$/.exec(l);
    if (m && out.actual === undefined) out.actual = m[1]!;
    if (/^- Expected/.test(l) && /^\+ Received/.test(block[i + 1]?.trim() ?? "")) {
      const minus: string[] = [];
      const plus: string[] = [];
      for (let j = i + 2; j < block.length; j++) {
        const b = block[j]!.trim();
        if (b === "" && minus.length + plus.length === 0) continue;
        if (b.startsWith("- ") || b === "-") minus.push(b.slice(2));
        else if (b.startsWith("+ ") || b === "+") plus.push(b.slice(2));
        else if (minus.length + plus.length > 0) break;
      }
      if (minus.length + plus.length > 0) {
        out.expected = minus.join("\n");
        out.actual = plus.join("\n");
      }
    }
  }
  // vitest / chai: "expected 3 to be 4" / node:assert: "3 !== 4".
  if (out.expected === undefined) {
    const msg = block.join("\n");
    const chai =
      /expected (.+?) to (?:be|equal|deeply equal|strictly equal|be deeply equal|deep equal) (.+?)(?: \/\/ .*)?$/m.exec(
        msg,
      );
    if (chai) {
      out.actual = chai[1]!;
      out.expected = chai[2]!;
    } else {
      const neq = /^\s*(.+?) !== (.+?)\s*$/m.exec(msg);
      if (neq) {
        out.actual = neq[1]!;
        out.expected = neq[2]!;
      }
    }
  }
  return out;
}

function detectTool(all: string[]): Tool {
  const text = all.slice(0, 4000).join("\n");
  const tail = all.slice(-4000).join("\n");
  if (/^ (?:FAIL|✓|×|❯) /m.test(text + tail) || /Test Files\s+\d/.test(tail) || /\bvitest\b/i.test(text))
    return "vitest";
  if (/^\s*● /m.test(text + tail) || /^Tests:\s+\d/m.test(tail)) return "jest";
  if (
    /^TAP version|^# (?:tests|pass|fail) \d/m.test(text + tail) ||
    /^✖ /m.test(text + tail) ||
    /^not ok \d/m.test(text + tail)
  )
    return "node:test";
  if (/^Traceback \(most recent call last\):/m.test(text + tail)) return "python";
  if (all.some((l) => TSC.test(l) || TSC_PRETTY.test(l))) return "tsc";
  if (all.some((l) => NODE_FRAME.test(l.trim()))) return "node";
  return "unknown";
}

/** Parse tool output; never throws (unknown output yields no errors and a note). */
export function parseOutput(text: string): ParsedOutput {
  const { lines: all, skipped } = lines(text);
  const tool = detectTool(all);
  const compile: CompileError[] = [];
  const failures: Failure[] = [];
  const notes: string[] = [];
  if (skipped > 0)
    notes.push(
      `the output is ${text.length} characters: the middle ${skipped} were not scanned (limit ${OUTPUT_LIMITS.maxScanChars})`,
    );
  for (const l of all) {
    const m = TSC.exec(l.trim()) ?? TSC_PRETTY.exec(l.trim());
    if (m && compile.length < OUTPUT_LIMITS.maxCompileErrors)
      compile.push({
        file: m[1]!,
        line: Number(m[2]),
        column: Number(m[3]) - 1,
        code: m[5]!,
        message: m[6]!,
        severity: m[4] as "error" | "warning",
      });
  }
  // Python tracebacks: frames outermost first; the exception line ends the block.
  for (let i = 0; i < all.length && failures.length < OUTPUT_LIMITS.maxFailures; i++) {
    if (!/^\s*Traceback \(most recent call last\):/.test(all[i]!)) continue;
    const frames: RawFrame[] = [];
    let j = i + 1;
    for (; j < all.length; j++) {
      const s = all[j]!.trim();
      const m = PY_FRAME.exec(s);
      if (m) {
        frames.push({ raw: s, file: m[1]!, line: Number(m[2]), ...(m[3] ? { function: m[3] } : {}) });
        continue;
      }
      if (/^\s/.test(all[j]!) || s === "") continue;
      break;
    }
    const head = PY_ERROR.exec(all[j]?.trim() ?? "");
    failures.push({
      ...(head ? { error: head[1]! } : {}),
      message: head?.[2] ?? all[j]?.trim() ?? "",
      frames: frames.reverse().slice(0, OUTPUT_LIMITS.maxFrames),
    });
    i = j;
  }
  if (tool !== "python") {
    // A failure: an error head line followed (within a few lines) by frames; the test name from the nearest runner header before it.
    let test: string | undefined;
    for (let i = 0; i < all.length && failures.length < OUTPUT_LIMITS.maxFailures; i++) {
      const s = all[i]!.trim();
      const header =
        /^(?:FAIL|×)\s+(\S+ > .+?)(?:\s+\d+m?s)?$/.exec(s) ??
        /^● (.+)$/.exec(s) ??
        /^(?:✖|not ok \d+ -)\s+(.+?)(?:\s+\([\d.]+m?s\))?$/.exec(s);
      if (header) {
        test = header[1]!.replace(/ › /g, " > ");
        continue;
      }
      // jest's matcher failure has no error line: `expect(received).toBe(expected)` heads it.
      const head = ERROR_HEAD.exec(s) ?? /^(?:error|message):\s+['"|]?(.*?)['"]?$/.exec(s) ?? JEST_MATCHER.exec(s);
      if (!head) continue;
      // The frames that follow, skipping the message's continuation, diffs and code excerpts.
      const frames: RawFrame[] = [];
      const block: string[] = [s];
      let j = i + 1;
      let gap = 0;
      for (; j < all.length && gap < 60; j++) {
        const t = all[j]!.trim();
        const f = frameOf(t);
        if (f) {
          if (frames.length < OUTPUT_LIMITS.maxFrames) frames.push(f);
          gap = 0;
          continue;
        }
        if (frames.length > 0 && !/^\s*(?:\d+\s*\||\||\^|❯|at )/.test(all[j]!) && t !== "" && !/^[-+]/.test(t)) {
          if (ERROR_HEAD.test(t) || /^(?:FAIL|×|●|✖|not ok|⎯)/.test(t) || /^stack: \|-?$/.test(t) || /^\.\.\.$/.test(t))
            break;
        }
        if (/^(?:FAIL|●|✖|not ok \d)/.test(t) || ERROR_HEAD.test(t)) break;
        block.push(all[j]!);
        gap++;
      }
      if (frames.length === 0) {
        // An error line without frames (a message, or node:test's YAML `error:`): part of the next failure's block only.
        continue;
      }
      const isHead = ERROR_HEAD.exec(s);
      const ea = expectedActual(block);
      failures.push({
        ...(test !== undefined ? { test } : {}),
        ...(isHead ? { error: isHead[1]!.replace(/ \[[\w_]+\]$/, "") } : {}),
        message: isHead ? isHead[2]! : head[1]!,
        ...(ea.expected !== undefined ? { expected: ea.expected } : {}),
        ...(ea.actual !== undefined ? { actual: ea.actual } : {}),
        frames,
      });
      i = j - 1;
    }
    // node:test's YAML (`expected:` / `actual:` after the stack): attached to the failure before it.
    if (tool === "node:test")
      for (const f of failures)
        if (f.expected === undefined) {
          const at = all.findIndex((l) => l.trim() === f.frames[0]?.raw);
          const ea = expectedActual(all.slice(Math.max(0, at - 30), at + 40));
          if (ea.expected !== undefined) Object.assign(f, { expected: ea.expected, actual: ea.actual });
        }
  }
  // A vitest failure lists the same frames twice (once in its summary): one kept.
  const seen = new Set<string>();
  const unique = failures.filter((f) => {
    const k = `${f.test ?? ""}\0${f.message}\0${f.frames[0]?.raw ?? ""}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  if (tool === "unknown" && compile.length === 0 && unique.length === 0)
    notes.push(
      "the output is not from a tool this agent knows (tsc, vitest, jest, node:test, a Node stack trace, a Python traceback): nothing to map",
    );
  return { tool, compile, failures: unique, skipped_chars: skipped, notes };
}

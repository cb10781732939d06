/**
 * Candidate fixes for pyright's commonest Python diagnostics (docs/agents.md, "diagnose"): an
 * undefined name that the standard library or the workspace exports (an import added), a name or an
 * attribute spelled close to one that exists (renamed), an import never used (removed). Each is only a
 * candidate: the caller checks it with pyright on the edited buffer, as TypeScript's fixes are checked.
 */
import { distance } from "./check.js";

export interface PyPos {
  /** 1-based. */
  line: number;
  /** 0-based, UTF-16. */
  column: number;
}

export interface PyCandidate {
  description: string;
  fix_name: string;
  start: PyPos;
  end: PyPos;
  new_text: string;
}

/** The diagnostic as the handler has it (1-based lines). */
export interface PyDiagnostic {
  code: string;
  message: string;
  start: PyPos;
  end: PyPos;
}

/** Standard-library modules imported by their own name often enough to be worth offering. */
const STDLIB_MODULES = new Set(
  (
    "abc argparse array ast asyncio base64 bisect builtins calendar collections contextlib copy csv ctypes " +
    "dataclasses datetime decimal difflib enum errno fnmatch fractions functools gc getpass glob gzip hashlib " +
    "heapq hmac html http importlib inspect io ipaddress itertools json logging math mimetypes multiprocessing " +
    "operator os pathlib pickle platform pprint queue random re secrets select shlex shutil signal socket " +
    "sqlite3 stat statistics string struct subprocess sys tempfile textwrap threading time timeit traceback " +
    "types typing unicodedata unittest urllib uuid warnings weakref xml zipfile zlib"
  ).split(" "),
);

/** Names commonly imported from a standard-library module: name → module. */
const STDLIB_NAMES: Record<string, string> = {};
for (const [mod, names] of Object.entries({
  pathlib: "Path PurePath",
  collections: "defaultdict Counter OrderedDict deque namedtuple ChainMap",
  dataclasses: "dataclass field asdict astuple replace",
  enum: "Enum IntEnum Flag auto",
  datetime: "datetime date time timedelta timezone",
  functools: "partial reduce lru_cache cache wraps cached_property total_ordering",
  itertools: "chain groupby islice product permutations combinations count cycle repeat accumulate",
  typing:
    "Any Callable ClassVar Dict Final Generic Iterable Iterator List Literal Mapping NamedTuple Optional " +
    "Protocol Sequence Set Tuple Type TypeVar TypedDict Union cast overload TYPE_CHECKING",
  contextlib: "contextmanager suppress closing ExitStack",
  abc: "ABC abstractmethod",
  decimal: "Decimal",
  fractions: "Fraction",
  io: "StringIO BytesIO",
  uuid: "uuid4 UUID",
  copy: "deepcopy",
  pprint: "pprint",
  time: "sleep perf_counter monotonic",
  random: "randint choice shuffle",
  math: "sqrt floor ceil pi inf isclose",
  json: "dumps loads",
  subprocess: "run",
})) {
  for (const n of names.split(" ")) STDLIB_NAMES[n] ??= mod;
}

const BUILTINS = new Set(
  (
    "abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict " +
    "dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash help hex id input " +
    "int isinstance issubclass iter len list locals map max memoryview min next object oct open ord pow print " +
    "property range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip " +
    "Exception ValueError TypeError KeyError IndexError AttributeError RuntimeError StopIteration NotImplementedError " +
    "OSError FileNotFoundError None True False self cls"
  ).split(" "),
);

/** Names the file defines or imports, at any level (a fix is checked, so a name out of scope is only a wasted check). */
export function namesIn(text: string): Set<string> {
  const out = new Set<string>();
  const add = (s: string | undefined) => {
    for (const n of (s ?? "").split(/[\s,()*:=[\]]+/)) if (/^[A-Za-z_]\w*$/.test(n)) out.add(n);
  };
  for (const m of text.matchAll(/^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?/gm)) {
    out.add(m[1]!);
    // Parameters: the names before any annotation or default.
    for (const p of (m[2] ?? "").split(",")) add(/^\s*\**(\w+)/.exec(p)?.[1]);
  }
  for (const m of text.matchAll(/^[ \t]*([\w, \t]+?)[ \t]*(?::[^=\n]+)?=(?!=)/gm)) add(m[1]);
  for (const m of text.matchAll(/^[ \t]*import[ \t]+(.+)$/gm))
    for (const part of m[1]!.split(",")) add(/(?:\bas\s+(\w+)|^\s*(\w+))/.exec(part)?.slice(1).find(Boolean));
  for (const m of text.matchAll(/^[ \t]*from[ \t]+\S+[ \t]+import[ \t]+\(?([^)\n]+)\)?/gm))
    for (const part of m[1]!.split(",")) add(/(\w+)\s*$/.exec(part.trim())?.[1]);
  for (const m of text.matchAll(/\bfor[ \t]+([\w, \t]+?)[ \t]+in\b/g)) add(m[1]);
  for (const m of text.matchAll(/\bas[ \t]+(\w+)/g)) out.add(m[1]!);
  return out;
}

/** Where a new import goes: after the last top-level import of the file's first block, else after its docstring. */
function importLine(lines: string[]): number {
  let at = 0;
  let i = 0;
  // A module docstring first.
  if (/^\s*[rbuRBU]?("""|''')/.test(lines[0] ?? "")) {
    const q = /("""|''')/.exec(lines[0]!)![1]!;
    const closedOnFirst = lines[0]!.indexOf(q) !== lines[0]!.lastIndexOf(q);
    i = closedOnFirst ? 1 : lines.findIndex((l, k) => k > 0 && l.includes(q)) + 1;
    at = i;
  }
  for (; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^(?:import|from)\s/.test(l)) at = i + 1;
    else if (l.trim() === "" || l.startsWith("#")) continue;
    else break;
  }
  return at;
}

/** A module path for a workspace file (`pkg/mod.py` → `pkg.mod`). */
export function moduleOf(relPath: string): string | undefined {
  const m = /^(.*?)(?:\/__init__)?\.pyi?$/.exec(relPath);
  if (!m || m[1] === "" || !m[1]!.split("/").every((p) => /^[A-Za-z_]\w*$/.test(p))) return undefined;
  return m[1]!.split("/").join(".");
}

/** Top-level names a module defines (def, class, assignment). */
export function topLevelNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]+)?=(?!=)/gm))
    out.add((m[1] ?? m[2])!);
  return out;
}

const near = (name: string, names: Iterable<string>): string[] => {
  const limit = Math.max(1, Math.floor(name.length / 3));
  return [...new Set(names)]
    .filter((c) => c !== name)
    .map((c) => ({ c, d: distance(name, c, limit) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, 3)
    .map((x) => x.c);
};

/**
 * The candidates for one diagnostic. `text` is the buffer; `workspaceExports` the workspace's modules
 * and their top-level names (the file's own module left out); `members` the attribute names the
 * checker offers after the dot, for an attribute that does not exist.
 */
export function pythonCandidates(
  d: PyDiagnostic,
  text: string,
  workspaceExports: ReadonlyMap<string, ReadonlySet<string>>,
  members: readonly string[] = [],
): PyCandidate[] {
  const lines = text.split("\n");
  const out: PyCandidate[] = [];
  const undefinedName = /^"(\w+)" is not defined/.exec(d.message);
  if (undefinedName) {
    const name = undefinedName[1]!;
    const at = importLine(lines);
    const addImport = (stmt: string, description: string, fix: string) =>
      out.push({
        description,
        fix_name: fix,
        start: { line: at + 1, column: 0 },
        end: { line: at + 1, column: 0 },
        new_text: `${stmt}\n`,
      });
    for (const c of near(name, [...namesIn(text), ...BUILTINS]))
      out.push({ description: `Change spelling to '${c}'`, fix_name: "agency.spelling", ...span(d), new_text: c });
    if (STDLIB_MODULES.has(name)) addImport(`import ${name}`, `Add 'import ${name}'`, "agency.import");
    const mod = STDLIB_NAMES[name];
    if (mod) addImport(`from ${mod} import ${name}`, `Add 'from ${mod} import ${name}'`, "agency.import");
    for (const [m, names] of workspaceExports)
      if (names.has(name)) addImport(`from ${m} import ${name}`, `Add 'from ${m} import ${name}'`, "agency.import");
  }
  const attribute = /^Cannot access attribute "(\w+)"/.exec(d.message);
  if (attribute)
    for (const c of near(attribute[1]!, members))
      out.push({ description: `Change spelling to '${c}'`, fix_name: "agency.spelling", ...span(d), new_text: c });
  const unused = /^Import "([\w.]+)" is not accessed/.exec(d.message);
  if (unused) {
    const line = lines[d.start.line - 1] ?? "";
    const names = /^(\s*)(?:from\s+\S+\s+)?import\s+([^#()\n]+?)\s*(#.*)?$/.exec(line);
    if (names) {
      const parts = names[2]!.split(",").map((p) => p.trim());
      const keep = parts.filter((p) => {
        const [orig, alias] = p.split(/\s+as\s+/);
        return (alias ?? orig) !== unused[1] && orig !== unused[1];
      });
      const whole = keep.length === 0;
      const newLine = whole ? "" : line.replace(names[2]!, keep.join(", "));
      out.push({
        description: whole ? `Remove the unused import of '${unused[1]}'` : `Remove '${unused[1]}' from the import`,
        fix_name: "agency.removeImport",
        start: { line: d.start.line, column: 0 },
        // A whole line removed takes its line break with it.
        end: whole ? { line: d.start.line + 1, column: 0 } : { line: d.start.line, column: line.length },
        new_text: newLine,
      });
    }
  }
  return out;
}

const span = (d: PyDiagnostic): { start: PyPos; end: PyPos } => ({ start: d.start, end: d.end });

/** `text` with the candidate's edit applied. */
export function applyCandidate(text: string, c: Pick<PyCandidate, "start" | "end" | "new_text">): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") starts.push(i + 1);
  const off = (p: PyPos) => Math.min(text.length, (starts[p.line - 1] ?? text.length) + p.column);
  return text.slice(0, off(c.start)) + c.new_text + text.slice(off(c.end));
}

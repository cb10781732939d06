/**
 * How a Python workspace uses members (docs/agents.md, "Python completion"): for each receiver name,
 * the attribute names that follow it in the workspace's other files (`math.isnan`, `pytest.mark`,
 * `signer.unsign`), counted per file. complete-lite ranks a member by it: what this project types
 * after `x.` is what its programmer is likely to type next. Read in the background the first time a
 * workspace is asked about, never on a keystroke's path; refreshed as files change.
 */
import { readFile } from "node:fs/promises";
import { listWorkspaceFiles } from "../../code/files.js";
import { codeOnly } from "./syntactic.js";

/** Python files read per workspace (a larger one is ranked by its first files in sorted order). */
const MAX_FILES = 2000;
/** A file larger than this is not read (a generated module). */
const MAX_FILE_BYTES = 512 * 1024;
/** Workspaces kept (the least recently asked about dropped beyond it). */
const MAX_ROOTS = 8;
/** A workspace's index older than this is re-read in the background (unchanged files are not re-parsed). */
const REFRESH_MS = 30_000;

/** receiver name → attribute name → count. */
type Counts = Map<string, Map<string, number>>;

interface FileUse {
  key: string;
  counts: Counts;
  /** `receiver.member` → the member used next on the same receiver → count. */
  follows: Counts;
  /** attribute name → count, after any receiver. */
  any: Map<string, number>;
}

interface RootUse {
  files: Map<string, FileUse>;
  /** The sum of the files' `any`, made once per read of the workspace. */
  any: Map<string, number>;
  builtAt: number;
  building?: Promise<void> | undefined;
}

function anyReceiver(counts: Counts): Map<string, number> {
  const out = new Map<string, number>();
  for (const names of counts.values()) for (const [name, n] of names) out.set(name, (out.get(name) ?? 0) + n);
  return out;
}

/** The receivers a method's own object goes by: their members are the class's, not the workspace's. */
const SELF = new Set(["self", "cls"]);

function bump(c: Counts, key: string, name: string): void {
  let names = c.get(key);
  if (!names) c.set(key, (names = new Map()));
  names.set(name, (names.get(name) ?? 0) + 1);
}

/** `recv.name` pairs in Python code (comments and strings blanked), each receiver its last name. */
export function memberPairs(source: string): Counts {
  return memberSequences(source).counts;
}

/**
 * `recv.name` pairs (as memberPairs) and, for each `recv.name`, the members used next on the same
 * receiver word further down the file (`parser.add_argument` → `parser.parse_args`).
 */
export function memberSequences(source: string): { counts: Counts; follows: Counts } {
  const counts: Counts = new Map();
  const follows: Counts = new Map();
  const last = new Map<string, string>();
  const re = /(?<!\w)([A-Za-z_]\w*)(?=\s*\.\s*([A-Za-z_]\w*))/g;
  const code = codeOnly(source);
  for (let m = re.exec(code); m; m = re.exec(code)) {
    const recv = m[1]!;
    const name = m[2]!;
    if (SELF.has(recv)) continue;
    bump(counts, recv, name);
    const prev = last.get(recv);
    if (prev !== undefined) bump(follows, `${recv}.${prev}`, name);
    last.set(recv, name);
  }
  return { counts, follows };
}

/** A workspace's member use, less one file's (the buffer being edited ranks by its own text). */
export interface WorkspaceUse {
  /** The attribute names that follow `receiver` in the workspace's files other than `except`. */
  names(receiver: string, except?: string): Map<string, number>;
  /** How often `name` follows any receiver (but `self` and `cls`) in the workspace's files other than `except`. */
  any(name: string, except?: string): number;
  /** The members used on `receiver` next after `receiver.prev` in the workspace's files other than `except`. */
  follows(receiver: string, prev: string, except?: string): Map<string, number>;
}

export class MemberUse {
  private readonly roots = new Map<string, RootUse>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The index of `root` as far as it has been read (undefined before the first read ends); never waits. */
  peek(root: string): WorkspaceUse | undefined {
    const r = this.entry(root);
    if (!r.building && this.now() - r.builtAt > REFRESH_MS) this.build(root, r);
    return r.builtAt > 0 ? this.view(r) : undefined;
  }

  /** The index of `root` once it has been read. */
  async ready(root: string): Promise<WorkspaceUse> {
    const r = this.entry(root);
    if (r.builtAt === 0 && !r.building) this.build(root, r);
    await r.building;
    return this.view(r);
  }

  private entry(root: string): RootUse {
    let r = this.roots.get(root);
    if (r) this.roots.delete(root);
    else r = { files: new Map(), any: new Map(), builtAt: 0 };
    this.roots.set(root, r);
    while (this.roots.size > MAX_ROOTS) this.roots.delete(this.roots.keys().next().value!);
    return r;
  }

  private build(root: string, r: RootUse): void {
    r.building = (async () => {
      try {
        const listed = await listWorkspaceFiles(root, { maxFiles: MAX_FILES, accept: (rel) => rel.endsWith(".py") });
        const files = new Map<string, FileUse>();
        for (const f of listed) {
          if (f.size > MAX_FILE_BYTES) continue;
          const key = `${f.mtimeMs}:${f.size}`;
          const old = r.files.get(f.abs);
          if (old?.key === key) {
            files.set(f.abs, old);
            continue;
          }
          try {
            const { counts, follows } = memberSequences(await readFile(f.abs, "utf8"));
            files.set(f.abs, { key, counts, follows, any: anyReceiver(counts) });
          } catch {
            // A file that vanished or cannot be read since the listing: left out.
          }
        }
        r.files = files;
        const any = new Map<string, number>();
        for (const use of files.values()) for (const [name, n] of use.any) any.set(name, (any.get(name) ?? 0) + n);
        r.any = any;
      } catch {
        // A workspace that cannot be listed: no workspace ranking, the buffer's alone.
      } finally {
        r.builtAt = this.now();
        r.building = undefined;
      }
    })();
  }

  private view(r: RootUse): WorkspaceUse {
    return {
      names: (receiver, except) => {
        const out = new Map<string, number>();
        for (const [file, use] of r.files) {
          if (file === except) continue;
          for (const [name, n] of use.counts.get(receiver) ?? []) out.set(name, (out.get(name) ?? 0) + n);
        }
        return out;
      },
      follows: (receiver, prev, except) => {
        const out = new Map<string, number>();
        const k = `${receiver}.${prev}`;
        for (const [file, use] of r.files) {
          if (file === except) continue;
          for (const [name, n] of use.follows.get(k) ?? []) out.set(name, (out.get(name) ?? 0) + n);
        }
        return out;
      },
      any: (name, except) =>
        (r.any.get(name) ?? 0) - (except !== undefined ? (r.files.get(except)?.any.get(name) ?? 0) : 0),
    };
  }
}

/** One index per process, as the parsed modules are. */
export const memberUse = new MemberUse();

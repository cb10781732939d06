/**
 * A V8 code cache for the large CommonJS packages every code agent compiles again at start (the
 * TypeScript compiler): the bytecode V8 made for the file in an earlier process is kept in a per-user
 * directory and handed back to V8, which then skips most of the parsing and compiling. Node 22 has this
 * built in (`module.enableCompileCache`); this is the same idea for the one file it matters for.
 *
 * `useCodeCache(require, name)` registers the package's main file; the caller then requires it as
 * usual: module resolution, `require.cache` and every hook on `Module._load` see a plain require. Only the
 * compile step of that one file (`Module.prototype._compile`) goes through a `vm.Script` given the
 * cached data. When there was no usable cache, the cache is written once, at the process's exit
 * (or at `writeCodeCaches()`), so that it also holds the functions the process's work compiled (a parse,
 * a check), not only those its load ran.
 *
 * A cache is never trusted blindly: its name is a hash of the file's path, size and mtime, the
 * package's version, Node's version and V8's version tag (which covers the V8 flags, so a process
 * started with other flags gets its own file); its contents carry a checksum; V8 itself checks the
 * rest. A cache that fails any check is ignored and written anew. Any error falls back to the plain
 * compile: the cache can make a start cheaper, never make it fail. `AIP_CODE_CACHE=0` turns it off.
 *
 * Where: `$XDG_CACHE_HOME/agency/v8` or `~/.cache/agency/v8`, created 0700 and refused when another
 * user owns it or others may write to it (protocol/util/safe-dir.ts); files are 0600, written to a
 * temporary name and renamed, so a reader never sees half a file. Deleting the directory clears it.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import Module, { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { cachedDataVersionTag } from "node:v8";
import { Script } from "node:vm";
import { envFlag } from "../../../protocol/util/env.js";
import { ensureSafeDirectory } from "../../../protocol/util/safe-dir.js";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * What happened to one package's cache in this process: `off` (disabled), `hit` (V8 took the cache),
 * `miss` (no cache yet), `rejected` (V8 refused it), `corrupt` (its checksum or header failed),
 * `unavailable` (no safe directory or another error: plain compile), `loaded` (the file was already
 * compiled in this process before it was registered, so nothing was done), `pending` (registered, not
 * compiled yet).
 */
export type CodeCacheTaken = "off" | "pending" | "hit" | "miss" | "rejected" | "corrupt" | "unavailable" | "loaded";

export interface CodeCacheOutcome {
  /** The package name given to `useCodeCache`. */
  name: string;
  /** The file compiled. */
  file: string;
  /** The cache file used or to be written (absent when off or unavailable). */
  cache?: string;
  taken: CodeCacheTaken;
  /** Why the cache was unavailable or corrupt. */
  reason?: string;
}

/** The parts of a cache's key: a change in any of them makes a different file. */
export interface CodeCacheKey {
  file: string;
  version: string;
  size: number;
  mtimeMs: number;
  node: string;
  arch: string;
  /** V8's version tag: its version, its flags and the CPU features it compiled for. */
  v8: number;
}

export interface CodeCacheOptions {
  /** The environment the switch and the directory are read from (default: process.env). */
  env?: Env;
}

/** Leading bytes of a cache file: the format's name and version, then the payload's SHA-256. */
const MAGIC = Buffer.from("agency-v8-cache-1\n");
const DIGEST_BYTES = 32;
/** Cache files kept per package: older ones (other versions, other flags) are removed when one is written. */
const KEEP_PER_PACKAGE = 8;

const outcomes: CodeCacheOutcome[] = [];

/** What happened to each package registered in this process, in order (a debug fact for tests and tools). */
export function codeCacheOutcomes(): readonly CodeCacheOutcome[] {
  return outcomes;
}

/** The cache directory for `env`: `$XDG_CACHE_HOME/agency/v8` (when absolute), else `~/.cache/agency/v8`. */
export function codeCacheDir(env: Env = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), ".cache"), "agency", "v8");
}

/** The cache file's name for `name` under `key`. */
export function codeCacheFileName(name: string, key: CodeCacheKey): string {
  const hash = createHash("sha256").update(JSON.stringify(key)).digest("hex").slice(0, 24);
  return `${safeName(name)}-${hash}.v8`;
}

const safeName = (name: string): string => name.replace(/[^A-Za-z0-9.-]/g, "_");

/** The key of the cache of `file` in this process. */
export function codeCacheKey(file: string): CodeCacheKey {
  const st = statSync(file);
  return {
    file,
    version: packageVersion(file),
    size: st.size,
    mtimeMs: st.mtimeMs,
    node: process.version,
    arch: process.arch,
    v8: cachedDataVersionTag(),
  };
}

/** The version in the nearest package.json above `file` ("" when none says). */
function packageVersion(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      const version = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version?: unknown }).version;
      if (typeof version === "string") return version;
    } catch {
      // no package.json here
    }
    if (dirname(dir) === dir) return "";
  }
}

interface Target {
  outcome: CodeCacheOutcome & { cache: string };
}

/** Files registered and not yet compiled, by filename. */
const targets = new Map<string, Target>();

type Compile = (this: NodeJS.Module, content: string, filename: string, ...rest: unknown[]) => unknown;
const proto = Module.prototype as unknown as { _compile: Compile };
let installed = false;

/** Route the compile of registered files through `compileCached`; every other file compiles as before. */
function install(): void {
  if (installed) return;
  installed = true;
  const original = proto._compile;
  proto._compile = function (this: NodeJS.Module, content: string, filename: string, ...rest: unknown[]): unknown {
    const target = targets.get(filename);
    if (target === undefined) return original.call(this, content, filename, ...rest);
    targets.delete(filename);
    return compileCached(this, content, filename, target, () => original.call(this, content, filename, ...rest));
  };
}

function compileCached(
  module: NodeJS.Module,
  content: string,
  filename: string,
  target: Target,
  plain: () => unknown,
): unknown {
  const { outcome } = target;
  let fn: (...args: unknown[]) => unknown;
  let script: Script;
  try {
    // Read when the file is compiled, not when it is registered: a process may register it and never load it.
    const read = readCache(outcome.cache);
    if (read.corrupt !== undefined) {
      outcome.taken = "corrupt";
      outcome.reason = read.corrupt;
    } else outcome.taken = read.data !== undefined ? "hit" : "miss";
    script = new Script(Module.wrap(content), {
      filename,
      ...(read.data !== undefined ? { cachedData: read.data } : {}),
    });
    fn = script.runInThisContext() as (...args: unknown[]) => unknown;
  } catch (err) {
    outcome.taken = "unavailable";
    outcome.reason = String(err);
    return plain();
  }
  if (outcome.taken === "hit" && script.cachedDataRejected === true) outcome.taken = "rejected";
  // The function runs outside the try: an error thrown by the module's own code is the module's, as
  // with a plain require, and must not run it a second time.
  if (outcome.taken !== "hit") {
    const cache = outcome.cache;
    if (pending.length === 0) process.once("exit", writeCodeCaches);
    pending.push(() => writeCache(cache, script, outcome.name));
  }
  return fn.call(module.exports, module.exports, createRequire(filename), module, filename, dirname(filename));
}

/** Caches to write: those that were missing or failed a check, with what this process compiled since. */
const pending: (() => void)[] = [];

/** Write the caches this process could not use now rather than at its exit: each is written once. */
export function writeCodeCaches(): void {
  for (const write of pending.splice(0)) write();
}

/** Read and check a cache file: its payload, or why it cannot be used (undefined when there is none). */
function readCache(path: string): { data?: Buffer; corrupt?: string } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    return { corrupt: `cannot open: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== (process.getuid?.() ?? st.uid)) return { corrupt: "not a file of this user" };
    const bytes = readFileSync(fd);
    const head = MAGIC.length + DIGEST_BYTES;
    if (bytes.length <= head || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return { corrupt: "bad header" };
    const data = bytes.subarray(head);
    const digest = createHash("sha256").update(data).digest();
    if (!digest.equals(bytes.subarray(MAGIC.length, head))) return { corrupt: "checksum mismatch" };
    return { data };
  } finally {
    closeSync(fd);
  }
}

/** Write `script`'s cached data to `path` atomically (0600, temporary name, rename); errors are dropped. */
function writeCache(path: string, script: Script, name: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const data = script.createCachedData();
    const digest = createHash("sha256").update(data).digest();
    writeFileSync(tmp, Buffer.concat([MAGIC, digest, data]), { mode: 0o600, flag: "wx" });
    renameSync(tmp, path);
    prune(dirname(path), name, path);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // never created
    }
  }
}

/** Remove all but the newest cache files of package `name` (other versions, flags, Node versions). */
function prune(dir: string, name: string, keep: string): void {
  const prefix = `${safeName(name)}-`;
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(".v8"))
    .map((f) => join(dir, f))
    .filter((f) => f !== keep)
    .map((f) => ({ f, mtime: lstatSync(f).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { f } of files.slice(KEEP_PER_PACKAGE - 1)) unlinkSync(f);
}

/** Make the cache directory for `env`, or say why it cannot be used. */
function safeCacheDir(env: Env): string {
  const dir = codeCacheDir(env);
  ensureSafeDirectory(dir, "code cache directory");
  const uid = process.getuid?.();
  if (uid !== undefined && lstatSync(dir).uid !== uid)
    throw new Error(`code cache directory ${dir} is not this user's`);
  return dir;
}

/**
 * Have the next compile of package `name`'s main file (as `require` resolves it) use the code cache;
 * the caller then requires it as usual. Never throws: any problem with the cache leaves a plain compile.
 */
export function useCodeCache(require: NodeJS.Require, name: string, options: CodeCacheOptions = {}): void {
  try {
    register(require, name, options.env ?? process.env);
  } catch {
    // a plain compile
  }
}

function register(require: NodeJS.Require, name: string, env: Env): void {
  const file = require.resolve(name);
  const outcome: CodeCacheOutcome = { name, file, taken: "unavailable" };
  if (require.cache[file] !== undefined) {
    outcome.taken = "loaded";
    outcomes.push(outcome);
    return;
  }
  outcomes.push(outcome);
  if (!envFlag("AIP_CODE_CACHE", env, true)) {
    outcome.taken = "off";
    return;
  }
  try {
    const cache = join(safeCacheDir(env), codeCacheFileName(name, codeCacheKey(file)));
    outcome.taken = "pending";
    install();
    targets.set(file, { outcome: Object.assign(outcome, { cache }) });
  } catch (err) {
    outcome.taken = "unavailable";
    outcome.reason = err instanceof Error ? err.message : String(err);
    delete outcome.cache;
  }
}

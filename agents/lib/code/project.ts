/**
 * A workspace's TypeScript project (docs/agents.md, "complete-lite", "Type-aware completion"): its
 * compiler options and root file names from `tsconfig.json` (with `extends`), or sane defaults when it
 * has none or it does not parse, and what was fallen back to and why. Every file is read through the
 * race-free reader (workspace.ts); the listing is files.ts's (`.gitignore` respected, `node_modules`
 * skipped). Shared by the typed completion engine and testgen's typecheck, so both judge code with the
 * same options.
 */
import { dirname, join, relative, resolve, sep } from "node:path";
import type * as TS from "typescript";
import { ts } from "./typescript.js";
import { listWorkspaceFiles } from "./files.js";
import { containedPath, openContained, readContained } from "./workspace.js";

/** Project files beyond this many are not listed (a runaway workspace must not exhaust memory). */
export const MAX_PROJECT_FILES = 5000;
/** A tsconfig file (or one it extends) larger than this is not read. */
const MAX_CONFIG_BYTES = 256 * 1024;
/** `extends` chains longer than this are cut (a cycle, or a hostile chain). */
const MAX_EXTENDS = 8;

/** The options used when the workspace has no usable tsconfig.json: a modern, permissive project (a function: the compiler loads on first use). */
export const defaultOptions = (): TS.CompilerOptions => ({
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  allowJs: true,
  checkJs: false,
  jsx: ts.JsxEmit.Preserve,
  esModuleInterop: true,
  resolveJsonModule: true,
  skipLibCheck: true,
  noEmit: true,
});

export interface WorkspaceProject {
  /** The workspace root (a real path). */
  root: string;
  /** Compiler options (always `noEmit`). */
  options: TS.CompilerOptions;
  /** The project's root files: absolute real paths inside the root. */
  fileNames: string[];
  /** The tsconfig.json used, when one was. */
  configPath?: string;
  /** What was fallen back to, and why (empty when the workspace's own config was used as is). */
  fallback: string[];
}

const TS_FILE = /\.(?:ts|tsx|mts|cts)$/;
const JS_FILE = /\.(?:js|jsx|mjs|cjs)$/;

/** Read a config file of the workspace, or say why not. */
async function readConfig(root: string, path: string): Promise<{ text: string; path: string } | { reason: string }> {
  try {
    const real = await containedPath(root, path);
    const file = await readContained(root, real, { maxBytes: MAX_CONFIG_BYTES });
    return { text: file.text, path: file.path };
  } catch (err) {
    return { reason: (err as Error).message };
  }
}

async function isDirectory(root: string, path: string): Promise<boolean> {
  try {
    const { handle } = await openContained(root, path, "directory");
    await handle.close();
    return true;
  } catch {
    return false;
  }
}

/** The files an `extends` entry may name, in TypeScript's order (relative path, or a package in node_modules). */
function extendsCandidates(root: string, fromDir: string, spec: string): string[] {
  if (spec.startsWith(".") || spec.startsWith("/")) {
    const base = resolve(fromDir, spec);
    return base.endsWith(".json") ? [base] : [base, `${base}.json`, join(base, "tsconfig.json")];
  }
  const base = join(root, "node_modules", spec);
  return base.endsWith(".json") ? [base] : [`${base}.json`, join(base, "tsconfig.json"), base];
}

/**
 * Read tsconfig.json and every config it extends into `files` (path → text), so that TypeScript's
 * synchronous config parser can be served from memory. Returns what could not be read.
 */
async function gatherConfigs(root: string, first: string, files: Map<string, string>): Promise<string[]> {
  const problems: string[] = [];
  const queue: string[] = [first];
  for (let hops = 0; queue.length > 0; hops++) {
    const path = queue.shift()!;
    const text = files.get(path)!;
    if (hops >= MAX_EXTENDS) {
      problems.push(`tsconfig "extends" chain longer than ${MAX_EXTENDS}: cut at ${relative(root, path)}`);
      break;
    }
    const json = ts.parseConfigFileTextToJson(path, text).config as { extends?: unknown } | undefined;
    const ext = json?.extends;
    const specs = typeof ext === "string" ? [ext] : Array.isArray(ext) ? ext.filter((e) => typeof e === "string") : [];
    for (const spec of specs) {
      let found = false;
      for (const candidate of extendsCandidates(root, dirname(path), spec)) {
        if (files.has(candidate)) {
          found = true;
          break;
        }
        const r = await readConfig(root, candidate);
        if ("text" in r) {
          files.set(candidate, r.text);
          if (r.path !== candidate) files.set(r.path, r.text);
          queue.push(candidate);
          found = true;
          break;
        }
      }
      if (!found) problems.push(`tsconfig extends "${spec}", which is not in the workspace: ignored`);
    }
  }
  return problems;
}

/** A directory tree of listed files, for TypeScript's include/exclude matcher. */
function entriesOf(paths: readonly string[]): (dir: string) => { files: string[]; directories: string[] } {
  const dirs = new Map<string, { files: Set<string>; directories: Set<string> }>();
  const at = (d: string) => {
    let e = dirs.get(d);
    if (!e) dirs.set(d, (e = { files: new Set(), directories: new Set() }));
    return e;
  };
  for (const p of paths) {
    let child = p;
    let dir = dirname(p);
    at(dir).files.add(p.slice(dir.length + 1));
    while (dir !== dirname(dir)) {
      child = dir;
      dir = dirname(dir);
      const e = at(dir);
      const name = child.slice(dir === sep ? 1 : dir.length + 1);
      if (e.directories.has(name)) break;
      e.directories.add(name);
    }
  }
  return (dir) => {
    const e = dirs.get(dir.endsWith(sep) && dir.length > 1 ? dir.slice(0, -1) : dir);
    return { files: e ? [...e.files].sort() : [], directories: e ? [...e.directories].sort() : [] };
  };
}

interface MatchFiles {
  matchFiles(
    path: string,
    extensions: readonly string[] | undefined,
    excludes: readonly string[] | undefined,
    includes: readonly string[] | undefined,
    useCaseSensitiveFileNames: boolean,
    currentDirectory: string,
    depth: number | undefined,
    getFileSystemEntries: (path: string) => { files: readonly string[]; directories: readonly string[] },
    realpath: (path: string) => string,
  ): string[];
}

/**
 * The module resolution TypeScript 6 computes where this compiler (5.x) would pick Classic: `moduleResolution`
 * unset and ES module output (`module` es2015…esnext, or unset with an ES2015+ target) resolve as a bundler
 * does. Undefined when the options need no change.
 */
export function implicitResolution(options: TS.CompilerOptions): TS.ModuleResolutionKind | undefined {
  if (options.moduleResolution !== undefined) return undefined;
  const K = ts.ModuleKind;
  const target = options.target ?? ts.ScriptTarget.ES5;
  const mod = options.module ?? (target >= ts.ScriptTarget.ES2015 ? K.ES2015 : K.CommonJS);
  const es = mod === K.ES2015 || mod === K.ES2020 || mod === K.ES2022 || mod === K.ESNext;
  return es ? ts.ModuleResolutionKind.Bundler : undefined;
}

/**
 * Load the project of the workspace `root` (a real path, already judged by resolveRoot): options and
 * root files from its tsconfig.json, or defaultOptions() over its TypeScript files when that is missing,
 * does not parse, or lists no files. `fallback` says what was fallen back to and why.
 */
export async function loadProject(root: string): Promise<WorkspaceProject> {
  const fallback: string[] = [];
  let truncated = false;
  const listed = (
    await listWorkspaceFiles(root, {
      maxFiles: MAX_PROJECT_FILES,
      accept: (rel) => TS_FILE.test(rel) || JS_FILE.test(rel) || rel.endsWith(".json"),
    })
  ).map((f) => f.abs);
  if (listed.length >= MAX_PROJECT_FILES) truncated = true;
  const tsFiles = listed.filter((p) => TS_FILE.test(p));
  const defaults = (why: string): WorkspaceProject => {
    fallback.push(
      `${why}: default options (ES2022, ESNext modules, bundler resolution, strict) over the workspace's TypeScript files`,
    );
    return {
      root,
      options: defaultOptions(),
      fileNames: tsFiles.length > 0 ? tsFiles : listed.filter((p) => JS_FILE.test(p)),
      fallback,
    };
  };
  const withNotes = async (project: WorkspaceProject): Promise<WorkspaceProject> => {
    if (truncated)
      fallback.push(
        `the workspace has more than ${MAX_PROJECT_FILES} source files: only the first ${MAX_PROJECT_FILES} are in the project`,
      );
    if (!(await isDirectory(root, join(root, "node_modules"))))
      fallback.push("no node_modules: package imports do not resolve; types come from the lib files only");
    return project;
  };

  const configPath = join(root, "tsconfig.json");
  const first = await readConfig(root, configPath);
  if ("reason" in first) {
    return withNotes(
      defaults(/does not exist/.test(first.reason) ? "no tsconfig.json" : `tsconfig.json unreadable (${first.reason})`),
    );
  }
  const parsedJson = ts.parseConfigFileTextToJson(configPath, first.text);
  if (parsedJson.error || typeof parsedJson.config !== "object" || parsedJson.config === null) {
    const why = parsedJson.error ? ts.flattenDiagnosticMessageText(parsedJson.error.messageText, " ") : "not an object";
    return withNotes(defaults(`tsconfig.json does not parse (${why})`));
  }
  const files = new Map<string, string>([[configPath, first.text]]);
  fallback.push(...(await gatherConfigs(root, configPath, files)));
  const entries = entriesOf(listed);
  const host: TS.ParseConfigHost = {
    useCaseSensitiveFileNames: true,
    fileExists: (p) => files.has(p),
    readFile: (p) => files.get(p),
    readDirectory: (dir, extensions, excludes, includes, depth) =>
      (ts as unknown as MatchFiles).matchFiles(
        dir,
        extensions,
        excludes,
        includes,
        true,
        root,
        depth,
        entries,
        (p) => p,
      ),
  };
  let parsed: TS.ParsedCommandLine;
  try {
    parsed = ts.parseJsonConfigFileContent(parsedJson.config, host, root, undefined, configPath);
  } catch (err) {
    return withNotes(defaults(`tsconfig.json could not be applied (${(err as Error).message})`));
  }
  for (const d of parsed.errors) {
    // "No inputs were found" is handled below; other errors are reported, the options kept.
    if (d.code === 18003) continue;
    fallback.push(`tsconfig.json: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
  }
  const inside = parsed.fileNames.filter((p) => p === root || p.startsWith(root + sep));
  const options: TS.CompilerOptions = { ...parsed.options, noEmit: true };
  const implicit = implicitResolution(options);
  if (implicit) {
    options.moduleResolution = implicit;
    fallback.push(
      "tsconfig.json leaves moduleResolution unset with ES module output: bundler resolution, TypeScript 6's default (TypeScript 5 would use classic, which resolves no package)",
    );
  }
  delete options.emitDeclarationOnly;
  delete options.composite;
  delete options.incremental;
  delete options.tsBuildInfoFile;
  if (inside.length === 0) {
    fallback.push(
      "tsconfig.json lists no files (a solution file, or include matches nothing): its options over the workspace's TypeScript files",
    );
    return withNotes({ root, options, fileNames: tsFiles, configPath, fallback });
  }
  return withNotes({ root, options, fileNames: inside, configPath, fallback });
}

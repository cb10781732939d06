/**
 * A TypeScript language service over one workspace (docs/agents.md, "Type-aware completion"): the
 * project from project.ts, `node_modules` types and the lib files of the installed typescript package.
 *
 * TypeScript asks for files synchronously; workspace files may only be read through the race-free
 * reader (workspace.ts), which is asynchronous. So the host answers from memory, and records what it
 * was asked and did not know (a file or directory not fetched yet): `load` fetches those through the
 * reader and builds the program again, until nothing new is asked (each round reuses every source
 * file already parsed). Open documents are fed per version as script snapshots that know their
 * change range, so an edit reparses incrementally and the program is never rebuilt from scratch.
 * Given the files a client has open, the first program holds those and what they import (closure.ts),
 * and grows to the whole project once it has answered.
 */
import { readFileSync, readdirSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { basename, dirname, sep } from "node:path";
import type * as TS from "typescript";
import { importClosure } from "./closure.js";
import { loadProject, type WorkspaceProject } from "./project.js";
import {
  changeRange,
  forgetIds,
  oldFileReason,
  shadowOf,
  staleReason,
  type ProgramFile,
  type Shadow,
} from "./stale.js";
import { containedPath, openContained, readContained } from "./workspace.js";
import { ts } from "./typescript.js";

/** The compiler's internal caches the service drives (not in its declarations). */
interface CacheInternals {
  createCacheableExportInfoMap(host: never): unknown;
  server: { createModuleSpecifierCache(host: never): { clear(): void } };
}
const internals = (): typeof TS & CacheInternals => ts as typeof TS & CacheInternals;
/** The part of TypeScript's internal ExportInfoMap (services/exportInfoMap.ts) the service drives. */
interface ExportInfoMap {
  isEmpty(): boolean;
  clear(): void;
  releaseSymbols(): void;
  onFileChanged(oldFile: TS.SourceFile, newFile: TS.SourceFile, typeAcquisitionEnabled: boolean): boolean;
}
let libDirPath: string | undefined;
/** The lib files' directory: the only place outside a workspace the service reads (asked on first use, like the compiler). */
function libDir(): string {
  return (libDirPath ??= dirname(ts.getDefaultLibFilePath({})));
}
let sharedRegistry: TS.DocumentRegistry | undefined;
/** One registry for every workspace: lib files parsed once are shared by all of them. */
function documentRegistry(): TS.DocumentRegistry {
  return (sharedRegistry ??= ts.createDocumentRegistry(true));
}

/** Limits of one workspace's service (docs/agents.md, "Type-aware completion"). */
export const SERVICE_LIMITS = {
  /** Files held in memory per workspace (project files and node_modules declarations). */
  maxFiles: 20_000,
  /** Their total size. */
  maxBytes: 256 * 1024 * 1024,
  /** Rounds of "build, fetch what was missing" before the service is declared ready with what it has. */
  maxRounds: 40,
  /**
   * Answers one program's checker gives about newer texts (stale.ts) before a new program is built: each
   * leaves what the checker computed for that text in memory until then.
   */
  maxStaleAnswers: 64,
};

/** A buffer's text at one version, which can say what changed since an older version (incremental reparse). */
class TextSnapshot implements TS.IScriptSnapshot {
  constructor(
    readonly text: string,
    /** The version before (only one is kept: the registry only ever asks against the one it has). */
    private previous?: TextSnapshot,
  ) {
    if (previous) previous.previous = undefined;
  }
  getText(start: number, end: number): string {
    return this.text.slice(start, end);
  }
  getLength(): number {
    return this.text.length;
  }
  getChangeRange(old: TS.IScriptSnapshot): TS.TextChangeRange | undefined {
    if (old !== this.previous || !this.previous) return undefined;
    return changeRange(this.previous.text, this.text);
  }
}

interface Doc {
  version: number;
  snapshot: TextSnapshot;
}

/** Where a workspace's service is. */
export type ServiceState = "loading" | "ready" | "failed";
/** What the program is rooted at: the files opened (their import closure), or the whole project. */
export type ProgramScope = "open" | "workspace";

export interface ServiceStats {
  root: string;
  state: ServiceState;
  files: number;
  bytes: number;
  rounds: number;
  load_ms?: number;
  scope: ProgramScope;
  /** When the program grew to the whole workspace (from the start of the load), after an `open` one answered. */
  workspace_ms?: number;
  fallback: string[];
  /** Programs built since the service was ready (each a new type checker), and answers from an older one (stale.ts). */
  rebuilds: number;
  stale_answers: number;
}

/** A newer text of a file, to be asked of the last program's checker (stale.ts). */
export interface StaleView {
  program: TS.Program;
  file: TS.SourceFile;
  /** The service's host, with the auto-import candidates of that program. */
  host: TS.LanguageServiceHost;
}

/** The language service of one workspace. */
export class WorkspaceService {
  state: ServiceState = "loading";
  project?: WorkspaceProject;
  readonly fallback: string[] = [];
  private readonly files = new Map<string, Doc>();
  /** Paths known not to be files (or not readable). */
  private readonly missing = new Set<string>();
  /** Directory listings fetched: path → entry names (undefined: not a directory). */
  private readonly dirs = new Map<string, { files: Set<string>; dirs: Set<string> } | undefined>();
  /** Directories known to exist (ancestors of files read). */
  private readonly present = new Set<string>();
  private readonly wantFiles = new Set<string>();
  private readonly wantDirs = new Set<string>();
  private readonly registry = documentRegistry();
  private service: TS.LanguageService | undefined;
  private projectVersion = 0;
  private bytes = 0;
  private rounds = 0;
  private loadMs?: number;
  private readonly libFiles = new Map<string, string | undefined>();
  readonly loaded: Promise<void>;
  /** Resolves once the program holds the whole workspace, or never will (the load failed, the service closed). */
  readonly grown: Promise<void>;
  private grew: () => void = () => undefined;

  /**
   * With `open` (the buffers a client has open, or is asking about), the first program is rooted at
   * those files (their import closure): `loaded` resolves once it is built, and the program grows to
   * the whole workspace in the background. Without, the first program is the whole workspace's.
   */
  constructor(
    readonly root: string,
    private readonly progress: (event: Record<string, unknown>) => void = () => {},
    open: readonly { path: string; text: string }[] = [],
  ) {
    this.scope = open.length > 0 ? "open" : "workspace";
    for (const f of open) this.update(f.path, f.text);
    this.grown = new Promise((resolve) => (this.grew = resolve));
    this.loaded = this.load().catch((err: unknown) => {
      this.state = "failed";
      this.fallback.push(`the language service could not load: ${(err as Error).message}`);
    });
    void this.loaded.then(() => {
      if (this.scope !== "open" || this.state !== "ready") this.grew();
    });
  }

  stats(): ServiceStats {
    return {
      root: this.root,
      state: this.state,
      files: this.files.size,
      bytes: this.bytes,
      rounds: this.rounds,
      ...(this.loadMs !== undefined ? { load_ms: this.loadMs } : {}),
      scope: this.scope,
      ...(this.workspaceMs !== undefined ? { workspace_ms: this.workspaceMs } : {}),
      fallback: this.fallback,
      rebuilds: this.rebuilds,
      stale_answers: this.staleAnswers,
    };
  }

  private inside(path: string): boolean {
    return path.startsWith(this.root + sep);
  }

  private addFile(path: string, text: string): void {
    if (this.files.size >= SERVICE_LIMITS.maxFiles || this.bytes + text.length > SERVICE_LIMITS.maxBytes) {
      this.missing.add(path);
      return;
    }
    this.files.set(path, { version: 0, snapshot: new TextSnapshot(text) });
    this.bytes += text.length;
    for (let d = dirname(path); this.inside(d) && !this.present.has(d); d = dirname(d)) this.present.add(d);
  }

  private async fetchFile(path: string): Promise<void> {
    try {
      const file = await readContained(this.root, await containedPath(this.root, path));
      this.addFile(path, file.text);
    } catch {
      this.missing.add(path);
    }
  }

  private async fetchDir(path: string): Promise<void> {
    try {
      const real = await containedPath(this.root, path);
      const { handle } = await openContained(this.root, real, "directory");
      try {
        const entries = await readdir(`/proc/self/fd/${handle.fd}`, { withFileTypes: true });
        const listing = { files: new Set<string>(), dirs: new Set<string>() };
        for (const e of entries) {
          // A symlink may be either (pnpm links packages): treated as both until opened.
          if (e.isDirectory() || e.isSymbolicLink()) listing.dirs.add(e.name);
          if (e.isFile() || e.isSymbolicLink()) listing.files.add(e.name);
        }
        this.dirs.set(path, listing);
      } finally {
        await handle.close();
      }
    } catch {
      this.dirs.set(path, undefined);
    }
  }

  /** True/false when known; undefined (and recorded as wanted) when not fetched yet. */
  private knownDir(path: string): boolean | undefined {
    if (path === this.root || this.present.has(path)) return true;
    if (this.dirs.has(path)) return this.dirs.get(path) !== undefined;
    const parent = dirname(path);
    const listing = this.dirs.get(parent);
    if (listing) return listing.dirs.has(basename(path));
    if (parent === path || !this.inside(parent) || this.knownDir(parent) === false) return false;
    this.wantDirs.add(path);
    return undefined;
  }

  private fileExists(path: string): boolean {
    if (this.files.has(path)) return true;
    if (!this.inside(path)) return this.libText(path) !== undefined;
    if (this.missing.has(path)) return false;
    const parent = dirname(path);
    const dir = this.knownDir(parent);
    if (dir === false) return false;
    if (dir === true && this.dirs.has(parent) && !this.dirs.get(parent)!.files.has(basename(path))) return false;
    this.wantFiles.add(path);
    return false;
  }

  private libText(path: string): string | undefined {
    if (dirname(path) !== libDir()) return undefined;
    if (!this.libFiles.has(path)) {
      let text: string | undefined;
      try {
        text = readFileSync(path, "utf8");
      } catch {
        text = undefined;
      }
      this.libFiles.set(path, text);
    }
    return this.libFiles.get(path);
  }

  /** The host; `program`: the program auto-import candidates are taken from (default: the service's, brought up to date). */
  private host(program?: TS.Program): TS.LanguageServiceHost {
    return {
      getCompilationSettings: () => this.project!.options,
      getProjectVersion: () => String(this.projectVersion),
      getScriptFileNames: () =>
        this.scope === "open"
          ? this.openNames
          : [...this.project!.fileNames, ...this.openNames.filter((p) => !this.projectFiles.has(p))],
      getScriptVersion: (p) => String(this.files.get(p)?.version ?? 0),
      getScriptSnapshot: (p) => {
        const doc = this.files.get(p);
        if (doc) return doc.snapshot;
        if (!this.inside(p)) {
          const text = this.libText(p);
          return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
        }
        this.fileExists(p);
        return undefined;
      },
      getCurrentDirectory: () => this.root,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      getCancellationToken: () => this.cancellation,
      fileExists: (p) => this.fileExists(p),
      readFile: (p) => {
        const doc = this.files.get(p);
        if (doc) return doc.snapshot.text;
        if (!this.inside(p)) return this.libText(p);
        this.fileExists(p);
        return undefined;
      },
      directoryExists: (d) => {
        if (!this.inside(d) && d !== this.root) return d === libDir();
        return this.knownDir(d) === true;
      },
      getDirectories: (d) => {
        if (!this.inside(d) && d !== this.root) return d === libDir() ? readdirSync(libDir()) : [];
        if (this.knownDir(d) !== true) return [];
        const listing = this.dirs.get(d);
        if (!listing) {
          this.wantDirs.add(d);
          return [];
        }
        return [...listing.dirs];
      },
      realpath: (p) => p,
      useCaseSensitiveFileNames: () => true,
      // Not in the public host type: TypeScript's own server implements it the same way.
      getCachedExportInfoMap: () => this.exportInfoMap(program ?? this.service!.getProgram()!),
      // The import path of each auto-import candidate, kept as TypeScript's server keeps it (it depends on
      // the two files' paths and the options only): a new service drops it.
      getModuleSpecifierCache: () =>
        (this.specifierCache ??= internals().server.createModuleSpecifierCache({
          toPath: (p: string) => p,
          watchNodeModulesForPackageJsonChanges: () => ({ close: () => undefined }),
        } as never)),
    } as TS.LanguageServiceHost;
  }

  /**
   * The modules' exports that auto-import candidates come from, kept across keystrokes as TypeScript's
   * own server keeps them (its Project.updateGraph): without it every completion with a typed word
   * scanned every module's exports again, the costliest part of the list. After each new program the
   * cached symbols are released (they are found again in the new one) and the map is dropped when the
   * program's structure changed or a changed file may change what others can import (TypeScript's
   * `onFileChanged` decides; edits inside the importing file keep it).
   */
  private exportInfoMap(program: TS.Program): ExportInfoMap {
    const map = (this.exportMap ??= internals().createCacheableExportInfoMap({
      getCurrentProgram: () => this.exportMapProgram!,
      getPackageJsonAutoImportProvider: () => undefined,
      getGlobalTypingsCacheLocation: () => undefined,
    } as never) as ExportInfoMap);
    const old = this.exportMapProgram;
    if (old !== program && !map.isEmpty()) {
      map.releaseSymbols();
      if (!old || !(program as { structureIsReused?: number }).structureIsReused) map.clear();
      else
        for (const p of this.changedForExportMap) {
          const before = old.getSourceFile(p);
          const now = program.getSourceFile(p);
          if (!before || !now) map.clear();
          if (!before || !now || map.onFileChanged(before, now, false)) break;
        }
    }
    if (old !== program) this.changedForExportMap.clear();
    this.exportMapProgram = program;
    return map;
  }

  private exportMap: ExportInfoMap | undefined;
  private specifierCache: { clear(): void } | undefined;
  private exportMapProgram: TS.Program | undefined;
  /** Files changed since the program the export map was last checked against. */
  private readonly changedForExportMap = new Set<string>();

  /** Files opened by requests that are not project files (an unsaved buffer, a file outside `include`). */
  private readonly openSet = new Set<string>();
  private get openNames(): string[] {
    return [...this.openSet];
  }

  private async load(): Promise<void> {
    const started = performance.now();
    this.project = await loadProject(this.root);
    this.projectFiles = new Set(this.project.fileNames);
    this.fallback.push(...this.project.fallback);
    this.progress({ phase: "project", files: this.project.fileNames.length, fallback: this.project.fallback });
    await this.fetchDir(this.root);
    if (this.scope === "open") {
      await importClosure(
        this.openNames,
        this.projectFiles,
        (p) => this.textOf(p),
        (p) => this.fetchFile(p),
      );
      this.progress({
        phase: "read",
        scope: "open",
        files: this.files.size,
        ms: Math.round(performance.now() - started),
      });
    } else await this.readProject(started);
    if (!(await this.settle())) return;
    this.loadMs = Math.round(performance.now() - started);
    this.state = "ready";
    this.progress({ phase: "ready", scope: this.scope, files: this.files.size, rounds: this.rounds, ms: this.loadMs });
    if (this.scope === "open") void this.grow(started);
  }

  /** The project's files not held yet, in parallel (a bounded number at a time). */
  private async readProject(started: number): Promise<void> {
    const queue = this.project!.fileNames.filter((p) => !this.files.has(p));
    const worker = async (): Promise<void> => {
      for (let p = queue.shift(); p !== undefined; p = queue.shift()) await this.fetchFile(p);
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    this.progress({ phase: "read", files: this.files.size, ms: Math.round(performance.now() - started) });
  }

  /** Build; fetch what the build asked for and did not have; again, until it asks for nothing new. False once disposed. */
  private async settle(): Promise<boolean> {
    while (await this.round()) {
      if (this.disposed) return false;
      this.progress({ phase: "resolve", round: this.rounds, files: this.files.size });
    }
    return !this.disposed;
  }

  /**
   * After the open files' program answered: the rest of the project read and the program rebuilt over
   * all of it (requests are answered from the open files' program meanwhile; a background refresh
   * waits for it).
   */
  private async grow(started: number): Promise<void> {
    this.refreshing = true;
    try {
      await this.readProject(started);
      if (this.disposed) return;
      this.scope = "workspace";
      this.rounds = 0;
      if (!(await this.settle())) return;
      this.workspaceMs = Math.round(performance.now() - started);
      this.progress({
        phase: "ready",
        scope: this.scope,
        files: this.files.size,
        rounds: this.rounds,
        ms: this.workspaceMs,
      });
    } catch (err) {
      this.fallback.push(`the program could not grow to the whole workspace: ${(err as Error).message}`);
    } finally {
      this.refreshing = false;
      this.grew();
    }
  }

  /** What the program is rooted at now. */
  scope: ProgramScope;
  private workspaceMs?: number;
  private projectFiles = new Set<string>();

  private disposed = false;
  private refreshing = false;

  /**
   * One round: a new service (resolutions that failed must be tried again; parsed files are reused
   * from the registry), built; then what it asked for and did not have is fetched. False when it
   * asked for nothing new (or the round limit is reached).
   */
  private async round(): Promise<boolean> {
    this.rounds++;
    this.wantFiles.clear();
    this.wantDirs.clear();
    // The old service is disposed after the new one is built: the files both hold stay in the registry, parsed.
    const old = this.service;
    this.service = ts.createLanguageService(this.host(), this.registry);
    this.exportMap = undefined; // a new service: files and resolutions may differ
    this.specifierCache = undefined;
    this.exportMapProgram = undefined;
    this.projectVersion++;
    this.current = this.service.getProgram();
    old?.dispose();
    this.staleAnswersNow = 0;
    return this.fetchWanted();
  }

  /** Fetch what the last build asked for and did not have; false when nothing. */
  private async fetchWanted(): Promise<boolean> {
    const files = [...this.wantFiles].filter((p) => !this.files.has(p) && !this.missing.has(p));
    const dirs = [...this.wantDirs].filter((d) => !this.dirs.has(d));
    this.wantFiles.clear();
    this.wantDirs.clear();
    if ((files.length === 0 && dirs.length === 0) || this.rounds >= SERVICE_LIMITS.maxRounds) return false;
    // Directories first (their listings settle most file questions), each ancestor before its children.
    const ancestors = new Set<string>();
    for (const d of [...dirs, ...files.map((f) => dirname(f))])
      for (let a = d; (this.inside(a) || a === this.root) && !this.dirs.has(a); a = dirname(a)) ancestors.add(a);
    const byDepth = [...ancestors].sort((a, b) => a.split(sep).length - b.split(sep).length);
    while (byDepth.length > 0) {
      const level = byDepth[0]!.split(sep).length;
      const batch = byDepth.filter((d) => d.split(sep).length === level);
      byDepth.splice(0, batch.length);
      await Promise.all(batch.map((d) => this.fetchDir(d)));
    }
    const toRead = files.filter((f) => this.dirs.get(dirname(f))?.files.has(basename(f)) ?? false);
    for (const f of files) if (!toRead.includes(f)) this.missing.add(f);
    await Promise.all(toRead.map((f) => this.fetchFile(f)));
    return true;
  }

  /**
   * After an answer: when the build asked for files not fetched yet (a new import typed into a
   * buffer), fetch them in the background and build again, so the next request sees them.
   */
  refreshInBackground(): void {
    if (this.refreshing || this.state !== "ready" || (this.wantFiles.size === 0 && this.wantDirs.size === 0)) return;
    this.refreshing = true;
    void (async () => {
      try {
        this.rounds = 0;
        if (await this.fetchWanted()) while (!this.disposed && (await this.round()));
      } finally {
        this.refreshing = false;
      }
    })();
  }

  /** The text of `path` the service holds now (the last buffer fed, else the file read at load), if any. */
  textOf(path: string): string | undefined {
    return this.files.get(path)?.snapshot.text;
  }

  /**
   * Whether the checker's work now should stop (a request waits behind it): asked by TypeScript's
   * checker between declarations, through the host's cancellation token. Never by default; the
   * typed engine's worker sets it while it checks a file in the background.
   */
  interrupt: () => boolean = () => false;

  /** The token TypeScript polls: it throws ts.OperationCanceledException once `interrupt()` says so. */
  readonly cancellation: TS.CancellationToken = {
    isCancellationRequested: () => this.interrupt(),
    throwIfCancellationRequested: () => {
      if (this.interrupt()) throw new ts.OperationCanceledException();
    },
  };

  /** Feed the buffer of `path` (a real path inside the root); a new version only when its text changed. */
  update(path: string, text: string): void {
    const doc = this.files.get(path);
    if (this.scope === "open" && !this.openSet.has(path)) {
      this.openSet.add(path); // a root of the open files' program
      this.exportMap?.clear();
      this.projectVersion++;
    }
    if (doc && doc.snapshot.text === text) return;
    if (!doc) {
      if (this.scope !== "open" && !this.projectFiles.has(path)) {
        this.openSet.add(path);
        this.exportMap?.clear(); // a new root file
      }
      this.files.set(path, { version: 1, snapshot: new TextSnapshot(text) });
      this.bytes += text.length;
    } else {
      this.bytes += text.length - doc.snapshot.text.length;
      this.files.set(path, { version: doc.version + 1, snapshot: new TextSnapshot(text, doc.snapshot) });
      this.changedForExportMap.add(path);
    }
    this.projectVersion++;
  }

  /** The workspace's project files as held now (path, text): read by the completion ranking's usage index. */
  *projectTexts(): Generator<[string, string]> {
    for (const p of this.project?.fileNames ?? []) {
      const doc = this.files.get(p);
      if (doc) yield [p, doc.snapshot.text];
    }
  }

  /** The program the checker answers from, brought up to date with the buffers fed (a rebuild when they changed). */
  program(): TS.Program {
    const program = this.languageService.getProgram()!;
    if (program !== this.current) {
      this.current = program;
      this.rebuilds++;
      this.staleAnswersNow = 0;
    }
    return program;
  }

  /**
   * The errors of `files` (syntactic, else semantic and declaration ones, as the language service
   * reports them) with the texts of `edited` in place of theirs, from a program built beside the
   * service's own: it reuses that program's parsed files and resolutions, and leaves it and its
   * checker untouched, so the diagnostics it has computed still answer the next request at once.
   */
  errorsWithEdits(edited: ReadonlyMap<string, string>, files: Iterable<string>): Map<string, TS.Diagnostic[]> {
    const base = this.program();
    const lsHost = this.host(base);
    const options = base.getCompilerOptions();
    const host: TS.CompilerHost = {
      getSourceFile: (fileName, languageVersionOrOptions) => {
        const text = edited.get(fileName);
        if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersionOrOptions, true);
        // A redirect (one package at two paths) is the program's own wrapper: the host gives the file under it.
        const sf = base.getSourceFile(fileName) as
          (TS.SourceFile & { redirectInfo?: { unredirected: TS.SourceFile } }) | undefined;
        if (sf) return sf.redirectInfo?.unredirected ?? sf;
        const snapshot = lsHost.getScriptSnapshot(fileName);
        return snapshot
          ? ts.createSourceFile(fileName, snapshot.getText(0, snapshot.getLength()), languageVersionOrOptions, true)
          : undefined;
      },
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      writeFile: () => undefined,
      getCurrentDirectory: () => this.root,
      getCanonicalFileName: (f) => f,
      useCaseSensitiveFileNames: () => true,
      getNewLine: () => "\n",
      fileExists: (p) => lsHost.fileExists(p),
      readFile: (p) => lsHost.readFile(p),
      directoryExists: (d) => lsHost.directoryExists!(d),
      getDirectories: (d) => lsHost.getDirectories!(d),
      realpath: (p) => p,
    };
    const references = base.getProjectReferences();
    const program = ts.createProgram({
      rootNames: base.getRootFileNames(),
      options,
      host,
      oldProgram: base,
      ...(references ? { projectReferences: references } : {}),
    });
    const declarations = Boolean(options.declaration || options.composite);
    const out = new Map<string, TS.Diagnostic[]>();
    for (const f of files) {
      const sf = program.getSourceFile(f);
      if (!sf) throw new Error(`the project does not hold ${f}`);
      const syn = program.getSyntacticDiagnostics(sf);
      const sem =
        syn.length > 0
          ? []
          : [
              ...program.getSemanticDiagnostics(sf, this.cancellation),
              ...(declarations ? program.getDeclarationDiagnostics(sf, this.cancellation) : []),
            ];
      out.set(
        f,
        [...syn, ...sem].filter((d) => d.category === ts.DiagnosticCategory.Error),
      );
    }
    return out;
  }

  /**
   * `text` of `path` as the last program's checker can answer about it without a rebuild (stale.ts),
   * or why it cannot. Counts the answer: past SERVICE_LIMITS.maxStaleAnswers a new program is needed.
   */
  stale(path: string, text: string): StaleView | { reason: string } {
    const program = this.current;
    const old = program?.getSourceFile(path) as ProgramFile | undefined;
    if (!program || !old || this.state !== "ready") return { reason: "no program holds the file yet" };
    // The program's own text (the buffer went back to it): its file answers, exactly.
    if (old.text === text) return { program, file: old, host: this.host(program) };
    if (this.staleAnswersNow >= SERVICE_LIMITS.maxStaleAnswers)
      return { reason: `${SERVICE_LIMITS.maxStaleAnswers} answers from this program already` };
    const never = oldFileReason(old);
    if (never) return { reason: never };
    const shadow = shadowOf(this.shadows.get(path), old, text, program.getCompilerOptions());
    this.shadows.set(path, shadow);
    const reason = staleReason(program, old, shadow.file);
    if (reason) return { reason };
    this.staleAnswersNow++;
    this.staleAnswers++;
    shadow.seen = true;
    return { program, file: shadow.file, host: this.host(program) };
  }

  /**
   * After an answer (off its path): take the checker's ids off the shadow files it was asked about, so
   * the next keystroke's incremental parse reuses clean nodes (stale.ts, forgetIds).
   */
  tidy(): void {
    for (const shadow of this.shadows.values())
      if (shadow.seen) {
        forgetIds(shadow.file);
        shadow.seen = false;
      }
  }

  /** The last program built (none before the service is ready). */
  private current: TS.Program | undefined;
  private rebuilds = 0;
  private staleAnswers = 0;
  /** Answers from `current` about newer texts. */
  private staleAnswersNow = 0;
  /** Per file, its text parsed apart from any program, for stale answers (the next one parses incrementally from it). */
  private readonly shadows = new Map<string, Shadow>();

  /** Release the service and everything it holds. */
  dispose(): void {
    this.service?.dispose();
    this.service = undefined;
    this.current = undefined;
    this.shadows.clear();
    this.files.clear();
    this.dirs.clear();
    this.bytes = 0;
    this.disposed = true;
    this.state = "failed";
    this.grew();
  }

  /** The language service; only once ready. */
  get languageService(): TS.LanguageService {
    if (!this.service || this.state !== "ready") throw new Error("the language service is not ready");
    return this.service;
  }
}

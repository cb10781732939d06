/**
 * Asking the last program's type checker about a newer text of one file, without building a new
 * program (docs/performance.md, "Type-aware completion"). A new program costs a new type checker
 * (TypeScript merges every lib file's globals into it) and every type the answer needs computed again:
 * 17-74 ms per keystroke on a 2,000-line file. Instead the newer text is parsed (incrementally, from a
 * shadow copy that no program holds) and bound on its own, and the old checker answers about it: the
 * file's own names, scopes and flow come from the new binding, everything else from the old program.
 *
 * That answer is the one a new program would give exactly when the old program's view of every other
 * file is what a new program's would be. `staleReason` says why not, when it cannot prove it:
 * - the file is a script (its declarations are global, merged into the old checker) or JavaScript, or
 *   declares global or module augmentations (merged too);
 * - its imports or `///` references changed (the old program resolved the old ones);
 * - another file imports it (that file's types may come from this file's old text), unless the edit
 *   lies inside the body of a function whose type does not depend on its body (a declared return type,
 *   a constructor, a setter) in both texts: then nothing another file sees has changed.
 */
import { createRequire } from "node:module";
import type * as TS from "typescript";

/** TypeScript's internals used here (typescript.js exports them; they are not in its public typings). */
interface Internals {
  bindSourceFile(file: TS.SourceFile, options: TS.CompilerOptions): void;
  getSetExternalModuleIndicator(options: TS.CompilerOptions): (file: TS.SourceFile) => void;
  forEachDynamicImportOrRequireCall(
    file: TS.SourceFile,
    includeTypeSpaceImports: boolean,
    requireStringLiteralLikeArgument: boolean,
    cb: (node: TS.Node, specifier: TS.StringLiteralLike) => void,
  ): void;
  isAnyImportOrReExport(node: TS.Node): boolean;
  getExternalModuleName(node: TS.Node): TS.Expression | undefined;
  isExternalModule(file: TS.SourceFile): boolean;
  isSourceFileJS(file: TS.SourceFile): boolean;
  isAmbientModule(node: TS.Node): boolean;
  isGlobalScopeAugmentation(node: TS.ModuleDeclaration): boolean;
  resolveTripleslashReference(moduleName: string, containingFile: string): string;
}
/** Fields a program sets on its source files (program.ts: findSourceFileWorker, collectExternalModuleReferences). */
export interface ProgramFile extends TS.SourceFile {
  path: string;
  resolvedPath: string;
  originalFileName: string;
  imports: readonly TS.StringLiteralLike[];
  moduleAugmentations: readonly (TS.StringLiteral | TS.Identifier)[];
  ambientModuleNames: readonly string[];
  packageJsonScope?: unknown;
  packageJsonLocations?: unknown;
  jsDocParsingMode?: TS.JSDocParsingMode;
}
interface ProgramInternals {
  getResolvedModuleFromModuleSpecifier(
    specifier: TS.StringLiteralLike,
    file: TS.SourceFile,
  ): { resolvedModule?: { resolvedFileName: string } } | undefined;
}

const ts = createRequire(import.meta.url)("typescript") as typeof TS & Internals;

/** The one edited span between two texts (common prefix and suffix). */
export function changeRange(before: string, after: string): TS.TextChangeRange {
  const max = Math.min(before.length, after.length);
  let p = 0;
  while (p < max && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  let s = 0;
  while (s < max - p && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s)) s++;
  return ts.createTextChangeRange(ts.createTextSpan(p, before.length - s - p), after.length - s - p);
}

/**
 * Take the checker's ids off every node of `node`'s tree (and its JSDoc). A checker keeps what it
 * computed for a node (its symbol, its type) under the node's id; an incremental parse reuses the nodes
 * outside the edit, which the same checker must then see as new (a name typed since may resolve
 * elsewhere). What the binder left on them the next binding overwrites, as in TypeScript's own
 * incremental updates.
 */
export function forgetIds(node: TS.Node): void {
  const n = node as TS.Node & { id?: number; jsDoc?: TS.Node[] };
  if (n.id) n.id = 0;
  if (n.jsDoc) for (const d of n.jsDoc) forgetIds(d);
  ts.forEachChild(node, forgetIds);
}

/** NodeFlags.PossiblyContainsDynamicImport (internal): the parser saw `import(` (a call or an import type). */
const POSSIBLY_CONTAINS_DYNAMIC_IMPORT = 1 << 22;

/** A file's module references as a program collects them (program.ts, collectExternalModuleReferences). */
function moduleReferences(file: TS.SourceFile): TS.StringLiteralLike[] {
  const out: TS.StringLiteralLike[] = [];
  for (const s of file.statements) {
    if (!ts.isAnyImportOrReExport(s)) continue;
    const name = ts.getExternalModuleName(s);
    if (name && ts.isStringLiteral(name) && name.text) out.push(name);
  }
  if (file.flags & POSSIBLY_CONTAINS_DYNAMIC_IMPORT)
    ts.forEachDynamicImportOrRequireCall(file, true, true, (_node, specifier) => out.push(specifier));
  return out;
}

/** A shadow copy of one file's text: parsed and bound apart from any program. */
export interface Shadow {
  text: string;
  file: ProgramFile;
  /** A checker has seen its nodes since their ids were last taken off (forgetIds). */
  seen: boolean;
}

/**
 * `text` parsed and bound as `old`'s file, incrementally from `shadow` when there is one (which that
 * invalidates, as any incremental parse does), else from scratch. Its module references are collected
 * as the program would; the imports the program added itself (tslib, a JSX runtime) are `old`'s.
 */
export function shadowOf(
  shadow: Shadow | undefined,
  old: ProgramFile,
  text: string,
  options: TS.CompilerOptions,
): Shadow {
  if (shadow?.text === text) return shadow;
  let file: ProgramFile;
  if (shadow) {
    // Ids are taken off after an answer (WorkspaceService.tidy); if not yet, before its nodes are reused.
    if (shadow.seen) forgetIds(shadow.file);
    file = ts.updateSourceFile(shadow.file, text, changeRange(shadow.text, text)) as ProgramFile;
  } else
    file = ts.createSourceFile(
      old.fileName,
      text,
      {
        languageVersion: old.languageVersion,
        ...(old.impliedNodeFormat !== undefined ? { impliedNodeFormat: old.impliedNodeFormat } : {}),
        setExternalModuleIndicator: ts.getSetExternalModuleIndicator(options),
        ...(old.jsDocParsingMode !== undefined ? { jsDocParsingMode: old.jsDocParsingMode } : {}),
      },
      true,
    ) as ProgramFile;
  file.path = old.path;
  file.resolvedPath = old.resolvedPath;
  file.originalFileName = old.originalFileName;
  file.impliedNodeFormat = old.impliedNodeFormat;
  file.packageJsonScope = old.packageJsonScope;
  file.packageJsonLocations = old.packageJsonLocations;
  file.imports = [...old.imports.filter((i) => i.pos < 0), ...moduleReferences(file)];
  file.moduleAugmentations = [];
  file.ambientModuleNames = [];
  ts.bindSourceFile(file, options);
  return { text, file, seen: false };
}

/** The innermost node that contains [start, end]. */
function containing(file: TS.SourceFile, start: number, end: number): TS.Node {
  let node: TS.Node = file;
  for (;;) {
    const child: TS.Node | undefined = node.forEachChild((c) => (c.pos <= start && end <= c.end ? c : undefined));
    if (!child) return node;
    node = child;
  }
}

/**
 * Where the function starts whose body holds [start, end) (the braces excluded) and whose type does not
 * depend on that body: a declared return type, a constructor or a setter. Undefined when there is none.
 */
function typedBodyAround(file: TS.SourceFile, start: number, end: number): number | undefined {
  for (let n: TS.Node | undefined = containing(file, start, end); n; n = n.parent) {
    if (!ts.isFunctionLike(n)) continue;
    const body = (n as TS.FunctionLikeDeclaration).body;
    if (!body || !ts.isBlock(body) || !(n.type || ts.isConstructorDeclaration(n) || ts.isSetAccessor(n))) continue;
    if (body.getStart(file) < start && end < body.end && file.text.charCodeAt(body.end - 1) === 125 /* } */)
      return n.getStart(file);
  }
  return undefined;
}

function sameNames(a: readonly { fileName: string }[], b: readonly { fileName: string }[]): boolean {
  return a.length === b.length && a.every((r, i) => r.fileName === b[i]!.fileName);
}

/** Files some file of the program imports or references (by file name), computed once per program. */
const importedByProgram = new WeakMap<TS.Program, Set<string>>();
function imported(program: TS.Program): Set<string> {
  let set = importedByProgram.get(program);
  if (set) return set;
  set = new Set();
  const p = program as TS.Program & ProgramInternals;
  for (const f of program.getSourceFiles() as readonly ProgramFile[]) {
    if (program.isSourceFileDefaultLibrary(f)) continue;
    for (const spec of f.imports) {
      const target = p.getResolvedModuleFromModuleSpecifier(spec, f)?.resolvedModule?.resolvedFileName;
      if (target) set.add(target);
    }
    for (const ref of f.referencedFiles) set.add(ts.resolveTripleslashReference(ref.fileName, f.fileName));
  }
  importedByProgram.set(program, set);
  return set;
}

/** Why no newer text of `old` can be asked of its program's checker, whatever the edit; else undefined. */
export function oldFileReason(old: ProgramFile): string | undefined {
  if (ts.isSourceFileJS(old) || old.isDeclarationFile) return "a JavaScript or declaration file";
  if (!ts.isExternalModule(old)) return "a script: its declarations are global";
  if (old.moduleAugmentations.length > 0 || old.ambientModuleNames.length > 0)
    return "declares global or module augmentations";
  return undefined;
}

/**
 * Why `file` (a newer text of `old`, from shadowOf) cannot be asked of `program`'s checker, or
 * undefined when it can: the answer is then the one a program built from it would give.
 */
export function staleReason(program: TS.Program, old: ProgramFile, file: ProgramFile): string | undefined {
  const before = oldFileReason(old);
  if (before) return before;
  if (!ts.isExternalModule(file)) return "a script: its declarations are global";
  if (
    file.statements.some((s) => ts.isModuleDeclaration(s) && (ts.isAmbientModule(s) || ts.isGlobalScopeAugmentation(s)))
  )
    return "declares global or module augmentations";
  if (
    !sameNames(old.referencedFiles, file.referencedFiles) ||
    !sameNames(old.typeReferenceDirectives, file.typeReferenceDirectives) ||
    !sameNames(old.libReferenceDirectives, file.libReferenceDirectives) ||
    old.hasNoDefaultLib !== file.hasNoDefaultLib
  )
    return "its /// references changed";
  const options = program.getCompilerOptions();
  const mode = (f: TS.SourceFile, i: TS.StringLiteralLike) => ts.getModeForUsageLocation(f, i, options);
  if (
    old.imports.length !== file.imports.length ||
    old.imports.some((i, k) => i.text !== file.imports[k]!.text || mode(old, i) !== mode(file, file.imports[k]!))
  )
    return "its imports changed";
  if (imported(program).has(old.fileName)) {
    const { span, newLength } = changeRange(old.text, file.text);
    const before = typedBodyAround(old, span.start, span.start + span.length);
    if (before === undefined || before !== typedBodyAround(file, span.start, span.start + newLength))
      return "another file imports it, and the edit is not inside a function body with a declared type";
  }
  return undefined;
}

/**
 * Asking the last program's type checker about a newer text of one file, without building a new
 * program (docs/performance.md, "Type-aware completion"). A new program costs a new type checker
 * (TypeScript merges every lib file's globals into it) and every type the answer needs computed again,
 * more than a keystroke's budget on a long file. Instead the newer text is parsed (incrementally, from a
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
import type * as TS from "typescript";
import { lineStarts, movedStarts } from "./position.js";
import { ts } from "./typescript.js";

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

/** The compiler with the internals this module uses (not in its declarations). */
const internals = (): typeof TS & Internals => ts as typeof TS & Internals;

const BLOCK = 256;

/** The one edited span between two texts (common prefix and suffix). */
export function changeRange(before: string, after: string): TS.TextChangeRange {
  const max = Math.min(before.length, after.length);
  // Blocks compared natively first, then characters: comparing a long buffer character by character
  // is slow, and every collection asks two or three times.
  let p = 0;
  while (p + BLOCK <= max && before.slice(p, p + BLOCK) === after.slice(p, p + BLOCK)) p += BLOCK;
  while (p < max && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  let s = 0;
  while (
    s + BLOCK <= max - p &&
    before.slice(before.length - s - BLOCK, before.length - s) ===
      after.slice(after.length - s - BLOCK, after.length - s)
  )
    s += BLOCK;
  while (s < max - p && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s)) s++;
  return ts.createTextChangeRange(ts.createTextSpan(p, before.length - s - p), after.length - s - p);
}

/**
 * Take the checker's ids off every node of `node`'s tree (and its JSDoc), off the symbols the binder
 * put on them and off their flow nodes. A checker keeps what it computed for a node, a symbol or a flow
 * node (its type, its narrowing, its reachability) under its id; an incremental parse reuses the nodes
 * outside the edit, and `bindEdited` their symbols and flow nodes, which the same checker must then see
 * as new (a name typed since may resolve elsewhere, a function's inferred type may have changed). A
 * symbol's last assignment position (the checker's too, not under its id) goes with it: the positions
 * after the edit have moved. What the binder left on reused nodes the next binding overwrites or
 * reuses as it is, as in TypeScript's own incremental updates.
 */
export function forgetIds(node: TS.Node): void {
  const flows = new Set<FlowNode>();
  const forgetFlow = (start: FlowNode | undefined): void => {
    const stack = start ? [start] : [];
    for (let f = stack.pop(); f; f = stack.pop()) {
      if (flows.has(f)) continue;
      flows.add(f);
      if (f.id) f.id = 0;
      if (f.antecedent) stack.push(f.antecedent);
      if (f.antecedents) stack.push(...f.antecedents);
      if (f.target) stack.push(f.target);
    }
  };
  const forgetSymbol = (s: BoundSymbol | undefined): void => {
    if (!s) return;
    if (s.id) s.id = 0;
    if (s.lastAssignmentPos !== undefined) s.lastAssignmentPos = undefined;
  };
  const visit = (node: TS.Node): void => {
    const n = node as BoundNode;
    if (n.id) n.id = 0;
    forgetSymbol(n.symbol);
    forgetSymbol(n.localSymbol);
    if (n.flowNode) forgetFlow(n.flowNode);
    if (n.endFlowNode) forgetFlow(n.endFlowNode);
    if (n.returnFlowNode) forgetFlow(n.returnFlowNode);
    if (n.fallthroughFlowNode) forgetFlow(n.fallthroughFlowNode);
    if (n.jsDoc) for (const d of n.jsDoc) visit(d);
    ts.forEachChild(node, visit);
  };
  visit(node);
}

/** What the binder (and a checker, under `id`) leaves on a node, a symbol, a flow node (TypeScript's internal types). */
interface FlowNode {
  id?: number;
  antecedent?: FlowNode;
  antecedents?: FlowNode[];
  target?: FlowNode;
}
interface BoundSymbol extends TS.Symbol {
  id?: number;
  lastAssignmentPos?: number | undefined;
}
interface BoundNode extends TS.Node {
  id?: number;
  jsDoc?: TS.Node[];
  symbol?: BoundSymbol | undefined;
  localSymbol?: BoundSymbol | undefined;
  locals?: TS.SymbolTable;
  flowNode?: FlowNode;
  endFlowNode?: FlowNode;
  returnFlowNode?: FlowNode;
  fallthroughFlowNode?: FlowNode;
}
/** The binder's results on a source file (binder.ts, bindSourceFile). */
interface BoundFile extends TS.SourceFile {
  locals?: TS.SymbolTable | undefined;
  symbol: BoundSymbol;
  symbolCount: number;
  classifiableNames?: ReadonlySet<TS.__String> | undefined;
  endFlowNode?: FlowNode | undefined;
  bindDiagnostics: TS.Diagnostic[];
  bindSuggestionDiagnostics?: TS.Diagnostic[] | undefined;
}

/** True when [start, end) lies inside `body`'s braces (a closed block). */
function insideBody(file: TS.SourceFile, body: TS.Block | undefined, start: number, end: number): boolean {
  return !!body && body.getStart(file) < start && end < body.end && file.text.charCodeAt(body.end - 1) === 125; /* } */
}

/**
 * The top-level function declaration of `file` (bound, not yet parsed again) whose body holds the
 * edit `range`, if any: read before the incremental parse, which moves the nodes it does not reuse.
 */
export function editedFunction(file: TS.SourceFile, range: TS.TextChangeRange): TS.FunctionDeclaration | undefined {
  const { start, length } = range.span;
  const f = file.statements.find((s) => s.pos <= start && start + length <= s.end);
  return f && ts.isFunctionDeclaration(f) && insideBody(file, f.body, start, start + length) ? f : undefined;
}

/**
 * Bind `file`, an incremental parse of the bound `old` after the edit `range`, reusing `old`'s binding
 * where the edit cannot change it: when every top-level statement but one is a node the parse reused,
 * and the edit lies inside the body of that one, a function declaration (`edited`, from
 * editedFunction), in both texts. What a
 * function's body declares is its own (its locals, its flow graph): binding the whole file again
 * would give every other statement the binding it has. So the new function is bound on its own (as
 * the only statement of a file otherwise like `file`) and takes the old one's place in the file's
 * symbols; the file keeps `old`'s symbol tables. Binding a 2,000-line file costs about as much as
 * the rest of a completion; this costs what the one function does. False (nothing done) otherwise:
 * the file is then bound whole.
 */
export function bindEdited(
  old: TS.SourceFile,
  edited: TS.FunctionDeclaration | undefined,
  file: TS.SourceFile,
  range: TS.TextChangeRange,
  options: TS.CompilerOptions,
): boolean {
  const before = old as BoundFile;
  const after = file as BoundFile;
  if (
    !edited ||
    !before.locals ||
    after.locals ||
    !internals().isExternalModule(old) ||
    !internals().isExternalModule(file)
  )
    return false;
  const a = old.statements;
  const b = file.statements;
  const k = a.indexOf(edited);
  if (a.length !== b.length || k < 0 || a.some((s, i) => i !== k && s !== b[i])) return false;
  const f1 = edited;
  const f2 = b[k]!;
  if (f2 === f1 || !ts.isFunctionDeclaration(f2)) return false;
  if (!insideBody(file, f2.body, range.span.start, range.span.start + range.newLength)) return false;
  // The function alone, in a file that reads as `file` otherwise (strict as it is: both are modules).
  const alone = Object.create(file) as BoundFile;
  Object.assign(alone, {
    statements: ts.factory.createNodeArray([f2]),
    locals: undefined,
    symbol: undefined,
    endFlowNode: undefined,
    bindDiagnostics: [],
    bindSuggestionDiagnostics: undefined,
  });
  internals().bindSourceFile(alone, options);
  setParent(f2, file);
  setParent(file.endOfFileToken, file);
  const s1 = f1 as BoundNode;
  const s2 = f2 as BoundNode;
  for (const s of [s1.symbol, s1.localSymbol]) {
    if (!s?.declarations) continue;
    s.declarations = s.declarations.map((d) => (d === f1 ? f2 : d));
    if (s.valueDeclaration === f1) s.valueDeclaration = f2;
  }
  s2.symbol = s1.symbol;
  s2.localSymbol = s1.localSymbol;
  after.locals = before.locals;
  after.symbol = before.symbol;
  after.symbolCount = before.symbolCount;
  after.classifiableNames = before.classifiableNames;
  after.endFlowNode = before.endFlowNode;
  after.bindDiagnostics = before.bindDiagnostics;
  after.bindSuggestionDiagnostics = before.bindSuggestionDiagnostics;
  // HasAsyncFunctions, the only flag the binder adds to a file.
  (after as { flags: number }).flags |= (before.flags | alone.flags) & ts.NodeFlags.HasAsyncFunctions;
  const module = before.symbol;
  if (module.declarations) module.declarations = module.declarations.map((d) => (d === old ? file : d));
  if (module.valueDeclaration === old) module.valueDeclaration = file;
  return true;
}

function setParent(node: TS.Node, parent: TS.Node): void {
  (node as { parent: TS.Node }).parent = parent;
}

/** NodeFlags.PossiblyContainsDynamicImport (internal): the parser saw `import(` (a call or an import type). */
const POSSIBLY_CONTAINS_DYNAMIC_IMPORT = 1 << 22;

/** A file's module references as a program collects them (program.ts, collectExternalModuleReferences). */
function moduleReferences(file: TS.SourceFile): TS.StringLiteralLike[] {
  const out: TS.StringLiteralLike[] = [];
  for (const s of file.statements) {
    if (!internals().isAnyImportOrReExport(s)) continue;
    const name = internals().getExternalModuleName(s);
    if (name && ts.isStringLiteral(name) && name.text) out.push(name);
  }
  if (file.flags & POSSIBLY_CONTAINS_DYNAMIC_IMPORT)
    internals().forEachDynamicImportOrRequireCall(file, true, true, (_node, specifier) => out.push(specifier));
  return out;
}

/** A shadow copy of one file's text: parsed and bound apart from any program. */
export interface Shadow {
  text: string;
  file: ProgramFile;
  /** Its line starts, when `\n` is its only line break (then they are TypeScript's line map). */
  lines?: readonly number[];
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
  let range: TS.TextChangeRange | undefined;
  let edited: TS.FunctionDeclaration | undefined;
  if (shadow) {
    // Ids are taken off after an answer (WorkspaceService.tidy); if not yet, before its nodes are reused.
    if (shadow.seen) forgetIds(shadow.file);
    range = changeRange(shadow.text, text);
    edited = editedFunction(shadow.file, range);
    file = ts.updateSourceFile(shadow.file, text, range) as ProgramFile;
  } else
    file = ts.createSourceFile(
      old.fileName,
      text,
      {
        languageVersion: old.languageVersion,
        ...(old.impliedNodeFormat !== undefined ? { impliedNodeFormat: old.impliedNodeFormat } : {}),
        setExternalModuleIndicator: internals().getSetExternalModuleIndicator(options),
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
  const alone = !!shadow && !!range && bindEdited(shadow.file, edited, file, range, options);
  if (!alone) internals().bindSourceFile(file, options);
  // The edit lay inside the body of a function whose type does not depend on it: what the file's
  // other top-level statements mean is what it was for the last shadow.
  lineages.set(file, alone && edited!.type ? (lineages.get(shadow!.file) ?? {}) : {});
  // TypeScript's line map, which a completion asks for (its contextual keywords): computed character by
  // character it is slow on a long file, per shadow; with `\n` the only line break it is the
  // last shadow's moved (position.ts).
  let lines: readonly number[] | undefined;
  if (!/[\r\u2028\u2029]/.test(text)) {
    lines = shadow?.lines ? movedStarts(shadow.text, shadow.lines, text) : lineStarts(text);
    (file as { lineMap?: readonly number[] }).lineMap = lines;
  }
  return { text, file, seen: false, ...(lines ? { lines } : {}) };
}

const lineages = new WeakMap<TS.SourceFile, object>();

/**
 * The lineage of a shadow file (shadowOf): the same object for successive shadows as long as each
 * edit lay inside the body of one top-level function declaration with a declared return type, bound
 * alone (bindEdited). Within a lineage, and with one program, a top-level statement node that the
 * incremental parse reused means what it meant in the earlier shadow: it is the same node (an edit
 * inside a statement makes a new one), bound as before, and the edited function's type did not
 * change. Undefined for a file that is no shadow.
 */
export function lineageOf(file: TS.SourceFile): object | undefined {
  return lineages.get(file);
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
    for (const ref of f.referencedFiles) set.add(internals().resolveTripleslashReference(ref.fileName, f.fileName));
  }
  importedByProgram.set(program, set);
  return set;
}

/** Why no newer text of `old` can be asked of its program's checker, whatever the edit; else undefined. */
export function oldFileReason(old: ProgramFile): string | undefined {
  if (internals().isSourceFileJS(old) || old.isDeclarationFile) return "a JavaScript or declaration file";
  if (!internals().isExternalModule(old)) return "a script: its declarations are global";
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
  if (!internals().isExternalModule(file)) return "a script: its declarations are global";
  if (
    file.statements.some(
      (s) => ts.isModuleDeclaration(s) && (internals().isAmbientModule(s) || internals().isGlobalScopeAugmentation(s)),
    )
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

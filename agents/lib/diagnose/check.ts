/**
 * Diagnostics of a file from the workspace's own language service (the one the typed completion
 * engine keeps, worker.ts), with fixes that are checked before they are offered (docs/agents.md,
 * "diagnose"): each candidate's edits are applied to in-memory copies of the files, the files are
 * checked again, and the fix is `verified` only when the diagnostic is gone and no error appeared
 * that was not there before. The buffers are put back afterwards; nothing is written to disk.
 *
 * Candidates come from TypeScript's code fixes (`getCodeFixesAtPosition`), from a few repairs the
 * language service does not offer (a missing or extra argument, a value of the wrong primitive type,
 * a lost `return`), and from the caller (a model's fix): all go through the same check.
 */
import { sep } from "node:path";
import type * as TS from "typescript";
import type { WorkspaceService } from "../code/service.js";
import { changeOf } from "../code/position.js";
import { ts } from "../code/typescript.js";

/** Limits of one diagnosis (docs/agents.md, "diagnose"). */
export const CHECK_LIMITS = {
  /** Diagnostics reported per file; the rest are counted. */
  maxDiagnostics: 100,
  /** Fix candidates kept per diagnostic (after removing duplicates). */
  maxFixesPerDiagnostic: 6,
  /** Candidates checked per request (each one a re-check of the files it touches); the rest are marked unchecked. */
  maxVerifications: 40,
  /**
   * Lines from which a changed file is checked region first (coverage "auto"), as TypeScript's own
   * server does: below it the whole file's check is about as fast as a region's.
   */
  regionMinLines: 500,
};

export interface Pos {
  line: number;
  column: number;
}

export interface Edit {
  /** Absolute path of the file edited. */
  file: string;
  start: Pos;
  end: Pos;
  new_text: string;
}

export interface CheckedFix {
  description: string;
  /** TypeScript's fix name (`fixSpelling`, `import`…), `agency.*` for the agent's own repairs, `model`. */
  fix_name: string;
  source: "typescript" | "agency" | "model";
  edits: Edit[];
  verified: boolean;
  /** Why it is not verified: the errors left or introduced, or why it was not checked. */
  not_verified?: string;
}

export interface CheckedDiagnostic {
  file: string;
  start: Pos;
  end: Pos;
  /** TypeScript's code; 0 for the agent's own rule (named by `rule`). */
  code: number;
  /** The agent's own check (`agency/unused-expression`), absent for TypeScript's diagnostics. */
  rule?: string;
  message: string;
  severity: "error" | "warning";
  fixes: CheckedFix[];
}

/** A caller's candidate fix for one of the file's diagnostics (matched by line and code, or line alone). */
export interface CandidateFix {
  line: number;
  code?: number;
  description: string;
  edits: { file: string; start: Pos; end: Pos; new_text: string }[];
}

export interface Definition {
  name: string;
  file: string;
  line: number;
  /** The declaration's first lines (only for a file inside the workspace). */
  text?: string;
  /** Where it is when not in the workspace: "dependency", "lib". */
  where: "workspace" | "dependency" | "lib";
}

export interface DiagnoseRequest {
  path: string;
  text: string;
  /** Check fixes (default true). */
  verify?: boolean;
  /** False: only the definition at `definitionAt` is wanted. */
  diagnostics?: boolean;
  /** Extra candidates to check (a model's fix). */
  candidates?: CandidateFix[];
  /** Where to look up the definition of what is called (1-based line, 0-based column). */
  definitionAt?: Pos;
  /** Epoch ms after which remaining candidates are left unchecked. */
  deadline: number;
  /** How long the checks of candidates may take (ms): the rest are marked unchecked. Default: until `deadline`. */
  verifyBudgetMs?: number;
  /**
   * "file" (the default): the whole file's diagnostics. "auto": a file of at least
   * CHECK_LIMITS.regionMinLines whose whole check is not made yet for this text is checked in its
   * region only (`ranges`, else the span changed since the text the service held), and the answer
   * says so (`coverage: "region"`); the caller checks the whole file next (worker.ts does, in the background).
   */
  coverage?: "auto" | "file";
  /** The region to check first (the client's hint: the edited or visible lines, a cursor). */
  ranges?: { start: Pos; end: Pos }[];
}

export interface DiagnoseAnswer {
  diagnostics: CheckedDiagnostic[];
  /** Diagnostics beyond CHECK_LIMITS.maxDiagnostics, not reported. */
  more: number;
  checked: number;
  unchecked: number;
  /** Of `checked`, the checks made by an earlier request on the same texts and kept. */
  checks_reused: number;
  definition?: Definition;
  /** "region": only the declarations around `checked` were type-checked (syntax errors are the whole file's). */
  coverage: "file" | "region";
  /** With coverage "region": the spans checked, whole statements around the ranges asked. */
  checked_ranges?: { start: Pos; end: Pos }[];
  ms: { diagnostics: number; fixes: number };
}

/** The language service's region check (public since TypeScript 5.6, not yet in its declarations). */
type RegionService = TS.LanguageService & {
  getRegionSemanticDiagnostics?(
    fileName: string,
    ranges: TS.TextRange[],
  ): { diagnostics: TS.Diagnostic[]; spans: TS.TextSpan[] } | undefined;
};

/**
 * The span of `next` that differs from `prev` (common prefix and suffix left out), or undefined when
 * they are equal: where an edit happened, for an editor that sends the whole buffer.
 */
export function editedSpan(prev: string, next: string): TS.TextRange | undefined {
  if (prev === next) return undefined;
  const change = changeOf(prev, next);
  return { pos: change.start, end: change.newEnd };
}

/**
 * Per service and file, the region last answered and its text: asked again about the same text before
 * the whole file was checked, the same region answers.
 */
const REGIONS = new WeakMap<WorkspaceService, Map<string, { text: string; ranges: TS.TextRange[] }>>();

/**
 * The region check of `path` for `req`'s ranges (or the span edited since `prev`), or undefined when the
 * whole file is to be checked: a short file, no region known, the whole check already made for this
 * text (it answers at once), or a TypeScript without region checks.
 */
function regionCheck(
  svc: WorkspaceService,
  sf: TS.SourceFile,
  prev: string | undefined,
  req: DiagnoseRequest,
): { diagnostics: TS.Diagnostic[]; spans: TS.TextSpan[] } | undefined {
  const ls = svc.languageService as RegionService;
  if (req.coverage !== "auto" || !ls.getRegionSemanticDiagnostics) return undefined;
  const starts = sf.getLineStarts();
  if (starts.length < CHECK_LIMITS.regionMinLines) return undefined;
  let regions = REGIONS.get(svc);
  if (!regions) REGIONS.set(svc, (regions = new Map()));
  let ranges: TS.TextRange[] | undefined = req.ranges?.map((r) => ({
    pos: offsetOf(sf.text, starts, r.start),
    end: Math.max(offsetOf(sf.text, starts, r.start), offsetOf(sf.text, starts, r.end)),
  }));
  if (!ranges?.length) {
    const edit = prev === undefined ? undefined : editedSpan(prev, sf.text);
    const again = regions.get(sf.fileName);
    ranges = edit ? [edit] : again?.text === sf.text ? again.ranges : undefined;
  }
  if (!ranges?.length) return undefined;
  // An edit in comments or blank lines touches no declaration: the one after it is checked (or the
  // file's end), rather than the whole file.
  const r =
    ls.getRegionSemanticDiagnostics(sf.fileName, ranges) ??
    ls.getRegionSemanticDiagnostics(
      sf.fileName,
      ranges.map((x) => ({ pos: x.pos, end: sf.statements.find((st) => st.end >= x.end)?.end ?? sf.end })),
    );
  if (r) regions.set(sf.fileName, { text: sf.text, ranges });
  else regions.delete(sf.fileName);
  return r;
}

let format: TS.FormatCodeSettings | undefined;
/** The formatting fixes are made with (asked on first use, like the compiler). */
const formatSettings = (): TS.FormatCodeSettings => (format ??= ts.getDefaultFormatCodeSettings("\n"));
const PREFERENCES: TS.UserPreferences = { quotePreference: "auto", importModuleSpecifierEnding: "auto" };

/**
 * Fixes that make the error disappear without repairing anything: kept last and never verified.
 * `fixMissingFunctionDeclaration` and friends declare what a misspelling names; they are real fixes,
 * ranked below one that uses what exists.
 */
const SUPPRESSIONS = new Set(["disableJsDiagnostics", "fixDisableJsDiagnostics"]);
const DECLARES = new Set([
  "fixMissingFunctionDeclaration",
  "fixMissingMember",
  "addMissingConst",
  "fixAddMissingMember",
]);
const PREFERRED = new Set(["fixSpelling", "import", "fixImport", "returnValueCorrect", "fixAddReturnStatement"]);

function posOf(sf: TS.SourceFile, offset: number): Pos {
  const lc = sf.getLineAndCharacterOfPosition(offset);
  return { line: lc.line + 1, column: lc.character };
}

function offsetOf(text: string, starts: readonly number[], p: Pos): number {
  const lineStart = starts[p.line - 1] ?? text.length;
  return Math.min(text.length, lineStart + p.column);
}

function flatten(m: string | TS.DiagnosticMessageChain): string {
  return ts.flattenDiagnosticMessageText(m, "\n");
}

/** The error diagnostics of `path`, syntactic then semantic. */
function errorsOf(ls: TS.LanguageService, path: string): TS.Diagnostic[] {
  const syn = ls.getSyntacticDiagnostics(path);
  // A file that does not parse: its semantic errors are noise on top of the syntax error.
  const sem = syn.length > 0 ? [] : ls.getSemanticDiagnostics(path);
  return [...syn, ...sem].filter((d) => d.category === ts.DiagnosticCategory.Error);
}

const keyOf = (d: TS.Diagnostic): string => `TS${d.code}: ${flatten(d.messageText)}`;

const covers = (d: TS.Diagnostic, at: number): boolean =>
  d.start !== undefined && d.start <= at && at <= d.start + (d.length ?? 0);

/** The innermost node containing [start, end). */
function nodeAt(sf: TS.SourceFile, start: number, end = start): TS.Node {
  let node: TS.Node = sf;
  for (;;) {
    const child: TS.Node | undefined = node.forEachChild((c) =>
      c.getStart(sf) <= start && end <= c.getEnd() ? c : undefined,
    );
    if (!child) return node;
    node = child;
  }
}

type Primitive = "string" | "number" | "boolean";

interface RawFix {
  description: string;
  fix_name: string;
  source: CheckedFix["source"];
  /** Per file, text changes in that file's offsets. */
  changes: { file: string; spans: { start: number; length: number; text: string }[] }[];
}

/** The agent's own repairs for errors TypeScript offers no fix for; each is only a candidate (the check decides). */
function ownFixes(program: TS.Program, sf: TS.SourceFile, d: TS.Diagnostic): RawFix[] {
  const out: RawFix[] = [];
  const start = d.start ?? 0;
  const node = nodeAt(sf, start, start + (d.length ?? 0));
  const checker = program.getTypeChecker();
  const fix = (description: string, name: string, spans: RawFix["changes"][0]["spans"]): void => {
    out.push({ description, fix_name: `agency.${name}`, source: "agency", changes: [{ file: sf.fileName, spans }] });
  };
  const call = findUp(node, ts.isCallExpression) ?? findUp(node, ts.isNewExpression);
  if ((d.code === 2554 || d.code === 2555) && call?.arguments) {
    const args = call.arguments;
    const sig = checker.getResolvedSignature(call);
    const params = sig?.parameters ?? [];
    const decls = sig?.declaration?.parameters ?? [];
    const rest = decls.some((p) => ts.isParameter(p) && p.dotDotDotToken !== undefined);
    // Required: up to the last parameter with neither `?`, a default, nor a rest.
    let required = 0;
    decls.forEach((p, i) => {
      if (ts.isParameter(p) && !p.questionToken && !p.initializer && !p.dotDotDotToken) required = i + 1;
    });
    if (!rest && args.length > params.length && params.length >= 0) {
      const from = params.length === 0 ? args.pos : args[params.length - 1]!.end;
      fix(`Remove the extra argument${args.length - params.length > 1 ? "s" : ""}`, "removeArguments", [
        { start: from, length: args.end - from, text: "" },
      ]);
    } else if (args.length < required) {
      // For each missing parameter: a name in scope spelled as it is, else the nearest local declared
      // before the call in this file whose type fits it.
      const scope = checker
        .getSymbolsInScope(call, ts.SymbolFlags.Variable)
        .filter((s) => s.valueDeclaration?.getSourceFile() === sf && s.valueDeclaration.getEnd() < call.getStart(sf))
        .sort((a, b) => b.valueDeclaration!.getStart(sf) - a.valueDeclaration!.getStart(sf));
      const used = new Set(args.map((a) => a.getText(sf)));
      const missing = params.slice(args.length, required).map((p) => {
        const want = checker.getTypeOfSymbolAtLocation(p, call);
        const exact = scope.find((s) => s.name === p.name);
        if (exact) return exact.name;
        const fits = scope.find(
          (s) => !used.has(s.name) && checker.isTypeAssignableTo(checker.getTypeOfSymbolAtLocation(s, call), want),
        );
        if (fits) used.add(fits.name);
        return fits?.name;
      });
      if (missing.every((n) => n !== undefined)) {
        const text = (args.length > 0 ? ", " : "") + missing.join(", ");
        fix(`Pass ${missing.join(", ")}`, "addArguments", [{ start: args.end, length: 0, text }]);
      }
    }
  }
  if ((d.code === 2304 || d.code === 2339) && ts.isIdentifier(node)) {
    // A misspelling TypeScript offers no suggestion for (it skips short names): the closest names in scope, or members of the receiver.
    const name = node.text;
    const parent = node.parent;
    const candidates =
      d.code === 2339 && ts.isPropertyAccessExpression(parent) && parent.name === node
        ? checker
            .getTypeAtLocation(parent.expression)
            .getProperties()
            .map((p) => p.name)
        : checker.getSymbolsInScope(node, ts.SymbolFlags.Value | ts.SymbolFlags.Alias).map((s) => s.name);
    const limit = Math.max(1, Math.floor(name.length / 3));
    const near = [...new Set(candidates)]
      .map((c) => ({ c, d: distance(name, c, limit) }))
      .filter((x) => x.d <= limit)
      .sort((a, b) => a.d - b.d)
      .slice(0, 3);
    for (const { c } of near)
      fix(`Change spelling to '${c}'`, "spelling", [{ start: node.getStart(sf), length: name.length, text: c }]);
  }
  if (d.code === 2345 || d.code === 2322 || d.code === 2769) {
    // A value of the wrong primitive type: converted to the one the parameter (of any overload) or the
    // target takes. The check decides which conversion holds.
    const wants = new Set<Primitive>();
    const named = /not assignable to (?:parameter of )?type '(string|number|boolean)'/.exec(flatten(d.messageText));
    if (named) wants.add(named[1] as Primitive);
    const arg = call?.arguments?.find((a) => a.getStart(sf) <= start && start < a.getEnd());
    const args = arg ? [arg] : d.code === 2769 ? [...(call?.arguments ?? [])] : [];
    const exprAt = findUp(node, ts.isExpression);
    const targets = args.length > 0 ? args : exprAt && exprAt.getStart(sf) === start ? [exprAt] : [];
    for (const expr of targets) {
      const want = new Set(wants);
      if (call && ts.isExpression(expr) && call.arguments?.includes(expr)) {
        const i = call.arguments.indexOf(expr);
        const callee = checker.getTypeAtLocation(call.expression);
        const sigs = ts.isNewExpression(call) ? callee.getConstructSignatures() : callee.getCallSignatures();
        for (const sig of sigs) {
          const p = sig.parameters[i];
          if (!p) continue;
          const t = checker.getTypeOfSymbolAtLocation(p, call);
          if (checker.isTypeAssignableTo(checker.getStringType(), t)) want.add("string");
          if (checker.isTypeAssignableTo(checker.getNumberType(), t)) want.add("number");
          if (checker.isTypeAssignableTo(checker.getBooleanType(), t)) want.add("boolean");
        }
      }
      const at = expr.getStart(sf);
      const text = expr.getText(sf);
      const own: Primitive | undefined = ts.isStringLiteral(expr)
        ? "string"
        : ts.isNumericLiteral(expr)
          ? "number"
          : expr.kind === ts.SyntaxKind.TrueKeyword || expr.kind === ts.SyntaxKind.FalseKeyword
            ? "boolean"
            : undefined;
      for (const target of want) {
        if (target === own) continue;
        const literal =
          target === "string" && (ts.isNumericLiteral(expr) || own === "boolean")
            ? JSON.stringify(text)
            : target === "number" && ts.isStringLiteral(expr) && /^-?\d+(\.\d+)?$/.test(expr.text)
              ? expr.text
              : undefined;
        if (literal !== undefined)
          fix(`Write ${literal}`, "convertLiteral", [{ start: at, length: text.length, text: literal }]);
        const wrap = target === "string" ? "String" : target === "number" ? "Number" : "Boolean";
        fix(`Convert with ${wrap}(…)`, "convertValue", [{ start: at, length: text.length, text: `${wrap}(${text})` }]);
      }
    }
    // The last argument where an optional parameter takes a value of another type: often one too many.
    if (arg && call?.arguments && arg === call.arguments.at(-1) && call.arguments.length > 1) {
      const sig = checker.getResolvedSignature(call);
      const decl = sig?.declaration?.parameters[call.arguments.length - 1];
      if (decl && ts.isParameter(decl) && (decl.questionToken || decl.initializer)) {
        const from = call.arguments[call.arguments.length - 2]!.end;
        fix("Remove the last argument", "removeArguments", [{ start: from, length: arg.end - from, text: "" }]);
      }
    }
  }
  if (d.code === 2741 || d.code === 2739 || d.code === 2345 || d.code === 2322) {
    // An object literal missing required properties: each declared with a value of its type.
    const msg = flatten(d.messageText);
    const names = new Set<string>();
    for (const m of msg.matchAll(/Property '([^']+)' is missing in type/g)) names.add(m[1]!);
    const list = /missing the following properties from type '[^']*': ([^\n]+?)(?:, and \d+ more)?\.?$/m.exec(msg);
    for (const n of list?.[1]?.split(/,\s*/) ?? []) names.add(n);
    const objectOf = (n: TS.Node): TS.ObjectLiteralExpression | undefined => {
      const e = ts.isReturnStatement(n)
        ? n.expression
        : ts.isVariableDeclaration(n) || ts.isPropertyAssignment(n)
          ? n.initializer
          : ts.isExpression(n)
            ? n
            : undefined;
      return e && ts.isObjectLiteralExpression(e) ? e : undefined;
    };
    const obj = objectOf(node) ?? objectOf(node.parent);
    const target = obj && checker.getContextualType(obj);
    if (obj && target && names.size > 0) {
      const props: string[] = [];
      for (const name of names) {
        const sym = checker.getPropertyOfType(checker.getNonNullableType(target), name);
        const value = sym && valueOfType(checker, checker.getTypeOfSymbolAtLocation(sym, obj));
        if (value === undefined || !/^[A-Za-z_$][\w$]*$/.test(name)) {
          props.length = 0;
          break;
        }
        props.push(`${name}: ${value}`);
      }
      const last = obj.properties.at(-1);
      if (props.length > 0)
        fix(`Add ${props.join(", ")}`, "addMissingProperties", [
          last
            ? { start: last.getEnd(), length: 0, text: `, ${props.join(", ")}` }
            : { start: obj.getStart(sf) + 1, length: 0, text: ` ${props.join(", ")} ` },
        ]);
    }
  }
  if (d.code === 1136 && sf.text[start] === ",") {
    // A comma where a property was expected: one left over after a property was removed.
    fix("Remove the extra ','", "removeComma", [{ start, length: 1, text: "" }]);
  }
  if (d.code === 2355 || d.code === 2366 || d.code === 7030) {
    const fn = findUp(node, ts.isFunctionLike) as TS.FunctionLikeDeclaration | undefined;
    const body = fn?.body && ts.isBlock(fn.body) ? fn.body : undefined;
    if (body) {
      const last = body.statements.at(-1);
      if (last && ts.isExpressionStatement(last))
        fix("Return the last expression", "returnLast", [{ start: last.getStart(sf), length: 0, text: "return " }]);
      // Locals declared in the body, the last first: the value the function was building.
      const locals: string[] = [];
      for (const s of body.statements)
        if (ts.isVariableStatement(s))
          for (const decl of s.declarationList.declarations)
            if (ts.isIdentifier(decl.name)) locals.unshift(decl.name.text);
      const indent = /[ \t]*$/.exec(sf.text.slice(0, body.end - 1))![0];
      for (const name of locals.slice(0, 3))
        fix(`Return ${name}`, "returnLocal", [
          { start: body.end - 1 - indent.length, length: 0, text: `${indent}  return ${name};\n` },
        ]);
    }
  }
  return out;
}

/**
 * A placeholder value of type `t` for a property a fix declares: `undefined` where it is allowed, else
 * the type's first literal, an empty string, 0, false or an empty array; undefined for any other type.
 */
function valueOfType(checker: TS.TypeChecker, t: TS.Type): string | undefined {
  const parts = t.isUnion() ? t.types : [t];
  if (parts.some((p) => p.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Any | ts.TypeFlags.Unknown)))
    return "undefined";
  for (const p of parts) {
    if (p.isStringLiteral()) return JSON.stringify(p.value);
    if (p.isNumberLiteral()) return String(p.value);
    if (p.flags & ts.TypeFlags.BooleanLiteral) return checker.typeToString(p);
    if (p.flags & ts.TypeFlags.String) return '""';
    if (p.flags & ts.TypeFlags.Number) return "0";
    if (p.flags & ts.TypeFlags.Boolean) return "false";
    if (checker.isArrayType(p)) return "[]";
  }
  return undefined;
}

/** The agent's own rule: a statement whose value is computed and dropped. */
export const UNUSED_EXPRESSION = "agency/unused-expression";

/** True when evaluating `e` has no effect besides its value (so a statement of it does nothing). */
function pure(e: TS.Expression): boolean {
  if (
    ts.isIdentifier(e) ||
    ts.isLiteralExpression(e) ||
    ts.isNoSubstitutionTemplateLiteral(e) ||
    ts.isArrowFunction(e) ||
    ts.isFunctionExpression(e) ||
    e.kind === ts.SyntaxKind.TrueKeyword ||
    e.kind === ts.SyntaxKind.FalseKeyword ||
    e.kind === ts.SyntaxKind.NullKeyword ||
    e.kind === ts.SyntaxKind.ThisKeyword
  )
    return true;
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) return pure(e.expression);
  if (ts.isPropertyAccessExpression(e)) return pure(e.expression);
  if (ts.isElementAccessExpression(e)) return pure(e.expression) && pure(e.argumentExpression);
  if (ts.isPrefixUnaryExpression(e))
    return (
      e.operator !== ts.SyntaxKind.PlusPlusToken && e.operator !== ts.SyntaxKind.MinusMinusToken && pure(e.operand)
    );
  if (ts.isTypeOfExpression(e)) return pure(e.expression);
  if (ts.isConditionalExpression(e)) return pure(e.condition) && pure(e.whenTrue) && pure(e.whenFalse);
  if (ts.isTemplateExpression(e)) return e.templateSpans.every((t) => pure(t.expression));
  if (ts.isArrayLiteralExpression(e))
    return e.elements.every((x) => (ts.isSpreadElement(x) ? pure(x.expression) : pure(x)));
  if (ts.isObjectLiteralExpression(e))
    return e.properties.every((p) =>
      ts.isPropertyAssignment(p)
        ? !ts.isComputedPropertyName(p.name) && pure(p.initializer)
        : ts.isShorthandPropertyAssignment(p) || (ts.isSpreadAssignment(p) && pure(p.expression)),
    );
  if (ts.isBinaryExpression(e)) {
    const op = e.operatorToken.kind;
    const assigns = op >= ts.SyntaxKind.FirstAssignment && op <= ts.SyntaxKind.LastAssignment;
    return !assigns && op !== ts.SyntaxKind.CommaToken && pure(e.left) && pure(e.right);
  }
  return false;
}

/** The offset just past the `}` matching the `{` at `open` (strings and comments skipped), or -1. */
function matchingBrace(text: string, open: number): number {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  scanner.resetTokenState(open);
  let depth = 0;
  for (let t = scanner.scan(); t !== ts.SyntaxKind.EndOfFileToken; t = scanner.scan()) {
    if (t === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (t === ts.SyntaxKind.CloseBraceToken && --depth === 0) return scanner.getTokenEnd();
  }
  return -1;
}

/**
 * A block standing where an object literal was meant (`{ ...a, b: 1 }` after a lost `return`): its
 * text up to the matching brace (the parser's recovery ends the block elsewhere) parses as an object.
 */
function objectBlock(sf: TS.SourceFile, b: TS.Block, syntaxErrors: readonly TS.Diagnostic[]): boolean {
  if (!ts.isBlock(b.parent)) return false;
  const from = b.getStart(sf);
  const to = matchingBrace(sf.text, from);
  if (to < 0 || !syntaxErrors.some((d) => (d.start ?? -1) > from && (d.start ?? -1) < to)) return false;
  const probe = ts.createSourceFile("probe.ts", `(${sf.text.slice(from, to)});`, ts.ScriptTarget.Latest, true);
  const parsed = (probe as unknown as { parseDiagnostics: TS.Diagnostic[] }).parseDiagnostics;
  const stmt = probe.statements[0];
  return (
    parsed.length === 0 &&
    probe.statements.length === 1 &&
    stmt !== undefined &&
    ts.isExpressionStatement(stmt) &&
    ts.isParenthesizedExpression(stmt.expression) &&
    ts.isObjectLiteralExpression(stmt.expression.expression) &&
    stmt.expression.expression.properties.length > 0
  );
}

/**
 * Statements in function bodies whose value is dropped: a pure expression (`x === y;`, `false;`,
 * `a.b;`), or a block that only parses as an object literal (`syntaxErrors` lie inside it). Each is
 * most often a lost `return`, and its consequences show as type errors elsewhere (a narrowing gone, a
 * missing return value), so it is reported where the mistake is.
 */
export function unusedExpressions(sf: TS.SourceFile, syntaxErrors: readonly TS.Diagnostic[] = []): TS.Statement[] {
  const out: TS.Statement[] = [];
  const visit = (n: TS.Node): void => {
    if (
      ts.isExpressionStatement(n) &&
      ts.isBlock(n.parent) &&
      pure(n.expression) &&
      // A directive ("use strict") is a string standing alone on purpose.
      !ts.isStringLiteral(n.expression)
    )
      out.push(n);
    else if (ts.isBlock(n) && syntaxErrors.length > 0 && objectBlock(sf, n, syntaxErrors)) {
      out.push(n);
      return;
    }
    n.forEachChild(visit);
  };
  visit(sf);
  return out;
}

/**
 * Edit distance of `a` and `b` counting a swap of two neighbouring letters as one edit (the commonest
 * typo, which plain Levenshtein counts as two), or `limit + 1` once it exceeds `limit`.
 */
export function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit || a === b) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = v;
      best = Math.min(best, v);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

function findUp<T extends TS.Node>(node: TS.Node, test: (n: TS.Node) => n is T): T | undefined {
  for (let n: TS.Node | undefined = node; n; n = n.parent) if (test(n)) return n;
  return undefined;
}

function tsFixes(ls: TS.LanguageService, path: string, d: TS.Diagnostic): RawFix[] {
  let actions: readonly TS.CodeFixAction[];
  try {
    actions = ls.getCodeFixesAtPosition(
      path,
      d.start ?? 0,
      (d.start ?? 0) + (d.length ?? 0),
      [d.code],
      formatSettings(),
      PREFERENCES,
    );
  } catch (err) {
    if (err instanceof ts.OperationCanceledException) throw err;
    return [];
  }
  return actions
    .filter((a) => !a.commands?.length && a.changes.every((c) => !c.isNewFile))
    .map((a) => ({
      description: a.description,
      fix_name: a.fixName,
      source: "typescript" as const,
      changes: a.changes.map((c) => ({
        file: c.fileName,
        spans: c.textChanges.map((t) => ({ start: t.span.start, length: t.span.length, text: t.newText })),
      })),
    }));
}

function applySpans(text: string, spans: RawFix["changes"][0]["spans"]): string {
  const sorted = [...spans].sort((a, b) => b.start - a.start);
  let out = text;
  for (const s of sorted) out = out.slice(0, s.start) + s.text + out.slice(s.start + s.length);
  return out;
}

/**
 * Check `fix` on in-memory copies of the files it edits, in a program beside the service's own
 * (WorkspaceService.errorsWithEdits): the service's program and checker are left as they are.
 * Verified: every error now was there before (by code and message, as many times), the target
 * counted once less, and none covers the diagnostic's place beyond those that covered it besides it.
 */
function verify(
  svc: WorkspaceService,
  path: string,
  before: Map<string, string[]>,
  target: string,
  fix: RawFix,
  at: { start: number; kept: string[] },
): { verified: boolean; why?: string } {
  const ls = svc.languageService;
  const program = svc.program();
  const spansOf = new Map<string, RawFix["changes"][0]["spans"]>();
  for (const c of fix.changes) spansOf.set(c.file, [...(spansOf.get(c.file) ?? []), ...c.spans]);
  const edited = new Map<string, string>();
  for (const [file, spans] of spansOf) {
    const sf = program.getSourceFile(file);
    if (!sf) return { verified: false, why: `it edits ${file}, which the project does not hold` };
    edited.set(file, applySpans(sf.text, spans));
  }
  const files = new Set([path, ...edited.keys()]);
  for (const f of files) if (!before.has(f)) before.set(f, errorsOf(ls, f).map(keyOf));
  try {
    const after = svc.errorsWithEdits(edited, files);
    const left: string[] = [];
    const pool = new Map<string, number>();
    for (const f of files)
      for (const k of before.get(f) ?? []) pool.set(`${f}\0${k}`, (pool.get(`${f}\0${k}`) ?? 0) + 1);
    const t = `${path}\0${target}`;
    pool.set(t, (pool.get(t) ?? 1) - 1);
    for (const [f, errs] of after)
      for (const k of errs.map(keyOf)) {
        const n = pool.get(`${f}\0${k}`) ?? 0;
        if (n > 0) pool.set(`${f}\0${k}`, n - 1);
        else left.push(f === path ? k : `${f}: ${k}`);
      }
    if (left.length > 0) return { verified: false, why: `errors after the fix: ${left.slice(0, 3).join("; ")}` };
    // The same message may have moved rather than gone: no error may cover the diagnostic's place
    // (where the edits moved it) beyond those that covered it besides the target.
    const spans = spansOf.get(path) ?? [];
    let moved = at.start;
    for (const sp of spans)
      if (sp.start + sp.length <= at.start) moved += sp.text.length - sp.length;
      else if (sp.start <= at.start) moved = Math.min(moved, sp.start);
    const kept = [...at.kept];
    for (const e of after.get(path) ?? []) {
      if (!covers(e, moved)) continue;
      const i = kept.indexOf(keyOf(e));
      if (i >= 0) kept.splice(i, 1);
      else return { verified: false, why: `an error remains at the diagnostic: ${keyOf(e)}` };
    }
    return { verified: true };
  } catch (err) {
    // Cancelled (a request waits): no verdict, and none kept.
    if (err instanceof ts.OperationCanceledException) throw err;
    return { verified: false, why: `the check failed: ${(err as Error).message}` };
  }
}

/** The rank a candidate has before it is checked: suppressions last, repairs that use what exists first. */
function staticRank(f: Pick<CheckedFix, "fix_name" | "source">): number {
  return (
    (SUPPRESSIONS.has(f.fix_name) ? 50 : 0) +
    (PREFERRED.has(f.fix_name) ? 0 : DECLARES.has(f.fix_name) ? 20 : f.source === "model" ? 5 : 10)
  );
}

function rankOf(f: CheckedFix): number {
  return (f.verified ? 0 : 100) + staticRank(f);
}

/** A candidate on its way to the answer: `check` while its check is still to be made. */
type Pending = CheckedFix & { check?: { raw: RawFix; self: string; start: number; key: string } };

/**
 * The checks made against each program of the service (by candidate): the program is rebuilt only
 * when a text changes, and every check is of edits to the texts that program holds.
 */
const CHECKS = new WeakMap<TS.Program, Map<string, { verified: boolean; why?: string }>>();

function checksOf(program: TS.Program): Map<string, { verified: boolean; why?: string }> {
  let m = CHECKS.get(program);
  if (!m) CHECKS.set(program, (m = new Map()));
  return m;
}

function lookupDefinition(svc: WorkspaceService, program: TS.Program, path: string, at: Pos): Definition | undefined {
  const sf = program.getSourceFile(path);
  if (!sf) return undefined;
  const line = sf.getLineStarts()[at.line - 1];
  if (line === undefined) return undefined;
  const lineEnd = sf.getLineEndOfPosition(line);
  // The call at or after the column on that line: its callee's name.
  const from = Math.min(line + at.column, lineEnd);
  let target: TS.Node | undefined;
  const visit = (n: TS.Node): void => {
    if (target || n.getEnd() < line || n.getStart(sf) > lineEnd) return;
    if ((ts.isCallExpression(n) || ts.isNewExpression(n)) && n.getEnd() > from) {
      const callee = n.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name : callee;
      if (name.getStart(sf) >= line) {
        target = name;
        return;
      }
    }
    n.forEachChild(visit);
  };
  visit(sf);
  if (!target) return undefined;
  const defs = svc.languageService.getDefinitionAtPosition(path, target.getStart(sf));
  const def = defs?.[0];
  if (!def) return undefined;
  const dsf = program.getSourceFile(def.fileName);
  const where: Definition["where"] = !def.fileName.startsWith(svc.root + sep)
    ? "lib"
    : def.fileName.includes(`${sep}node_modules${sep}`)
      ? "dependency"
      : "workspace";
  const dline = dsf ? dsf.getLineAndCharacterOfPosition(def.textSpan.start).line : 0;
  const text =
    where === "workspace" && dsf
      ? dsf.text
          .split("\n")
          .slice(dline, dline + 12)
          .join("\n")
      : undefined;
  return {
    name: target.getText(sf),
    file: def.fileName,
    line: dline + 1,
    where,
    ...(text !== undefined ? { text } : {}),
  };
}

/** The diagnosis of `req.path` with `req.text` as its buffer, through the workspace's service (which must be ready). */
export function diagnoseFile(svc: WorkspaceService, req: DiagnoseRequest): DiagnoseAnswer {
  const t0 = performance.now();
  const { path, text } = req;
  const prev = svc.textOf(path);
  svc.update(path, text);
  const program = svc.program();
  const ls = svc.languageService;
  const sf = program.getSourceFile(path);
  if (!sf) throw new Error(`the project does not hold ${path}`);
  if (req.diagnostics === false) {
    const definition = req.definitionAt ? lookupDefinition(svc, program, path, req.definitionAt) : undefined;
    return {
      diagnostics: [],
      more: 0,
      checked: 0,
      unchecked: 0,
      checks_reused: 0,
      ...(definition ? { definition } : {}),
      coverage: "file",
      ms: { diagnostics: 0, fixes: 0 },
    };
  }
  const syn = ls.getSyntacticDiagnostics(path);
  const region = syn.length > 0 ? undefined : regionCheck(svc, sf, prev, req);
  const sem = syn.length > 0 ? [] : region ? region.diagnostics : ls.getSemanticDiagnostics(path);
  const all = [...syn, ...sem].filter(
    (d) => d.category === ts.DiagnosticCategory.Error || d.category === ts.DiagnosticCategory.Warning,
  );
  // The agent's own rule after TypeScript's: a dropped value, with "return it" as the candidate.
  const own = unusedExpressions(sf, syn).map((st) => ({
    start: st.getStart(sf),
    length: ts.isBlock(st) ? 1 : st.getEnd() - st.getStart(sf),
    code: 0,
    rule: UNUSED_EXPRESSION,
    messageText: ts.isBlock(st)
      ? "This block is an object literal that is never used: a lost `return`?"
      : "This statement computes a value and drops it: a lost `return`?",
    category: ts.DiagnosticCategory.Warning,
    st,
  }));
  const shown = [...all, ...own].slice(0, CHECK_LIMITS.maxDiagnostics);
  const tDiag = performance.now();
  // A region answer checks no fix: a fix is verified against the whole file, whose check comes next.
  const errorsNow = region ? [] : errorsOf(ls, path);
  const before = new Map<string, string[]>([[path, errorsNow.map(keyOf)]]);
  /** The errors covering `start` other than the diagnostic itself: they may stay there after its fix. */
  const keptAt = (start: number, self: string): string[] => {
    const keys = errorsNow.filter((e) => covers(e, start)).map(keyOf);
    const i = keys.indexOf(self);
    if (i >= 0) keys.splice(i, 1);
    return keys;
  };
  let checked = 0;
  let unchecked = 0;
  const diagnostics: CheckedDiagnostic[] = [];
  for (const d of shown) {
    const start = d.start ?? 0;
    const rule = "rule" in d ? d.rule : undefined;
    const raws: RawFix[] = [];
    if ("st" in d) {
      if (findUp(d.st, ts.isFunctionLike))
        raws.push({
          description: "Return the value",
          fix_name: "agency.returnValue",
          source: "agency",
          changes: [{ file: path, spans: [{ start, length: 0, text: "return " }] }],
        });
    } else if (!region) raws.push(...tsFixes(ls, path, d), ...ownFixes(program, sf, d));
    for (const c of req.candidates ?? [])
      if (c.line === posOf(sf, start).line && (c.code === undefined || c.code === d.code))
        raws.push({
          description: c.description,
          fix_name: "model",
          source: "model",
          changes: c.edits.map((e) => {
            const esf = e.file === path ? sf : program.getSourceFile(e.file);
            const t = esf?.text ?? "";
            const st = esf?.getLineStarts() ?? [0];
            const s = offsetOf(t, st, e.start);
            return {
              file: e.file,
              spans: [{ start: s, length: Math.max(0, offsetOf(t, st, e.end) - s), text: e.new_text }],
            };
          }),
        });
    // A region answer offers no fix: finding them costs more than the region's check (an import fix
    // scans every module's exports), and a fix is verified against the whole file, checked next.
    if (region) raws.length = 0;
    const seen = new Set<string>();
    const fixes: Pending[] = [];
    for (const raw of raws) {
      const key = JSON.stringify(raw.changes);
      if (seen.has(key) || fixes.length >= CHECK_LIMITS.maxFixesPerDiagnostic) continue;
      seen.add(key);
      const edits: Edit[] = raw.changes.flatMap((c) => {
        const csf = c.file === path ? sf : program.getSourceFile(c.file);
        return c.spans.map((s) => ({
          file: c.file,
          start: csf ? posOf(csf, s.start) : { line: 1, column: 0 },
          end: csf ? posOf(csf, s.start + s.length) : { line: 1, column: 0 },
          new_text: s.text,
        }));
      });
      const base = { description: raw.description, fix_name: raw.fix_name, source: raw.source, edits };
      // The agent's rule is no compiler error: its fix must only add none.
      const self = rule === undefined ? keyOf(d as TS.Diagnostic) : "";
      if (SUPPRESSIONS.has(raw.fix_name))
        fixes.push({ ...base, verified: false, not_verified: "it suppresses the error instead of repairing it" });
      else if (req.verify === false)
        fixes.push({ ...base, verified: false, not_verified: "not checked (constraints.verify is false)" });
      else if (d.category !== ts.DiagnosticCategory.Error && rule === undefined)
        fixes.push({ ...base, verified: false, not_verified: "not checked (a warning)" });
      else
        fixes.push({
          ...base,
          verified: false,
          check: { raw, self, start, key: `${path}\0${self}\0${start}\0${key}` },
        });
    }
    diagnostics.push({
      file: path,
      start: posOf(sf, start),
      end: posOf(sf, start + (d.length ?? 0)),
      code: d.code,
      ...(rule !== undefined ? { rule } : {}),
      message: flatten(d.messageText),
      severity: d.category === ts.DiagnosticCategory.Error ? "error" : "warning",
      fixes,
    });
  }
  // The checks, the likeliest repair of every diagnostic first, then the next of each: a budget that
  // runs out leaves the least likely candidates unchecked rather than whole diagnostics. Checks made
  // against this program are kept, so asking again goes on where the budget stopped.
  const order = diagnostics
    .flatMap((d) =>
      (d.fixes as Pending[])
        .filter((f) => f.check)
        .sort((a, b) => staticRank(a) - staticRank(b))
        .map((f, i) => ({ f, i })),
    )
    .sort((a, b) => a.i - b.i)
    .map((x) => x.f);
  const done = checksOf(program);
  const budgetEnd = req.verifyBudgetMs === undefined ? Infinity : performance.now() + req.verifyBudgetMs;
  let cached = 0;
  let fresh = 0;
  for (const f of order) {
    const c = f.check!;
    delete f.check;
    let v = done.get(c.key);
    if (v) cached++;
    else if (fresh >= CHECK_LIMITS.maxVerifications || Date.now() > req.deadline || performance.now() >= budgetEnd) {
      unchecked++;
      f.not_verified =
        performance.now() >= budgetEnd && Date.now() <= req.deadline && fresh < CHECK_LIMITS.maxVerifications
          ? "not checked within the request's check budget (constraints.verify_budget_ms): ask again, the checks made are kept"
          : "not checked (the request's check limit or deadline was reached)";
      continue;
    } else {
      v = verify(svc, path, before, c.self, c.raw, { start: c.start, kept: keptAt(c.start, c.self) });
      done.set(c.key, v);
      fresh++;
    }
    checked++;
    f.verified = v.verified;
    if (v.why !== undefined) f.not_verified = v.why;
  }
  for (const d of diagnostics) d.fixes.sort((a, b) => rankOf(a) - rankOf(b));
  const definition = req.definitionAt ? lookupDefinition(svc, svc.program(), path, req.definitionAt) : undefined;
  return {
    diagnostics,
    more: all.length + own.length - shown.length,
    checked,
    unchecked,
    checks_reused: cached,
    ...(definition ? { definition } : {}),
    coverage: region ? "region" : "file",
    ...(region
      ? {
          checked_ranges: region.spans.map((sp) => ({
            start: posOf(sf, sp.start),
            end: posOf(sf, sp.start + sp.length),
          })),
        }
      : {}),
    ms: {
      diagnostics: Math.round((tDiag - t0) * 100) / 100,
      fixes: Math.round((performance.now() - tDiag) * 100) / 100,
    },
  };
}

/**
 * Re-parsing a changed buffer by re-parsing only what the edit touches.
 *
 * Why this strategy (docs/performance.md, "Parsing speed"): a full typescript-estree parse of a long
 * file costs more than the slicing budget, and its cost grows with every character, so even one large
 * top-level declaration (an exported call with a long callback) is expensive. TypeScript's incremental `updateSourceFile` only speeds
 * up the TS-AST half; the whole tree must still be converted to ESTree. So:
 *
 * 1. Nested: when the edit lies inside a container (a block in a function, a namespace body, a class
 *    body), only the items of the innermost one that the edit touches are re-parsed, inside a wrapper
 *    that gives them the same meaning (a function with the same `async`/generator flags, so `await`,
 *    `yield` and `return` parse as they do in place; a namespace; a class, abstract or ambient as the
 *    original).
 * 2. Otherwise the touched top-level statements are re-parsed alone.
 * 3. Anything doubtful (an ASI hazard, a directive, a region that does not parse alone, a large
 *    region) falls back to a full parse, which decides.
 *
 * Everything after the edit moves. Nodes inside the edited top-level statement are moved at once;
 * the top-level statements after it only get their own range and lines moved, and the shift of
 * their descendants is recorded as a debt (a pure translation, since they start on a later line)
 * that `settle` pays when somebody descends into them. Moving every node of a long file costs more
 * than a keystroke can afford (the property reads are megamorphic); most keystrokes only ever descend into the statement at the cursor.
 */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import {
  parseTolerant,
  type Comment,
  type Node,
  type ParseDiagnostic,
  type ParsedFile,
  type Program,
} from "./parse.js";
import { commonPrefix, commonSuffix, firstPast, positionAfter } from "./position.js";
import { forEachChild } from "./walk.js";

/** Fall back to a full parse when the edited region is this large a share of the file. */
const MAX_REGION_SHARE = 0.5;

/** Text after a statement that would continue it across a line break (no ASI before these; a `;` ends it). */
const CONTINUES = /^(?:[([`+\-/<>.?,=*%&|^:;]|(?:in|instanceof|as|satisfies)\b)/;

/** Whitespace and comments. */
const GAP = /^(?:\s|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/;

const BLOCK_ENDED = new Set([
  "FunctionDeclaration",
  "ClassDeclaration",
  "TSInterfaceDeclaration",
  "TSEnumDeclaration",
  "TSModuleDeclaration",
  "BlockStatement",
  "IfStatement",
  "ForStatement",
  "ForInStatement",
  "ForOfStatement",
  "WhileStatement",
  "TryStatement",
  "SwitchStatement",
  "LabeledStatement",
]);

/**
 * Appended to a region of a module (a file with imports or exports) so the region parses as a module
 * too: alone it would be a script, where `await (x)` is a call of a function named `await`.
 */
export const MODULE_MARKER = "\nexport {};";

/** The marker for a parsed file (empty for a script). */
export function moduleMarker(file: ParsedFile): string {
  return file.program.sourceType === "module" ? MODULE_MARKER : "";
}

/**
 * Parse `text` + `marker`; the marker's statement is removed again (undefined if the text swallowed it).
 * Syntax errors are accepted only inside [`from`, `to`) of `text` (the region itself): an error in the
 * wrapper or the marker means the region does not stand alone, and the full parse decides.
 */
function parseMarked(
  text: string,
  marker: string,
  file: ParsedFile,
  filePath: string | undefined,
  from: number,
  to: number,
): { program: Program; diagnostics: ParseDiagnostic[] } | undefined {
  let parsed: { program: Program; diagnostics: ParseDiagnostic[] };
  try {
    parsed = parseTolerant(text + marker, file.dialect, filePath);
  } catch {
    return undefined;
  }
  if (parsed.diagnostics.some((d) => d.start < from || d.start >= to)) return undefined;
  const program = parsed.program;
  if (marker === "") return parsed;
  const last = program.body[program.body.length - 1];
  if (last?.type !== "ExportNamedDeclaration" || last.range[0] !== text.length + 1) return undefined;
  program.body.pop();
  return parsed;
}

/**
 * The diagnostics after re-parsing [r0, r1] of the old source: those before kept, those inside
 * replaced by the region's (`fresh`, already at new offsets), those after moved by `delta`. When the
 * region parsed clean but old errors lay in it, an error may have been reported away from its cause
 * (at the next token): the errors are gone only if they were the region's own, i.e. the old region
 * parsed alone in the same wrapper (`oldAlone`, at old offsets) reports exactly them. Otherwise
 * undefined: the full parse decides. (Typing mends a half-typed statement every few keystrokes:
 * `const v = ` then `s`; a full parse of a long file at each mend would overrun the budget.)
 */
function spliceDiagnostics(
  old: readonly ParseDiagnostic[],
  r0: number,
  r1: number,
  fresh: ParseDiagnostic[],
  delta: number,
  oldAlone: () => ParseDiagnostic[] | undefined,
): ParseDiagnostic[] | undefined {
  if (old.length === 0) return fresh;
  const a = firstPast(old.length, (k) => old[k]!.start >= r0);
  const b = firstPast(old.length, (k) => old[k]!.start > r1);
  if (b > a && fresh.length === 0 && !sameDiagnostics(oldAlone(), old.slice(a, b))) return undefined;
  return old.slice(0, a).concat(
    fresh,
    old.slice(b).map((d) => ({ start: d.start + delta, message: d.message })),
  );
}

function sameDiagnostics(x: readonly ParseDiagnostic[] | undefined, y: readonly ParseDiagnostic[]): boolean {
  return (
    x !== undefined &&
    x.length === y.length &&
    x.every((d, k) => d.start === y[k]!.start && d.message === y[k]!.message)
  );
}

/** The wrapper's name: a nested region is parsed as the body of `function __aip_region__() { … }`. */
const WRAPPER = "__aip_region__";

/** True when nothing that follows `stmt` can be parsed as part of it. */
function endsSafely(stmt: Node, source: string): boolean {
  if (source[stmt.range[1] - 1] === ";") return true;
  const inner =
    (stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration") && stmt.declaration
      ? stmt.declaration
      : stmt;
  return BLOCK_ENDED.has(inner.type) && source[stmt.range[1] - 1] === "}";
}

/**
 * True when the statement `left` cannot run on into `following` (the source text right after it):
 * it ends with `;` or a closing brace of a block, or a line break comes before a token that cannot
 * continue an expression, or nothing (or a closing brace) follows.
 */
function joinSafe(left: Node | undefined, leftSource: string, following: string): boolean {
  if (!left || endsSafely(left, leftSource)) return true;
  const gap = GAP.exec(following)![0];
  const rest = following.slice(gap.length);
  return rest === "" || rest.startsWith("}") || (gap.includes("\n") && !CONTINUES.test(rest));
}

interface Shift {
  delta: number;
  lineDelta: number;
  /** The old line on which columns move too (the line where the edited region ended). */
  line: number;
  colDelta: number;
}

function shiftPos(p: TSESTree.Position, s: Shift): void {
  if (p.line === s.line) p.column += s.colDelta;
  p.line += s.lineDelta;
}

function shiftComment(c: Comment, s: Shift): void {
  c.range[0] += s.delta;
  c.range[1] += s.delta;
  shiftPos(c.loc.start, s);
  shiftPos(c.loc.end, s);
}

/** Move a subtree's positions in place. */
function shiftTree(node: Node, s: Shift): void {
  node.range[0] += s.delta;
  node.range[1] += s.delta;
  shiftPos(node.loc.start, s);
  shiftPos(node.loc.end, s);
  forEachChild(node, (child) => shiftTree(child, s));
}

/** Move a subtree by a pure translation (no column changes). */
function translateTree(node: Node, delta: number, lineDelta: number): void {
  node.range[0] += delta;
  node.range[1] += delta;
  node.loc.start.line += lineDelta;
  node.loc.end.line += lineDelta;
  forEachChild(node, (child) => translateTree(child, delta, lineDelta));
}

/** What a top-level statement's descendants still have to move by (the statement itself is up to date). */
interface Debt {
  delta: number;
  lineDelta: number;
}

const DEBTS = new WeakMap<Node, Debt>();

/** Pay a top-level statement's debt: move its descendants to where the statement now is. */
export function settle(stmt: Node): void {
  const debt = DEBTS.get(stmt);
  if (!debt) return;
  DEBTS.delete(stmt);
  forEachChild(stmt, (child) => translateTree(child, debt.delta, debt.lineDelta));
}

/** Settle every top-level statement of a program (before handing the tree to code that walks it all). */
export function settleAll(program: Program): void {
  for (const s of program.body) settle(s);
}

/** True when some statement of the program still owes a shift (for tests and stats). */
export function hasDebt(program: Program): boolean {
  return program.body.some((s) => DEBTS.has(s));
}

/** Move a top-level statement after the edit: lazily when it starts on a later line than the edit, else at once. */
function shiftStatement(stmt: Node, s: Shift): void {
  if (stmt.loc.start.line > s.line) {
    stmt.range[0] += s.delta;
    stmt.range[1] += s.delta;
    stmt.loc.start.line += s.lineDelta;
    stmt.loc.end.line += s.lineDelta;
    const debt = DEBTS.get(stmt);
    if (debt) {
      debt.delta += s.delta;
      debt.lineDelta += s.lineDelta;
    } else DEBTS.set(stmt, { delta: s.delta, lineDelta: s.lineDelta });
    return;
  }
  settle(stmt);
  shiftTree(stmt, s);
}

/**
 * The items of `list` that a region [start, end] touches: first and last index (first > last: a gap).
 * Items are in source order and do not overlap, so both ends are binary searches (a linear scan read
 * every top-level statement of a 2,000-line file on each keystroke).
 */
function touched(list: readonly Node[], start: number, end: number): [number, number] {
  const i = firstPast(list.length, (k) => list[k]!.range[1] >= start);
  const j = firstPast(list.length, (k) => list[k]!.range[0] > end) - 1;
  return [i, j];
}

export type FunctionLike =
  TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression;

/** Node types that change what a block may contain (`await`, `yield`, `return`): the nearest one must be a function. */
const BOUNDARY = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "TSDeclareFunction",
  "TSEmptyBodyFunctionExpression",
  "StaticBlock",
  "ClassBody",
  "PropertyDefinition",
  "AccessorProperty",
  "TSModuleBlock",
  "Decorator",
]);

function isFunctionLike(node: Node): node is FunctionLike {
  return (
    node.type === "FunctionDeclaration" || node.type === "FunctionExpression" || node.type === "ArrowFunctionExpression"
  );
}

/** The start of the wrapper that parses a block's statements as they parse in place in `fn`; it ends with "\n}". */
export function wrapperHead(fn: FunctionLike): string {
  return `${fn.async ? "async " : ""}function${fn.generator ? "*" : ""} ${WRAPPER}() {`;
}

/**
 * A node whose items can be parsed apart inside a wrapper that gives them the same meaning: a block
 * or a `case` clause in a function (wrapper: a function with its async/generator flags), a namespace
 * body (a namespace, ambient when the original is) or a class body (a class, abstract or ambient when
 * the original is). Items lie between `open` and `close` (inside the braces, after a case's colon).
 */
interface Container {
  node: Node;
  items: Node[];
  /** The wrapper around the items: `head` + items + `tail`. */
  head: string;
  tail: string;
  open: number;
  openPos: TSESTree.Position;
  close: number;
}

/** Between braces: items start after `{` and end before `}`. */
function braced(node: Node, items: Node[], head: string): Container {
  return {
    node,
    items,
    head,
    tail: "\n}",
    open: node.range[0] + 1,
    openPos: { line: node.loc.start.line, column: node.loc.start.column + 1 },
    close: node.range[1] - 1,
  };
}

/** Tells which nodes of an ancestor chain (walked outermost first) are containers. */
class ContainerScan {
  private fn: FunctionLike | undefined;
  private ambient = false;

  constructor(private readonly source: string) {}

  visit(node: Node, parent: Node | undefined): Container | undefined {
    const found = this.find(node, parent);
    // A recovered tree may lack a closing brace (the file ends inside the block): no region ends there.
    if (found && found.tail === "\n}" && this.source[found.close] !== "}") return undefined;
    return found;
  }

  private find(node: Node, parent: Node | undefined): Container | undefined {
    if (node.type === "TSModuleDeclaration" && node.declare) this.ambient = true;
    if (BOUNDARY.has(node.type)) this.fn = isFunctionLike(node) ? node : undefined;
    if (node.type === "BlockStatement" && this.fn) return braced(node, node.body, wrapperHead(this.fn));
    if (node.type === "SwitchCase" && this.fn && node.consequent.length > 0) {
      // Items start after the colon that follows `case <test>` (or `default`).
      const after = node.test ? node.test.range[1] : node.range[0] + "default".length;
      const gap = GAP.exec(this.source.slice(after, node.consequent[0]!.range[0]))![0];
      if (this.source[after + gap.length] !== ":") return undefined;
      const open = after + gap.length + 1;
      const start = node.test
        ? node.test.loc.end
        : { line: node.loc.start.line, column: node.loc.start.column + "default".length };
      // ...and end where the next case starts (or the switch closes): a trailing comment belongs to the clause.
      const cases = parent?.type === "SwitchStatement" ? parent.cases : [];
      const next = cases[cases.indexOf(node) + 1];
      const close = next ? next.range[0] : parent ? parent.range[1] - 1 : node.range[1];
      // The wrapper is a switch in a function, and what follows the clause follows it there too (another
      // clause, or the switch's end): `x case 2:` does not parse, `x }` does.
      const head = `${wrapperHead(this.fn)} switch (0) { case 0:`;
      return {
        node,
        items: node.consequent,
        head,
        tail: next ? "case 1: } }" : "} }",
        open,
        openPos: positionAfter(start, this.source.slice(after, open)),
        close,
      };
    }
    if (
      node.type === "TSModuleBlock" &&
      parent?.type === "TSModuleDeclaration" &&
      parent.kind !== "global" &&
      parent.id.type === "Identifier"
    ) {
      return braced(node, node.body, `${this.ambient ? "declare " : ""}namespace ${WRAPPER} {`);
    }
    if (node.type === "ClassBody" && (parent?.type === "ClassDeclaration" || parent?.type === "ClassExpression")) {
      const declared = this.ambient || (parent.type === "ClassDeclaration" && parent.declare);
      return braced(
        node,
        node.body as Node[],
        `${declared ? "declare " : ""}${parent.abstract ? "abstract " : ""}class ${WRAPPER} {`,
      );
    }
    return undefined;
  }
}

interface NestedTarget {
  /** From the top-level statement down to the container whose items are re-parsed. */
  chain: Node[];
  container: Container;
  first: number;
  last: number;
  r0: number;
  r1: number;
}

/** The innermost container whose items cover the edit, if any. */
function nestedTarget(stmt: Node, editStart: number, editEnd: number, source: string): NestedTarget | undefined {
  const chain: Node[] = [];
  const scan = new ContainerScan(source);
  let best: NestedTarget | undefined;
  let node: Node | undefined = stmt;
  while (node) {
    const container = scan.visit(node, chain[chain.length - 1]);
    chain.push(node);
    if (container && container.open <= editStart && editEnd <= container.close) {
      const items = container.items;
      const [first, last] = touched(items, editStart, editEnd);
      const r0 = first > 0 ? items[first - 1]!.range[1] : container.open;
      const r1 = last + 1 < items.length ? items[last + 1]!.range[0] : container.close;
      // A case clause ends where its last statement ends (no brace): an edit reaching it re-parses the enclosing block instead.
      const open = container.node.type === "SwitchCase" && last + 1 >= items.length;
      if (r0 <= editStart && editEnd <= r1 && !open) best = { chain: [...chain], container, first, last, r0, r1 };
    }
    let next: Node | undefined;
    forEachChild(node, (child) => {
      if (child.range[0] <= editStart && editEnd <= child.range[1]) next = child;
    });
    node = next;
  }
  return best;
}

export interface BlockRegion {
  /** Offsets of the region: whole items of one container, with the gaps between them. */
  r0: number;
  r1: number;
  /** The items at the offset alone (or the gap it is in), without the neighbours. */
  inner: [number, number];
  /** The wrapper: `head` + region + `tail`. */
  head: string;
  tail: string;
}

/**
 * The items around `offset` in the innermost container (a function's block or case clause, a
 * namespace or a class body), plus one neighbour on each side (so text inserted at `offset` meets its
 * real neighbours when the region is parsed alone), or undefined when `offset` is in none. `chain` is
 * `ancestorsAt(offset)` in `source`.
 */
export function blockRegionAt(chain: readonly Node[], offset: number, source: string): BlockRegion | undefined {
  const scan = new ContainerScan(source);
  let best: BlockRegion | undefined;
  const visit = (node: Node, parent: Node | undefined): void => {
    const container = scan.visit(node, parent);
    if (!container || !(container.open <= offset && offset <= container.close)) return;
    const items = container.items;
    const [first, last] = touched(items, offset, offset);
    const a = Math.max(0, first - 1);
    const b = Math.min(items.length - 1, last + 1);
    const r0 = a < first ? items[a]!.range[0] : container.open;
    const r1 = b > last ? items[b]!.range[1] : container.close;
    const inner: [number, number] = [
      first > 0 ? items[first - 1]!.range[1] : container.open,
      last + 1 < items.length ? items[last + 1]!.range[0] : container.close,
    ];
    best = { r0, r1, inner, head: container.head, tail: container.tail };
  };
  chain.forEach((node, i) => {
    visit(node, chain[i - 1]);
    // After a case's last statement (a trailing comment, say) the offset is in the switch but in no case node.
    if (node.type === "SwitchStatement" && chain[i + 1]?.type !== "SwitchCase") {
      const clause = node.cases.filter((c) => c.range[0] <= offset).at(-1);
      if (clause) visit(clause, node);
    }
  });
  return best;
}

/** The items inside the wrapper of a parsed region (see ContainerScan), or undefined when the region broke out of it. */
function wrapperItems(program: Program, container: Container): Node[] | undefined {
  if (program.body.length !== 1) return undefined;
  const w = program.body[0]!;
  if (container.node.type === "SwitchCase") {
    const sw = w.type === "FunctionDeclaration" && w.body.body.length === 1 ? w.body.body[0] : undefined;
    return sw?.type === "SwitchStatement" && sw.cases.length === 1 ? sw.cases[0]!.consequent : undefined;
  }
  if (w.type === "FunctionDeclaration") return w.body.body;
  if (w.type === "TSModuleDeclaration" && w.body?.type === "TSModuleBlock") return w.body.body;
  if (w.type === "ClassDeclaration") return w.body.body as Node[];
  return undefined;
}

/** What closes a nested region's wrapper: a case clause's region ends before its next item (see nestedTarget), the clause itself is closed by "} }". */
function wrapperTail(container: Container): string {
  return container.node.type === "SwitchCase" ? "\n} }" : container.tail;
}

/** Parse `region` (which starts at offset `r0`, position `start`) as the items of a container inside its wrapper; absolute positions. */
function parseNested(
  region: string,
  r0: number,
  start: TSESTree.Position,
  container: Container,
  file: ParsedFile,
  filePath?: string,
): { body: Node[]; comments: Comment[]; diagnostics: ParseDiagnostic[] } | undefined {
  const { head } = container;
  const tail = wrapperTail(container);
  const parsed = parseMarked(
    `${head}${region}${tail}`,
    moduleMarker(file),
    file,
    filePath,
    head.length,
    head.length + region.length,
  );
  if (!parsed) return undefined;
  const program = parsed.program;
  const body = wrapperItems(program, container);
  if (!body) return undefined;
  // A string statement first in the wrapper is a directive there, but may not be one in place.
  if (body.some((s) => s.type === "ExpressionStatement" && s.directive !== undefined)) return undefined;
  const into: Shift = {
    delta: r0 - head.length,
    lineDelta: start.line - 1,
    line: 1,
    colDelta: start.column - head.length,
  };
  for (const s of body) shiftTree(s, into);
  const comments = (program.comments ?? []) as Comment[];
  for (const c of comments) shiftComment(c, into);
  const diagnostics = parsed.diagnostics.map((d) => ({ start: d.start + into.delta, message: d.message }));
  return { body, comments, diagnostics };
}

/**
 * The new file from the old one when the edit can be re-parsed locally;
 * `undefined` when a full parse is needed (large edits, ASI hazards, or the region alone does not parse).
 * Takes ownership of `old`'s tree: the caller must drop `old`.
 */
export function reparseChanged(old: ParsedFile, source: string, filePath?: string): ParsedFile | undefined {
  const prev = old.source;
  const prefix = commonPrefix(prev, source);
  const suffix = commonSuffix(prev, source, Math.min(prev.length, source.length) - prefix);
  const editStart = prefix;
  const oldEditEnd = prev.length - suffix;
  const delta = source.length - prev.length;
  const body = old.program.body;
  const [i, j] = touched(body, editStart, oldEditEnd);
  if (i === j) {
    settle(body[i]!);
    const target = nestedTarget(body[i]!, editStart, oldEditEnd, prev);
    if (target) {
      const next = reparseNested(old, source, filePath, target, i, delta);
      if (next) return next;
    }
  }
  const r0 = i > 0 ? body[i - 1]!.range[1] : 0;
  const r1 = j + 1 < body.length ? body[j + 1]!.range[0] : prev.length;
  if (r1 - r0 > prev.length * MAX_REGION_SHARE && prev.length > 2_000) return undefined;
  const newR1 = r1 + delta;
  const region = source.slice(r0, newR1);
  // Undefined e.g. for an opened comment that the untouched rest closes: the full parse decides.
  const parsed = parseMarked(region, moduleMarker(old), old, filePath, 0, region.length);
  if (!parsed) return undefined;
  const fresh = parsed.program;
  const diagnostics = spliceDiagnostics(
    old.diagnostics,
    r0,
    r1,
    parsed.diagnostics.map((d) => ({ start: d.start + r0, message: d.message })),
    delta,
    () => {
      const oldRegion = prev.slice(r0, r1);
      const alone = parseMarked(oldRegion, moduleMarker(old), old, filePath, 0, oldRegion.length);
      return alone?.diagnostics.map((d) => ({ start: d.start + r0, message: d.message }));
    },
  );
  if (!diagnostics) return undefined;
  // The region was parsed alone: move its nodes to where the region starts.
  const start = i > 0 ? { ...body[i - 1]!.loc.end } : { line: 1, column: 0 };
  const into: Shift = { delta: r0, lineDelta: start.line - 1, line: 1, colDelta: start.column };
  for (const s of fresh.body) shiftTree(s, into);
  for (const c of fresh.comments ?? []) shiftComment(c, into);
  if (!edgesSafe(i > 0 ? body[i - 1] : undefined, fresh.body, source)) return undefined;
  const shift = shiftAfter(start, prev.slice(r0, r1), region, delta);
  const after = body.slice(j + 1);
  for (const s of after) shiftStatement(s, shift);
  const program = old.program;
  program.body = [...body.slice(0, i), ...fresh.body, ...after];
  program.comments = spliceComments(program.comments ?? [], r0, r1, fresh.comments ?? [], shift);
  return finish(old, program, source, shift, "incremental", diagnostics);
}

/** Re-parse the items of one block inside a function (see the module comment). */
function reparseNested(
  old: ParsedFile,
  source: string,
  filePath: string | undefined,
  t: NestedTarget,
  index: number,
  delta: number,
): ParsedFile | undefined {
  const prev = old.source;
  const items = t.container.items;
  const newR1 = t.r1 + delta;
  const region = source.slice(t.r0, newR1);
  const start = t.first > 0 ? { ...items[t.first - 1]!.loc.end } : { ...t.container.openPos };
  const fresh = parseNested(region, t.r0, start, t.container, old, filePath);
  if (!fresh || !edgesSafe(t.first > 0 ? items[t.first - 1] : undefined, fresh.body, source)) return undefined;
  const diagnostics = spliceDiagnostics(old.diagnostics, t.r0, t.r1, fresh.diagnostics, delta, () => {
    const { head } = t.container;
    const oldRegion = prev.slice(t.r0, t.r1);
    const text = `${head}${oldRegion}${wrapperTail(t.container)}`;
    const alone = parseMarked(text, moduleMarker(old), old, filePath, head.length, head.length + oldRegion.length);
    return alone?.diagnostics.map((d) => ({ start: d.start + t.r0 - head.length, message: d.message }));
  });
  if (!diagnostics) return undefined;
  const shift = shiftAfter(start, prev.slice(t.r0, t.r1), region, delta);
  // Inside the edited statement: every node that starts after the region moves, every node around it grows.
  const onChain = new Set(t.chain);
  for (const n of t.chain) {
    forEachChild(n, (child) => {
      if (!onChain.has(child) && child.range[0] >= t.r1) shiftTree(child, shift);
    });
    n.range[1] += shift.delta;
    shiftPos(n.loc.end, shift);
  }
  items.splice(t.first, t.last - t.first + 1, ...fresh.body);
  const program = old.program;
  const body = program.body;
  for (let k = index + 1; k < body.length; k++) shiftStatement(body[k]!, shift);
  program.comments = spliceComments(program.comments ?? [], t.r0, t.r1, fresh.comments, shift);
  return finish(old, program, source, shift, "nested", diagnostics);
}

/**
 * The re-parsed statements join their untouched neighbours as they would in a full parse: the one
 * before cannot run on into them, and the last of them (or the one before, if none) cannot run on
 * into what follows. `before` ends before the edit, so its offsets are the same in both versions.
 */
function edgesSafe(before: Node | undefined, fresh: readonly Node[], source: string): boolean {
  if (before && !joinSafe(before, source, source.slice(before.range[1], before.range[1] + 256))) return false;
  const last = fresh.length > 0 ? fresh[fresh.length - 1]! : before;
  return !last || joinSafe(last, source, source.slice(last.range[1], last.range[1] + 256));
}

/** The move of everything after a region that starts at position `start` and changed from `oldRegion` to `newRegion`. */
function shiftAfter(start: TSESTree.Position, oldRegion: string, newRegion: string, delta: number): Shift {
  const oldEnd = positionAfter(start, oldRegion);
  const newEnd = positionAfter(start, newRegion);
  return { delta, lineDelta: newEnd.line - oldEnd.line, line: oldEnd.line, colDelta: newEnd.column - oldEnd.column };
}

/** Comments before the region kept, inside it replaced by the fresh ones, after it moved. */
function spliceComments(comments: Comment[], r0: number, r1: number, fresh: Comment[], shift: Shift): Comment[] {
  // Comments are in source order and do not overlap: the kept ones are a prefix and a suffix.
  const a = firstPast(comments.length, (k) => comments[k]!.range[1] > r0);
  const b = firstPast(comments.length, (k) => comments[k]!.range[0] >= r1);
  for (let k = b; k < comments.length; k++) shiftComment(comments[k]!, shift);
  return comments.slice(0, a).concat(fresh, comments.slice(b));
}

function finish(
  old: ParsedFile,
  program: Program,
  source: string,
  shift: Shift,
  via: ParsedFile["via"],
  diagnostics: ParseDiagnostic[],
): ParsedFile {
  program.range = [program.range[0], program.range[1] + shift.delta];
  const end = { ...program.loc.end };
  shiftPos(end, shift);
  program.loc = { start: program.loc.start, end };
  return { source, program, dialect: old.dialect, via, diagnostics };
}

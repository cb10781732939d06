/**
 * Simple mutants of a function, to measure whether generated tests pin anything (docs/agents.md,
 * "testgen", evaluation): an operator flipped (`+`/`-`, `<`/`<=`, `===`/`!==`, `&&`/`||`, …), a
 * constant changed (a number plus one, a string emptied, a boolean negated), a branch removed (an
 * `if`'s consequent skipped). All mutants of a file are written into it at once as schemata: each
 * mutated spot reads `globalThis.__AGENCY_MUTANT` at run time, so one copy of the source serves every
 * mutant, and a test file that sets the variable first runs against exactly one of them.
 */
import ts from "typescript";

export interface Mutant {
  id: string;
  kind: "operator" | "constant" | "branch";
  /** What changed, for the report: "`<` → `<=` (line 12)". */
  what: string;
}

const FLIP: Partial<Record<ts.SyntaxKind, ts.SyntaxKind>> = {
  [ts.SyntaxKind.PlusToken]: ts.SyntaxKind.MinusToken,
  [ts.SyntaxKind.MinusToken]: ts.SyntaxKind.PlusToken,
  [ts.SyntaxKind.AsteriskToken]: ts.SyntaxKind.SlashToken,
  [ts.SyntaxKind.SlashToken]: ts.SyntaxKind.AsteriskToken,
  [ts.SyntaxKind.PercentToken]: ts.SyntaxKind.AsteriskToken,
  [ts.SyntaxKind.LessThanToken]: ts.SyntaxKind.LessThanEqualsToken,
  [ts.SyntaxKind.LessThanEqualsToken]: ts.SyntaxKind.LessThanToken,
  [ts.SyntaxKind.GreaterThanToken]: ts.SyntaxKind.GreaterThanEqualsToken,
  [ts.SyntaxKind.GreaterThanEqualsToken]: ts.SyntaxKind.GreaterThanToken,
  [ts.SyntaxKind.EqualsEqualsEqualsToken]: ts.SyntaxKind.ExclamationEqualsEqualsToken,
  [ts.SyntaxKind.ExclamationEqualsEqualsToken]: ts.SyntaxKind.EqualsEqualsEqualsToken,
  [ts.SyntaxKind.EqualsEqualsToken]: ts.SyntaxKind.ExclamationEqualsToken,
  [ts.SyntaxKind.ExclamationEqualsToken]: ts.SyntaxKind.EqualsEqualsToken,
  [ts.SyntaxKind.AmpersandAmpersandToken]: ts.SyntaxKind.BarBarToken,
  [ts.SyntaxKind.BarBarToken]: ts.SyntaxKind.AmpersandAmpersandToken,
};

interface Spot {
  start: number;
  end: number;
  kind: Mutant["kind"];
  what: string;
  /** The replacement text given the guard expression (`__agencyMutant("id")`). */
  replace: (guard: string) => string;
}

/** The function (or method) named `name` ("f" or "Class.m") in the file. */
function findTarget(sf: ts.SourceFile, name: string): ts.FunctionLikeDeclaration | undefined {
  const [cls, method] = name.includes(".") ? name.split(".", 2) : [undefined, name];
  let found: ts.FunctionLikeDeclaration | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (cls === undefined) {
      if (ts.isFunctionDeclaration(n) && n.name?.text === method && n.body) found = n;
      else if (
        ts.isVariableDeclaration(n) &&
        ts.isIdentifier(n.name) &&
        n.name.text === method &&
        n.initializer &&
        (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))
      )
        found = n.initializer;
    } else if (ts.isClassDeclaration(n) && n.name?.text === cls) {
      for (const m of n.members)
        if (ts.isMethodDeclaration(m) && ts.isIdentifier(m.name) && m.name.text === method && m.body) found = m;
      return;
    }
    if (!ts.isFunctionLike(n)) ts.forEachChild(n, visit);
  };
  ts.forEachChild(sf, visit);
  return found;
}

/** Whether a literal sits where a value is computed (not a type, a key, an import, an enum member). */
function valuePosition(n: ts.Node): boolean {
  const p = n.parent;
  if (ts.isLiteralTypeNode(p) || ts.isImportDeclaration(p) || ts.isExportDeclaration(p) || ts.isEnumMember(p))
    return false;
  if ((ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p) || ts.isMethodDeclaration(p)) && p.name === n)
    return false;
  if (ts.isElementAccessExpression(p) && p.argumentExpression === n && ts.isStringLiteral(n)) return false;
  if (ts.isCallExpression(p) && ts.isIdentifier(p.expression) && p.expression.text === "require") return false;
  for (let q: ts.Node = p; !ts.isSourceFile(q); q = q.parent)
    if (ts.isTypeNode(q) || ts.isAsExpression(q)) return !ts.isTypeNode(q);
  return true;
}

function spotsOf(fn: ts.FunctionLikeDeclaration, sf: ts.SourceFile): Spot[] {
  const out: Spot[] = [];
  const text = sf.text;
  const line = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (n: ts.Node): void => {
    if (ts.isTypeNode(n)) return;
    if (ts.isBinaryExpression(n)) {
      const to = FLIP[n.operatorToken.kind];
      if (to !== undefined) {
        const l = text.slice(n.left.getStart(sf), n.left.end);
        const r = text.slice(n.right.getStart(sf), n.right.end);
        const op = ts.tokenToString(n.operatorToken.kind)!;
        const op2 = ts.tokenToString(to)!;
        out.push({
          start: n.getStart(sf),
          end: n.end,
          kind: "operator",
          what: `\`${op}\` → \`${op2}\` (line ${line(n.getStart(sf))})`,
          replace: (g) => `(${g} ? (${l}) ${op2} (${r}) : (${l}) ${op} (${r}))`,
        });
      }
    } else if (ts.isNumericLiteral(n) && valuePosition(n)) {
      const v = Number(n.text);
      out.push({
        start: n.getStart(sf),
        end: n.end,
        kind: "constant",
        what: `${n.text} → ${v + 1} (line ${line(n.getStart(sf))})`,
        replace: (g) => `(${g} ? ${v + 1} : ${n.text})`,
      });
    } else if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && valuePosition(n)) {
      const orig = n.getText(sf);
      const to = n.text === "" ? '"x"' : '""';
      out.push({
        start: n.getStart(sf),
        end: n.end,
        kind: "constant",
        what: `${orig.length > 20 ? `${orig.slice(0, 17)}...` : orig} → ${to} (line ${line(n.getStart(sf))})`,
        replace: (g) => `(${g} ? ${to} : ${orig})`,
      });
    } else if (n.kind === ts.SyntaxKind.TrueKeyword || n.kind === ts.SyntaxKind.FalseKeyword) {
      const orig = n.getText(sf);
      const to = orig === "true" ? "false" : "true";
      out.push({
        start: n.getStart(sf),
        end: n.end,
        kind: "constant",
        what: `${orig} → ${to} (line ${line(n.getStart(sf))})`,
        replace: (g) => `(${g} ? ${to} : ${orig})`,
      });
    } else if (ts.isIfStatement(n)) {
      const th = n.thenStatement;
      const body = text.slice(th.getStart(sf), th.end);
      out.push({
        start: th.getStart(sf),
        end: th.end,
        kind: "branch",
        what: `the branch of \`if (${n.expression.getText(sf).slice(0, 30)})\` removed (line ${line(n.getStart(sf))})`,
        replace: (g) => `{ if (!${g}) ${body} }`,
      });
    }
    ts.forEachChild(n, visit);
  };
  if (fn.body) visit(fn.body);
  return out;
}

/** Up to `max` spots, spread over the kinds in turn and over the function, none overlapping another. */
function pick(spots: Spot[], max: number): Spot[] {
  const byKind = new Map<Mutant["kind"], Spot[]>();
  for (const s of spots) byKind.set(s.kind, [...(byKind.get(s.kind) ?? []), s]);
  const chosen: Spot[] = [];
  const overlaps = (s: Spot): boolean => chosen.some((c) => s.start < c.end && c.start < s.end);
  const queues = [...byKind.values()].map((q) => {
    // Spread: every k-th spot first.
    const step = Math.max(1, Math.floor(q.length / max));
    return [...q.filter((_, i) => i % step === 0), ...q.filter((_, i) => i % step !== 0)];
  });
  while (chosen.length < max && queues.some((q) => q.length > 0))
    for (const q of queues) {
      while (q.length > 0 && overlaps(q[0]!)) q.shift();
      const s = q.shift();
      if (s) chosen.push(s);
      if (chosen.length >= max) break;
    }
  return chosen;
}

/**
 * The source with up to `max` mutants of each named function written in as schemata, and the mutants
 * per function. Ids are `<prefix><n>`.
 */
export function mutateFile(
  source: string,
  fileName: string,
  targets: string[],
  max: number,
  prefix = "m",
): { text: string; mutants: Map<string, Mutant[]> } {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const mutants = new Map<string, Mutant[]>();
  const all: { spot: Spot; id: string }[] = [];
  let n = 0;
  for (const t of targets) {
    const fn = findTarget(sf, t);
    if (!fn) {
      mutants.set(t, []);
      continue;
    }
    const chosen = pick(spotsOf(fn, sf), max).filter(
      (s) => !all.some((a) => s.start < a.spot.end && a.spot.start < s.end),
    );
    mutants.set(
      t,
      chosen.map((s) => {
        const id = `${prefix}${n++}`;
        all.push({ spot: s, id });
        return { id, kind: s.kind, what: s.what };
      }),
    );
  }
  let text = source;
  for (const { spot, id } of [...all].sort((a, b) => b.spot.start - a.spot.start))
    text = text.slice(0, spot.start) + spot.replace(`__agencyMutant(${JSON.stringify(id)})`) + text.slice(spot.end);
  const ts_ = /\.[cm]?tsx?$/.test(fileName);
  text += ts_
    ? `\nfunction __agencyMutant(id: string): boolean {\n  return (globalThis as { __AGENCY_MUTANT?: string }).__AGENCY_MUTANT === id;\n}\n`
    : `\nfunction __agencyMutant(id) {\n  return globalThis.__AGENCY_MUTANT === id;\n}\n`;
  return { text, mutants };
}

/** A test file's text made to run against mutant `id` (set before any test runs). */
export function testForMutant(content: string, id: string): string {
  return `${content}\nReflect.set(globalThis, "__AGENCY_MUTANT", ${JSON.stringify(id)});\n`;
}

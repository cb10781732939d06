/**
 * Completion recall against the TypeScript checker (docs/performance.md, "Type-aware completion"):
 * at sampled positions of each project, the name the code really has there, where the checker
 * resolves it, is removed and completion asked at that point, through the typed engine's service and
 * ranking (agents/lib/completion/typed.ts):
 * - members: after `expr.` (or `?.`) with nothing typed, recall@1 and @5;
 * - identifiers in value and in type position with their first character typed, recall@5.
 * Positions are drawn with a fixed seed, so runs compare.
 */
import { readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type * as TS from "typescript";
import { WorkspaceService } from "../../agents/lib/code/service.js";
import { typedCompletions } from "../../agents/lib/completion/typed.js";
import { rng } from "../lib/rng.js";

const ts = createRequire(import.meta.url)("typescript") as typeof TS;

export interface EvalProject {
  name: string;
  root: string;
  /** Source files, relative to the root. */
  files: string[];
}

/** Samples per project and kind (members, value identifiers, type identifiers). */
const PER_PROJECT = { member: 120, value: 80, type: 60 };

interface Sample {
  file: string;
  kind: "member" | "value" | "type";
  /** Where the name starts and ends in the original text. */
  start: number;
  end: number;
  name: string;
}

function shuffle<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function isDeclarationName(id: TS.Identifier): boolean {
  const p = id.parent;
  return (p as { name?: TS.Node }).name === id || ts.isImportSpecifier(p) || ts.isExportSpecifier(p);
}

/** Every position of the three kinds the checker resolves, in one file. */
function candidates(checker: TS.TypeChecker, sf: TS.SourceFile, file: string): Sample[] {
  const out: Sample[] = [];
  const visit = (node: TS.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isPropertyAccessExpression(node) && checker.getSymbolAtLocation(node.name)) {
      out.push({ file, kind: "member", start: node.name.getStart(sf), end: node.name.getEnd(), name: node.name.text });
    } else if (
      ts.isTypeReferenceNode(node) &&
      ts.isIdentifier(node.typeName) &&
      checker.getSymbolAtLocation(node.typeName)
    ) {
      const id = node.typeName;
      out.push({ file, kind: "type", start: id.getStart(sf), end: id.getEnd(), name: id.text });
    } else if (
      ts.isIdentifier(node) &&
      !isDeclarationName(node) &&
      !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node) &&
      !ts.isPropertyAssignment(node.parent) &&
      !ts.isQualifiedName(node.parent) &&
      !ts.isTypeReferenceNode(node.parent) &&
      !ts.isJsxAttribute(node.parent) &&
      !ts.isLabeledStatement(node.parent) &&
      !ts.isBreakOrContinueStatement(node.parent) &&
      ts.isExpression(node) &&
      node.text.length > 1 &&
      checker.getSymbolAtLocation(node)
    ) {
      out.push({ file, kind: "value", start: node.getStart(sf), end: node.getEnd(), name: node.text });
    }
    node.forEachChild(visit);
  };
  visit(sf);
  return out;
}

interface Tally {
  asked: number;
  at1: number;
  at5: number;
  misses: string[];
}

const tally = (): Tally => ({ asked: 0, at1: 0, at5: 0, misses: [] });

/** Recall of the typed engine on one project. */
async function evalProject(p: EvalProject): Promise<Record<string, unknown>> {
  const root = realpathSync(p.root);
  const started = performance.now();
  const svc = new WorkspaceService(root);
  await svc.loaded;
  const loadMs = Math.round(performance.now() - started);
  const program = svc.languageService.getProgram()!;
  const checker = program.getTypeChecker();
  const all: Sample[] = [];
  const texts = new Map<string, string>();
  for (const rel of p.files) {
    const abs = join(root, rel);
    const sf = program.getSourceFile(abs);
    if (!sf) continue;
    texts.set(abs, readFileSync(abs, "utf8"));
    all.push(...candidates(checker, sf, abs));
  }
  const rand = rng(15);
  const byKind = { member: tally(), value: tally(), type: tally() };
  const ms: number[] = [];
  for (const kind of ["member", "value", "type"] as const) {
    const picked = shuffle(
      all.filter((s) => s.kind === kind),
      rand,
    ).slice(0, PER_PROJECT[kind]);
    // Grouped by file: the service sees one file's edits in a row, as an editor would send them.
    picked.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.start - b.start));
    for (const s of picked) {
      const text = texts.get(s.file)!;
      const typed = kind === "member" ? "" : s.name[0]!;
      const edited = text.slice(0, s.start) + typed + text.slice(s.end);
      const t0 = performance.now();
      const answer = typedCompletions(svc, s.file, edited, s.start + typed.length, 5);
      ms.push(performance.now() - t0);
      const rank = answer.items.findIndex((i) => i.label === s.name);
      const t = byKind[kind];
      t.asked++;
      if (rank === 0) t.at1++;
      if (rank >= 0 && rank < 5) t.at5++;
      if ((rank !== 0 && process.env.EVAL_TRACE === "1") || ((rank < 0 || rank >= 5) && t.misses.length < 12)) {
        const line = text.slice(0, s.start).split("\n").length;
        t.misses.push(
          `${s.file.slice(root.length + 1)}:${line} ${s.name}${rank > 0 ? ` @${rank + 1}` : ""} (got ${answer.items.map((i) => i.label).join(", ") || "nothing"})`,
        );
      }
    }
  }
  for (const [abs, text] of texts) svc.update(abs, text);
  svc.dispose();
  ms.sort((a, b) => a - b);
  const rate = (t: Tally, k: "at1" | "at5") => (t.asked === 0 ? null : Math.round((1000 * t[k]) / t.asked) / 10);
  return {
    name: p.name,
    load_ms: loadMs,
    positions: {
      member: all.filter((s) => s.kind === "member").length,
      value: all.filter((s) => s.kind === "value").length,
      type: all.filter((s) => s.kind === "type").length,
    },
    member: {
      asked: byKind.member.asked,
      recall_at_1: rate(byKind.member, "at1"),
      recall_at_5: rate(byKind.member, "at5"),
      misses: byKind.member.misses,
    },
    identifier_value: {
      asked: byKind.value.asked,
      recall_at_5: rate(byKind.value, "at5"),
      misses: byKind.value.misses,
    },
    identifier_type: { asked: byKind.type.asked, recall_at_5: rate(byKind.type, "at5"), misses: byKind.type.misses },
    ms_per_request_median: Math.round(ms[Math.floor(ms.length / 2)] ?? 0),
  };
}

/** Recall per project and pooled over all of them (in percent). */
export async function evalCompletion(ps: EvalProject[]): Promise<Record<string, unknown>> {
  const per: Record<string, unknown>[] = [];
  for (const p of ps) per.push(await evalProject(p));
  const pool = (key: string, field: string): number | null => {
    let asked = 0;
    let sum = 0;
    for (const r of per) {
      const k = r[key] as { asked: number } & Record<string, number | null>;
      if (k.asked === 0 || k[field] === null) continue;
      asked += k.asked;
      sum += (k[field] as number) * k.asked;
    }
    return asked === 0 ? null : Math.round((10 * sum) / asked) / 10;
  };
  return {
    protocol:
      "members: the name after `expr.` removed, nothing typed; identifiers: the name replaced by its first character; a hit is the checker's name among the top 1/5 items",
    pooled: {
      member_recall_at_1: pool("member", "recall_at_1"),
      member_recall_at_5: pool("member", "recall_at_5"),
      identifier_value_recall_at_5: pool("identifier_value", "recall_at_5"),
      identifier_type_recall_at_5: pool("identifier_type", "recall_at_5"),
    },
    targets: { member_recall_at_5: 90, member_recall_at_1: 60, identifier_recall_at_5: 95 },
    projects: per,
  };
}

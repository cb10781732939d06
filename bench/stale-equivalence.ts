/**
 * `node dist/bench/stale-equivalence.js [ROOT...]`: does the last program's checker, asked about a newer
 * text (agents/lib/code/stale.ts), answer as a new program would? On real code (default: the corpus
 * projects and this repository), at seeded positions of each project file, a keystroke is replayed: the
 * program is built for the text before it, then the completion at the cursor after it is asked both
 * ways, from the old program when `WorkspaceService.stale` allows it and from a rebuilt program, and
 * the two are compared: every entry (name, kind, modifiers, sort text, source, insert text) and the
 * member facts the ranking uses. Two keystrokes per site: the `.` after a receiver (the member after it
 * removed), and the first character of an identifier (the rest of it removed). Prints per project how
 * many were answered from the old program, why the others were not, and every mismatch.
 * `STALE_EQ_MAX_FILES=N` samples N files per project (this repository has hundreds).
 */
import { readdirSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type * as TS from "typescript";
import { WorkspaceService } from "../agents/lib/code/service.js";
import { memberFacts } from "../agents/lib/completion/member-rank.js";
import { completionsAt, PREFERENCES, type Checker } from "../agents/lib/completion/typed.js";
import { rng } from "./lib/rng.js";

const HERE = resolve(dirname(new URL(import.meta.url).pathname), "../..");
const CORPUS = resolve(HERE, "../shared/corpus");
const SITES_PER_FILE = 6;
/** At most this many files per project, spread over its list (STALE_EQ_MAX_FILES; default all). */
const MAX_FILES = Number(process.env.STALE_EQ_MAX_FILES ?? Infinity);

function key(e: TS.CompletionEntry): string {
  const source = (e.data as { moduleSpecifier?: string } | undefined)?.moduleSpecifier ?? e.source ?? "";
  return [
    e.name,
    e.kind,
    e.kindModifiers ?? "",
    e.sortText,
    source,
    e.insertText ?? "",
    e.hasAction ? "action" : "",
  ].join("|");
}

function answer(svc: WorkspaceService, at: Checker, path: string, offset: number, member: boolean): string[] {
  const res = completionsAt(svc, at, path, offset, { ...PREFERENCES, includeCompletionsForModuleExports: !member });
  if (!res) return ["(none)"];
  const facts = member ? memberFacts(at.program, at.file, offset) : undefined;
  return [
    `member ${res.isMemberCompletion} new-identifier ${res.isNewIdentifierLocation} incomplete ${res.isIncomplete ?? false}`,
    ...res.entries.map(key).sort(),
    ...(facts
      ? [
          `inherited ${[...facts.inherited].sort().join(",")}`,
          `external ${[...facts.external].sort().join(",")}`,
          `typed ${[...facts.typed].sort().join(",")}`,
          `fit ${[...facts.fit].sort().join(",")}`,
        ]
      : []),
  ];
}

/** Keystroke sites in `text`: [text before the keystroke, text after it, cursor after it, member?]. */
function sites(text: string, random: () => number): [string, string, number, boolean][] {
  const out: [string, string, number, boolean][] = [];
  const members = [...text.matchAll(/[\w$)\]]\.([A-Za-z_$][\w$]*)/g)];
  const words = [...text.matchAll(/(?<=[\s(=,!])([A-Za-z_$][\w$]*)(?=[\s.(;,)])/g)];
  for (let i = 0; i < SITES_PER_FILE / 2; i++) {
    const m = members[Math.floor(random() * members.length)];
    if (m) {
      const dot = m.index + 1;
      const before = text.slice(0, dot) + text.slice(dot + 1 + m[1]!.length);
      out.push([before, before.slice(0, dot) + "." + before.slice(dot), dot + 1, true]);
    }
    const w = words[Math.floor(random() * words.length)];
    if (w && !/^(const|let|var|function|class|interface|type|enum|import|export|from|return|new)$/.test(w[1]!)) {
      const before = text.slice(0, w.index) + text.slice(w.index + w[1]!.length);
      out.push([before, before.slice(0, w.index) + w[1]![0] + before.slice(w.index), w.index + 1, false]);
    }
  }
  return out;
}

interface Tally {
  project: string;
  sites: number;
  stale: number;
  same: number;
  reasons: Record<string, number>;
  mismatches: { file: string; offset: number; member: boolean; only_stale: string[]; only_fresh: string[] }[];
}

async function project(root: string): Promise<Tally> {
  const real = realpathSync(root);
  const svc = new WorkspaceService(real);
  await svc.loaded;
  const tally: Tally = { project: root, sites: 0, stale: 0, same: 0, reasons: {}, mismatches: [] };
  const random = rng(15);
  const all = [...svc.projectTexts()].filter(([p]) => /\.tsx?$/.test(p) && !p.endsWith(".d.ts"));
  const step = Math.max(1, all.length / MAX_FILES);
  const files = all.filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step));
  for (const [path, original] of files) {
    for (const [before, after, offset, member] of sites(original, random)) {
      tally.sites++;
      svc.update(path, before);
      svc.program();
      svc.update(path, after);
      const view = svc.stale(path, after);
      if (!("program" in view)) {
        tally.reasons[view.reason] = (tally.reasons[view.reason] ?? 0) + 1;
        continue;
      }
      tally.stale++;
      const stale = answer(svc, { ...view, stale: true }, path, offset, member);
      svc.tidy();
      const program = svc.program();
      const fresh = answer(svc, { program, file: program.getSourceFile(path)!, stale: false }, path, offset, member);
      const a = new Set(stale);
      const b = new Set(fresh);
      const onlyStale = stale.filter((x) => !b.has(x));
      const onlyFresh = fresh.filter((x) => !a.has(x));
      if (onlyStale.length === 0 && onlyFresh.length === 0) tally.same++;
      else
        tally.mismatches.push({
          file: path.slice(real.length + 1),
          offset,
          member,
          only_stale: onlyStale.slice(0, 8),
          only_fresh: onlyFresh.slice(0, 8),
        });
    }
    svc.update(path, original);
  }
  svc.dispose();
  return tally;
}

const roots =
  process.argv.length > 2
    ? process.argv.slice(2)
    : [
        ...readdirSync(CORPUS, { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => join(CORPUS, d.name)),
        HERE,
      ];
const out: Tally[] = [];
for (const root of roots) {
  const t = await project(root);
  out.push(t);
  console.error(`${root}: ${t.sites} sites, ${t.stale} from the old program, ${t.same} of them the same`);
}
console.log(JSON.stringify(out, null, 2));

/**
 * The member-usage prior of the typed completion engine (docs/agents.md, "Ranking members"): how much
 * public JavaScript and TypeScript code uses each `.member` name, learned from the sources of installed
 * npm packages (a `node_modules` tree), the way usage-based completion models learn from public code.
 *
 * Each package counts once per name (package frequency), so one large package does not dominate; the
 * file frequency breaks ties. `Global.member` pairs (`Object.keys`, `Math.max`) are counted apart for
 * receivers that look like globals. Packages named in `exclude` are skipped (an evaluation corpus must
 * not leak into the prior).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** Limits of the scan. */
export const PRIOR_LIMITS = {
  /** Source files larger than this are skipped (minified bundles). */
  maxFileBytes: 4 * 1024 * 1024,
  /** Names kept, most used first. */
  maxNames: 6000,
  /** Pairs kept. */
  maxPairs: 3000,
  /** A name or pair must be used by at least this many packages. */
  minPackages: 2,
};

const SOURCE = /\.(?:[cm]?js|[cm]?ts)$/;
/** `expr.name` (not `...spread`, not a number's decimal point): the receiver's last word, and the name. */
const ACCESS = /([\w$]+|[)\]])(?:\s*\n\s*)?\??\.(?=(#?[A-Za-z_$][\w$]*))/g;
/** Comments and string literals (not code: a URL's `.com`, a sentence's `.The`), blanked before counting. */
const NOT_CODE = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g;
const GLOBAL_RECEIVER = /^(?:[A-Z][\w$]*|console|process|globalThis|window|document|navigator)$/;

interface Counts {
  packages: Map<string, number>;
  files: Map<string, number>;
}

const counts = (): Counts => ({ packages: new Map(), files: new Map() });

function bump(m: Map<string, number>, key: string): void {
  m.set(key, (m.get(key) ?? 0) + 1);
}

/** Every package directory under a node_modules tree (scoped ones included, nested trees too). */
function* packageDirs(nodeModules: string): Generator<string> {
  let entries: string[];
  try {
    entries = readdirSync(nodeModules);
  } catch {
    return;
  }
  for (const e of entries.sort()) {
    if (e.startsWith(".")) continue;
    const dir = join(nodeModules, e);
    if (e.startsWith("@")) {
      for (const s of readdirSync(dir).sort()) yield* withNested(join(dir, s));
    } else yield* withNested(dir);
  }
}

function* withNested(dir: string): Generator<string> {
  yield dir;
  yield* packageDirs(join(dir, "node_modules"));
}

function* sourceFiles(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sourceFiles(path);
    else if (e.isFile() && SOURCE.test(e.name) && !/\.d\.[cm]?ts$/.test(e.name) && !e.name.endsWith(".min.js"))
      yield path;
  }
}

export interface Prior {
  packages: number;
  files: number;
  /** name → weight in [0, 1]. */
  names: [string, number][];
  /** `Receiver.name` → weight in [0, 1]. */
  pairs: [string, number][];
}

function weigh(c: Counts, max: number): [string, number][] {
  const raw: [string, number][] = [];
  for (const [key, pkgs] of c.packages) {
    if (pkgs < PRIOR_LIMITS.minPackages) continue;
    raw.push([key, Math.log(1 + pkgs) + 0.25 * Math.log(1 + (c.files.get(key) ?? 0))]);
  }
  raw.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const top = raw[0]?.[1] ?? 1;
  return raw.slice(0, max).map(([k, w]) => [k, Math.round((100 * w) / top) / 100]);
}

/** Learn the prior from the packages under `nodeModules`, leaving out the packages named in `exclude`. */
export function learnPrior(nodeModules: string, exclude: ReadonlySet<string>): Prior {
  const names = counts();
  const pairs = counts();
  const seen = new Set<string>();
  let packages = 0;
  let files = 0;
  for (const dir of packageDirs(nodeModules)) {
    let id: string;
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (!pkg.name || exclude.has(pkg.name)) continue;
      id = `${pkg.name}@${pkg.version ?? ""}`;
    } catch {
      continue;
    }
    if (seen.has(id)) continue;
    seen.add(id);
    packages++;
    const inPackage = { names: new Set<string>(), pairs: new Set<string>() };
    for (const file of sourceFiles(dir)) {
      if (statSync(file).size > PRIOR_LIMITS.maxFileBytes) continue;
      files++;
      const text = readFileSync(file, "utf8").replace(NOT_CODE, " ");
      const inFile = { names: new Set<string>(), pairs: new Set<string>() };
      for (let m = ACCESS.exec(text); m; m = ACCESS.exec(text)) {
        const [, receiver, name] = m as unknown as [string, string, string];
        if (/^\d/.test(receiver)) continue;
        inFile.names.add(name);
        if (GLOBAL_RECEIVER.test(receiver)) inFile.pairs.add(`${receiver}.${name}`);
      }
      for (const n of inFile.names) {
        bump(names.files, n);
        inPackage.names.add(n);
      }
      for (const p of inFile.pairs) {
        bump(pairs.files, p);
        inPackage.pairs.add(p);
      }
    }
    for (const n of inPackage.names) bump(names.packages, n);
    for (const p of inPackage.pairs) bump(pairs.packages, p);
  }
  return {
    packages,
    files,
    names: weigh(names, PRIOR_LIMITS.maxNames),
    pairs: weigh(pairs, PRIOR_LIMITS.maxPairs),
  };
}

/** The prior as a TypeScript module (agents/lib/completion/prior.ts). */
export function priorModule(prior: Prior, source: string): string {
  const enc = (rows: [string, number][]): string => {
    const lines: string[] = [];
    let line = "";
    for (const [k, w] of rows) {
      const cell = `${k}:${Math.round(w * 100)} `;
      if (line.length + cell.length > 100) {
        lines.push(line);
        line = "";
      }
      line += cell;
    }
    if (line) lines.push(line);
    return `[\n${lines.map((l) => `  ${JSON.stringify(l)},\n`).join("")}].join("")`;
  };
  return `/**
 * Generated by \`node dist/scripts/completion-prior.js\` (tools/completion-prior.ts): how much public code
 * uses each member name, learned from ${prior.packages} npm packages (${prior.files} source files) under ${source}.
 * \`name:weight\` cells, weight 0-100 (docs/agents.md, "Ranking members"). Do not edit by hand.
 */
export const NAMES = ${enc(prior.names)};

export const PAIRS = ${enc(prior.pairs)};
`;
}

/**
 * The Python part of `npm run eval:code`, on ../shared/corpus/python: ground truth from Python itself
 * (bench/eval-python.py imports each module: `__all__` or its non-underscore names; `ast` docstrings).
 * Measures summarize's public-API recall and precision, search's MRR@10 from a function's first
 * docstring sentence to its definition, the share of doctested functions testgen gives a value
 * assertion, and broken buffers (cut after a random cursor) answered by summarize.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join, relative } from "node:path";
import { loadLanguage } from "../agents/lib/code/languages/registry.js";
import type { CodeLanguage } from "../agents/lib/code/languages/types.js";
import type { PythonDocument } from "../agents/lib/code/languages/python/index.js";
import { HOOK_REASON, pythonApi, RUNTIME_REASON } from "../agents/summarize/python.js";
import { IndexRegistry } from "../agents/search/registry.js";
import { runQuery } from "../agents/search/query.js";
import { exampleCases } from "../agents/testgen/python-cases.js";
import { evalPythonTestgen } from "./eval/python-testgen.js";

const HERE = new URL(".", import.meta.url).pathname;
const CORPUS = join(HERE, "../../../shared/corpus/python");
const LIBS = [
  { name: "toolz", src: "." },
  { name: "itsdangerous", src: "src" },
  { name: "humanize", src: "src" },
];

interface Truth {
  modules: Record<string, string[]>;
  functions: { file: string; name: string; line: number; query: string; doctest: boolean }[];
}

/** What hatch-vcs writes into humanize at build time (the source checkout has no `_version.py`). */
const BUILT_VERSION = "__version__ = version = '0.0.0'\n__version_tuple__ = version_tuple = (0, 0, 0)\n";

/** A small deterministic generator (the same cut points every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

export async function evalPython(python = process.env.AIP_PYTHON ?? "/usr/bin/python3"): Promise<unknown> {
  const py = (await loadLanguage("python")) as unknown as CodeLanguage<PythonDocument>;
  const out: Record<string, unknown> = {};
  let tp = 0;
  let fp = 0;
  let fn = 0;
  // modules whose answer says their namespace is written at run time, counted apart (all = with them)
  const all = { tp: 0, fp: 0, fn: 0 };
  const excluded: { file: string; from: string; line: number; reason: string }[] = [];
  let rr = 0;
  let queries = 0;
  let doctested = 0;
  let withValue = 0;
  let broken = 0;
  let brokenOk = 0;
  const random = rng(31);
  for (const lib of LIBS) {
    const root = realpathSync(join(CORPUS, lib.name));
    if (!existsSync(root)) continue;
    const truth = JSON.parse(
      execFileSync(python, [join(HERE, "../../bench/eval-python.py"), root, join(root, lib.src)], {
        encoding: "utf8",
        cwd: root,
        env: { PATH: "/usr/bin:/bin", PYTHONDONTWRITEBYTECODE: "1" },
      }),
    ) as Truth;
    const misses: string[] = [];
    for (const [file, expected] of Object.entries(truth.modules)) {
      const abs = join(root, file);
      const text = readFileSync(abs, "utf8");
      const doc = py.parse(text, file);
      const api = pythonApi(py, doc, abs, root, (p) => relative(root, p));
      const got = new Set(api.exports.map((e) => e.name));
      const want = new Set(expected);
      const runtime = api.unresolved.find((u) => u.reason === RUNTIME_REASON || u.reason === HOOK_REASON);
      if (runtime)
        excluded.push({ file: `${lib.name}/${file}`, from: runtime.from, line: runtime.line, reason: runtime.reason });
      for (const n of got)
        if (want.has(n)) {
          all.tp++;
          if (!runtime) tp++;
        } else {
          all.fp++;
          if (!runtime) {
            fp++;
            misses.push(`+${file}:${n}`);
          }
        }
      for (const n of want)
        if (!got.has(n)) {
          all.fn++;
          if (!runtime) {
            fn++;
            misses.push(`-${file}:${n}`);
          }
        }
      // broken buffers: cut after a random cursor, or leave a bracket open there
      for (let k = 0; k < 5; k++) {
        const at = Math.floor(random() * text.length);
        const cut = k % 2 === 0 ? text.slice(0, at) : `${text.slice(0, at)}(${text.slice(at)}`;
        broken++;
        try {
          const d = py.parse(cut, file);
          pythonApi(py, d, abs, root, (p) => relative(root, p));
          brokenOk++;
        } catch {
          // counted as a failure
        }
      }
    }
    const registry = new IndexRegistry();
    const { index } = await registry.get(root, 0);
    let libRr = 0;
    for (const f of truth.functions) {
      const hits = runQuery(index, f.query, { limit: 10 });
      const rank = hits.findIndex(
        (h) => h.path === f.file && h.symbol === f.name && h.line_start <= f.line && h.line_end >= f.line,
      );
      libRr += rank === -1 ? 0 : 1 / (rank + 1);
      if (f.doctest) {
        doctested++;
        const doc = py.parse(readFileSync(join(root, f.file), "utf8"));
        const d = py.declarations(doc).find((x) => x.name === f.name && x.line_start <= f.line && x.line_end >= f.line);
        if (d && exampleCases(py, d, f.name).some((c) => c.kind !== "skip")) withValue++;
      }
    }
    rr += libRr;
    queries += truth.functions.length;
    out[lib.name] = {
      modules: Object.keys(truth.modules).length,
      functions_with_docstrings: truth.functions.length,
      search_mrr10: truth.functions.length ? libRr / truth.functions.length : null,
      api_mismatches: misses.slice(0, 20),
    };
  }
  return {
    ...out,
    summarize_api: {
      recall: tp / (tp + fn),
      precision: tp / (tp + fp),
      true_positives: tp,
      false_positives: fp,
      false_negatives: fn,
      excluded_modules: excluded,
      with_excluded: { recall: all.tp / (all.tp + all.fn), precision: all.tp / (all.tp + all.fp) },
    },
    search_mrr10: rr / queries,
    testgen_doctest_value_assertion_share: doctested ? withValue / doctested : null,
    doctested_functions: doctested,
    broken_buffers: { cases: broken, answered: brokenOk, share: brokenOk / broken },
    testgen_pytest: await evalPythonTestgen(
      CORPUS,
      [
        { name: "toolz", packages: ["toolz"] },
        { name: "itsdangerous", packages: ["src/itsdangerous"] },
        { name: "humanize", packages: ["src/humanize"], built: { "src/humanize/_version.py": BUILT_VERSION } },
      ],
      python,
      Number(process.env.EVAL_PY_TESTGEN_LIMIT ?? 40),
    ),
  };
}

if (process.argv[1]?.endsWith("eval-python.js")) console.log(JSON.stringify(await evalPython(), null, 2));

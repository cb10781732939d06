/**
 * `node dist/bench/typed-first-answer.js [--files N] [--tag NAME]`: the first typed answer of
 * complete-lite on generated workspaces of N files (default 2,000), in two shapes:
 * - `closure`: packages of 50 modules (each module imports earlier ones of its package); the open file
 *   imports from two packages, so its import closure is about 100 files;
 * - `whole`: every module imports earlier ones, so the open file's closure is the whole workspace.
 * A member completion after `service.` is asked again as soon as each answer comes (each within its
 * budget, from the syntactic engine while the checker loads) until one comes from the checker; records
 * when that was, after how many requests, the first answer's engine and items, and the agent's CPU
 * time (all its threads) until then. With AIP_BENCH_BASELINE=DIST another build's complete-lite is
 * measured on the same workspaces in the same run, alternating with this one's. Writes
 * bench/results/<date>-typed-first-answer[-<tag>].json.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { envString } from "../protocol/util/env.js";
import { parseArgs } from "../tools/aip/command.js";
import { benchDir, cleanupAll, DIST, ROOT, startProc } from "./lib/procs.js";
import { completeAsker, module } from "./scenarios/typed-completion.js";

const args = parseArgs(process.argv.slice(2), ["files", "tag"]);
const files = typeof args.flags.files === "string" ? Number(args.flags.files) : 2000;
const tag = typeof args.flags.tag === "string" ? `-${args.flags.tag}` : "";
const baseline = envString("AIP_BENCH_BASELINE");
/** Modules per package in the `closure` shape. */
const PACKAGE = 50;

type Shape = "closure" | "whole";

/** Write a workspace of `files` files in `shape` under `root`; returns the open file's text (src/big.ts). */
function writeWorkspace(root: string, shape: Shape): string {
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", lib: ["ES2022"] } }),
  );
  let imports: string[];
  let last: number;
  if (shape === "whole") {
    for (let i = 0; i < files - 1; i++) writeFileSync(join(root, "src", `mod${i}.ts`), module(i));
    last = files - 2;
    imports = [`import { Service${last}, helper${last} } from "./mod${last}.js";`];
  } else {
    for (let i = 0; i < files - 1; i++) {
      const dir = join(root, "src", `pkg${Math.floor(i / PACKAGE)}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `mod${i % PACKAGE}.ts`), module(i % PACKAGE));
    }
    last = PACKAGE - 1;
    imports = [
      `import { Service${last}, helper${last} } from "./pkg0/mod${last}.js";`,
      `import { helper${last - 1} as other } from "./pkg1/mod${last - 1}.js";`,
    ];
  }
  const source = [
    ...imports,
    "export function typing(raw: string): number {",
    `  const service = new Service${last}(helper${last}(raw));`,
    "  return service.",
    "}",
    "",
  ].join("\n");
  writeFileSync(join(root, "src", "big.ts"), source);
  return source;
}

/** CPU time (ms) the process has used, from /proc. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** One build's complete-lite, fresh, on the workspace at `root`: asked until the checker answers. */
async function firstTyped(dist: string, root: string, source: string): Promise<Record<string, unknown>> {
  const dir = benchDir();
  const socket = join(dir, "lite.sock");
  const agent = await startProc(join(dist, "agents/complete-lite/main.js"), ["--listen", socket], socket);
  try {
    const offset = source.indexOf("service.\n") + "service.".length;
    const ask = completeAsker(socket, root);
    const cpuAtStart = cpuMs(agent.child.pid!);
    const t0 = performance.now();
    const first = await ask(source, offset);
    let typed = first;
    let requests = 1;
    while (typed.engine !== "typed") {
      if (performance.now() - t0 > 300_000) throw new Error(`no typed answer in 300 s (last: ${typed.engine})`);
      typed = await ask(source, offset);
      requests++;
    }
    return {
      first_typed_ms: Math.round(performance.now() - t0),
      requests_until_typed: requests,
      agent_cpu_ms_until_typed: cpuMs(agent.child.pid!) - cpuAtStart,
      first_answer: {
        ms: Math.round(first.ms),
        engine: first.engine,
        items: first.items.slice(0, 8).map((i) => i.label),
      },
      typed_items: typed.items.slice(0, 8).map((i) => i.label),
    };
  } finally {
    await agent.stop();
  }
}

const builds: [string, string][] = baseline
  ? [
      ["baseline", baseline],
      ["this build", DIST],
    ]
  : [["this build", DIST]];
const uptime = (): string => readFileSync("/proc/loadavg", "utf8").trim();
const host = { cpus: cpus().length, load1_at_start: loadavg()[0], loadavg_at_start: uptime() };
const scenarios: Record<string, unknown>[] = [];
try {
  for (const shape of ["closure", "whole"] as const) {
    const root = join(benchDir(), "ws");
    const source = writeWorkspace(root, shape);
    const runs: Record<string, unknown> = {};
    for (const [name, dist] of builds) {
      runs[name] = { dist, ...(await firstTyped(dist, root, source)) };
      console.log(shape, name, JSON.stringify(runs[name]));
    }
    scenarios.push({ shape, files, ...runs });
  }
  const result = {
    bench: "typed-first-answer",
    files,
    host: { ...host, load1_at_end: loadavg()[0], loadavg_at_end: uptime() },
    scenarios,
  };
  console.log(JSON.stringify(result, null, 2));
  const out = join(ROOT, "bench/results", `${new Date().toISOString().slice(0, 10)}-typed-first-answer${tag}.json`);
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${out}`);
} finally {
  cleanupAll();
}

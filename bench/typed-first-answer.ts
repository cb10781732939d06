/**
 * `node dist/bench/typed-first-answer.js [--files N] [--tag NAME]`: the first typed answer of
 * complete-lite on a generated workspace of N files (default 2,000) where every module imports earlier
 * ones, so the checker's program holds them all. A member completion after `service.` is asked again
 * as soon as each answer comes (each within its budget, from the syntactic engine while the checker
 * loads) until one comes from the checker; records when that was, after how many requests, the first
 * answer's engine and items, and the agent's CPU time. Writes bench/results/<date>-typed-first-answer[-<tag>].json.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "../tools/aip/command.js";
import { benchDir, cleanupAll, DIST, ROOT, startProc } from "./lib/procs.js";
import { completeAsker, module } from "./scenarios/typed-completion.js";

const args = parseArgs(process.argv.slice(2), ["files", "tag"]);
const files = typeof args.flags.files === "string" ? Number(args.flags.files) : 2000;
const tag = typeof args.flags.tag === "string" ? `-${args.flags.tag}` : "";

const dir = benchDir();
const root = join(dir, "ws");
mkdirSync(join(root, "src"), { recursive: true });
writeFileSync(
  join(root, "tsconfig.json"),
  JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", module: "NodeNext", lib: ["ES2022"] } }),
);
for (let i = 0; i < files - 1; i++) writeFileSync(join(root, "src", `mod${i}.ts`), module(i));
const last = files - 2;
const source = [
  `import { Service${last}, helper${last} } from "./mod${last}.js";`,
  "export function typing(raw: string): number {",
  `  const service = new Service${last}(helper${last}(raw));`,
  "  return service.",
  "}",
  "",
].join("\n");
writeFileSync(join(root, "src", "big.ts"), source);
const offset = source.indexOf("service.\n") + "service.".length;

/** CPU time (ms) the process has used, from /proc. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

const load = loadavg()[0]!;
const socket = join(dir, "lite.sock");
const agent = await startProc(join(DIST, "agents/complete-lite/main.js"), ["--listen", socket], socket);
try {
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
  const result = {
    bench: "typed-first-answer",
    files,
    host: { cpus: cpus().length, load1_at_start: load, load1_at_end: loadavg()[0] },
    first_answer: {
      ms: Math.round(first.ms),
      engine: first.engine,
      items: first.items.slice(0, 8).map((i) => i.label),
    },
    first_typed_ms: Math.round(performance.now() - t0),
    requests_until_typed: requests,
    agent_cpu_ms_until_typed: cpuMs(agent.child.pid!) - cpuAtStart,
    typed_items: typed.items.slice(0, 8).map((i) => i.label),
  };
  console.log(JSON.stringify(result, null, 2));
  const out = join(ROOT, "bench/results", `${new Date().toISOString().slice(0, 10)}-typed-first-answer${tag}.json`);
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${out}`);
} finally {
  await agent.stop();
  cleanupAll();
}

/** Shared by the `aip lsp` / `aip mcp` suites: an agency of the bundled agents and a small TypeScript workspace. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FixedLoadSampler } from "../../../orchestrator/core/load.js";
import { ROOT, suiteManifest, tempDir } from "../../helpers.js";
import { COMPLETE, modelEnv } from "../../agents/lib/llm/tiny-model.js";
import { startAgency, until, type Agency } from "../../orchestrator/harness.js";

export const AIP = join(ROOT, "dist/scripts/aip.js");

/**
 * The bundled agents on real sockets; `model` adds agent-complete with the tiny model (for inline completion).
 * Their manifests' default deadlines are the suites' (suiteManifest); the bridges' own deadlines still apply.
 */
export async function bundledAgency(names: string[], model = false): Promise<Agency> {
  const manifests = tempDir("aipm-");
  const specs = names.map((name) => ({
    name,
    command: join(ROOT, `dist/agents/${name}/main.js`),
    manifest: suiteManifest(name, manifests.dir),
  }));
  if (model)
    specs.push({
      name: "complete",
      command: COMPLETE,
      manifest: suiteManifest("complete", manifests.dir),
      env: modelEnv(true, { AIP_WARMUP_KEYSTROKES: "0" }),
    } as (typeof specs)[number]);
  // Load pinned at 0: the CPU rule would otherwise take agent-complete out of rotation on a busy host.
  // A generous start timeout: on a loaded 2-core host an agent's start can pass the default 15 s.
  const agency = await startAgency(specs, { start_timeout_ms: 90_000 }, { load: new FixedLoadSampler(0) });
  await until(() => agency.orchestrator.agents.every((a) => a.state === "healthy"), 90_000, "agents healthy").catch(
    (err: Error) => {
      throw new Error(
        `${err.message}: ${agency.orchestrator.agents.map((a) => `${a.name} ${a.state} ${JSON.stringify(a.lastError ?? null)}`).join(", ")}`,
      );
    },
  );
  const stop = agency.stop.bind(agency);
  agency.stop = async () => {
    try {
      await stop();
    } finally {
      manifests.cleanup();
    }
  };
  return agency;
}

export const MATH_TS = `/** Small arithmetic helpers. */
export function add(a: number, b: number): number {
  return a + b;
}

export class Counter {
  count = 0;
  increment(by: number): number {
    this.count += by;
    return this.count;
  }
}

export const total = add(1, 2);
`;

/** A workspace with package.json ("type": "module"), src/math.ts and an empty test/ folder. */
export function workspace(): { root: string; cleanup: () => void } {
  const { dir, cleanup } = tempDir("aipw-");
  mkdirSync(join(dir, "src"));
  mkdirSync(join(dir, "test"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "w", type: "module" }));
  writeFileSync(join(dir, "src/math.ts"), MATH_TS);
  writeFileSync(join(dir, "README.md"), "# w\n\nAdds numbers with a counter.\n");
  return { root: dir, cleanup };
}

/** The first ```lang block of the docs/integrations.md section headed `## title` (snippets there are run by the tests). */
export function readmeBlock(title: string, lang: string): string {
  const readme = readFileSync(join(ROOT, "docs/integrations.md"), "utf8");
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`docs/integrations.md has no section "## ${title}"`);
  const section = readme.slice(start + 1).split(/\n## /)[0]!;
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(section);
  if (!m) throw new Error(`docs section "${title}" has no ${lang} block`);
  return m[1]!;
}

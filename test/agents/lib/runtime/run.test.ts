/** `agent-<name> --help`: each bundled agent says what it answers and what it reads, not a generic text. */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../../helpers.js";

const run = promisify(execFile);

const AGENTS: [string, string, string[]][] = [
  ["summarize", '"summarize"', ["context.file_path"]],
  ["search", '"search"', ["context.query", "AIP_WORKSPACE_ROOTS"]],
  ["testgen", '"testgen"', ["constraints.function", "run_timeout_ms"]],
  ["complete-lite", '"complete"', ["AIP_TYPED_BUDGET_MS"]],
  ["complete", '"complete"', ["AIP_MODEL", "AIP_MODEL_GPU_LAYERS"]],
  ["dummy", '"echo"', ["delay_ms"]],
];

describe("agent --help", () => {
  it.each(AGENTS)("agent-%s names its action %s and what it reads", async (name, action, words) => {
    const { stdout } = await run(process.execPath, [join(ROOT, `dist/agents/${name}/main.js`), "--help"], {
      encoding: "utf8",
      env: { ...process.env, AIP_MODEL: "" },
    });
    expect(stdout).toContain(`Usage: agent-${name} [--manifest | --listen PATH`);
    expect(stdout).toContain(`Answers the action ${action}`);
    for (const w of words) expect(stdout).toContain(w);
  });

  it("a usage error says what was wrong, shows the help and exits 2", async () => {
    const err = await run(process.execPath, [join(ROOT, "dist/agents/search/main.js"), "--frobnicate"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr).toContain('agent-search: unknown argument "--frobnicate"');
    expect((err as { stderr: string }).stderr).toContain('Answers the action "search"');
  });
});

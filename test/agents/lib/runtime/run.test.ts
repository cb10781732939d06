/**
 * `agent-<name> --help`: each bundled agent says what it answers and what it reads, not a generic text; a
 * one-shot run warms up only for a request it serves.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT, jsonLines, tempDir } from "../../../helpers.js";
import { modelEnv } from "../llm/tiny-model.js";

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

describe("agent one-shot mode", () => {
  it("answers a request it refuses without its warm-up (no model load), and warms up for one it serves", async () => {
    const t = tempDir("aipos-");
    try {
      const oneShot = async (request: unknown, log: string): Promise<string[]> => {
        const child = execFile(process.execPath, [join(ROOT, "dist/agents/complete/main.js")], {
          env: { ...process.env, ...modelEnv(true, { AIP_WARMUP_KEYSTROKES: "0" }), AIP_LOG_FILE: join(t.dir, log) },
        });
        child.stdin!.end(JSON.stringify(request));
        await new Promise((resolve) => child.once("exit", resolve));
        return jsonLines(readFileSync(join(t.dir, log), "utf8")).map((l) => String(l.event));
      };
      const refused = await oneShot({ action: "complete" }, "refused.log");
      expect(refused).not.toContain("model_loaded");
      const served = await oneShot(
        {
          action: "complete",
          context: { source_code: "const alpha = 1;\nal", cursor: { line: 2, column: 2 } },
          constraints: { max_tokens: 1, best_effort: true, timeout_ms: 30_000, inference_timeout_ms: 20_000 },
        },
        "served.log",
      );
      expect(served).toContain("model_loaded");
      expect(served).toContain("request");
    } finally {
      t.cleanup();
    }
  }, 120_000);
});

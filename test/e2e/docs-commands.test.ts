/**
 * The docs' commands that need no running agency, run as written (the harness and the table of every
 * example: test/e2e/lib/docs-examples.ts, checked by docs.test.ts): the conformance kit, `aip vet` and
 * the systemd install. The commands of one example that do not depend on each other run side by side:
 * each is a process of its own, in its own directories.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";
import { tinyModel } from "../agents/lib/llm/tiny-model.js";
import { allOf, asRoot, block, commands, inTurns, sh, shOnce } from "./lib/docs-examples.js";

describe("the commands in docs/aip-1.md, docs/agents.md and docs/operations.md", () => {
  /** Two lines, of one example or of two, that become the same command here run it once. */
  const run = shOnce();

  it("docs/aip-1.md and docs/agents.md: the conformance commands pass", async () => {
    const own = block("docs/aip-1.md", "npm run conformance -- path/to/your-agent").replace(
      "path/to/your-agent",
      "dist/agents/dummy/main.js",
    );
    // The whole battery runs against each bundled agent in test/agents/*/main.test.ts (the dummy's too, with
    // these request files for search and testgen); here each line runs as written on this checkout, limited
    // to the checks that send the good request.
    const lines = [...commands(own), ...commands(block("docs/agents.md", "npm run conformance -- dist/agents/search"))];
    expect(lines).toHaveLength(3);
    await allOf(
      lines.map(async (cmd) => {
        const out = await sh(`${cmd} --only "good request succeeds"`, {}, 240_000);
        expect(out, cmd).toMatch(/^PASS {2}one-shot: a good request succeeds/m);
        expect(out, cmd).toMatch(/^PASS {2}socket HTTP: a good request succeeds/m);
        expect(out, cmd).toMatch(/[1-9]\d* passed, 0 failed/);
      }),
    );
  }, 480_000);

  it("docs/operations.md: aip vet, as a table and as JSON", async () => {
    const [table, json] = commands(block("docs/operations.md", "node dist/scripts/aip.js vet"));
    const [shown, reasons] = await allOf([
      run(table!.replace(/\s+#.*$/, ""), 120_000),
      sh(json!.replace("./my-agent", "dist/agents/dummy/main.js").replace(/\s+#.*$/, ""), {}, 120_000),
    ]);
    expect(shown).toMatch(/pass/i);
    expect(Array.isArray(JSON.parse(reasons))).toBe(true);
  }, 240_000);

  it("docs/operations.md: the systemd install lines (vet loop, --dry-run, DESTDIR) and the uninstall's file list", async () => {
    const t = tempDir("aipdocs-");
    try {
      const lines = commands(block("docs/operations.md", "for a in dist/agents/*/main.js")).map((l) =>
        l.replace(/\s+#.*$/, ""),
      );
      const stage = join(t.dir, "stage");
      /** One install line as this machine runs it: none changes the host, each stages in its own directory. */
      const install = async (line: string): Promise<void> => {
        if (line.includes("usermod")) return; // needs the aip-users group the real install creates
        // The model the docs name is not on this machine: the tiny test model stands in for it.
        const here = line.replace("/var/lib/aip-models/coder-1.5b-q4_k_m.gguf", tinyModel());
        if (here.includes("--model")) {
          // Staged, as DESTDIR does: the model path must reach the model-backed agents' drop-ins.
          const staged = join(t.dir, "staged-model");
          await run(`DESTDIR=${staged} ${here.replace(/^sudo /, "")}`, 120_000);
          const dropIn = readFileSync(
            join(staged, "etc/systemd/system/aip-agent@complete.service.d/50-aip.conf"),
            "utf8",
          );
          expect(dropIn, here).toContain(`AIP_MODEL=${tinyModel()}`);
          return;
        }
        const cmd = here.includes("DESTDIR=")
          ? here.replace("/tmp/stage", stage)
          : asRoot(here.includes("--dry-run") ? here : `${here} --dry-run`);
        if (cmd === undefined) return;
        const out = await run(cmd, 120_000);
        if (cmd.includes("--dry-run")) expect(out, cmd).toContain("aip-orchestrator");
      };
      // The vet loop, one command per agent (its `|| exit 1` is the rejection of that command): the dummy's
      // is the vet example's own line, which ran above. A few at a time, beside the install lines, which
      // stage or print only.
      const loop = /^for a in (\S+); do (.+) \|\| exit 1; done$/.exec(lines[0]!);
      expect(loop, lines[0]).not.toBeNull();
      const agents = readdirSync(join(ROOT, "dist/agents"))
        .map((a) => loop![1]!.replace("*", a))
        .filter((a) => existsSync(join(ROOT, a)));
      expect(agents).toContain("dist/agents/dummy/main.js");
      const vets = agents.map((a) => () => run(loop![2]!.replace('"$a"', a), 120_000));
      await allOf([inTurns(vets, 2), ...lines.slice(1).map(install)]);
      const removed = commands(block("docs/operations.md", "sudo systemctl disable"))
        .join(" ")
        .split(/\s+/)
        .filter((w) => /^\/(etc|usr)\//.test(w));
      expect(removed.length).toBeGreaterThanOrEqual(5);
      for (const path of removed) {
        const found = path.includes("*")
          ? readdirSync(join(stage, path.slice(0, path.lastIndexOf("/")))).some((f) =>
              new RegExp(
                `^${path
                  .slice(path.lastIndexOf("/") + 1)
                  .replace(/[.@]/g, "\\$&")
                  .replace("*", ".*")}$`,
              ).test(f),
            )
          : existsSync(join(stage, path));
        expect(found, `uninstall removes ${path}, which the install stages`).toBe(true);
      }
    } finally {
      t.cleanup();
    }
  }, 420_000);
});

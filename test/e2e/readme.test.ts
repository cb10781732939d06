/**
 * The README's examples, run as written: its curl and socat commands against a real agency (the
 * bundled dummy agent from dist/), with ./run/aip.sock pointed at the test's own socket. The README's
 * links into docs/ must lead to files that exist.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers.js";
import { startAgency, until, type Agency } from "../orchestrator/harness.js";

const run = promisify(execFile);
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** Every ```sh block of the README that talks to the socket. */
function socketExamples(): string[] {
  return [...README.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .filter((b) => b.includes("./run/aip.sock") && /^(curl|echo .* socat)/m.test(b) && !b.includes("npm "));
}

describe("README examples", () => {
  let agency: Agency | undefined;
  beforeAll(async () => {
    agency = await startAgency([
      {
        name: "dummy",
        command: join(ROOT, "dist/agents/dummy/main.js"),
        manifest: join(ROOT, "manifests/dummy.json"),
      },
    ]);
    await until(() => agency!.orchestrator.agents.every((a) => a.state === "healthy"), 30_000, "dummy healthy");
  });
  afterAll(() => agency?.stop());

  it("has one curl and one socat example, and both answer the echo as documented", async () => {
    const examples = socketExamples();
    expect(examples.some((b) => b.includes("curl"))).toBe(true);
    expect(examples.some((b) => b.includes("socat"))).toBe(true);
    for (const block of examples) {
      // Asynchronously: the orchestrator runs in this process and must keep answering meanwhile.
      const { stdout: out } = await run(
        "bash",
        ["-euo", "pipefail", "-c", block.replaceAll("./run/aip.sock", agency!.socket)],
        {
          encoding: "utf8",
          timeout: 20_000,
        },
      );
      const answers = out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { status: string; agent: string; payload: unknown });
      expect(answers, block).toHaveLength(1);
      expect(answers[0]).toMatchObject({ status: "success", agent: "dummy" });
      // The dummy agent answers the action it received and the number of lines of context.source_code.
      const sent = JSON.parse(`"${/"source_code":"((?:[^"\\]|\\.)*)"/.exec(block)![1]!}"`) as string;
      expect(answers[0]!.payload).toMatchObject({ received_action: "echo", context_lines: sent.split("\n").length });
    }
  });

  it("links only to docs that exist", () => {
    const links = [...README.matchAll(/\]\(((?:docs\/)[^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThanOrEqual(7);
    for (const link of links) expect(existsSync(join(ROOT, link)), link).toBe(true);
  });

  it("lists the test prerequisites that scripts/install-test-tools installs (and .ci/run runs it)", () => {
    expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toContain("scripts/install-test-tools");
    const ci = readFileSync(join(ROOT, "scripts/test-tools.mjs"), "utf8");
    for (const pkg of [
      "strace",
      "socat",
      "curl",
      "jq",
      "binutils",
      "gcc",
      "systemd",
      "bubblewrap",
      "neovim",
      "prometheus",
      "python3-pytest",
      "python3-jedi",
    ]) {
      expect(README, pkg).toContain(pkg);
      expect(ci, pkg).toContain(pkg);
    }
  });
});

/** `aip invoke` names the flag a missing field needs, and says when a barrel's re-exports were not followed. */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { barrelNote, flagFor, flagHint } from "../../../tools/aip/hints.js";
import type { Problem } from "../../../protocol/contract/errors.js";
import { DIST, servedAgent, tempDir } from "../../helpers.js";
import { AIP } from "./bridge-helpers.js";

const search = servedAgent(join(DIST, "agents/search/main.js"));
const summarize = servedAgent(join(DIST, "agents/summarize/main.js"));
const t = tempDir("aiphint-");
afterAll(() => t.cleanup());

const aip = (socket: string, args: string[]) =>
  spawnSync(process.execPath, [AIP, "invoke", ...args, "--socket", socket], { encoding: "utf8" });

describe("aip invoke's hints", () => {
  it("search without --workspace: the error names --workspace DIR", () => {
    const r = aip(search.socket, ["search", "--query", "parse"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^AIP_ERR_MISSING_FIELD \(400\): /);
    expect(r.stderr).toContain("aip invoke: add --workspace DIR");
  });

  it("a barrel summarized without --workspace: a note says its re-exports were not followed", () => {
    const barrel = join(t.dir, "index.ts");
    writeFileSync(barrel, 'export * from "./a.js";\nexport { b } from "./b.js";\n');
    writeFileSync(join(t.dir, "a.ts"), "export const a = 1;\n");
    writeFileSync(join(t.dir, "b.ts"), "export const b = 2;\n");
    const without = aip(summarize.socket, ["summarize", "--file", barrel]);
    expect(without.status).toBe(0);
    expect(without.stderr).toMatch(/note: 2 re-exports \(\.\/a\.js, \.\/b\.js\) not followed: add --workspace DIR/);
    const withWs = aip(summarize.socket, ["summarize", "--file", barrel, "--workspace", t.dir]);
    expect(withWs.status).toBe(0);
    expect(withWs.stderr).toBe("");
  });

  it("maps fields to flags, constraints included", () => {
    expect(flagFor("context.cursor")).toBe("--line L --column C");
    expect(flagFor("constraints.limit")).toBe("--constraint limit=JSON");
    expect(flagFor("constraints.timeout_ms")).toBe("--timeout MS");
    const p = (x: Partial<Problem>): Problem =>
      ({ type: "AIP_ERR_INVALID_FIELD", title: "", status: 400, detail: "", suggestion: "", ...x }) as Problem;
    expect(flagHint(p({ errors: [{ path: "constraints.limit", message: "too big" }] }))).toBe(
      "check --constraint limit=JSON",
    );
    expect(flagHint(p({ type: "AIP_ERR_MISSING_FIELD", fields: ["context.query", "context.workspace_root"] }))).toBe(
      "add --query TEXT and --workspace DIR",
    );
    expect(flagHint(p({ detail: "something else" }))).toBeUndefined();
    expect(barrelNote({ outline: { unresolved_exports: [] } }, false)).toBeUndefined();
  });
});

/**
 * testgen reads a workspace's types the way complete-lite does (the contained reader), tried on a real
 * agent process (one served for the file): a FIFO as a `.d.ts` does not block it, a `.d.ts` over the size
 * cap is not read, and a `node_modules` linked outside the allowed roots is not read; none of their text
 * reaches the answer.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { invokeHttp } from "../../protocol/transport/client.js";
import { DIST, servedAgent, tempDir } from "../helpers.js";

const TESTGEN = join(DIST, "agents/testgen/main.js");
const allowed = tempDir("aipsec-allowed-");
const outside = tempDir("aipsec-outside-");
afterAll(() => {
  allowed.cleanup();
  outside.cleanup();
});

const SOURCE = 'import type { Evil } from "evil";\nexport function f(x: Evil): number {\n  return 1;\n}\n';

function workspace(name: string): string {
  const root = join(allowed.dir, name);
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src/a.ts"), SOURCE);
  writeFileSync(join(root, "package.json"), JSON.stringify({ name, type: "module" }));
  return root;
}

function evilPackage(modules: string, dts: (file: string) => void): void {
  mkdirSync(join(modules, "evil"), { recursive: true });
  writeFileSync(join(modules, "evil/package.json"), JSON.stringify({ name: "evil", types: "index.d.ts" }));
  dts(join(modules, "evil/index.d.ts"));
}

// One agent for every case: each request reads its own workspace, so no case sees another's types.
const agent = servedAgent(TESTGEN, {
  AIP_WORKSPACE_ROOTS: allowed.dir,
  AIP_WORKSPACE_ROOTS_DEFAULTS: "off",
});

/** One request to the real testgen process; its answer, or a failure if it does not come within 60 s. */
async function testgen(root: string): Promise<{ out: string }> {
  const request = {
    action: "testgen",
    context: { workspace_root: root, file_path: "src/a.ts" },
    constraints: { function: "f", timeout_ms: 50_000 },
  };
  return { out: JSON.stringify((await invokeHttp(agent.socket, request, 60_000)).json) };
}

describe("testgen's reads of a hostile workspace", { timeout: 180_000 }, () => {
  it("a FIFO as a .d.ts does not block the agent", async () => {
    const root = workspace("fifo");
    evilPackage(join(root, "node_modules"), (f) => execFileSync("mkfifo", [f]));
    for (let i = 0; i < 2; i++) {
      // An answer at all is the point: a blocked read would hang the agent past the wait.
      const r = await testgen(root);
      expect(r.out).toContain('"status":"success"');
    }
  });

  it("a .d.ts over the 1 MiB cap is not read", async () => {
    const root = workspace("big");
    evilPackage(join(root, "node_modules"), (f) =>
      writeFileSync(f, `export type Evil = "BIG_MARKER" | "b";\n/*${"x".repeat(2 << 20)}*/\n`),
    );
    const r = await testgen(root);
    expect(r.out).toContain('"status":"success"');
    expect(r.out).not.toContain("BIG_MARKER");
  });

  it("a node_modules linked outside the allowed roots is not read", async () => {
    const root = workspace("linked");
    evilPackage(join(outside.dir, "node_modules"), (f) =>
      writeFileSync(f, 'export type Evil = "OUTSIDE_MARKER" | "b";\n'),
    );
    symlinkSync(join(outside.dir, "node_modules"), join(root, "node_modules"));
    const r = await testgen(root);
    expect(r.out).toContain('"status":"success"');
    expect(r.out).not.toContain("OUTSIDE_MARKER");
    // The same package inside the allowed roots is read: the marker shows the refusal above is the link's.
    const inside = workspace("inside");
    evilPackage(join(inside, "node_modules"), (f) => writeFileSync(f, 'export type Evil = "INSIDE_MARKER" | "b";\n'));
    expect((await testgen(inside)).out).toContain("INSIDE_MARKER");
  });
});

/**
 * `aip trust` / `aip untrust` as a real process: the record in the state dir is what agents read (no
 * reload), a state dir others may write is refused naming the fix, and nothing else trusts a directory.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TRUST_FILE_ENV, workspaceTrust } from "../../agents/lib/sandbox/trust.js";
import { DIST, tempDir } from "../helpers.js";

const t = tempDir("aipsec-trust-");
afterAll(() => t.cleanup());
const AIP = join(DIST, "scripts/aip.js");

function aip(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AIP, ...args], (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("aip trust", () => {
  const state = join(t.dir, "state");
  const ws = join(t.dir, "ws");
  mkdirSync(ws);
  const env = { [TRUST_FILE_ENV]: join(state, "trusted-workspaces.json") };

  it("records, lists and removes a trusted workspace that agents then see", async () => {
    expect(workspaceTrust(ws, env).trusted).toBe(false);
    const r = await aip("trust", ws, "--state-dir", state);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`trusted ${ws}`);
    expect(workspaceTrust(ws, env)).toMatchObject({ trusted: true, source: "aip trust" });
    expect(workspaceTrust(join(ws, ".."), env).trusted).toBe(false);
    expect((await aip("trust", "--list", "--state-dir", state)).stdout).toBe(`${ws}\n`);
    expect((await aip("untrust", ws, "--state-dir", state)).code).toBe(0);
    expect(workspaceTrust(ws, env).trusted).toBe(false);
    expect((await aip("trust", "--list", "--state-dir", state)).stdout).toBe("");
  });

  it("refuses a state dir every user may write, naming the path and the fix", async () => {
    const shared = join(t.dir, "shared");
    mkdirSync(shared, { mode: 0o777 });
    chmodSync(shared, 0o777);
    const r = await aip("trust", ws, "--state-dir", shared);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`chmod o-w ${shared}`);
  });
});

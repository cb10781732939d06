/**
 * State files are written through a random O_EXCL temporary name: a symlink planted at the name the
 * orchestrator used to pick (`FILE.<pid>.tmp`) does not make it overwrite or chmod the link's target.
 */
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeFileAtomic } from "../../orchestrator/core/state-file.js";
import { tempDir } from "../helpers.js";

const t = tempDir("aipsec-state-");
afterAll(() => t.cleanup());

describe("state files", () => {
  it("a planted symlink at the old temporary name is never written through", () => {
    const victim = join(t.dir, "victim");
    writeFileSync(victim, "precious\n");
    chmodSync(victim, 0o644);
    const file = join(t.dir, "canary.json");
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    for (let i = 0; i < 3; i++) {
      writeFileAtomic(file, `{"n":${i}}`);
      expect(readFileSync(file, "utf8")).toBe(`{"n":${i}}`);
      expect(readFileSync(victim, "utf8")).toBe("precious\n");
      expect(statSync(victim).mode & 0o777).toBe(0o644);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
  });
});

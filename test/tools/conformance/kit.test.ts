/** The conformance kit's own behaviour where an agent gets its lifecycle wrong. */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runConformance } from "../../../tools/conformance/kit.js";
import { DUMMY, tempDir } from "../../helpers.js";

describe("conformance kit", () => {
  it("an agent that will not start over a stale socket file fails that check alone; the rest run on a fresh path", async () => {
    const t = tempDir("aipkit-");
    try {
      // The dummy agent, except that it refuses any --listen path where a file already is.
      const exe = join(t.dir, "picky-agent");
      writeFileSync(
        exe,
        `#!/bin/sh\nif [ "$1" = --listen ] && [ -e "$2" ]; then echo "refusing $2" >&2; exit 1; fi\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(DUMMY)} "$@"\n`,
      );
      chmodSync(exe, 0o755);
      const results = await runConformance(exe, undefined, undefined, "lifecycle");
      const stale = results.find((r) => r.name === "lifecycle: a stale socket file at start is replaced");
      expect(stale).toMatchObject({ ok: false });
      expect(stale!.reason).toMatch(/^agent did not start over a stale socket file: /);
      expect(results.filter((r) => !r.ok)).toEqual([stale]);
      // The other lifecycle checks ran on the fresh server, SIGTERM last.
      expect(results.map((r) => r.name)).toEqual([
        "lifecycle: a stale socket file at start is replaced",
        "lifecycle: a live server's socket is not stolen",
        "lifecycle: SIGTERM removes the socket file and exits 0",
        "socket: nothing written to stderr while serving",
      ]);
    } finally {
      t.cleanup();
    }
  });
});

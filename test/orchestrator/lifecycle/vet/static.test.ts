import { chmodSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  envProgram,
  inspectExecutable,
  libraryClosure,
  parseShebang,
} from "../../../../orchestrator/lifecycle/vet/static.js";
import { DUMMY, tempDir } from "../../../helpers.js";
import { buildGpuAgent } from "./helpers.js";

describe("static inspection", () => {
  const t = tempDir("aipvs-");
  afterAll(() => t.cleanup());
  const PATH = "/nonexistent/bin:/usr/local/bin:/usr/bin:/bin";

  it("parses #! lines and env's program (-S, -u NAME, NAME=VALUE skipped)", () => {
    expect(parseShebang("#!/usr/bin/env node")).toEqual({ interpreter: "/usr/bin/env", args: ["node"] });
    expect(parseShebang("#! /bin/sh -e\r")).toEqual({ interpreter: "/bin/sh", args: ["-e"] });
    expect(parseShebang("console.log(1)")).toBeUndefined();
    expect(envProgram(["-S", "NODE_ENV=production", "node", "--no-warnings"])).toBe("node");
    expect(envProgram(["-u", "HOME", "-i", "python3"])).toBe("python3");
  });

  it("resolves #!/usr/bin/env node to the real node ELF; every PATH candidate counts as its own interpreter", () => {
    const info = inspectExecutable(DUMMY, PATH);
    expect(info.format).toBe("script");
    expect(info.problem).toBeUndefined();
    expect(info.chain.slice(1, 2)).toEqual(["/usr/bin/env"]);
    expect(info.elf).toBeDefined();
    expect(realpathSync(info.elf!)).toBe(realpathSync(process.execPath));
    expect(info.allowedExecs.has("/nonexistent/bin/node")).toBe(true);
    expect(info.allowedExecs.has("/bin/sh")).toBe(false);
  });

  it("names what is wrong with a broken chain", () => {
    const noInterp = join(t.dir, "no-interp");
    writeFileSync(noInterp, "#!/usr/bin/env no-such-interpreter-xyz\n");
    chmodSync(noInterp, 0o755);
    expect(inspectExecutable(noInterp, PATH).problem).toMatch(/no-such-interpreter-xyz is not on PATH/);
    const text = join(t.dir, "text");
    writeFileSync(text, "hello\n");
    chmodSync(text, 0o755);
    expect(inspectExecutable(text, PATH).problem).toMatch(/neither an ELF binary nor a #! script/);
    const notExec = join(t.dir, "not-exec");
    writeFileSync(notExec, "#!/bin/sh\n");
    expect(inspectExecutable(notExec, PATH).problem).toMatch(/not an executable file/);
    expect(inspectExecutable(join(t.dir, "missing"), PATH).problem).toMatch(/does not exist/);
  });

  it("reads NEEDED transitively with readelf, resolving through RUNPATH $ORIGIN", async () => {
    const exe = buildGpuAgent(t.dir);
    expect(inspectExecutable(exe, PATH)).toMatchObject({ format: "elf", elf: exe });
    const libs = await libraryClosure([exe]);
    expect(libs.find((l) => l.name === "libcuda.so.1")).toEqual({
      name: "libcuda.so.1",
      neededBy: exe,
      path: join(t.dir, "libcuda.so.1"),
    });
    // Resolved libraries were read in turn: libc's own NEEDED (the dynamic loader) is listed.
    const libc = libs.find((l) => l.name === "libc.so.6" && l.neededBy === exe);
    expect(libc?.path).toBeDefined();
    expect(libs.some((l) => l.neededBy === libc!.path)).toBe(true);
  });
});

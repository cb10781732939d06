/** Finding 5 (docs/security.md): only allowed workspace roots; system locations refused unless listed. */
import { describe, expect, it } from "vitest";
import {
  refuseWorkspaceRoot,
  defaultWorkspaceRoots,
  workspaceRootsFromEnv,
} from "../../protocol/util/workspace-roots.js";
import { agentEnvironment } from "../../orchestrator/core/agent-env.js";
import { parseConfig } from "../../orchestrator/core/config.js";
import { invokeHttp } from "../../protocol/transport/client.js";
import { DIST, servedAgent, tempDir, withEnv } from "../helpers.js";
import { join } from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";

const summarize = servedAgent(join(DIST, "agents/summarize/main.js"));
const search = servedAgent(join(DIST, "agents/search/main.js"));

describe("workspace roots", () => {
  it("refuses /, /etc, /root, /proc and other users' homes by default, with AIP_ERR_FORBIDDEN_PATH", async () => {
    for (const root of ["/", "/etc", "/root", "/proc", "/home/someone-else"]) {
      const s = await invokeHttp(summarize.socket, {
        action: "summarize",
        context: { workspace_root: root, file_path: "passwd" },
        constraints: {},
      });
      expect(s.status, root).toBe(403);
      expect(s.json.error, root).toMatchObject({ type: "AIP_ERR_FORBIDDEN_PATH" });
      const q = await invokeHttp(search.socket, {
        action: "search",
        context: { workspace_root: root, query: "password" },
        constraints: {},
      });
      expect(q.status, root).toBe(403); // judged before existence: no oracle for paths outside the roots
    }
    const etc = await invokeHttp(search.socket, {
      action: "search",
      context: { workspace_root: "/etc", query: "root" },
      constraints: {},
    });
    expect((etc.json.error as { detail: string }).detail).toMatch(
      /"\/etc" is not allowed: \/etc is not inside an allowed workspace root/,
    );
  });

  it("serves a workspace inside an allowed root", async () => {
    const t = tempDir("aiproot-");
    try {
      mkdirSync(join(t.dir, "src"));
      writeFileSync(join(t.dir, "src/a.ts"), "export function allowedRootProbe() {}\n");
      const s = await invokeHttp(summarize.socket, {
        action: "summarize",
        context: { workspace_root: t.dir, file_path: "src/a.ts" },
        constraints: {},
      });
      expect(JSON.stringify(s.json.payload)).toContain("allowedRootProbe");
    } finally {
      t.cleanup();
    }
  });

  it("a system location is allowed only when an allowed root names it", async () => {
    expect(refuseWorkspaceRoot("/etc", ["/"])).toMatch(
      /inside \/etc, which is refused unless an allowed workspace root names it/,
    );
    expect(refuseWorkspaceRoot("/", ["/tmp"])).toMatch(/not inside an allowed workspace root/);
    expect(refuseWorkspaceRoot("/srv/code/app", ["/srv/code"])).toBeUndefined();
    expect(refuseWorkspaceRoot("/etc/nginx", ["/etc/nginx"])).toBeUndefined();
    expect(refuseWorkspaceRoot("/home/alice/p", ["/home/alice"])).toBeUndefined();
    expect(refuseWorkspaceRoot("/home/bob/p", ["/home/alice"])).toMatch(/not inside an allowed/);
    // root's home is a system location: not a default root.
    expect(defaultWorkspaceRoots("/root")).not.toContain("/root");
    expect(defaultWorkspaceRoots("/home/alice")).toContain("/home/alice");
  });

  it("listed roots add to the defaults; AIP_WORKSPACE_ROOTS_DEFAULTS=off (config workspace_roots_defaults) replaces them", async () => {
    await withEnv(
      { AIP_WORKSPACE_ROOTS: "/srv/code:relative:/srv/other", AIP_WORKSPACE_ROOTS_DEFAULTS: undefined },
      async () => {
        const roots = workspaceRootsFromEnv();
        expect(roots).toEqual([...defaultWorkspaceRoots(), "/srv/code", "/srv/other"]);
        expect(roots).toContain("/tmp");
      },
    );
    await withEnv({ AIP_WORKSPACE_ROOTS: "/srv/code", AIP_WORKSPACE_ROOTS_DEFAULTS: "off" }, async () => {
      expect(workspaceRootsFromEnv()).toEqual(["/srv/code"]);
    });
    const cfg = (raw: object, env: NodeJS.ProcessEnv) =>
      withEnv({ AIP_WORKSPACE_ROOTS: undefined, AIP_WORKSPACE_ROOTS_DEFAULTS: undefined }, async () =>
        parseConfig({ agents: [{ name: "a", command: ["a"], manifest: "a.json" }], ...raw }, "/srv", env),
      );
    expect((await cfg({}, { AIP_WORKSPACE_ROOTS: "/srv/x" })).workspaceRoots).toEqual([
      ...defaultWorkspaceRoots(),
      "/srv/x",
    ]);
    expect((await cfg({ workspace_roots: ["/srv/x"], workspace_roots_defaults: false }, {})).workspaceRoots).toEqual([
      "/srv/x",
    ]);
    expect(
      (await cfg({}, { AIP_WORKSPACE_ROOTS: "/srv/x", AIP_WORKSPACE_ROOTS_DEFAULTS: "off" })).workspaceRoots,
    ).toEqual(["/srv/x"]);
    // systemd mode has no defaults: the list is the whole of it.
    expect((await cfg({ mode: "systemd" }, { AIP_WORKSPACE_ROOTS: "/srv/x" })).workspaceRoots).toEqual(["/srv/x"]);
    // An agent gets the merged list with its defaults off, so it allows exactly the orchestrator's list.
    const env = agentEnvironment({ env: {}, workspaceRoots: ["/srv/x"] }, { PATH: "/usr/bin" });
    expect(workspaceRootsFromEnv(env)).toEqual(["/srv/x"]);
  });

  it("a refusal names the setting, the process that reads it and when", async () => {
    const s = await invokeHttp(summarize.socket, {
      action: "summarize",
      context: { workspace_root: "/srv/elsewhere", source_code: "export const a = 1;\n" },
      constraints: {},
    });
    const error = s.json.error as { suggestion: string; allowed_roots: string[] };
    expect(error.suggestion).toMatch(/AIP_WORKSPACE_ROOTS=\/srv\/elsewhere/);
    expect(error.suggestion).toMatch(/adds to the defaults/);
    expect(error.suggestion).toMatch(/read at start/);
    expect(error.suggestion).toMatch(/aip reload/);
    expect(error.allowed_roots).toContain("/tmp");
  });
});

/** Finding 5 (docs/security.md): only allowed workspace roots; system locations refused unless listed. */
import { describe, expect, it } from "vitest";
import { refuseWorkspaceRoot, defaultWorkspaceRoots } from "../../protocol/util/workspace-roots.js";
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
    await withEnv({ AIP_WORKSPACE_ROOTS: "/srv/code" }, async () => {
      const { workspaceRootsFromEnv } = await import("../../protocol/util/workspace-roots.js");
      expect(workspaceRootsFromEnv()).toEqual(["/srv/code"]);
    });
  });
});

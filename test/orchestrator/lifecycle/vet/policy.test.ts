import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_POLICY,
  DEFAULT_POLICY_PATH,
  expandPath,
  loadPolicy,
  matchesLibrary,
  underPattern,
} from "../../../../orchestrator/lifecycle/vet/policy.js";
import { ROOT, tempDir } from "../../../helpers.js";

describe("vet policy", () => {
  const t = tempDir("aipvp-");
  afterAll(() => t.cleanup());

  it("the checked-in manifests/vet-policy.json is exactly the documented defaults", () => {
    expect(DEFAULT_POLICY_PATH).toBe(join(ROOT, "manifests/vet-policy.json"));
    expect(JSON.parse(readFileSync(DEFAULT_POLICY_PATH, "utf8"))).toEqual(DEFAULT_POLICY);
    expect(loadPolicy()).toEqual(DEFAULT_POLICY);
  });

  it("fills missing fields with the defaults", () => {
    const f = join(t.dir, "p.json");
    writeFileSync(f, JSON.stringify({ allow_gpu: true, socket_dirs: ["/srv/sock"] }));
    expect(loadPolicy(f)).toEqual({ ...DEFAULT_POLICY, allow_gpu: true, socket_dirs: ["/srv/sock"] });
  });

  it("rejects an invalid file naming each bad path", () => {
    const f = join(t.dir, "bad.json");
    writeFileSync(f, JSON.stringify({ allow_gpu: "yes", write_roots: [1], extra: 1 }));
    expect(() => loadPolicy(f)).toThrow(/\n {2}allow_gpu: /);
    expect(() => loadPolicy(f)).toThrow(/\n {2}write_roots\[0\]: /);
    expect(() => loadPolicy(f)).toThrow(/extra/);
    writeFileSync(f, "{not json");
    expect(() => loadPolicy(f)).toThrow(/expected a JSON object/);
  });

  it("expands ~/, $HOME and $TMPDIR against the scratch directories", () => {
    const s = { home: "/s/home", tmpdir: "/s/tmp" };
    expect(expandPath("~/.ssh", s)).toEqual(expect.arrayContaining(["/s/home/.ssh", "/root/.ssh", "/home/*/.ssh"]));
    expect(expandPath("$TMPDIR", s)).toEqual(["/s/tmp"]);
    expect(expandPath("$HOME/x", s)).toEqual(["/s/home/x"]);
    expect(expandPath("$HOMEX", s)).toEqual(["$HOMEX"]);
  });

  it("matches paths segment-wise, never by substring", () => {
    expect(underPattern("/home/*/.ssh", "/home/ann/.ssh/id_rsa")).toBe(true);
    expect(underPattern("/home/*/.ssh", "/home/ann/.sshx")).toBe(false);
    expect(underPattern("/etc/shadow", "/etc/shadow")).toBe(true);
    expect(underPattern("/etc/shadow", "/etc/shadow.bak")).toBe(false);
    expect(underPattern("/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_ed25519_key")).toBe(true);
    expect(underPattern("/etc/ssh/ssh_host_*_key", "/etc/ssh/ssh_host_ed25519_key.pub")).toBe(false);
    expect(matchesLibrary(DEFAULT_POLICY.gpu_libraries, "/usr/lib/x86_64-linux-gnu/libcuda.so.1")).toBe(true);
    expect(matchesLibrary(DEFAULT_POLICY.gpu_libraries, "/opt/libnvidia-ml.so.535")).toBe(true);
    expect(matchesLibrary(DEFAULT_POLICY.gpu_libraries, "/usr/lib/libcudaish-helper.a")).toBe(false);
    expect(matchesLibrary(DEFAULT_POLICY.gpu_libraries, "libc.so.6")).toBe(false);
  });
});

import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderAll, writeRendered } from "../../../tools/systemd/render.js";
import { ROOT, tempDir } from "../../helpers.js";
import { exposure, fakePackage, manifest, sh } from "./helpers.js";

/** Units rendered for this checkout (so every ExecStart exists), checked by systemd-analyze offline. */
describe("systemd-analyze on the rendered units", () => {
  const t = tempDir("aipsa-");
  const out = join(t.dir, "units");
  let instances: string[] = [];
  beforeAll(() => {
    const files = renderAll({ installDir: ROOT, node: process.execPath });
    writeRendered(out, files);
    instances = readFileSync(join(out, "agents.list"), "utf8").split("\n").filter(Boolean);
  });
  afterAll(() => t.cleanup());

  it("verify: the orchestrator and every agent instance (template + drop-in) load without a warning", () => {
    expect(instances).toContain("summarize");
    for (const unit of [
      "aip-orchestrator.service",
      "aip-orchestrator.socket",
      ...instances.map((i) => `aip-agent@${i}.service`),
    ]) {
      const r = sh("systemd-analyze", ["verify", `./${unit}`], { cwd: out });
      expect(r.stderr + r.stdout, unit).toBe("");
      expect(r.status, unit).toBe(0);
    }
  });

  it("verify reads the drop-ins (a broken ExecStart there is reported)", () => {
    const broken = join(t.dir, "broken");
    const files = renderAll({ installDir: join(t.dir, "nowhere"), node: process.execPath });
    writeRendered(broken, files);
    const r = sh("systemd-analyze", ["verify", "./aip-agent@search.service"], { cwd: broken });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/nowhere\/dist\/agents\/search\/main\.js is not executable/);
  });

  it("exposure: ≤ 1.0 for every agent unit and for the orchestrator", () => {
    const scores: Record<string, number> = { "aip-orchestrator.service": exposure("./aip-orchestrator.service", out) };
    for (const i of instances) scores[`aip-agent@${i}.service`] = exposure(`./aip-agent@${i}.service`, out);
    console.log(`systemd-analyze security --offline=true: ${JSON.stringify(scores)}`);
    expect(scores["aip-orchestrator.service"]).toBeLessThanOrEqual(1.0);
    for (const i of instances) expect(scores[`aip-agent@${i}.service`], i).toBeLessThanOrEqual(1.0);
  });

  it("with --probe-port the orchestrator still verifies; its exposure (loopback opened) stays ≤ 2.0", () => {
    const probed = join(t.dir, "probed");
    writeRendered(probed, renderAll({ installDir: ROOT, node: process.execPath, probePort: 9464 }));
    const r = sh("systemd-analyze", ["verify", "./aip-orchestrator.service"], { cwd: probed });
    expect(r.stderr + r.stdout).toBe("");
    const score = exposure("./aip-orchestrator.service", probed);
    console.log(`orchestrator exposure with --probe-port: ${score}`);
    expect(score).toBeLessThanOrEqual(2.0);
  });

  it("exposure of a GPU agent (devices opened) stays ≤ 1.0", () => {
    const root = fakePackage(join(t.dir, "pkg"), [manifest("infer", { gpu: true })]);
    const gpuOut = join(t.dir, "gpu");
    writeRendered(gpuOut, renderAll({ installDir: root, node: process.execPath, root }));
    const r = sh("systemd-analyze", ["verify", "./aip-agent@infer.service"], { cwd: gpuOut });
    expect(r.stderr + r.stdout).toBe("");
    const score = exposure("./aip-agent@infer.service", gpuOut);
    console.log(`GPU agent exposure: ${score}`);
    expect(score).toBeLessThanOrEqual(1.0);
  });

  it("sysusers.d and tmpfiles.d apply in an offline root: aip, aip-users, /run/aip/agents 0750 aip:aip-users", () => {
    const root = join(t.dir, "root");
    mkdirSync(join(root, "etc"), { recursive: true });
    const su = sh("systemd-sysusers", [`--root=${root}`, join(out, "aip.sysusers.conf")]);
    expect(su.status, su.stderr).toBe(0);
    const passwd = readFileSync(join(root, "etc/passwd"), "utf8");
    const group = readFileSync(join(root, "etc/group"), "utf8");
    const uid = Number(/^aip:x:(\d+):/m.exec(passwd)?.[1]);
    const usersGid = Number(/^aip-users:x:(\d+):(.*)$/m.exec(group)?.[1]);
    expect(/^aip-users:x:\d+:aip$/m.test(group)).toBe(true);
    const tf = sh("systemd-tmpfiles", [`--root=${root}`, "--create", join(out, "aip.tmpfiles.conf")]);
    expect(tf.status, tf.stderr).toBe(0);
    for (const d of ["run/aip", "run/aip/agents"]) {
      const st = statSync(join(root, d));
      expect([st.mode & 0o7777, st.uid, st.gid], d).toEqual([0o750, uid, usersGid]);
    }
  });
});

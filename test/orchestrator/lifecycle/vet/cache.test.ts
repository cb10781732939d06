import { appendFileSync, copyFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileIdentity, fingerprint, keyedEnv, sha256File } from "../../../../orchestrator/lifecycle/vet/cache.js";
import { DEFAULT_POLICY, VetCache, vetAgent } from "../../../../orchestrator/lifecycle/vet/index.js";
import { SANDBOX_HIDE_ENV, TRUST_FILE_ENV, TRUST_FILE_NAME } from "../../../../protocol/util/trust-env.js";
import { tempDir } from "../../../helpers.js";
import { CORPUS } from "./helpers.js";

describe("vetting cache and could-not-vet", () => {
  const t = tempDir("aipvc-");
  afterAll(() => t.cleanup());

  it("reuses a verdict while path, size, sha256 and policy are unchanged; persists it to a file", async () => {
    const exe = join(t.dir, "agent.sh");
    copyFileSync(join(CORPUS, "good-shell.sh"), exe);
    const file = join(t.dir, "cache/vet.json");
    const cache = new VetCache(file);
    const first = await vetAgent(exe, { cache });
    expect(first.ok).toBe(true);
    expect(first.cached).toBeUndefined();
    const second = await vetAgent(exe, { cache });
    expect(second.cached).toBe(true);
    expect(second.sha256).toBe(first.sha256);

    // A restarted orchestrator reads the same verdict from the file.
    expect((await vetAgent(exe, { cache: new VetCache(file) })).cached).toBe(true);

    // A rebuild that writes the same bytes (a new mtime) keeps the verdict; another policy or new content does not.
    utimesSync(exe, new Date(), new Date(Date.now() + 5000));
    expect((await vetAgent(exe, { cache })).cached).toBe(true);
    expect((await vetAgent(exe, { cache, policy: { ...DEFAULT_POLICY, allow_gpu: true } })).cached).toBeUndefined();
    appendFileSync(exe, "# changed\n");
    expect((await vetAgent(exe, { cache })).cached).toBeUndefined();
  });

  it("hashes an interpreter-chain file again once it is written, even with its old mtime put back", async () => {
    const exe = join(t.dir, "chain-agent.sh");
    const interpreter = join(t.dir, "interpreter");
    copyFileSync(join(CORPUS, "good-shell.sh"), exe);
    writeFileSync(interpreter, "the interpreter, first build\n");
    const first = await fingerprint(exe, [interpreter]);
    expect(first.chain[interpreter]).toBe(await sha256File(interpreter));
    expect((await fingerprint(exe, [interpreter])).chain).toEqual(first.chain);
    const then = new Date(Date.now() - 60_000);
    utimesSync(interpreter, then, then);
    const before = await fingerprint(exe, [interpreter]);
    writeFileSync(interpreter, "the interpreter, swapped\n");
    utimesSync(interpreter, then, then);
    const after = await fingerprint(exe, [interpreter]);
    expect(after.chain[interpreter]).toBe(await sha256File(interpreter));
    expect(after.chain[interpreter]).not.toBe(before.chain[interpreter]);
  });

  it("carries an interpreter's hash over to the next start while its identity holds, never past a write", async () => {
    const exe = join(t.dir, "carried-agent.sh");
    const interpreter = join(t.dir, "carried-interpreter");
    copyFileSync(join(CORPUS, "good-shell.sh"), exe);
    writeFileSync(interpreter, "the interpreter\n");
    const file = join(t.dir, "cache-carried/vet.json");
    const cache = new VetCache(file);
    const fp = await fingerprint(exe, [interpreter]);
    cache.set(exe, fp, "a".repeat(64), await vetAgent(exe, { cache: new VetCache() }));
    // A restart reads the file: the hash recorded at this identity comes back without reading the file.
    const restarted = new VetCache(file);
    expect(restarted.chainHash(interpreter, fileIdentity(interpreter))).toBe(await sha256File(interpreter));
    // What the cache answers is taken as the hash: the file is not read for it.
    const unread = join(t.dir, "carried-unread-interpreter");
    writeFileSync(unread, "another interpreter\n");
    const asked: string[] = [];
    const carried = await fingerprint(exe, [unread], (path, identity) => {
      asked.push(`${path} ${identity}`);
      return "f".repeat(64);
    });
    expect(carried.chain[unread]).toBe("f".repeat(64));
    expect(asked).toEqual([`${unread} ${fileIdentity(unread)}`]);
    // Written (even with its old times put back): another identity, nothing recorded for it, hashed anew.
    const then = new Date(Date.now() - 60_000);
    utimesSync(interpreter, then, then);
    writeFileSync(interpreter, "the interpreter, swapped\n");
    utimesSync(interpreter, then, then);
    expect(restarted.chainHash(interpreter, fileIdentity(interpreter))).toBeUndefined();
    const after = await fingerprint(exe, [interpreter], restarted.chainHash);
    expect(after.chain[interpreter]).toBe(await sha256File(interpreter));
    expect(after.chainIds?.[interpreter]).toBe(fileIdentity(interpreter));
    expect(after.chainIds?.[interpreter]).not.toBe(fp.chainIds?.[interpreter]);
  });

  it("keeps a verdict across starts from another shell, unit or editor, and hidden socket directories", async () => {
    const exe = join(t.dir, "agent2.sh");
    copyFileSync(join(CORPUS, "good-shell.sh"), exe);
    const file = join(t.dir, "cache2/vet.json");
    const base = { PATH: "/usr/bin:/bin", HOME: t.dir, AIP_LOG_LEVEL: "info" };
    const start = (env: Record<string, string>, hide: string[]) =>
      vetAgent(exe, { cache: new VetCache(file), env: { ...base, ...env }, layout: { hide } });
    // What the orchestrator tells an agent about its own directories (agentEnvironment): new each start of
    // an embedded agency.
    const own = (dir: string) => ({
      [SANDBOX_HIDE_ENV]: [join(dir, "state"), dir, join(dir, "agents")].join(":"),
      [TRUST_FILE_ENV]: join(dir, "state", TRUST_FILE_NAME),
    });
    expect(
      (
        await start({ INVOCATION_ID: "a1", SHLVL: "1", AIP_WORKSPACE_ROOTS: "/tmp", ...own(join(t.dir, "s1")) }, [
          join(t.dir, "s1"),
        ])
      ).cached,
    ).toBeUndefined();
    // A systemd restart, another terminal, an editor that allows its folder, an embedded agency's new directory:
    const again = await start(
      {
        INVOCATION_ID: "b2",
        SHLVL: "3",
        SSH_CONNECTION: "10.0.0.1 5 10.0.0.2 22",
        NVIM: "/run/user/0/nvim.42.0",
        npm_lifecycle_event: "start",
        AIP_WORKSPACE_ROOTS: "/tmp:/srv/x",
        ...own(join(t.dir, "s2")),
      },
      [join(t.dir, "s2")],
    );
    expect(again.cached).toBe(true);
    // A variable that can change what the agent does is part of the key.
    expect((await start({ AIP_MODEL: "/models/x.gguf" }, [])).cached).toBeUndefined();
    expect(keyedEnv({ B: "1", INVOCATION_ID: "x", SSH_TTY: "/dev/pts/1", A: "2" })).toEqual({ A: "2", B: "1" });
  });

  it("cannot vet without strace, says how to install it, and caches nothing", async () => {
    const cache = new VetCache();
    const report = await vetAgent(join(CORPUS, "good-shell.sh"), { cache, tools: { strace: "/nonexistent/strace" } });
    expect(report).toMatchObject({ ok: false, couldNotVet: true, checks: [] });
    expect(report.reasons[0]).toMatch(/strace is not installed.*apt-get install -y strace/);
    expect(report.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(cache.size).toBe(0);
  });

  it("rejects a path that does not exist as a failed executable check, not a crash", async () => {
    const report = await vetAgent(join(t.dir, "nope"));
    expect(report.ok).toBe(false);
    expect(report.couldNotVet).toBe(false);
    expect(report.reasons).toEqual([expect.stringMatching(/^executable: .*does not exist/)]);
  });
});

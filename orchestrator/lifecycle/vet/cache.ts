/**
 * Vetting results cached by the sha256 of the executable and of every file in its interpreter chain,
 * and by the policy they were judged by: an unchanged agent is not traced again. Persisted to a JSON
 * file so that a restarted orchestrator keeps its verdicts. Each entry carries an HMAC-SHA256 made with
 * a key kept 0600 beside the file; an entry that is unsigned, wrongly signed or not of the expected
 * shape is dropped (the agent is vetted again), never trusted and never fatal. "Could not vet" results
 * are never cached. docs/security.md, "Vetting".
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream, readFileSync, statSync } from "node:fs";
import { z } from "zod";
import { SANDBOX_HIDE_ENV, TRUST_FILE_ENV } from "../../../protocol/util/trust-env.js";
import { secretKey, writeFileAtomic } from "../../core/state-file.js";
import type { VetReport } from "./report.js";

export interface Fingerprint {
  size: number;
  mtimeMs: number;
  /** sha256 of the executable. */
  sha256: string;
  /** sha256 of each further file of the interpreter chain, by path. */
  chain: Record<string, string>;
  /** The identity (fileIdentity) each chain file had when hashed, by path: a restart reuses the hash while it holds. */
  chainIds?: Record<string, string>;
}

/** Where a chain file's hash may already be known: its sha256 when `identity` is the one it was hashed at. */
export type KnownHash = (path: string, identity: string) => string | undefined;

/** sha256 of a file, streamed. */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (c) => hash.update(c))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

/** Chain files hashed by this process, by path, with the identity (inode, size, times) they had. */
const chainHashes = new Map<string, { identity: string; sha256: Promise<string> }>();

/** A file's identity: device, inode, size, mtime and ctime. Any write changes its ctime, which no user can set back. */
export function fileIdentity(path: string): string {
  const st = statSync(path);
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/**
 * sha256 of an interpreter-chain file, hashed once while its identity holds: every agent shares the
 * interpreter (a large binary), and the agents are vetted at once at each start. `known` carries the
 * hash over from an earlier start (the signed cache), so a restart hashes the interpreter only when
 * it changed.
 */
function chainFileSha256(path: string, identity: string, known?: KnownHash): Promise<string> {
  const had = chainHashes.get(path);
  if (had?.identity === identity) return had.sha256;
  const carried = known?.(path, identity);
  const sha256 = carried !== undefined ? Promise.resolve(carried) : sha256File(path);
  chainHashes.set(path, { identity, sha256 });
  sha256.catch(() => chainHashes.delete(path));
  return sha256;
}

/** Size, mtime and content hash of `path`, and the hashes (and identities) of the interpreter chain's files. */
export async function fingerprint(
  path: string,
  chain: readonly string[] = [],
  known?: KnownHash,
): Promise<Fingerprint> {
  const st = statSync(path);
  const hashes: Record<string, string> = {};
  const ids: Record<string, string> = {};
  for (const p of chain) {
    ids[p] = fileIdentity(p);
    hashes[p] = await chainFileSha256(p, ids[p], known);
  }
  return { size: st.size, mtimeMs: st.mtimeMs, sha256: await sha256File(path), chain: hashes, chainIds: ids };
}

const FingerprintSchema = z.strictObject({
  size: z.number().int().min(0),
  mtimeMs: z.number(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  chain: z.record(z.string(), z.string().regex(/^[0-9a-f]{64}$/)),
  chainIds: z.record(z.string(), z.string()).optional(),
});

/** What a cached report must look like to be used at all (the signature is checked first). */
const ReportSchema = z.looseObject({
  ok: z.boolean(),
  couldNotVet: z.literal(false),
  executable: z.string(),
  sha256: z.string(),
  checks: z.array(z.looseObject({ name: z.string(), ok: z.boolean(), violations: z.array(z.unknown()) })),
  reasons: z.array(z.string()),
  interpreter: z.array(z.string()),
  libraries: z.array(z.unknown()),
  addons: z.array(z.string()),
  durationMs: z.number(),
  vettedAt: z.string(),
});

const EntrySchema = z.strictObject({
  fingerprint: FingerprintSchema,
  policyKey: z.string().regex(/^[0-9a-f]{64}$/),
  report: ReportSchema,
  mac: z.string().regex(/^[0-9a-f]{64}$/),
});

interface Entry {
  fingerprint: Fingerprint;
  policyKey: string;
  report: VetReport;
  mac: string;
}

export class VetCache {
  private readonly entries = new Map<string, Entry>();
  private readonly key: Buffer;
  /** Entries of the file that were dropped (unsigned, wrongly signed, malformed), with why. */
  readonly rejected: { path: string; reason: string }[] = [];

  /**
   * `file`: where to persist (read now, written 0600 after each change); omit for memory only.
   * `keyFile`: the MAC key (default `<file>.key`, created 0600 when absent).
   */
  constructor(
    private readonly file?: string,
    keyFile?: string,
  ) {
    this.key = file ? secretKey(keyFile ?? `${file}.key`) : secretKeyInMemory();
    if (!file) return;
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      return; // no cache yet, or an unreadable one: start empty
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      this.rejected.push({ path: "*", reason: "the cache file is not a JSON object" });
      return;
    }
    for (const [path, raw] of Object.entries(data)) {
      const parsed = EntrySchema.safeParse(raw);
      if (!parsed.success) {
        this.rejected.push({ path, reason: `malformed entry: ${parsed.error.issues[0]?.message ?? "?"}` });
        continue;
      }
      // The MAC is checked on the entry as stored (key order as written), the shape by the schema.
      const e = raw as Entry;
      if (!this.verify(path, e)) {
        this.rejected.push({ path, reason: "bad signature" });
        continue;
      }
      this.entries.set(path, e);
    }
  }

  private mac(path: string, e: Omit<Entry, "mac">): string {
    return createHmac("sha256", this.key)
      .update(JSON.stringify([path, e.fingerprint, e.policyKey, e.report]))
      .digest("hex");
  }

  private verify(path: string, e: Entry): boolean {
    const want = Buffer.from(this.mac(path, e), "hex");
    const got = Buffer.from(e.mac, "hex");
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /** The cached report when the executable, its interpreter chain and the policy all match. */
  get(path: string, fp: Fingerprint, policyKey: string): VetReport | undefined {
    const e = this.entries.get(path);
    if (!e || e.policyKey !== policyKey) return undefined;
    const f = e.fingerprint;
    // The content decides, not the mtime: a rebuild that writes the same bytes keeps the verdict.
    const same = f.size === fp.size && f.sha256 === fp.sha256 && JSON.stringify(f.chain) === JSON.stringify(fp.chain);
    return same ? e.report : undefined;
  }

  /** The sha256 a cached verdict recorded for chain file `path` when it had `identity` (see KnownHash). */
  readonly chainHash: KnownHash = (path, identity) => {
    for (const e of this.entries.values())
      if (e.fingerprint.chainIds?.[path] === identity) return e.fingerprint.chain[path];
    return undefined;
  };

  set(path: string, fp: Fingerprint, policyKey: string, report: VetReport): void {
    if (report.couldNotVet) return;
    const { cached: _cached, ...plain } = report;
    const e = { fingerprint: fp, policyKey, report: plain };
    this.entries.set(path, { ...e, mac: this.mac(path, e) });
    this.save();
  }

  delete(path: string): void {
    if (this.entries.delete(path)) this.save();
  }

  get size(): number {
    return this.entries.size;
  }

  private save(): void {
    if (!this.file) return;
    writeFileAtomic(this.file, JSON.stringify(Object.fromEntries(this.entries)));
  }
}

/**
 * Variables that differ from one session or start to the next without choosing what code runs: the
 * terminal's, the service manager's, npm's, the editor's, the roots list (which only decides what
 * requests an agent accepts), and where the agency's own directories are (hidden from the agent's
 * sandboxes; the trust file `aip trust` writes), which an embedded agency makes anew at each start. They
 * still reach the agent; they are left out of the cache key, so that a restart from another shell, unit
 * or editor keeps the verdicts.
 */
export const VOLATILE_ENV = [
  "AIP_WORKSPACE_ROOTS",
  "AIP_WORKSPACE_ROOTS_DEFAULTS",
  SANDBOX_HIDE_ENV,
  TRUST_FILE_ENV,
  "INVOCATION_ID",
  "JOURNAL_STREAM",
  "SYSTEMD_EXEC_PID",
  "MANAGERPID",
  "SSH_*",
  "XDG_SESSION_*",
  "XDG_VTNR",
  "TERM_SESSION_ID",
  "WINDOWID",
  "SHLVL",
  "OLDPWD",
  "PWD",
  "_",
  "TMUX",
  "TMUX_PANE",
  "STY",
  "GPG_TTY",
  "HOSTNAME",
  "COLUMNS",
  "LINES",
  "INIT_CWD",
  "npm_*",
  "NVIM",
  "NVIM_LISTEN_ADDRESS",
  "VSCODE_*",
  "KITTY_*",
  "WEZTERM_*",
  "ALACRITTY_*",
] as const;

/** `env` without VOLATILE_ENV: what a verdict is keyed by. */
export function keyedEnv(env: Record<string, string>): Record<string, string> {
  const volatile = (k: string): boolean =>
    VOLATILE_ENV.some((p) => (p.endsWith("*") ? k.startsWith(p.slice(0, -1)) : k === p));
  return Object.fromEntries(
    Object.entries(env)
      .filter(([k]) => !volatile(k))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

let memoryKey: Buffer | undefined;
function secretKeyInMemory(): Buffer {
  memoryKey ??= randomBytes(32);
  return memoryKey;
}

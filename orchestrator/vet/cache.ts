/**
 * Vetting results cached by executable path, size, mtime and sha256 (and the policy they were judged
 * by): an unchanged agent is not traced again. Optionally persisted to a JSON file, so that a restarted
 * orchestrator keeps its verdicts. "Could not vet" results are never cached.
 */
import { createHash } from "node:crypto";
import { createReadStream, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { VetReport } from "./report.js";

export interface Fingerprint {
  size: number;
  mtimeMs: number;
  sha256: string;
}

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

/** Size, mtime and content hash of `path`. */
export async function fingerprint(path: string): Promise<Fingerprint> {
  const st = statSync(path);
  return { size: st.size, mtimeMs: st.mtimeMs, sha256: await sha256File(path) };
}

interface Entry {
  fingerprint: Fingerprint;
  policyKey: string;
  report: VetReport;
}

export class VetCache {
  private readonly entries = new Map<string, Entry>();

  /** `file`: where to persist (read now, written after each change); omit for memory only. */
  constructor(private readonly file?: string) {
    if (!file) return;
    try {
      const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, Entry>;
      for (const [k, e] of Object.entries(data)) this.entries.set(k, e);
    } catch {
      // no cache yet, or an unreadable one: start empty
    }
  }

  /** The cached report when path, size, mtime, sha256 and policy all match. */
  get(path: string, fp: Fingerprint, policyKey: string): VetReport | undefined {
    const e = this.entries.get(path);
    if (!e || e.policyKey !== policyKey) return undefined;
    const same = e.fingerprint.size === fp.size && e.fingerprint.mtimeMs === fp.mtimeMs && e.fingerprint.sha256 === fp.sha256;
    return same ? e.report : undefined;
  }

  set(path: string, fp: Fingerprint, policyKey: string, report: VetReport): void {
    if (report.couldNotVet) return;
    this.entries.set(path, { fingerprint: fp, policyKey, report });
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
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.entries)));
    renameSync(tmp, this.file);
  }
}

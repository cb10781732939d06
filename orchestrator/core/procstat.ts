/** A process's CPU time and resident memory from /proc (Linux): per-agent metrics, benchmarks, tests. */
import { readFileSync } from "node:fs";

/** /proc reports CPU times in USER_HZ ticks, fixed at 100 per second on Linux (proc(5)). */
const USER_HZ = 100;

export interface ProcessStats {
  /** User + system CPU time, seconds. */
  cpuSeconds: number;
  /** Resident set size, bytes. */
  rssBytes: number;
  /**
   * The main thread's state letter (proc(5)): "R" running or waiting for a core, "S" sleeping (an idle
   * event loop), "D" in an uninterruptible wait, "T" stopped, "Z" a zombie.
   */
  state: string;
}

/** CPU time and RSS of `pid`; null when the process is gone (or /proc is not there). */
export function processStats(pid: number): ProcessStats | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces and parentheses) start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of proc(5))
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return { cpuSeconds: ticks / USER_HZ, rssBytes: rss ? Number(rss[1]) * 1024 : 0, state: fields[0] ?? "" };
  } catch {
    return null;
  }
}

/** Resident set size of a process in MiB (0 when it is gone). */
export function rssMiB(pid: number): number {
  return (processStats(pid)?.rssBytes ?? 0) / (1024 * 1024);
}

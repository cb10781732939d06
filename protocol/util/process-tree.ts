/**
 * Process trees from /proc: what a sandboxed run (vetting's, a workspace runner's) has used, and how to
 * kill it whole. Linux only, like the sandboxes that use it.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux
const PAGE_KB = 4;

export interface ProcEntry {
  ppid: number;
  state: string;
  /** Own utime + stime, plus what its reaped children used (cutime + cstime). */
  ticks: number;
  /** Resident set size in KiB. */
  rssKb: number;
}

/** Every process in /proc: parent, state, CPU ticks and resident size. */
export function procTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return table;
  }
  for (const e of entries) {
    const entry = entryOf(Number(e));
    if (entry) table.set(Number(e), entry); // else it exited meanwhile
  }
  return table;
}

/** One process's entry from /proc/`pid`/stat, or undefined when it is gone. */
function entryOf(pid: number): ProcEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Fields after the parenthesised command (which may contain spaces): state ppid … utime(14) stime cutime cstime … rss(24).
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  return { ppid: Number(f[1]), state: f[0]!, ticks, rssKb: Number(f[21]) * PAGE_KB };
}

let childrenListed: boolean | undefined;

/**
 * `pid` and its descendants only, found through each thread's /proc/…/children list: a limit check
 * reads a few files instead of every process on the host. Where the kernel has no such lists, the
 * whole table. A child started or ended during the walk may be missed once; the next poll sees it.
 */
export function subtreeTable(pid: number): Map<number, ProcEntry> {
  childrenListed ??= existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
  if (!childrenListed) return procTable();
  const table = new Map<number, ProcEntry>();
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (table.has(p)) continue;
    const entry = entryOf(p);
    if (!entry) continue;
    table.set(p, entry);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        for (const c of readFileSync(`/proc/${p}/task/${t}/children`, "utf8").split(" ")) if (c) stack.push(Number(c));
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return table;
}

/** `pid` and its descendants in `table`. */
export function tree(table: Map<number, ProcEntry>, pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [p, { ppid }] of table) {
    const list = children.get(ppid);
    if (list) list.push(p);
    else children.set(ppid, [p]);
  }
  const out: number[] = [];
  const stack = [pid];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out.filter((p) => table.has(p) || p === pid);
}

/** CPU time (ms) used so far by `pid` and every descendant. */
export function treeCpuMs(pid: number, table: Map<number, ProcEntry> = procTable()): number {
  return tree(table, pid).reduce((sum, p) => sum + (table.get(p)?.ticks ?? 0), 0) * TICK_MS;
}

/** Resident memory (KiB) of `pid` and every descendant. */
export function treeRssKb(pid: number, table: Map<number, ProcEntry> = procTable()): number {
  return tree(table, pid).reduce((sum, p) => sum + (table.get(p)?.rssKb ?? 0), 0);
}

/** How long killTree waits for the group leader to stop before it kills what it can see. */
const STOP_WAIT_MS = 200;

/**
 * Kill a sandboxed run whole: `pid`'s process group and every descendant. bwrap's sandbox child starts
 * a session of its own (--new-session), out of the group, and dies with bwrap only once it has set its
 * parent-death signal: killed before that, bwrap would leave it running. So the group is stopped first
 * (it can fork nothing more), then every process under it is killed — the sandbox's first process
 * takes its whole PID namespace with it — and the group last. Synchronous: it also runs in exit hooks.
 * Returns the pids it signalled (they die asynchronously: see stillRunning).
 */
export function killTree(pid: number): number[] {
  signalGroup(pid, "SIGSTOP");
  const end = performance.now() + STOP_WAIT_MS;
  let table = procTable();
  while (/^[RSD]$/.test(table.get(pid)?.state ?? "") && performance.now() < end) table = procTable();
  const pids = tree(table, pid).reverse();
  for (const p of pids) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // already gone
    }
  }
  signalGroup(pid, "SIGKILL");
  return pids;
}

/** The pids of `pids` that still run (not gone, not a zombie). */
export function stillRunning(pids: readonly number[]): number[] {
  return pids.filter((p) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
    } catch {
      return false;
    }
  });
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

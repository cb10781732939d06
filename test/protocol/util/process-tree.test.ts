/** A process's tree as the sandbox's limit checks read it: the subtree alone, the same as the host-wide table's. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { killTree, procTable, subtreeTable, tree } from "../../../protocol/util/process-tree.js";

describe("subtreeTable", () => {
  it("holds the process and its descendants, grandchildren included, and nothing else", async () => {
    // A shell with two children, one of which has a child of its own; "ready" once all of them are forked.
    const sh = spawn("sh", ["-c", "sleep 60 & sh -c 'sleep 60 & wait' & echo ready; wait"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const pid = sh.pid!;
      let out = "";
      while (!out.includes("ready")) out += String((await once(sh.stdout, "data"))[0]);
      // The inner shell forks its sleep on its own: wait until the host-wide table shows all four.
      let all = tree(procTable(), pid);
      while (all.length < 4) all = tree(procTable(), pid);
      const sub = subtreeTable(pid);
      expect([...sub.keys()].sort()).toEqual([...all].sort());
      expect(sub.has(process.pid)).toBe(false);
      expect(sub.get(pid)?.ppid).toBe(process.pid);
      const table = procTable();
      for (const p of all) expect(sub.get(p)?.ppid).toBe(table.get(p)?.ppid);
    } finally {
      killTree(sh.pid!);
    }
  });

  it("is empty for a process that is gone", () => {
    expect(subtreeTable(2 ** 22 + 1).size).toBe(0);
  });
});

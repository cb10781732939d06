/** The host tools vetting needs (strace, readelf): found on PATH and probed once; missing ones say how to install them. */
import { which } from "../../../protocol/util/bwrap.js";
import { execa } from "execa";

export interface Tools {
  strace: string;
  readelf: string;
  /** `strace --seccomp-bpf` works here. */
  seccomp: boolean;
}

const INSTALL: Record<string, string> = { strace: "apt-get install -y strace", readelf: "apt-get install -y binutils" };

export { which };

/** Child processes vetting starts on the host (tool probes, readelf, ldconfig) are killed after this long. */
export const TOOL_TIMEOUT_MS = 10_000;

async function tryStrace(strace: string, seccomp: boolean): Promise<{ ok: boolean; message: string }> {
  const args = [
    "-f",
    "-qq",
    ...(seccomp ? ["--seccomp-bpf"] : []),
    "-e",
    "trace=execve",
    "-o",
    "/dev/null",
    "--",
    "true",
  ];
  const r = await execa(strace, args, { timeout: TOOL_TIMEOUT_MS, reject: false });
  return {
    ok: !r.failed && (r.stderr ?? "").length === 0,
    message: (r.stderr || (r.failed ? (r.message ?? "") : "")).trim(),
  };
}

const probed = new Map<string, Promise<Tools | string>>();

/** The tools, or why vetting cannot run here (with the install command). Probed once per strace/readelf pair. */
export function findTools(names: { strace?: string; readelf?: string } = {}): Promise<Tools | string> {
  const key = `${names.strace ?? "strace"}\0${names.readelf ?? "readelf"}`;
  let p = probed.get(key);
  if (!p) {
    p = probe(names.strace ?? "strace", names.readelf ?? "readelf");
    probed.set(key, p);
    // Only a success is remembered: once the operator installs strace, the next vetting finds it.
    void p.then((r) => typeof r === "string" && probed.delete(key));
  }
  return p;
}

async function probe(straceName: string, readelfName: string): Promise<Tools | string> {
  const strace = which(straceName);
  if (!strace) return `strace is not installed (${straceName} not found); install it: ${INSTALL.strace}`;
  const readelf = which(readelfName);
  if (!readelf) return `readelf is not installed (${readelfName} not found); install it: ${INSTALL.readelf}`;
  const fast = await tryStrace(strace, true);
  if (fast.ok) return { strace, readelf, seccomp: true };
  const plain = await tryStrace(strace, false);
  if (plain.ok) return { strace, readelf, seccomp: false };
  return `strace cannot trace here (${plain.message}); in a container, allow ptrace (e.g. --cap-add SYS_PTRACE)`;
}

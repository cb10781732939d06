/**
 * The operator's vetting policy: a JSON file (default `manifests/vet-policy.json`) whose every field is
 * optional; missing fields take the defaults below. Path entries may use `~/` (the scratch HOME the agent
 * runs with, the invoking user's home, /root and every /home/*), `$TMPDIR` and `$HOME` (the scratch
 * directories), and `*` inside one path segment.
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { posix } from "node:path";
import { z } from "zod";
import { isInside } from "../../../protocol/util/paths.js";
import { formatIssues } from "../../../protocol/contract/schemas.js";

export const VetPolicySchema = z.strictObject({
  /** Directories an agent may connect() to Unix sockets in. /run/aip holds the agency's own sockets. */
  socket_dirs: z.array(z.string().min(1)).optional(),
  /** Where an agent may create, write, rename or delete files. $TMPDIR is the scratch TMPDIR given to it. */
  write_roots: z.array(z.string().min(1)).optional(),
  /** Paths (files or whole trees) an agent must not even try to open. */
  sensitive_paths: z.array(z.string().min(1)).optional(),
  /** Basename globs of GPU and driver libraries: refused as ELF NEEDED entries and as opened files. */
  gpu_libraries: z.array(z.string().min(1)).optional(),
  /** Whether agents that declare `resources.gpu: true` may link the GPU libraries at all. */
  allow_gpu: z.boolean().optional(),
});
export type VetPolicyFile = z.infer<typeof VetPolicySchema>;
export type VetPolicy = { [K in keyof VetPolicyFile]-?: Exclude<VetPolicyFile[K], undefined> };

export const DEFAULT_POLICY: VetPolicy = {
  socket_dirs: ["/run/aip"],
  write_roots: ["$TMPDIR", "/dev/null"],
  sensitive_paths: [
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh/ssh_host_*_key",
    "/etc/ssl/private",
    "/etc/krb5.keytab",
    "/var/lib/aip/secrets",
    "/proc/*/environ",
    "/proc/*/mem",
    "/proc/kcore",
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.kube",
    "~/.config/gcloud",
    "~/.azure",
    "~/.npmrc",
    "~/.pypirc",
    "~/.config/gh",
    "~/.bash_history",
  ],
  gpu_libraries: [
    "libcuda.so*",
    "libnvidia-*",
    "libcudart.so*",
    "libcublas*.so*",
    "libcudnn*.so*",
    "libnvrtc*.so*",
    "libamdhip64.so*",
    "libhsa-runtime64.so*",
    "librocm*.so*",
    "libOpenCL.so*",
    "libvulkan.so*",
    "libze_loader.so*",
  ],
  allow_gpu: false,
};

/** The package root: the nearest directory above this file with a package.json (works from source and dist/). */
function packageRoot(from: string): string {
  for (let dir = from; dir !== "/"; dir = posix.dirname(dir))
    if (existsSync(posix.join(dir, "package.json"))) return dir;
  return from;
}

/** The default policy file, `manifests/vet-policy.json` in the package. */
export const DEFAULT_POLICY_PATH = posix.join(packageRoot(import.meta.dirname), "manifests/vet-policy.json");

/** Read a policy file (missing fields → defaults); without a path, the default file if present, else the defaults. */
export function loadPolicy(path?: string): VetPolicy {
  const file = path ?? (existsSync(DEFAULT_POLICY_PATH) ? DEFAULT_POLICY_PATH : undefined);
  if (file === undefined) return DEFAULT_POLICY;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`Vet policy ${file}: expected a JSON object, got ${(err as Error).message}`);
  }
  const parsed = VetPolicySchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `Vet policy ${file} is invalid:\n${formatIssues(parsed.error)
        .map((e) => `  ${e.path}: ${e.message}`)
        .join("\n")}`,
    );
  }
  const given = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  return { ...DEFAULT_POLICY, ...given };
}

/** The scratch directories one vetting run uses; policy paths are expanded against them. */
export interface Scratch {
  home: string;
  tmpdir: string;
}

/** Expand `~/`, `$HOME` and `$TMPDIR` in a policy path; `~/x` yields several candidates. */
export function expandPath(entry: string, scratch: Scratch): string[] {
  if (entry.startsWith("~/")) {
    const rest = entry.slice(2);
    const homes = new Set([scratch.home, homedir(), "/root", "/home/*"]);
    return [...homes].map((h) => posix.join(h, rest));
  }
  return [entry.replace(/^\$HOME(?=\/|$)/, scratch.home).replace(/^\$TMPDIR(?=\/|$)/, scratch.tmpdir)];
}

/** One path segment against a glob segment (`*` matches any run of characters except `/`). */
function segmentMatches(glob: string, segment: string): boolean {
  if (!glob.includes("*")) return glob === segment;
  const re = new RegExp(
    `^${glob
      .split("*")
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join("[^/]*")}$`,
  );
  return re.test(segment);
}

/** True when `path` is the pattern's path or lies below it (segment-wise; `*` within a segment). */
export function underPattern(pattern: string, path: string): boolean {
  if (!pattern.includes("*")) return isInside(pattern, path);
  const p = posix.normalize(pattern).split("/").filter(Boolean);
  const s = posix.normalize(path).split("/").filter(Boolean);
  if (s.length < p.length) return false;
  return p.every((g, i) => segmentMatches(g, s[i]!));
}

/** True when a library file's basename matches one of the deny globs. */
export function matchesLibrary(globs: readonly string[], file: string): boolean {
  const base = posix.basename(file);
  return globs.some((g) => segmentMatches(g, base));
}

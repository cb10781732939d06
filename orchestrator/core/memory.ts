/**
 * Embedded mode: each agent's V8 heap is limited from its manifest's `resources.memory` (docs/operations.md,
 * Supervisor), so an agent sheds load (AIP_ERR_SOCKET_BUSY) before it outgrows what it declared.
 * Under systemd the unit's MemoryMax (cgroup) bounds the whole process instead.
 */
import { memoryBytes } from "../../protocol/contract/schemas.js";

/** Share of the declared memory given to the V8 heap; the rest is code, stacks, buffers, native memory. */
export const HEAP_SHARE = 0.75;
/** Never below this old generation (MiB): Node itself needs a few dozen MiB of heap to start. */
export const MIN_OLD_SPACE_MIB = 24;

/**
 * V8 heap flags for an agent declaring `memory` ("256Mi", "1Gi"): the young generation (about four
 * semi-spaces) and the old generation together come to HEAP_SHARE of it.
 */
export function heapFlags(memory: string): { oldSpaceMiB: number; semiSpaceMiB: number } {
  const budget = (memoryBytes(memory) / 1024 / 1024) * HEAP_SHARE;
  const semiSpaceMiB = Math.max(1, Math.min(16, Math.floor(budget / 16)));
  return { oldSpaceMiB: Math.max(MIN_OLD_SPACE_MIB, Math.floor(budget - 4 * semiSpaceMiB)), semiSpaceMiB };
}

/**
 * NODE_OPTIONS for the agent: the inherited options plus the heap flags from the manifest, unless the
 * operator set a heap size (in the agent's `env` or the orchestrator's environment).
 */
export function nodeOptionsFor(memory: string, inherited: string | undefined): string {
  const base = (inherited ?? "").trim();
  if (/--max-old-space-size[= ]/.test(base)) return base;
  const { oldSpaceMiB, semiSpaceMiB } = heapFlags(memory);
  // --expose-gc: the agent runtime collects once before shedding and after a request that left the heap half full.
  return `${base} --max-old-space-size=${oldSpaceMiB} --max-semi-space-size=${semiSpaceMiB} --expose-gc`.trim();
}

/**
 * How workspace trust reaches agents (docs/security.md, "Workspace trust"): the orchestrator sets these
 * variables for every agent; agents/lib/sandbox/trust.ts reads them. Names shared by both layers.
 */

/** The effective `trusted_workspaces` list (colon-separated paths or globs). */
export const TRUSTED_ENV = "AIP_TRUSTED_WORKSPACES";
/** Where that list came from: "config" or "env". */
export const TRUSTED_SOURCE_ENV = "AIP_TRUSTED_WORKSPACES_SOURCE";
/** The file `aip trust` writes, read at each decision so that a new trust needs no reload. */
export const TRUST_FILE_ENV = "AIP_TRUST_FILE";
/** The trust file's name inside the state dir. */
export const TRUST_FILE_NAME = "trusted-workspaces.json";
/** Colon-separated paths no sandboxed workspace run may see (the state dir, the socket directories). */
export const SANDBOX_HIDE_ENV = "AIP_SANDBOX_HIDE";

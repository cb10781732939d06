/**
 * Routing: `action` → capability, every requested language must be declared ("*" = any),
 * pins by `constraints.agent` / `constraints.version`, then availability.
 */
import { AipError } from "../../protocol/contract/errors.js";
import { languageByPath } from "../../protocol/contract/languages.js";
import { cpuMillicores, type AipRequest } from "../../protocol/contract/schemas.js";
import type { AgentRecord } from "../core/agent.js";

/**
 * Every language the request needs: `context.language` (else the one `context.file_path`'s extension
 * implies, `.py` → python) plus `constraints.languages`, lowercased.
 */
export function requestedLanguages(request: AipRequest): string[] {
  const set = new Set<string>();
  const { language, file_path: filePath } = request.context;
  if (language) set.add(language.toLowerCase());
  else if (typeof filePath === "string") {
    const implied = languageByPath(filePath);
    if (implied) set.add(implied.id);
  }
  for (const l of request.constraints.languages ?? []) set.add(l.toLowerCase());
  return [...set].sort();
}

function describeRegistered(agents: AgentRecord[], action: string): string {
  const serving = agents.filter((a) => a.serves(action));
  if (serving.length === 0) {
    const actions = [...new Set(agents.flatMap((a) => a.manifest.capabilities))].sort();
    return `no agent serves action "${action}"; registered actions: ${actions.join(", ") || "none"}`;
  }
  return `registered for "${action}": ${serving.map((a) => `${a.name}@${a.version} [${a.manifest.languages.join(", ")}]`).join("; ")}`;
}

/** Agents that could serve the request if they were available; throws AIP_ERR_NO_ROUTE when none. */
export function candidates(request: AipRequest, agents: AgentRecord[]): AgentRecord[] {
  const languages = requestedLanguages(request);
  const { agent: pinAgent, version: pinVersion } = request.constraints;
  const found = agents.filter(
    (a) =>
      a.state !== "rejected" &&
      a.role !== "retained" &&
      a.serves(request.action) &&
      languages.every((l) => a.speaks(l)) &&
      (pinAgent === undefined || a.name === pinAgent) &&
      (pinVersion === undefined || a.version === pinVersion),
  );
  if (found.length === 0) {
    const serving = agents.filter((a) => a.state !== "rejected" && a.role !== "retained" && a.serves(request.action));
    const served = [...new Set(serving.flatMap((a) => a.manifest.languages.map((l) => l.toLowerCase())))].sort();
    const unserved = languages.filter((l) => !served.includes(l) && !served.includes("*"));
    if (serving.length > 0 && unserved.length > 0) {
      throw new AipError(
        "AIP_ERR_NO_ROUTE",
        `No agent serves ${unserved.map((l) => JSON.stringify(l)).join(", ")} for action "${request.action}"; served languages: ${served.join(", ")} (${describeRegistered(agents, request.action)})`,
        { extensions: { action: request.action, languages, unserved, served_languages: served } },
      );
    }
    const wanted = [
      `action "${request.action}"`,
      ...(languages.length > 0 ? [`languages ${languages.join(", ")}`] : []),
      ...(pinAgent ? [`agent ${pinAgent}`] : []),
      ...(pinVersion ? [`version ${pinVersion}`] : []),
    ].join(", ");
    throw new AipError("AIP_ERR_NO_ROUTE", `No agent for ${wanted}: ${describeRegistered(agents, request.action)}`, {
      extensions: { action: request.action, languages },
    });
  }
  return found;
}

/**
 * Among candidates, the available ones: non-degraded first, then the one declaring more CPU (the
 * model-backed agent over its light fallback: the light one serves when the heavy one is out),
 * then the least loaded.
 */
export function choose(found: AgentRecord[]): AgentRecord {
  const live = found.filter((a) => a.available);
  if (live.length === 0) {
    const why = found.map(
      (a) =>
        `${a.name}@${a.version}: ${a.state}${a.circuit.open ? ", circuit open" : ""}${a.admission.admitted ? "" : `, ${a.admission.reason}`}`,
    );
    throw new AipError("AIP_ERR_UNAVAILABLE", `No available agent: ${why.join("; ")}`);
  }
  return live.reduce((best, a) => (better(a, best) ? a : best));
}

function better(a: AgentRecord, b: AgentRecord): boolean {
  if (a.degraded !== b.degraded) return !a.degraded;
  const ca = cpuMillicores(a.manifest.resources.cpu);
  const cb = cpuMillicores(b.manifest.resources.cpu);
  if (ca !== cb) return ca > cb;
  return load(a) < load(b);
}

function load(a: AgentRecord): number {
  return (a.inflight + a.pool.queued) / Math.max(1, a.pool.size);
}

/** The resource rule's thresholds (config `limits.cpu_threshold`, `cpu_readmit_below`, `cpu_samples`, `cpu_readmit_samples`). */
export interface AdmissionRule {
  /** Out of rotation above this host CPU load (0-1)… */
  threshold: number;
  /** …and back in below this one (hysteresis: between the two nothing changes). */
  readmitBelow: number;
  /** Consecutive samples beyond a threshold before the admission changes. */
  samples: number;
  /** Consecutive samples below readmitBelow before an agent out of rotation comes back (default: samples). */
  readmitSamples?: number;
}

/**
 * The resource rule: a heavy agent (>= 1000m) leaves rotation after `samples` samples in a row above
 * `threshold` when a light agent with one of the same capabilities is registered, and comes back after
 * `samples` samples in a row below `readmitBelow`. Returns the agents whose admission changed.
 */
export function applyResourceRule(agents: readonly AgentRecord[], load: number, rule: AdmissionRule): AgentRecord[] {
  const changed: AgentRecord[] = [];
  for (const a of agents) {
    const applies =
      a.heavy &&
      agents.some(
        (b) => b !== a && !b.heavy && b.state !== "rejected" && b.manifest.capabilities.some((c) => a.serves(c)),
      );
    const pushing = a.admission.admitted ? load > rule.threshold : load < rule.readmitBelow;
    const reason = `host CPU ${(load * 100).toFixed(0)}% > ${(rule.threshold * 100).toFixed(0)}%; a lighter agent serves its capability`;
    const readmit = rule.readmitSamples !== undefined ? { readmitSamples: rule.readmitSamples } : {};
    if (a.admit({ applies, pushing, samples: rule.samples, ...readmit, reason })) changed.push(a);
  }
  return changed;
}

/**
 * How loud a change of `agent`'s admission is: "warn" when it leaves some action it serves with no
 * other available agent (the change affects service), "info" otherwise (a lighter peer serves, or it
 * came back).
 */
export function rotationLogLevel(agent: AgentRecord, agents: readonly AgentRecord[]): "info" | "warn" {
  if (agent.admission.admitted) return "info";
  const uncovered = agent.manifest.capabilities.some(
    (c) => !agents.some((b) => b !== agent && b.role !== "retained" && b.serves(c) && b.available),
  );
  return uncovered ? "warn" : "info";
}

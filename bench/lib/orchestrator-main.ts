#!/usr/bin/env node
/** A bench orchestrator process: `aip up`'s composition with a chosen pool. Args: CONFIG POOL LOGFILE (POOL: adaptive | fixed-N | fresh). */
import { loadConfig } from "../../orchestrator/core/config.js";
import { startAgency } from "../../orchestrator/entry.js";
import type { OrchestratorDeps } from "../../orchestrator/orchestrator.js";
import { adaptiveSizing, fixedSizing } from "../../orchestrator/pool/sizing.js";
import { freshConnectionTransport, ndjsonTransport } from "../../orchestrator/pool/transport.js";

const [configPath, pool = "adaptive", logFile] = process.argv.slice(2);
const fixed = /^fixed-(\d+)$/.exec(pool);
const deps: OrchestratorDeps = {
  logDestination: logFile ?? false,
  // "fresh": no pool at all, as many concurrent calls as the agent admits, each on a new connection.
  sizing: fixed
    ? fixedSizing(Number(fixed[1]))
    : pool === "fresh"
      ? fixedSizing(Number.MAX_SAFE_INTEGER)
      : adaptiveSizing,
  transport: pool === "fresh" ? freshConnectionTransport : ndjsonTransport,
};
await startAgency(loadConfig(configPath), { deps, ownProcess: true });

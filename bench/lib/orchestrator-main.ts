#!/usr/bin/env node
/** A bench orchestrator process: `aip up`'s composition with a chosen pool. Args: CONFIG POOL LOGFILE (POOL: adaptive | fixed-N | fresh). */
import { loadConfig } from "../../orchestrator/core/config.js";
import { listenFrontDoor } from "../../orchestrator/frontdoor.js";
import { Orchestrator, type OrchestratorDeps } from "../../orchestrator/orchestrator.js";
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
const orchestrator = new Orchestrator(loadConfig(configPath), deps);
await orchestrator.start();
const server = await listenFrontDoor(orchestrator);
const stop = (): void => {
  void server.close(1000).then(() => orchestrator.stop());
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

/**
 * Every benchmark scenario, in run order: name, title, and how to load its module. A module is imported only
 * when its scenario runs, so `--help`, `--dry-run` and a single `--only` load none or one. A new scenario is
 * one file in this folder and one entry here.
 */
import type { Scenario } from "../lib/scenario.js";

export const SCENARIOS: Scenario[] = [
  {
    name: "overhead",
    title: "Orchestrator overhead: agent-dummy direct vs through the orchestrator",
    load: async () => (await import("./overhead.js")).overhead,
  },
  {
    name: "proxy",
    title: "The orchestrator hop at proxy cost: a trivial agent direct, through the agency, nginx and HAProxy",
    load: async () => (await import("./proxy.js")).proxy,
  },
  {
    name: "pooling",
    title: "Pooling: adaptive vs fixed pool of 10 vs a new connection per request",
    load: async () => (await import("./pooling.js")).pooling,
  },
  {
    name: "transport",
    title: "Transport: Unix socket vs TCP vs TCP+TLS, new connection per request",
    load: async () => (await import("./transport.js")).transport,
  },
  {
    name: "agents-rss",
    title: "Agents: resident memory of the orchestrator and each agent, idle and under load",
    load: async () => (await import("./agents.js")).agentsRss,
  },
  {
    name: "hostile",
    title: "Hostile neighbour: 4 well-behaved echo clients, alone and beside a client abusing every limit",
    load: async () => (await import("./hostile.js")).hostile,
  },
  {
    name: "agents-code",
    title: "Code agents: slicing, complete-lite, search, summarize and testgen latency",
    load: async () => (await import("./scripts.js")).codeAgents,
  },
  {
    name: "agents-complete",
    title: "Model-backed completion: stage timings, tokens/s, KV reuse",
    load: async () => (await import("./scripts.js")).completion,
  },
  {
    name: "lsp",
    title: "aip lsp: what the LSP layer adds to the AIP call (completion)",
    load: async () => (await import("./lsp.js")).lsp,
  },
  {
    name: "typed-completion",
    title: "complete-lite typed engine: first request on a 200-file workspace, keystrokes on a 2,000-line file, RSS",
    load: async () => (await import("./typed-completion.js")).typedCompletion,
  },
  {
    name: "remote-engine",
    title: "Inference-server client overhead vs a direct call to the same local server",
    load: async () => (await import("./remote-engine.js")).remoteEngine,
  },
];

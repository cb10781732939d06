#!/usr/bin/env node
/** The agent-summarize executable; the agent is defined in agent.ts, loaded only when the run needs it. */
import { agentEntry } from "../lib/runtime/entry.js";

await agentEntry("summarize", import.meta.url, async () => (await import("./agent.js")).summarize);

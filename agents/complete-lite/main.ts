#!/usr/bin/env node
/** The agent-complete-lite executable; the agent is defined in agent.ts, loaded only when the run needs it. */
import { agentEntry } from "../lib/runtime/entry.js";

await agentEntry("complete-lite", import.meta.url, async () => (await import("./agent.js")).completeLite);

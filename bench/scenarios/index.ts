/** Every benchmark scenario, in run order. A new scenario is one file in this folder and one line here. */
import type { Scenario } from "../lib/scenario.js";
import { agentsRss } from "./agents.js";
import { hostile } from "./hostile.js";
import { lsp } from "./lsp.js";
import { overhead } from "./overhead.js";
import { pooling } from "./pooling.js";
import { proxy } from "./proxy.js";
import { remoteEngine } from "./remote-engine.js";
import { transport } from "./transport.js";
import { codeAgents, completion } from "./scripts.js";
import { typedCompletion } from "./typed-completion.js";

export const SCENARIOS: Scenario[] = [
  overhead,
  proxy,
  pooling,
  transport,
  agentsRss,
  hostile,
  codeAgents,
  completion,
  lsp,
  typedCompletion,
  remoteEngine,
];

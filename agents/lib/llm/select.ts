/** The model a stage uses: a local GGUF file (`AIP_MODEL`) or an inference server (`AIP_MODEL_URL`), from one set of settings. */
import { modelConfig } from "./config.js";
import type { ModelEngine } from "./engine.js";
import { ModelHost } from "./host.js";
import { remoteConfig } from "./remote/config.js";
import { RemoteHost } from "./remote/host.js";

/** Throws (naming the variable) when a setting is invalid: an agent must not start on a half-read configuration. */
export function modelEngine(env: NodeJS.ProcessEnv = process.env, defaultSequences = 4): ModelEngine {
  const remote = remoteConfig(env, defaultSequences);
  const config = modelConfig({}, env, defaultSequences);
  return remote ? new RemoteHost(config, remote) : new ModelHost(config);
}

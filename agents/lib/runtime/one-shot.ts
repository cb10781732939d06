/** An agent's one-shot mode: one JSON request from stdin, one response to stdout, then exit. */
import { AipError } from "../../../protocol/contract/errors.js";
import { errorResponse } from "../../../protocol/contract/envelope.js";
import { decodeJson } from "../../../protocol/transport/json.js";
import { resolveLimits } from "../../../protocol/contract/limits.js";
import { envString } from "../../../protocol/util/env.js";
import { createLogger } from "../../../protocol/util/log.js";
import { newTraceId } from "../../../protocol/contract/trace.js";
import type { AgentDefinition, DeferredAgent } from "./types.js";

type Validate = (typeof import("../../../protocol/contract/validate.js"))["validateRequest"];

/** Read stdin up to the body limit; `undefined` when it is larger. */
async function readStdin(limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function oneShot(agent: AgentDefinition | DeferredAgent): Promise<void> {
  // A scheduler treats stderr output as a crash: nothing may reach it in one-shot mode.
  process.emitWarning = () => undefined;
  const name = "load" in agent ? agent.name : agent.manifest.name;
  // The agent's own code loads while stdin is read, and before any answer, a refusal included: vetting's
  // empty-input run must trace what the agent's modules do when they load, not only the runtime's refusal.
  const loading = "load" in agent ? agent.load({ oneShot: true }) : Promise.resolve(agent);
  const log = createLogger({ agentName: name, destination: envString("AIP_LOG_FILE") ?? false });
  const write = (text: string): Promise<void> =>
    new Promise((resolve) => process.stdout.write(text + "\n", () => resolve()));
  const crash = (err: unknown): void => {
    log.error({ event: "crash", err }, "uncaught error in one-shot mode");
    process.stdout.write(JSON.stringify(errorResponse(err, newTraceId())) + "\n", () => process.exit(0));
  };
  process.on("uncaughtException", crash);
  process.on("unhandledRejection", crash);
  const limits = resolveLimits();
  const bytes = await readStdin(limits.maxBodyBytes);
  if (bytes === undefined) {
    const err = new AipError("AIP_ERR_PAYLOAD_TOO_LARGE", `Request exceeds the limit of ${limits.maxBodyBytes} bytes`, {
      extensions: { limit: limits.maxBodyBytes },
    });
    await loading;
    await write(JSON.stringify(errorResponse(err, newTraceId())));
    process.exit(0);
  }
  let value: unknown;
  try {
    value = decodeJson(bytes, limits.maxJsonDepth);
  } catch (err) {
    await loading;
    await write(JSON.stringify(errorResponse(err, newTraceId())));
    process.exit(0);
  }
  const [{ AgentInvoker }, { validateRequest }, def] = await Promise.all([
    import("./invoke.js"),
    import("../../../protocol/contract/validate.js"),
    loading,
  ]);
  // A request refused before any handler would run is answered without the warm-up (a model load, dry
  // keystrokes): it would only delay the refusal.
  if (def.warmup && reachesHandler(def, value, validateRequest)) await def.warmup(log);
  const invoker = new AgentInvoker(def, log);
  const response = await invoker.invoke(value);
  log.info({ event: "request", trace_id: response.trace_id, outcome: response.status }, "one-shot request");
  await write(JSON.stringify(response));
  await def.dispose?.();
  process.exit(0);
}

/** Whether `value` is a request that one of the agent's handlers would be given (else the invoker refuses it). */
function reachesHandler(def: AgentDefinition, value: unknown, validate: Validate): boolean {
  try {
    return Object.hasOwn(def.handlers, validate(value).action);
  } catch {
    return false;
  }
}

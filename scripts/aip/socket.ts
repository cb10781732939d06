/** Where the CLI finds the orchestrator: --socket, then $AIP_SOCKET, then the config's socket. */
import { loadConfig } from "../../orchestrator/config.js";

export function socketPath(flag: string | true | undefined): string {
  if (typeof flag === "string") return flag;
  if (process.env.AIP_SOCKET) return process.env.AIP_SOCKET;
  try {
    return loadConfig().socket;
  } catch {
    return "./run/aip.sock";
  }
}

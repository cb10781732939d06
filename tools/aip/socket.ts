/** Where the CLI finds the orchestrator: --socket, then $AIP_SOCKET, then the config's socket. */
import { adminSocketFor, loadConfig } from "../../orchestrator/core/config.js";
import { envString } from "../../protocol/util/env.js";

export function socketPath(flag: string | true | undefined): string {
  if (typeof flag === "string") return flag;
  const fromEnv = envString("AIP_SOCKET");
  if (fromEnv) return fromEnv;
  try {
    return loadConfig().socket;
  } catch {
    return "./run/aip.sock";
  }
}

/** Where the CLI finds the admin socket: --admin-socket, then $AIP_ADMIN_SOCKET, then beside the main socket. */
export function adminSocketPath(adminFlag: string | true | undefined, socketFlag: string | true | undefined): string {
  if (typeof adminFlag === "string") return adminFlag;
  const fromEnv = envString("AIP_ADMIN_SOCKET");
  if (fromEnv) return fromEnv;
  if (typeof socketFlag !== "string" && !envString("AIP_SOCKET")) {
    try {
      const c = loadConfig();
      if (c.adminSocket) return c.adminSocket;
    } catch {
      // fall through to the default beside the main socket
    }
  }
  return adminSocketFor(socketPath(socketFlag));
}

/**
 * AipServers on a temporary socket directory, one per test file: what a test starts is closed, and the
 * directory removed, after it.
 */
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { successResponse } from "../../../protocol/contract/envelope.js";
import { AipServer, type AipServerOptions } from "../../../protocol/transport/server.js";
import { tempDir } from "../../helpers.js";

export interface ServerFixture {
  /** This test's temporary directory. */
  readonly dir: string;
  /** An AipServer on `dir`/s.sock: an echo invoke, then the file's `defaults`, then `overrides`. */
  start(overrides?: Partial<AipServerOptions>): Promise<AipServer>;
}

export function serverFixture(defaults: () => Partial<AipServerOptions> = () => ({})): ServerFixture {
  let dir = "";
  let cleanup = (): void => undefined;
  const servers: AipServer[] = [];
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close(100)));
    cleanup();
  });
  return {
    get dir() {
      return dir;
    },
    async start(overrides = {}) {
      const s = await AipServer.listen({
        socketPath: join(dir, "s.sock"),
        invoke: async (req) => successResponse({ echo: req }, "t"),
        ...defaults(),
        ...overrides,
      });
      servers.push(s);
      return s;
    },
  };
}

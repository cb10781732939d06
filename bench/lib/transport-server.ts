#!/usr/bin/env node
/**
 * One AIP-1 echo server behind three listeners: its Unix socket, plain TCP and TCP+TLS on 127.0.0.1.
 * Args: SOCKET CERT KEY. Prints {"tcp":PORT,"tls":PORT} on stdout once listening. Same server,
 * same handler: the transport benchmark measures the transports only.
 */
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo, type Server } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { AgentInvoker } from "../../agents/lib/runtime/invoke.js";
import { createLogger } from "../../protocol/util/log.js";
import { readManifestFile } from "../../protocol/contract/manifest.js";
import { AipServer } from "../../protocol/transport/server.js";
import { ROOT } from "./procs.js";

const [socketPath, certFile, keyFile] = process.argv.slice(2);
const manifest = readManifestFile(`${ROOT}/manifests/dummy.json`);
const invoker = new AgentInvoker(
  { manifest, handlers: { echo: (request) => ({ received_action: request.action }) } },
  createLogger({ agentName: "transport-bench", destination: false }),
);
const aip = await AipServer.listen({
  socketPath: socketPath!,
  invoke: (value, ctx) => invoker.invoke(value, ctx.signal),
});
const tcp = createServer((socket) => aip.accept(socket));
const tls = createTlsServer({ cert: readFileSync(certFile!), key: readFileSync(keyFile!) }, (socket) =>
  aip.accept(socket),
);
const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
process.stdout.write(JSON.stringify({ tcp: await listen(tcp), tls: await listen(tls) }) + "\n");
const stop = (): void => {
  tcp.close();
  tls.close();
  void aip.close(500).then(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);

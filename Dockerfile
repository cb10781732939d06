# syntax=docker/dockerfile:1
# agency: the orchestrator and the bundled agents in one image (docs/operations.md "Container and Kubernetes").
#   docker build -t agency .                          # CPU llama.cpp binary only
#   docker build --build-arg LLAMA_GPU=cuda -t agency:cuda .
#   docker run --rm -p 127.0.0.1:9464:9464 agency     # aip up (embedded); probes on :9464
#   podman build --format docker -t agency .          # podman/buildah: the OCI format drops HEALTHCHECK
ARG NODE_IMAGE=node:20.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: node-llama-cpp ships prebuilt binaries; nothing is compiled or downloaded.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY protocol ./protocol
COPY agents ./agents
COPY orchestrator ./orchestrator
COPY scripts ./scripts
COPY tools ./tools
COPY bench ./bench
COPY manifests ./manifests
COPY systemd ./systemd
RUN npm run build && npm prune --omit=dev --no-audit --no-fund
# Only the CPU llama.cpp binary for this architecture unless LLAMA_GPU=cuda asks for the CUDA one.
ARG LLAMA_GPU=cpu
RUN set -eu; cd node_modules/@node-llama-cpp; \
    for d in *; do \
      case "$d" in \
        linux-x64) ;; \
        linux-x64-cuda|linux-x64-cuda-ext) [ "$LLAMA_GPU" = cuda ] || rm -rf "$d" ;; \
        *) rm -rf "$d" ;; \
      esac; \
    done

FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="agency" \
      org.opencontainers.image.description="Small single-purpose AI agents behind one local orchestrator (AIP-1)"
WORKDIR /opt/aip
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/manifests ./manifests
# The image runs as the unprivileged node user (uid 1000); sockets and state live in its own directories.
RUN mkdir -p /run/aip/agents /var/lib/aip && chown -R node:node /run/aip /var/lib/aip
USER node
ENV NODE_ENV=production \
    AIP_SOCKET=/run/aip/aip.sock \
    AIP_AGENT_SOCKET_DIR=/run/aip/agents \
    AIP_STATE_DIR=/var/lib/aip \
    AIP_HEALTH_PORT=9464 \
    AIP_HEALTH_HOST=0.0.0.0 \
    AIP_VETTING=off
EXPOSE 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/opt/aip/dist/scripts/aip.js"]
CMD ["up", "--config", "/opt/aip/manifests/agency.production.json"]

/**
 * The hardening every agency unit gets, one setting a line, with why. Target:
 * `systemd-analyze security --offline=true` exposure ≤ 2.0 per agent unit, ≤ 3.0 for the orchestrator.
 * AIP-1 is Unix sockets only, so even the network namespace can be private: a filesystem socket is
 * reachable across network namespaces.
 */

const COMMON = [
  "NoNewPrivileges=yes",
  "CapabilityBoundingSet=",
  "AmbientCapabilities=",
  "ProtectSystem=strict",
  // Read-only, not hidden: agents such as search read the workspace, which often lives under /home.
  "ProtectHome=read-only",
  "PrivateTmp=yes",
  "PrivateNetwork=yes",
  "IPAddressDeny=any",
  "RestrictAddressFamilies=AF_UNIX",
  "PrivateUsers=yes",
  "PrivateIPC=yes",
  "PrivateMounts=yes",
  "RestrictNamespaces=yes",
  "RestrictRealtime=yes",
  "RestrictSUIDSGID=yes",
  "LockPersonality=yes",
  "ProtectKernelTunables=yes",
  "ProtectKernelModules=yes",
  "ProtectKernelLogs=yes",
  "ProtectControlGroups=yes",
  "ProtectClock=yes",
  "ProtectHostname=yes",
  "ProtectProc=invisible",
  "RemoveIPC=yes",
  "KeyringMode=private",
  "SystemCallFilter=@system-service",
  "SystemCallFilter=~@privileged",
  "SystemCallArchitectures=native",
  "SystemCallErrorNumber=EPERM",
  "UMask=0007",
  // MemoryDenyWriteExecute=yes would forbid V8's JIT (it maps code pages executable): node would crash.
  "MemoryDenyWriteExecute=no",
];

/** Devices a GPU agent needs (NVIDIA); everything else stays closed. */
const GPU_DEVICES = [
  "/dev/nvidiactl rw",
  "/dev/nvidia0 rw",
  "/dev/nvidia-uvm rw",
  "/dev/nvidia-uvm-tools rw",
  "/dev/nvidia-modeset rw",
];

/** Hardening lines for a unit; `gpu` opens the NVIDIA devices instead of PrivateDevices. */
export function hardening(options: { gpu?: boolean } = {}): string[] {
  const devices = options.gpu
    ? ["PrivateDevices=no", "DevicePolicy=closed", ...GPU_DEVICES.map((d) => `DeviceAllow=${d}`)]
    : ["PrivateDevices=yes", "DevicePolicy=closed"];
  return [...COMMON, ...devices];
}

#!/bin/sh
# Build a local stand-in for the Dockerfile's base image (node:20.20-bookworm-slim) when no container
# registry is reachable but Debian's mirror is: debootstrap a minimal bookworm, copy in this machine's
# Node.js the way the official image lays it out (/usr/local/bin/node, npm and corepack under
# /usr/local/lib/node_modules, a `node` user and group with uid/gid 1000), and import it into podman.
#
#   sudo apt-get install -y podman debootstrap          # Debian bookworm: podman 4.3
#   sudo tools/container/build-local-base.sh            # -> localhost/node:20.20-bookworm-slim
#   podman build --build-arg NODE_IMAGE=localhost/node:20.20-bookworm-slim -t agency .
#
# Environment: ROOTFS (default /tmp/aip-base-rootfs, removed first), IMAGE (default
# localhost/node:20.20-bookworm-slim), MIRROR (default http://deb.debian.org/debian), EXTRA_CA (default
# $NODE_EXTRA_CA_CERTS: a PEM bundle copied in as /etc/ssl/certs/local-extra-ca.pem with
# NODE_EXTRA_CA_CERTS pointing at it, for a network whose TLS proxy npm ci must trust). Needs root.
# The result is only for building and trying the image here: release images use the real base.
set -eu

ROOTFS=${ROOTFS:-/tmp/aip-base-rootfs}
IMAGE=${IMAGE:-localhost/node:20.20-bookworm-slim}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
EXTRA_CA=${EXTRA_CA:-${NODE_EXTRA_CA_CERTS:-}}

[ "$(id -u)" = 0 ] || { echo "build-local-base: run as root (debootstrap needs it)" >&2; exit 1; }
NODE=$(readlink -f "$(command -v node)")
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")") # .../node_modules/npm
MODULES=$(dirname "$NPM_DIR")
VERSION=$("$NODE" --version)
case "$VERSION" in
  v20.20.*) ;;
  *) echo "build-local-base: warning: this machine's Node.js is $VERSION, the Dockerfile's base is 20.20" >&2 ;;
esac

rm -rf "$ROOTFS"
debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR"

install -m 0755 "$NODE" "$ROOTFS/usr/local/bin/node"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
[ ! -d "$MODULES/corepack" ] || cp -a "$MODULES/corepack" "$ROOTFS/usr/local/lib/node_modules/corepack"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
[ ! -d "$MODULES/corepack" ] || ln -sf ../lib/node_modules/corepack/dist/corepack.js "$ROOTFS/usr/local/bin/corepack"

# As in the official image: group and user `node`, uid/gid 1000, home /home/node.
chroot "$ROOTFS" groupadd --gid 1000 node
chroot "$ROOTFS" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
CA_ENV=
if [ -n "$EXTRA_CA" ]; then
  install -D -m 0644 "$EXTRA_CA" "$ROOTFS/etc/ssl/certs/local-extra-ca.pem"
  CA_ENV=/etc/ssl/certs/local-extra-ca.pem
fi
# Keep the image small, like -slim: no apt lists or caches.
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/apt/archives/*.deb
chroot "$ROOTFS" node --version >/dev/null

tar -C "$ROOTFS" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"${VERSION#v}" \
  ${CA_ENV:+--change "ENV NODE_EXTRA_CA_CERTS=$CA_ENV"} \
  --change 'CMD ["node"]' \
  - "$IMAGE"
rm -rf "$ROOTFS"
echo "build-local-base: $IMAGE (Node.js $VERSION on Debian bookworm minbase)"

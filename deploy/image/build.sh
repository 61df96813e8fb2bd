#!/bin/sh
# deploy/image/build.sh BINARY [IMAGE]: an OCI image of the static
# placement-study BINARY, built from scratch with buildah (nothing is pulled
# from a registry): the binary alone, at /placement-study, its entrypoint.
# IMAGE defaults to localhost/placement-study:latest.
#
# A static binary: RUSTFLAGS="-C target-feature=+crt-static" cargo build
#   --release --bin placement-study --target x86_64-unknown-linux-gnu
# Run it: podman run --rm IMAGE gate -q (on a host whose hard RLIMIT_NOFILE
# is below podman's default of 1048576, add --ulimit nofile=1024:1024).
set -eu
binary=${1:?usage: build.sh BINARY [IMAGE]}
image=${2:-localhost/placement-study:latest}
if readelf -l "$binary" 2>/dev/null | grep -q INTERP; then
  echo "build.sh: $binary is dynamically linked; the image has no libc" >&2
  exit 2
fi
container=$(buildah from scratch)
trap 'buildah rm "$container" >/dev/null' EXIT
buildah copy --chmod 0755 "$container" "$binary" /placement-study >/dev/null
buildah config --entrypoint '["/placement-study"]' --cmd '["gate"]' \
  --label org.opencontainers.image.title=placement-study \
  --label org.opencontainers.image.description="Measures where threads really run and what sharing a core costs" \
  "$container"
buildah commit --quiet "$container" "$image"
echo "$image"

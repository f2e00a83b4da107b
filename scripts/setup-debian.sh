#!/usr/bin/env bash
# Installs what racksim needs on Debian 12 (bookworm), and nothing when it is all there.
# Every dependency is a Debian package; nothing is downloaded at build time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsimgrid-dev libboost-graph-dev libboost-program-options-dev
  libprotobuf-dev protobuf-compiler libgtest-dev libbenchmark-dev
  libfmt-dev nlohmann-json3-dev zlib1g-dev
  librsvg2-bin libnlopt-dev coinor-libclp-dev
  clang libclang-rt-14-dev  # the Chakra reader's libFuzzer target (tests/fuzz)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "racksim setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Build the pinned go-ethereum `evm` (t8n) and `geth` into tools/bin.
# A no-op when both binaries are there at the pinned version.
set -euo pipefail
version="v1.17.8"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/tools/bin"
stamp="$bin/.go-ethereum-$version"
if [[ -x "$bin/evm" && -x "$bin/geth" && -f "$stamp" ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
mkdir -p "$bin"
echo "install-tools: building go-ethereum $version evm and geth into tools/bin (a few minutes the first time)"
GOBIN="$bin" GOFLAGS=-mod=mod go install \
  "github.com/ethereum/go-ethereum/cmd/evm@$version" \
  "github.com/ethereum/go-ethereum/cmd/geth@$version"
touch "$stamp"

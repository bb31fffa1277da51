#!/usr/bin/env bash
# Build the pinned tools into tools/bin: go-ethereum's `evm` (t8n) and `geth`, and revm's `revme`
# (the second EVM `balgen verify` runs). Each is skipped when it is there at its pinned version.
set -euo pipefail
version="v1.17.8"
revme_version="43.0.3"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/tools/bin"
stamp="$bin/.go-ethereum-$version"
revme_stamp="$bin/.revme-$revme_version"
mkdir -p "$bin"

if [[ ! ( -x "$bin/evm" && -x "$bin/geth" && -f "$stamp" ) ]]; then
  command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
  echo "install-tools: building go-ethereum $version evm and geth into tools/bin (a few minutes the first time)"
  GOBIN="$bin" GOFLAGS=-mod=mod go install \
    "github.com/ethereum/go-ethereum/cmd/evm@$version" \
    "github.com/ethereum/go-ethereum/cmd/geth@$version"
  touch "$stamp"
fi

if [[ ! ( -x "$bin/revme" && -f "$revme_stamp" ) ]]; then
  if ! command -v cargo >/dev/null; then
    # Only `balgen verify` needs revme; it says so in one line when it is missing.
    echo "install-tools: revme $revme_version not built (cargo not found): balgen verify needs it, or --without revm" >&2
    exit 0
  fi
  echo "install-tools: building revme $revme_version into tools/bin (about 10 minutes the first time)"
  cargo install --quiet --locked revme --version "$revme_version" --root "$root/tools"
  touch "$revme_stamp"
fi

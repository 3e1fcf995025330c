#!/usr/bin/env bash
# Robustness corpus (issue 9): analyse every crate in the normal dependency graphs of the benchmark
# workspaces as if it were the analysed root, under a time limit, and fail on any panic, caught
# internal error or hang. See scripts/corpus.py for the per-crate method and the classes.
#
#   scripts/corpus.sh                        # both workspaces, 4 targets, 2 jobs, 120 s per run (~20 min)
#   TARGETS=host scripts/corpus.sh           # the host's cfg only (~6 min)
#   JOBS=1 TIMEOUT=300 scripts/corpus.sh     # other limits
#   scripts/corpus.sh --limit 20             # smoke test; extra arguments go to corpus.py
#   scripts/corpus.sh --only serde,nom       # just these crates
#   REV=HEAD scripts/corpus.sh               # the tool as committed (git archive + own build)
#   NONBLOCK_BIN=path scripts/corpus.sh      # a prebuilt binary
#
# Needs the workspaces' sources downloaded (`cargo fetch --manifest-path bench/workspaces/<w>/Cargo.toml`);
# every run is --offline. Output: $OUT/corpus.tsv (one row per crate and target), $OUT/summary.md
# and $OUT/diagnostics.tsv (every distinct diagnostic in the reports).
# Exit status: 0 when no crate panicked, hit an internal error or hung; 1 otherwise; 2 on setup errors.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-target/corpus}"
JOBS="${JOBS:-2}"
TIMEOUT="${TIMEOUT:-120}"
# Each crate is analysed once per target: the host's cfg, then Windows, macOS and wasm, so the
# cfg(windows) / cfg(target_os = "macos") / wasm halves of FFI and generated crates are read too.
TARGETS="${TARGETS:-host x86_64-pc-windows-msvc aarch64-apple-darwin wasm32-unknown-unknown}"
WORKSPACES="${WORKSPACES:-bench/workspaces/large/Cargo.toml bench/workspaces/wide/Cargo.toml}"

for ws in $WORKSPACES; do
  [ -f "$ws" ] || { echo "corpus: $ws is missing" >&2; exit 2; }
done

if [ -n "${REV:-}" ]; then
  # The tool exactly as committed at REV (the work tree may hold someone's half-done edits):
  # `git archive` into a scratch tree with its own target directory.
  commit="$(git rev-parse --short "$REV")"
  src="/tmp/nb-corpus/rev-$commit"
  if [ ! -x "$src/target/release/cargo-nonblock" ]; then
    rm -rf "$src" && mkdir -p "$src"
    git archive "$commit" | tar -x -C "$src"
    (cd "$src" && CARGO_TARGET_DIR="$src/target" cargo build --release -q -p cargo-nonblock)
  fi
  NONBLOCK_BIN="$src/target/release/cargo-nonblock"
  built="commit $commit (git archive, clean)"
elif [ -z "${NONBLOCK_BIN:-}" ]; then
  cargo build --release -q -p cargo-nonblock
  NONBLOCK_BIN=target/release/cargo-nonblock
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  dirty="$(git status --porcelain -- crates rules 2>/dev/null | head -1)"
  built="work tree at $commit${dirty:+ + uncommitted changes in crates/ or rules/}"
else
  built="prebuilt $NONBLOCK_BIN"
fi
# A private copy: rebuilding the tool while the corpus runs must not change the binary under it.
mkdir -p /tmp/nb-corpus
if [ "$(realpath "$NONBLOCK_BIN")" != /tmp/nb-corpus/cargo-nonblock ]; then
  cp "$NONBLOCK_BIN" /tmp/nb-corpus/cargo-nonblock
fi
sha="$(sha256sum /tmp/nb-corpus/cargo-nonblock | cut -c1-16)"
echo "corpus: cargo-nonblock from the $built; sha256 $sha…; $("/tmp/nb-corpus/cargo-nonblock" --version 2>/dev/null || true)"

target_args=()
for t in $TARGETS; do target_args+=(--target "$t"); done
# shellcheck disable=SC2086
exec python3 scripts/corpus.py --bin /tmp/nb-corpus/cargo-nonblock --workdir "$OUT" \
  --jobs "$JOBS" --timeout "$TIMEOUT" "${target_args[@]}" "$@" $WORKSPACES

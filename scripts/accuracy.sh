#!/usr/bin/env bash
# Real-crate audit (issue 7): scans tests/realworld (an async service with 50+ ecosystem
# dependencies, never built) and async crates of its dependency graph in four configurations and
# regenerates docs/accuracy.md: precision on the hand-reviewed findings
# (tests/realworld/review.toml), totals, findings per dependency crate and the unresolved-call
# ratio, for each.
#
#   1. default:   the service, the rules as shipped (opt-in rules off), what users get;
#   2. windows:   the same with --target x86_64-pc-windows-msvc;
#   3. libraries: every crate of the service's normal dependency graph (versions from
#                 tests/realworld/Cargo.lock) copied by scripts/corpus.py and analysed as the root
#                 workspace, every async fn of the library a root; the reports merged
#                 (accuracy.py --merge). ~2 minutes with a warm cache;
#   4. all-rules: the service with every opt-in rule enabled (the rules with `enabled = false` in
#                 rules/*.toml), through a temporary tests/realworld/nonblock.toml, removed on
#                 exit. The script refuses to run if a nonblock.toml is already there.
#
#   scripts/accuracy.sh                 # builds the release binary, scans, writes docs/accuracy.md
#   NB_BIN=/path/to/cargo-nonblock scripts/accuracy.sh    # use an already built binary
#   KEEP=dir scripts/accuracy.sh        # also keep the JSON reports as dir/{default,windows,libraries,all-rules}.json
#
# Needs the registry sources of tests/realworld/Cargo.lock (cargo fetches them on first use:
# `cargo metadata` downloads what is missing unless --offline is passed in NB_ARGS).
set -euo pipefail
cd "$(dirname "$0")/.."

config=tests/realworld/nonblock.toml
if [[ -e "$config" ]]; then
  echo "accuracy.sh: $config already exists; the all-rules run writes its own there. Move it away first." >&2
  exit 1
fi
if grep -q '^\[workspace\.metadata\.nonblock' tests/realworld/Cargo.toml; then
  echo "accuracy.sh: tests/realworld/Cargo.toml has [workspace.metadata.nonblock]; the runs must not depend on it." >&2
  exit 1
fi

if [[ -z "${NB_BIN:-}" ]]; then
  cargo build --release -q -p cargo-nonblock
  NB_BIN=target/release/cargo-nonblock
fi

tmp="$(mktemp -d -t nonblock-accuracy.XXXXXX)"
wrote_config=0
cleanup() {
  if [[ "$wrote_config" == 1 ]]; then rm -f "$config"; fi
  rm -rf "$tmp"
}
# The analyzer runs in the background and the script waits for it, so that an interrupt runs the
# traps at once (stopping the analyzer) instead of after the analyzer has finished.
nb_pid=""
run_nb() {
  "$NB_BIN" "$@" &
  nb_pid=$!
  wait "$nb_pid"
  nb_pid=""
}
on_signal() {
  if [[ -n "$nb_pid" ]]; then kill "$nb_pid" 2>/dev/null || true; fi
  exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

cmd=(nonblock --manifest-path tests/realworld/Cargo.toml --format json --fail-on never ${NB_ARGS:-})

# 1. default configuration
run_nb "${cmd[@]}" --output "$tmp/default.json"

# 2. the same for Windows
run_nb "${cmd[@]}" --target x86_64-pc-windows-msvc --output "$tmp/windows.json"

# 3. library roots: every crate of the service's normal dependency graph (versions pinned by
# tests/realworld/Cargo.lock), each analysed as the root workspace. LIBRARY_ROOTS=a,b narrows it.
only=()
if [[ -n "${LIBRARY_ROOTS:-}" ]]; then only=(--only "$LIBRARY_ROOTS"); fi
python3 scripts/corpus.py --bin "$NB_BIN" --workdir "$tmp/libroots" --jobs "${JOBS:-2}" \
  --timeout 600 --target host --keep "${only[@]}" tests/realworld/Cargo.toml >&2
python3 scripts/accuracy.py --merge "$tmp/libraries.json" "$tmp"/libroots/out/*.json

# 2. all rules: enable every rule that is off by default
mapfile -t opt_in < <(python3 scripts/accuracy.py --list-opt-in rules)
if [[ ${#opt_in[@]} -eq 0 ]]; then
  echo "accuracy.sh: found no opt-in rule in rules/*.toml" >&2
  exit 1
fi
wrote_config=1
{
  echo "# Written by scripts/accuracy.sh for the all-rules run; removed when it ends."
  for id in "${opt_in[@]}"; do printf '[rules.%s]\nenabled = true\n' "$id"; done
} > "$config"
run_nb "${cmd[@]}" --output "$tmp/all-rules.json"
rm -f "$config"
wrote_config=0

opt_csv="$(IFS=,; echo "${opt_in[*]}")"
python3 scripts/accuracy.py \
  --run default="$tmp/default.json" \
  --run windows="$tmp/windows.json" \
  --run libraries="$tmp/libraries.json" \
  --run all-rules="$tmp/all-rules.json" \
  --command default="cargo-nonblock ${cmd[*]}" \
  --command windows="cargo-nonblock ${cmd[*]} --target x86_64-pc-windows-msvc" \
  --command libraries="scripts/corpus.py --target host --keep tests/realworld/Cargo.toml (cargo-nonblock nonblock --manifest-path COPY/Cargo.toml --offline --format json --fail-on never, per crate)" \
  --command all-rules="cargo-nonblock ${cmd[*]}" \
  --opt-in "$opt_csv" \
  --review tests/realworld/review.toml \
  --out docs/accuracy.md \
  ${ACCURACY_DATE:+--date "$ACCURACY_DATE"}

if [[ -n "${KEEP:-}" ]]; then
  mkdir -p "$KEEP"
  for run in default windows libraries all-rules; do cp "$tmp/$run.json" "$KEEP/$run.json"; done
fi

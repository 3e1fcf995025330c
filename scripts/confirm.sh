#!/usr/bin/env bash
# Full confirmation runs: the seed demos and every rule category, on real 4-worker runtimes, in
# release mode. Regenerates docs/confirmation.md (tables with median and spread over runs, next
# to the seeds' published numbers) and the SVG charts in docs/plots/.
#
#   scripts/confirm.sh                 # 10 runs per scenario, ~20 minutes on 2 CPUs
#   RUNS=20 scripts/confirm.sh         # more runs
#   scripts/confirm.sh --quick         # extra arguments go to `confirm` (CI-sized points)
#
# Environment: RUNS (10), WORKERS (4), BUDGET (40 s per seed point: points whose runs would take
# longer get fewer runs; the 2000-concurrent per-request point is one run of ~150 s, and seed 002's
# 1000 one-second waits on the blocking pool of 20 threads and on the workers are one run of 50 s
# and 250 s).
# Run it on a machine that is otherwise quiet: other load shows up as scheduling delay.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-10}"
WORKERS="${WORKERS:-4}"
BUDGET="${BUDGET:-40}"

cargo build --release -q -p bench-fixtures --bin confirm
mkdir -p docs/plots
rm -f docs/plots/*.svg

status=0
cargo run --release -q -p bench-fixtures --bin confirm -- \
  --all --workers "$WORKERS" --runs "$RUNS" --budget "$BUDGET" \
  --plot docs/plots --markdown docs/confirmation.md "$@" || status=$?

case "$status" in
  0) echo "all confirmations held; docs/confirmation.md and docs/plots/ regenerated" ;;
  1) echo "docs regenerated; some verdicts differ from the expectation (see docs/confirmation.md)" ;;
  *) echo "confirm failed (exit $status)" >&2; exit "$status" ;;
esac

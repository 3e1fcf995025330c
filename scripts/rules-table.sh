#!/usr/bin/env bash
# Prints the README's rule table, generated from the rule database: one row per rule (id, name,
# category, default severity, number of API patterns) and the totals (rules, API patterns,
# distinct crates named by the patterns' first path segment; `std` counts as one crate and the
# primitive `str` as none). Paste the output between the `rules-table` markers in README.md;
# tests/tests/rule_coverage.rs fails when the README and the database disagree.
#
#   scripts/rules-table.sh            # needs cargo and jq
set -euo pipefail
cd "$(dirname "$0")/.."

nonblock() { cargo run -q -p cargo-nonblock -- nonblock "$@"; }

json=$(nonblock rules --format json)

echo '| id | name | category | severity | APIs |'
echo '|---|---|---|---|---|'
jq -r '.[] | "| \(.id) | \(.name) | \(.category) | \(.severity)\(if .enabled_by_default then "" else " (opt-in)" end) | \(if .apis == 0 and .category == "ffi" then "every `extern` fn" else .apis end) |"' <<<"$json"

rules=$(jq 'length' <<<"$json")
apis=$(jq '[.[].apis] | add' <<<"$json")
crates=$(
  for id in $(jq -r '.[].id' <<<"$json"); do
    # `explain` lists the patterns after "APIs matched:", one per line: "  path  →  alternative".
    nonblock explain "$id" | sed -n '/^APIs matched:$/,$p' | sed -n 's/^  \([A-Za-z_][A-Za-z0-9_]*\)::.*/\1/p'
  done | grep -vx 'str' | sort -u | wc -l | tr -d ' '
)
echo
echo "Totals: $rules rules, $apis API patterns, $crates crates named by API patterns."

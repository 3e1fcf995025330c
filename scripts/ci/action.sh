#!/usr/bin/env bash
# The logic of the composite GitHub Action (action.yml at the repository root), kept here so that
# it can be run and tested outside GitHub: crates/cargo-nonblock/tests/ci.rs runs it with the
# GITHUB_* variables pointing at temporary files.
#
#   action.sh key       cache key and install root of the tool     → $GITHUB_OUTPUT: key, root
#   action.sh install   cargo install from the action's own checkout, unless the cache restored
#                       it                                          → $GITHUB_OUTPUT: bin; $GITHUB_PATH
#   action.sh scan      SARIF file, annotations, step summary       → $GITHUB_OUTPUT: findings,
#                                                                     errors, warnings, exit-code,
#                                                                     sarif-file; $GITHUB_STEP_SUMMARY
#   action.sh verdict   exits with the scan's exit code (after the SARIF upload has run)
#
# Inputs come as environment variables (action.yml maps its inputs to them):
#   NONBLOCK_ACTION_PATH   the action's checkout (default: this script's repository)
#   NONBLOCK_ROOT          install root (key: default $RUNNER_TEMP/cargo-nonblock)
#   NONBLOCK_BIN           the cargo-nonblock binary to run (scan: default cargo-nonblock on PATH)
#   NONBLOCK_MANIFEST_PATH Cargo.toml of the workspace to scan (default: cargo's own search)
#   NONBLOCK_ARGS          further arguments, split on whitespace
#   NONBLOCK_FAIL_ON       error | warning | never (default warning)
#   NONBLOCK_SARIF         where to write the SARIF log (default nonblock.sarif)
#   NONBLOCK_ANNOTATIONS   true | false (default true)
#   NONBLOCK_SUMMARY       true | false (default true)
#   NONBLOCK_UPLOAD        true | false: whether the SARIF is uploaded to code scanning (the
#                          summary says where the full list is)
#   NONBLOCK_EXIT_CODE     verdict: the scan's exit-code output
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_path=${NONBLOCK_ACTION_PATH:-$(cd "$here/../.." && pwd)}

die() {
  echo "::error title=cargo-nonblock::$*"
  exit 2
}

# `name=value` to a GitHub file ($GITHUB_OUTPUT); to stdout when it is not set (a local run).
output() {
  if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  else
    printf '%s=%s\n' "$1" "$2"
  fi
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum | cut -d' ' -f1
  else
    shasum -a 256 | cut -d' ' -f1
  fi
}

# The binary depends on the sources it is built from and on the toolchain that builds it (its
# version and host triple): the key hashes both, so a new release or toolchain rebuilds it.
cmd_key() {
  command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH: install a Rust toolchain first (dtolnay/rust-toolchain)"
  local hash
  # rustc in the working directory: a rust-toolchain.toml there picks the toolchain that
  # `cargo install` below builds with.
  hash=$(
    {
      rustc -vV
      cd "$action_path"
      find Cargo.toml Cargo.lock rules crates/analyzer crates/cargo-nonblock \
        -type f \( -name '*.rs' -o -name '*.toml' -o -name Cargo.lock \) \
        -not -path '*/target/*' -not -path '*/tests/*' | LC_ALL=C sort | while read -r f; do
        printf '%s ' "$f"
        sha256 <"$f"
      done
    } | sha256
  )
  output key "cargo-nonblock-${RUNNER_OS:-$(uname -s)}-${hash:0:20}"
  output root "${NONBLOCK_ROOT:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/cargo-nonblock}"
}

cmd_install() {
  local root=${NONBLOCK_ROOT:?NONBLOCK_ROOT: the install root (from action.sh key)}
  local exe=cargo-nonblock
  [[ ${RUNNER_OS:-} == Windows ]] && exe=cargo-nonblock.exe
  if [[ -x "$root/bin/$exe" ]] && "$root/bin/$exe" --version >/dev/null 2>&1; then
    echo "cargo-nonblock: $("$root/bin/$exe" --version) restored from the cache"
  else
    # From the action's own checkout: the release the workflow names is the one that runs.
    cargo install --locked --path "$action_path/crates/cargo-nonblock" --root "$root"
  fi
  [[ -n ${GITHUB_PATH:-} ]] && echo "$root/bin" >>"$GITHUB_PATH"
  output bin "$root/bin/$exe"
}

cmd_scan() {
  local bin=${NONBLOCK_BIN:-cargo-nonblock}
  local fail_on=${NONBLOCK_FAIL_ON:-warning}
  local sarif=${NONBLOCK_SARIF:-nonblock.sarif}
  local summary_file=${GITHUB_STEP_SUMMARY:-/dev/null}
  case $fail_on in error | warning | never) ;; *) die "fail-on: expected error, warning or never, not '$fail_on'" ;; esac
  [[ -n $sarif ]] || die "sarif-file must name a file"

  local -a common=() extra=()
  [[ -n ${NONBLOCK_MANIFEST_PATH:-} ]] && common+=(--manifest-path "$NONBLOCK_MANIFEST_PATH")
  read -r -a extra <<<"${NONBLOCK_ARGS:-}"
  local a
  for a in ${extra[@]+"${extra[@]}"}; do
    case $a in
      --format | --format=* | --output | --output=* | -o* | --message-format | --message-format=* | \
        --fail-on | --fail-on=* | -q | --quiet)
        die "args: '$a' is set by the action (use its inputs fail-on, sarif-file, annotations, summary)"
        ;;
    esac
  done
  # `${a[@]+…}`: an empty array is "unbound" to bash before 4.4 (macOS's /bin/bash) under set -u.
  common+=(${extra[@]+"${extra[@]}"})

  # 1. The SARIF log: every finding, and the run's verdict under --fail-on. The summary line on
  #    stderr gives the counts.
  local log status
  log=$(mktemp)
  set +e
  "$bin" nonblock ${common[@]+"${common[@]}"} --format sarif --output "$sarif" --fail-on "$fail_on" 2>"$log"
  status=$?
  set -e
  cat "$log" >&2
  output exit-code "$status"
  if [[ $status -ne 0 && $status -ne 1 ]]; then
    {
      echo "## cargo-nonblock: the run failed (exit $status)"
      echo
      echo '```text'
      tail -n 20 "$log"
      echo '```'
    } >>"$summary_file"
    rm -f "$log"
    [[ -s $sarif ]] && output sarif-file "$sarif"
    echo "::error title=cargo-nonblock::the run failed (exit $status): see the log above"
    return 0
  fi
  output sarif-file "$sarif"
  # `nonblock: 11 findings (4 errors, 7 warnings); …` (render::human::summary_line).
  local counts
  counts=$(sed -nE 's/^nonblock: ([0-9]+) findings? \(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2 \3/p' "$log" | tail -n 1)
  rm -f "$log"
  [[ -n $counts ]] || die "no summary line from cargo-nonblock on stderr"
  local findings errors warnings
  read -r findings errors warnings <<<"$counts"
  output findings "$findings"
  output errors "$errors"
  output warnings "$warnings"

  # 2. Annotations, most severe first and capped as GitHub shows them (render::github).
  if [[ ${NONBLOCK_ANNOTATIONS:-true} == true ]]; then
    "$bin" nonblock ${common[@]+"${common[@]}"} --format github --fail-on never --quiet
  fi

  # 3. The step summary: counts per rule, the most severe findings with their paths.
  if [[ ${NONBLOCK_SUMMARY:-true} == true ]]; then
    local md
    md=$(mktemp)
    "$bin" nonblock ${common[@]+"${common[@]}"} --format summary --output "$md" --fail-on never --quiet
    {
      cat "$md"
      echo
      if [[ ${NONBLOCK_UPLOAD:-false} == true ]]; then
        echo "The SARIF log \`$sarif\` is uploaded to code scanning (Security → Code scanning, category \`${NONBLOCK_CATEGORY:-cargo-nonblock}\`): every finding is there, with its whole path."
      else
        echo "The SARIF log \`$sarif\` holds every finding, with its whole path (set \`upload-sarif: true\` to send it to code scanning)."
      fi
    } >>"$summary_file"
    rm -f "$md"
  fi
}

cmd_verdict() {
  local code=${NONBLOCK_EXIT_CODE:?NONBLOCK_EXIT_CODE: the exit-code output of the scan}
  case $code in
    0) echo "cargo-nonblock: nothing at or above --fail-on ${NONBLOCK_FAIL_ON:-warning}" ;;
    1) echo "cargo-nonblock: findings at or above --fail-on ${NONBLOCK_FAIL_ON:-warning}: see the annotations and the step summary" >&2 ;;
    *) echo "cargo-nonblock: the run failed (exit $code)" >&2 ;;
  esac
  exit "$code"
}

case ${1:-} in
  key) cmd_key ;;
  install) cmd_install ;;
  scan) cmd_scan ;;
  verdict) cmd_verdict ;;
  *)
    echo "usage: $0 key|install|scan|verdict (see the comment at the top)" >&2
    exit 2
    ;;
esac

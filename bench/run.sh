#!/usr/bin/env bash
# cargo-nonblock performance benchmark (issue 8). Never run as a test: it takes ~30 minutes.
#
#   bench/run.sh [--runs N] [--check-runs N] [--rss-runs N] [--threads N] [--out FILE] [--quick]
#                [--app NAME=WORKSPACE_DIR:EDIT_FILE ...] [--apps-only]
#
# Measures, on bench/workspaces/large (a service-like workspace, ~290 packages in its normal
# dependency graph):
#   - cargo check, cold: empty CARGO_TARGET_DIR per run, crates already downloaded, --offline
#   - cargo nonblock, cold: empty cache dir per run (the run writes the cache, as a first run does)
#   - cargo nonblock, --no-cache (neither reads nor writes the cache)
#   - cargo nonblock, warm, no change
#   - cargo nonblock, warm, one workspace file edited before each run (restored afterwards)
#   - throughput: whole pipeline vs syn::parse_file on the same files, same thread count
#     (crates/analyzer/examples/throughput.rs)
#   - peak RSS (/usr/bin/time -v, "Maximum resident set size") for cold and warm runs
#   - scaling: cold time and RSS with 25 %, 50 %, 100 % of the graph's source bytes analysed
#     (copies of the workspace whose nonblock.toml `skip`s a deterministic pseudo-random set of
#     dependency crates; discovery and `cargo metadata` still see the whole graph)
#   - findings: warm peak RSS of a copy with ~2000 extra findings vs a copy with the same code and none
# and, for each --app (a public application checked out at WORKSPACE_DIR, its dependencies
# already downloaded; EDIT_FILE a member source file relative to it): cold, warm no change, warm
# with EDIT_FILE edited, peak RSS cold and warm, in their own target dir (never the app's). `cargo
# check` is not run on apps (deno's needs V8 prebuilt from GitHub, out of reach here); --apps-only
# skips everything but the apps (and the build).
# Timings are hyperfine medians with min-max. Results: a markdown report (--out, default
# $NB_BENCH_DIR/results.md) and the table on stdout. Raw data stays in $NB_BENCH_DIR (/tmp/nb-bench).
#
# Binaries are built once into $NB_BENCH_DIR/target and copied to $NB_BENCH_DIR/bin, so edits to
# the repository during the run do not change what is measured.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WS="$ROOT/bench/workspaces/large"
DIR="${NB_BENCH_DIR:-/tmp/nb-bench}"
RUNS=5
CHECK_RUNS=3
RSS_RUNS=3
THREADS="$(nproc)"
OUT=""
APPS=()
APPS_ONLY=0

COMMAND_LINE="bench/run.sh $*"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS="$2"; shift 2 ;;
        --check-runs) CHECK_RUNS="$2"; shift 2 ;;
        --rss-runs) RSS_RUNS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        --quick) RUNS=2; CHECK_RUNS=1; RSS_RUNS=1; shift ;;
        --app) APPS+=("$2"); shift 2 ;;
        --apps-only) APPS_ONLY=1; shift ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
OUT="${OUT:-$DIR/results.md}"

for tool in hyperfine python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || {
        echo "run.sh: $tool is required (cargo install hyperfine --locked; apt-get install time)" >&2
        exit 2
    }
done

mkdir -p "$DIR/raw" "$DIR/bin"
RAW="$DIR/raw"
rm -f "$RAW"/*
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
log() { echo "[$(date +%H:%M:%S) load $(loadavg)] $*" >&2; }
echo "$(loadavg)" > "$RAW/load_before"
date -u +"%Y-%m-%d %H:%M UTC" > "$RAW/date"

# ---------------------------------------------------------------------------------------------
log "building release binaries (CARGO_TARGET_DIR=$DIR/target)"
git -C "$ROOT" rev-parse HEAD > "$RAW/commit"
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no -- crates)" ]; then
    echo "dirty" > "$RAW/dirty"
    git -C "$ROOT" status --porcelain --untracked-files=no -- crates | tr '\n' ' ' > "$RAW/dirty_files"
    git -C "$ROOT" diff -- crates | sha256sum | cut -c1-16 > "$RAW/dirty_hash"
else
    echo "clean" > "$RAW/dirty"
fi
(cd "$ROOT" && CARGO_TARGET_DIR="$DIR/target" cargo build --release --quiet \
    -p cargo-nonblock -p nonblock-analyzer --bin cargo-nonblock --example throughput)
cp "$DIR/target/release/cargo-nonblock" "$DIR/bin/cargo-nonblock"
cp "$DIR/target/release/examples/throughput" "$DIR/bin/throughput"
NB="$DIR/bin/cargo-nonblock"
TP="$DIR/bin/throughput"
rustc -V > "$RAW/rustc"
cargo -V > "$RAW/cargo"
(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'; nproc; free -g | awk '/Mem:/{print $2" GiB"}') > "$RAW/machine"

hf() { # name, runs, extra hyperfine args..., command
    local name="$1" runs="$2"; shift 2
    hyperfine --style none --runs "$runs" --export-json "$RAW/$name.json" "$@" >"$RAW/$name.txt" 2>&1 \
        || { cat "$RAW/$name.txt" >&2; exit 1; }
}

rss() { # name, runs, prepare-cmd, cmd...
    local name="$1" runs="$2" prep="$3"; shift 3
    : > "$RAW/rss_$name"
    for _ in $(seq "$runs"); do
        eval "$prep"
        /usr/bin/time -v "$@" >/dev/null 2>"$RAW/time_$name.txt" || true
        awk -F: '/Maximum resident set size/{gsub(/ /,"",$2); print $2}' "$RAW/time_$name.txt" >> "$RAW/rss_$name"
    done
}

if [ "$APPS_ONLY" = 0 ]; then
log "cargo fetch"
cargo fetch --manifest-path "$WS/Cargo.toml" --locked --quiet

# The nonblock runs use their own target dir (the cache lives in <target>/nonblock/cache).
NBT="$DIR/nb-target"
CACHE="$NBT/nonblock"  # every cache: lowered crates, the last report, cargo metadata
NBCMD="CARGO_TARGET_DIR=$NBT $NB nonblock --manifest-path $WS/Cargo.toml --offline --locked --fail-on never --color never -q"

# One-edit target: a member file, restored on exit whatever happens.
EDIT_FILE="$WS/crates/api/src/handlers.rs"
cp "$EDIT_FILE" "$DIR/edit-file.orig"
restore() { cp "$DIR/edit-file.orig" "$EDIT_FILE"; }
trap restore EXIT
cat > "$DIR/edit.sh" <<EOF
#!/usr/bin/env bash
# Restores the pristine file, then appends a new function (a different one every run).
cp "$DIR/edit-file.orig" "$EDIT_FILE"
n=\$(date +%s%N)
printf '\npub async fn bench_edit_%s() -> u64 {\n    %s\n}\n' "\$n" "\$n" >> "$EDIT_FILE"
EOF
chmod +x "$DIR/edit.sh"

# Findings, per run, for the report.
env CARGO_TARGET_DIR="$NBT" "$NB" nonblock --manifest-path "$WS/Cargo.toml" --offline --locked \
    --fail-on never --format json --output "$RAW/report.json" -q --no-cache 2>/dev/null || true


# ---------------------------------------------------------------------------------------------
log "cargo check cold x$CHECK_RUNS"
echo "$(loadavg)" > "$RAW/load_check_before"
if [ "$CHECK_RUNS" -gt 0 ]; then  # --check-runs 0: skip (only to try the script quickly)
    hf check_cold "$CHECK_RUNS" --prepare "rm -rf $DIR/check-target" \
        "CARGO_TARGET_DIR=$DIR/check-target cargo check --offline --locked --quiet --manifest-path $WS/Cargo.toml"
    rm -rf "$DIR/check-target"
fi
echo "$(loadavg)" > "$RAW/load_check_after"

log "nonblock cold (empty cache) x$RUNS"
hf nb_cold "$RUNS" --prepare "rm -rf $CACHE" "$NBCMD"
log "nonblock --no-cache x$RUNS"
hf nb_nocache "$RUNS" "$NBCMD --no-cache"
log "nonblock warm no-change x$RUNS"
hf nb_warm "$RUNS" --warmup 1 "$NBCMD"
log "nonblock warm one-edit x$RUNS"
hf nb_edit "$RUNS" --warmup 1 --prepare "$DIR/edit.sh" "$NBCMD"
restore
# Phase breakdown of a warm one-edit run and a warm no-change run (-v), for the report.
"$DIR/edit.sh"
env CARGO_TARGET_DIR="$NBT" "$NB" nonblock --manifest-path "$WS/Cargo.toml" --offline --locked \
    --fail-on never --color never -v >/dev/null 2>"$RAW/phases_edit.txt" || true
restore
env CARGO_TARGET_DIR="$NBT" "$NB" nonblock --manifest-path "$WS/Cargo.toml" --offline --locked \
    --fail-on never --color never -v >/dev/null 2>"$RAW/phases_warm.txt" || true
rm -rf "$CACHE"
env CARGO_TARGET_DIR="$NBT" "$NB" nonblock --manifest-path "$WS/Cargo.toml" --offline --locked \
    --fail-on never --color never -v >/dev/null 2>"$RAW/phases_cold.txt" || true

# ---------------------------------------------------------------------------------------------
NBARGS=(nonblock --manifest-path "$WS/Cargo.toml" --offline --locked --fail-on never --color never -q)
log "peak RSS cold/warm x$RSS_RUNS"
rss cold "$RSS_RUNS" "rm -rf $CACHE" env CARGO_TARGET_DIR="$NBT" "$NB" "${NBARGS[@]}"
rss nocache "$RSS_RUNS" ":" env CARGO_TARGET_DIR="$NBT" "$NB" "${NBARGS[@]}" --no-cache
rss warm "$RSS_RUNS" ":" env CARGO_TARGET_DIR="$NBT" "$NB" "${NBARGS[@]}"

# ---------------------------------------------------------------------------------------------
log "throughput micro-benchmark (threads $THREADS, iters $RUNS)"
"$TP" --manifest-path "$WS/Cargo.toml" --threads "$THREADS" --iters "$RUNS" \
    --json-out "$RAW/throughput.json" > "$RAW/throughput.txt"

# ---------------------------------------------------------------------------------------------
log "scaling: 25 / 50 / 100 % of the graph"
"$TP" --manifest-path "$WS/Cargo.toml" --list-units > "$RAW/units.tsv"
for pct in 25 50 100; do
    copy="$DIR/scale-$pct"
    rm -rf "$copy"
    mkdir -p "$copy"
    (cd "$WS" && tar --exclude=./target -cf - .) | (cd "$copy" && tar -xf -)
    # Skip dependency crates, in a fixed pseudo-random order (sha256 of the crate name), until the
    # remaining dependency bytes are pct % of the total. Members are always analysed.
    python3 - "$RAW/units.tsv" "$pct" > "$copy/nonblock.toml" <<'EOF'
import hashlib, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
pct = int(sys.argv[2])
by_crate = {}
for crate, package, member, size in rows:
    if member == "true":
        continue
    by_crate[crate] = by_crate.get(crate, 0) + int(size)
total = sum(int(r[3]) for r in rows)
drop = total * (100 - pct) / 100
skip, skipped = [], 0
for crate in sorted(by_crate, key=lambda c: hashlib.sha256(c.encode()).hexdigest()):
    if skipped + by_crate[crate] / 2 > drop:
        continue
    skip.append(crate)
    skipped += by_crate[crate]
print("# generated by bench/run.sh: analyse ~%d %% of the graph's source bytes" % pct)
print("skip = [" + ", ".join('"%s"' % c for c in sorted(skip)) + "]")
EOF
    env CARGO_TARGET_DIR="$DIR/scale-target" "$NB" nonblock --manifest-path "$copy/Cargo.toml" \
        --offline --locked --fail-on never --no-cache --format json --output "$RAW/scale_report_$pct.json" -q 2>/dev/null || true
    hf "scale_$pct" "$RUNS" \
        "CARGO_TARGET_DIR=$DIR/scale-target $NB nonblock --manifest-path $copy/Cargo.toml --offline --locked --fail-on never -q --no-cache"
    rss "scale_$pct" "$RSS_RUNS" ":" env CARGO_TARGET_DIR="$DIR/scale-target" "$NB" nonblock \
        --manifest-path "$copy/Cargo.toml" --offline --locked --fail-on never -q --no-cache
done

# ---------------------------------------------------------------------------------------------
log "findings vs memory: a copy with ~2000 extra findings vs a copy with the same code and none"
for variant in many control; do
    copy="$DIR/$variant-findings"
    rm -rf "$copy"
    mkdir -p "$copy"
    (cd "$WS" && tar --exclude=./target -cf - .) | (cd "$copy" && tar -xf -)
    # 1000 async fns; in `many` each makes two blocking calls, in `control` two harmless ones.
    python3 - "$copy/crates/api/src/many.rs" "$variant" <<'EOF'
import sys
path, variant = sys.argv[1], sys.argv[2]
with open(path, "w") as f:
    for i in range(1000):
        f.write("pub async fn many_%d(p: &str) -> usize {\n" % i)
        if variant == "many":
            f.write("    std::thread::sleep(std::time::Duration::from_millis(%d));\n" % i)
            f.write("    std::fs::read_to_string(p).map(|s| s.len()).unwrap_or(0)\n}\n")
        else:
            f.write("    std::hint::black_box(std::time::Duration::from_millis(%d));\n" % i)
            f.write("    std::str::from_utf8(p.as_bytes()).map(|s| s.len()).unwrap_or(0)\n}\n")
EOF
    sed -i '0,/^mod auth;/s//mod auth;\nmod many;/' "$copy/crates/api/src/main.rs"
    MF=(nonblock --manifest-path "$copy/Cargo.toml" --offline --locked --fail-on never --color never)
    env CARGO_TARGET_DIR="$DIR/$variant-target" "$NB" "${MF[@]}" --format json --output "$RAW/$variant.json" -q 2>/dev/null || true
    rss "${variant}_human" "$RSS_RUNS" ":" env CARGO_TARGET_DIR="$DIR/$variant-target" "$NB" "${MF[@]}"
    rss "${variant}_json" "$RSS_RUNS" ":" env CARGO_TARGET_DIR="$DIR/$variant-target" "$NB" "${MF[@]}" --format json
done

fi

# ---------------------------------------------------------------------------------------------
# Public applications (--app): the same cold / warm / one-edit / RSS measurements, one app at a time.
app_bench() { # name, workspace dir, edit file (relative)
    local name="$1" ws="$2"
    local edit="$ws/$3" t="$DIR/app-$name-target"
    # Apps pin toolchains that may not be installed (lemmy: 1.81); the tool reads the same
    # source with any recent one.
    export RUSTUP_TOOLCHAIN="${RUSTUP_TOOLCHAIN:-stable}"
    local cmd="CARGO_TARGET_DIR=$t $NB nonblock --manifest-path $ws/Cargo.toml --offline --fail-on never --color never -q"
    [ -f "$edit" ] || { echo "run.sh: --app $name: no file $edit" >&2; exit 2; }
    cp "$edit" "$DIR/app-$name-edit.orig"
    trap "cp '$DIR/app-$name-edit.orig' '$edit'" EXIT
    cat > "$DIR/app-$name-edit.sh" <<EOF2
#!/usr/bin/env bash
cp "$DIR/app-$name-edit.orig" "$edit"
n=\$(date +%s%N)
printf '\npub fn bench_edit_%s() -> u64 {\n    %s\n}\n' "\$n" "\$n" >> "$edit"
EOF2
    chmod +x "$DIR/app-$name-edit.sh"
    log "app $name: report"
    rm -rf "$t/nonblock"
    env CARGO_TARGET_DIR="$t" "$NB" nonblock --manifest-path "$ws/Cargo.toml" --offline --fail-on never \
        --format json --output "$RAW/app_${name}_report.json" -v 2>"$RAW/app_${name}_phases_cold.txt" || true
    log "app $name: cold x$RUNS, warm x$RUNS, one-edit x$RUNS"
    hf "app_${name}_cold" "$RUNS" --prepare "rm -rf $t/nonblock" "$cmd"
    hf "app_${name}_warm" "$RUNS" --warmup 1 "$cmd"
    hf "app_${name}_edit" "$RUNS" --warmup 1 --prepare "$DIR/app-$name-edit.sh" "$cmd"
    cp "$DIR/app-$name-edit.orig" "$edit"
    log "app $name: peak RSS cold/warm x$RSS_RUNS"
    rss "app_${name}_cold" "$RSS_RUNS" "rm -rf $t/nonblock" env CARGO_TARGET_DIR="$t" "$NB" nonblock \
        --manifest-path "$ws/Cargo.toml" --offline --fail-on never -q
    rss "app_${name}_warm" "$RSS_RUNS" ":" env CARGO_TARGET_DIR="$t" "$NB" nonblock \
        --manifest-path "$ws/Cargo.toml" --offline --fail-on never -q
    "$DIR/app-$name-edit.sh"
    env CARGO_TARGET_DIR="$t" "$NB" nonblock --manifest-path "$ws/Cargo.toml" --offline --fail-on never \
        --color never -v >/dev/null 2>"$RAW/app_${name}_phases_edit.txt" || true
    cp "$DIR/app-$name-edit.orig" "$edit"
    trap - EXIT
    rm -rf "$t"
    echo "$name" >> "$RAW/apps"
}
: > "$RAW/apps"
for spec in "${APPS[@]}"; do
    name="${spec%%=*}"; rest="${spec#*=}"
    app_bench "$name" "${rest%%:*}" "${rest#*:}"
done

echo "$(loadavg)" > "$RAW/load_after"
log "done; writing $OUT"

# ---------------------------------------------------------------------------------------------
python3 - "$RAW" "$OUT" "$COMMAND_LINE" "$THREADS" "$DIR" <<'EOF'
import json, os, statistics, sys
raw, out, command, threads, bdir = sys.argv[1:6]
def rd(name):
    return open(os.path.join(raw, name)).read().strip()
def times(name):
    return json.load(open(os.path.join(raw, name + ".json")))["results"][0]["times"]
def cpu(name):  # mean user + system seconds per run (hyperfine)
    if not os.path.exists(os.path.join(raw, name + ".json")):
        return float("nan")
    r = json.load(open(os.path.join(raw, name + ".json")))["results"][0]
    return r["user"] + r["system"]
def fmt_s(v):
    return ("%.2f s" % v) if v >= 1 else ("%.0f ms" % (v * 1000))
def cell(v):
    return "%s [%s–%s]" % (fmt_s(statistics.median(v)), fmt_s(min(v)), fmt_s(max(v)))
def rss(name):
    return [int(x) / 1024.0 for x in open(os.path.join(raw, "rss_" + name)).read().split()]
def cell_mb(v):
    return "%.0f MiB [%.0f–%.0f]" % (statistics.median(v), min(v), max(v))
med = lambda v: statistics.median(v)

L = []
L.append("Command: `%s` (threads %s)  " % (command, threads))
L.append("Date: %s  " % rd("date"))
m = rd("machine").splitlines()
L.append("Machine: %s, %s cores, %s RAM; %s; %s  " % (m[0], m[1], m[2], rd("rustc"), rd("cargo")))
L.append("Load average (1/5/15 min) before: %s, after: %s. "
         "The machine is shared with other work; numbers include that noise.  "
         % (rd("load_before"), rd("load_after")))
dirty = rd("dirty")
if dirty == "dirty":
    dirty = "dirty at build time: %s; `git diff -- crates | sha256sum` = %s" % (rd("dirty_files"), rd("dirty_hash"))
else:
    dirty = "clean at build time"
L.append("Commit: `%s` (crates/ %s)  " % (rd("commit"), dirty))
large = os.path.exists(os.path.join(raw, "nb_cold.json"))
if large:
    cold, nocache, warm, edit = (times(n) for n in ("nb_cold", "nb_nocache", "nb_warm", "nb_edit"))
    check = times("check_cold") if os.path.exists(os.path.join(raw, "check_cold.json")) else [float("nan")]
    tp = json.load(open(os.path.join(raw, "throughput.json")))
    rep = json.load(open(os.path.join(raw, "report.json")))
    st = rep["stats"]
    r_cold, r_nocache, r_warm = rss("cold"), rss("nocache"), rss("warm")
    peak = max(med(r_cold), med(r_nocache), med(r_warm))
    ok = lambda b: "**met**" if b else "**missed**"

    L.append("Load average in the cargo check section: %s → %s.  " % (rd("load_check_before"), rd("load_check_after")))
    L.append("Workspace: `bench/workspaces/large`: %d packages, %d files, %.1f MB of Rust analysed; %d findings."
             % (st["packages"], st["files"], st["bytes"] / 1e6, len(rep["findings"])))
    L.append("")
    L.append("| measurement | wall, median [min–max] | runs | CPU user+sys (mean) | ratio / target | verdict |")
    L.append("|---|---|---|---|---|---|")
    L.append("| cargo check, cold (empty target dir, `--offline`) | %s | %d | %s | — | — |" % (cell(check), len(check), fmt_s(cpu("check_cold"))))
    rc = med(cold) / med(check)
    L.append("| cargo nonblock, cold (empty cache; writes it) | %s | %d | %s | %.1f %% of cargo check (target ≤ 15 %%); CPU: %.1f %% | %s |"
             % (cell(cold), len(cold), fmt_s(cpu("nb_cold")), 100 * rc, 100 * cpu("nb_cold") / cpu("check_cold"), ok(rc <= 0.15)))
    rn = med(nocache) / med(check)
    L.append("| cargo nonblock, `--no-cache` | %s | %d | %s | %.1f %% of cargo check; CPU: %.1f %% | — |"
             % (cell(nocache), len(nocache), fmt_s(cpu("nb_nocache")), 100 * rn, 100 * cpu("nb_nocache") / cpu("check_cold")))
    L.append("| cargo nonblock, warm, no change | %s | %d | %s | target < 0.5 s and < one-edit (%.1f× 0.5 s) | %s |"
             % (cell(warm), len(warm), fmt_s(cpu("nb_warm")), med(warm) / 0.5, ok(med(warm) < 0.5 and med(warm) <= med(edit))))
    L.append("| cargo nonblock, warm, one member file edited | %s | %d | %s | target ≤ 0.5 s (%.1f×) | %s |"
             % (cell(edit), len(edit), fmt_s(cpu("nb_edit")), med(edit) / 0.5, ok(med(edit) <= 0.5)))
    sp, pl = tp["syn_parse_s"], tp["pipeline_s"]
    L.append("| syn::parse_file, same files, %d threads (in memory) | %.2f s [%.2f–%.2f] = %.1f MB/s | %d | %s | — | — |"
             % (tp["threads"], sp[0], sp[1], sp[2], tp["syn_mb_s"], tp["iters"], fmt_s(tp["syn_cpu_s"])))
    rr = tp["round_ratio"]
    L.append("| whole pipeline (`analyze`, no cache), %d threads | %.2f s [%.2f–%.2f] = %.1f MB/s | %d | %s | %.1f %% of syn (target ≥ 70 %%); per round %.1f %% [%.1f–%.1f]; CPU: %.1f %% | %s |"
             % (tp["threads"], pl[0], pl[1], pl[2], tp["pipeline_mb_s"], tp["iters"], fmt_s(tp["pipeline_cpu_s"]),
                100 * tp["ratio"], 100 * rr[0], 100 * rr[1], 100 * rr[2], 100 * tp["cpu_ratio"], ok(tp["ratio"] >= 0.7)))
    L.append("| peak RSS, cold | %s | %d | | target ≤ 1024 MiB | %s |" % (cell_mb(r_cold), len(r_cold), ok(med(r_cold) <= 1024)))
    L.append("| peak RSS, `--no-cache` | %s | %d | | target ≤ 1024 MiB | %s |" % (cell_mb(r_nocache), len(r_nocache), ok(med(r_nocache) <= 1024)))
    L.append("| peak RSS, warm | %s | %d | | target ≤ 1024 MiB | %s |" % (cell_mb(r_warm), len(r_warm), ok(med(r_warm) <= 1024)))
    L.append("")
    L.append("Throughput detail (`crates/analyzer/examples/throughput.rs`):")
    L.append("")
    L.append("```text")
    L.append(rd("throughput.txt"))
    L.append("```")
    L.append("")
    L.append("Scaling (`--no-cache`, cold; a copy of the workspace whose `nonblock.toml` skips a fixed "
             "pseudo-random set of dependency crates; discovery still sees all packages):")
    L.append("")
    units = [l.split("\t") for l in rd("units.tsv").splitlines()]
    L.append("| share of graph | crate units analysed (of %d) | files | MB of source | wall, median [min–max] | CPU user+sys (mean) | CPU s per MB | peak RSS | MiB per MB |" % len(units))
    L.append("|---|---|---|---|---|---|---|---|---|")
    for pct in (25, 50, 100):
        s = json.load(open(os.path.join(raw, "scale_report_%d.json" % pct)))["stats"]
        t, r = times("scale_%d" % pct), rss("scale_%d" % pct)
        toml = open(os.path.join(bdir, "scale-%d" % pct, "nonblock.toml")).read()
        skip = set(x.strip().strip('"') for x in toml.split("[", 1)[1].split("]", 1)[0].split(",") if x.strip())
        analysed = sum(1 for u in units if u[0] not in skip)
        mb = s["bytes"] / 1e6
        c = cpu("scale_%d" % pct)
        L.append("| %d %% | %d | %d | %.1f | %s | %s | %.3f | %s | %.1f |"
                 % (pct, analysed, s["files"], mb, cell(t), fmt_s(c), c / mb, cell_mb(r), med(r) / mb))
    L.append("")
    many = json.load(open(os.path.join(raw, "many.json")))
    control = json.load(open(os.path.join(raw, "control.json")))
    L.append("Findings vs memory (warm runs, peak RSS; two copies of the workspace with 1000 extra async fns each, "
             "making two blocking calls in one copy and two harmless calls in the other):")
    L.append("")
    L.append("| copy | findings | human output | JSON output |")
    L.append("|---|---|---|---|")
    for name, r in (("control", control), ("many", many)):
        L.append("| %s | %d | %s | %s |" % (name, len(r["findings"]), cell_mb(rss(name + "_human")), cell_mb(rss(name + "_json"))))
    d = med(rss("many_json")) - med(rss("control_json"))
    n = len(many["findings"]) - len(control["findings"])
    L.append("")
    L.append("Difference (JSON): %+.1f MiB for %+d findings (%.1f KiB per finding)." % (d, n, 1024 * d / max(n, 1)))
    L.append("")
    for name, title in (("phases_cold", "cold (empty cache)"), ("phases_warm", "warm, no change"), ("phases_edit", "warm, one edit")):
        lines = [l for l in rd(name + ".txt").splitlines() if "phase" in l or "total" in l or "cache:" in l]
        L.append("`-v` phases, %s: %s" % (title, "; ".join(l.replace("nonblock: ", "") for l in lines)))
        L.append("")

apps = [a for a in rd("apps").splitlines() if a] if os.path.exists(os.path.join(raw, "apps")) else []
if apps:
    L.append("Public applications (`--app`; each in its own target dir, `--offline`; cold = no "
             "`target/nonblock`, warm = nothing changed, one edit = a new fn appended to one member "
             "file before each run; timings and RSS from the same run of this script):")
    L.append("")
    L.append("| app | packages | files | MB | findings | cold | warm, no change | warm, one edit | warm ÷ cold | edit ÷ cold | peak RSS cold | warm | MiB per package (cold) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for a in apps:
        r = json.load(open(os.path.join(raw, "app_%s_report.json" % a)))
        s_ = r["stats"]
        c, w, e = times("app_%s_cold" % a), times("app_%s_warm" % a), times("app_%s_edit" % a)
        rc, rw = rss("app_%s_cold" % a), rss("app_%s_warm" % a)
        L.append("| %s | %d | %d | %.1f | %d | %s | %s | %s | %.3f | %.2f | %s | %s | %.2f |"
                 % (a, s_["packages"], s_["files"], s_["bytes"] / 1e6, len(r["findings"]), cell(c), cell(w), cell(e),
                    med(w) / med(c), med(e) / med(c), cell_mb(rc), cell_mb(rw), med(rc) / s_["packages"]))
    L.append("")
    for a in apps:
        for kind in ("cold", "edit"):
            lines = [l for l in rd("app_%s_phases_%s.txt" % (a, kind)).splitlines() if "phase" in l or "total" in l or "cache:" in l]
            L.append("`-v` %s, %s: %s" % (a, kind, "; ".join(l.replace("nonblock: ", "") for l in lines)))
            L.append("")
text = "\n".join(L) + "\n"
open(out, "w").write(text)
print(text)
EOF

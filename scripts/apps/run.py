#!/usr/bin/env python3
"""Run cargo-nonblock on the large public applications of scripts/apps/apps.toml (issues 15-17).

Python 3.11+ stdlib only. For every app (or those named with --only), one at a time:

  1. extract the pinned commit from the bare mirror `<mirrors>/<owner>+<name>/repo` into
     `<work>/<name>` with `git archive` (blobs the mirror lacks are left out and listed; a marker
     file `.nonblock-commit` makes re-extraction a no-op while the commit is unchanged);
  2. optionally (--metadata) count `cargo metadata --format-version 1` resolve nodes;
  3. run, under `/usr/bin/time -v` and a timeout (default 600 s; the whole process group is killed
     on expiry and the run is recorded as a hang),

        BIN nonblock --manifest-path <work>/<name>/<workspace>/Cargo.toml --format json \\
            --output <out>/<label>/<name>.json -v

     with RUSTUP_TOOLCHAIN=stable (several apps pin a toolchain that is not installed). The
     tool's dependency cache (`<target>/nonblock/`) is removed first, so every run is cold,
     unless --warm is given;
  4. read the JSON and compute the per-app figures:

       packages, files        apps.toml's cargo-metadata count / stats.packages (analysed: proc-macro
                              crates and their build-only dependencies are not), stats.files
       findings               len(findings)
       entries                distinct (entry file:line, api): the explicit `entry` of schema
                              cargo-nonblock/v2 when a finding has one, else path[0] (the call
                              written inside the async context) of v1
       f/e                    findings / entries
       async entries, f/ae    distinct (file:line, api) of the call where the path leaves async
                              code (issue 16's entry): v2's `entry`, or for v1 the last path step
                              whose function is an async context (= the root of some finding), and
                              findings / async entries. For v1, path[0] is in the root itself, so
                              `entries` is nearly one per finding; `async entries` groups ancestors
       sinks                  distinct (file:line of the last path step, api): the blocking calls
       roots                  distinct async roots (root file:line) with a finding
       json                   size of the JSON report
       unresolved             stats.unresolved_calls / (stats.call_edges + stats.unresolved_calls)
       unresolved calls       stats.unresolved_calls / (stats.resolved_calls + stats.unresolved_calls):
                              the share of call expressions (reports with stats.resolved_calls)
       top reasons            the 5 largest stats.unresolved_by_reason
       per rule               findings per rule id

Outputs, outside the repository: `<out>/<label>/<name>.json` (the report), `<name>.stderr` (the
tool's stderr, then /usr/bin/time's), `summary.json` (every figure, machine-readable) and
`table.md` (the tables; `--compare LABEL` adds LABEL vs this label side by side). `--table FILE`
also writes the tables there (e.g. into scripts/apps/results/). `--report-only` recomputes the
tables from saved outputs without running.

Example (the baseline of 2026-11-24):

    python3 scripts/apps/run.py --bin /work/bin/cargo-nonblock-base --label base \\
        --mirrors /work/.mirror --work /work/ext/apps --out /work/ext/apps-out --timeout 600
"""

from __future__ import annotations

import argparse
import collections
import datetime
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def log(msg: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# extraction


def git(gitdir: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True, **kw)


def missing_blobs(gitdir: Path, commit: str) -> list[str]:
    """Paths of the commit's blobs that the mirror does not hold (large files may be absent)."""
    tree = git(gitdir, "ls-tree", "-r", "-z", commit, capture_output=True).stdout.decode()
    entries = []
    for rec in tree.split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((sha, path))
    check = subprocess.run(
        ["git", f"--git-dir={gitdir}", "cat-file", "--batch-check"],
        input="".join(f"{sha}\n" for sha, _ in entries).encode(),
        capture_output=True, check=True,
    ).stdout.decode().splitlines()
    absent = {line.split()[0] for line in check if line.endswith(" missing")}
    return [path for sha, path in entries if sha in absent]


def extract(app: dict, mirrors: Path, work: Path) -> Path:
    """Extract app's commit into work/name (no-op when already there); returns the directory."""
    dest = work / app["name"]
    marker = dest / ".nonblock-commit"
    if marker.is_file() and marker.read_text().split()[0] == app["commit"]:
        return dest
    gitdir = mirrors / app["repo"].replace("/", "+") / "repo"
    if not gitdir.is_dir():
        sys.exit(f"{app['name']}: no mirror at {gitdir} (fetch github:{app['repo']} first)")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    absent = missing_blobs(gitdir, app["commit"])
    pathspec = ["--", "."] + [f":(exclude,literal){p}" for p in absent] if absent else []
    # git prints "invalid object" for an excluded absent blob but still exits 0: keep its stderr
    # for failures only
    archive = subprocess.Popen(
        ["git", f"--git-dir={gitdir}", "archive", app["commit"], *pathspec],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    err = archive.stderr.read().decode(errors="replace")
    if archive.wait() != 0:
        sys.exit(f"{app['name']}: git archive {app['commit']} failed: {err}")
    marker.write_text(app["commit"] + "\n" + "".join(f"absent {p}\n" for p in absent))
    if absent:
        log(f"{app['name']}: {len(absent)} blob(s) absent from the mirror, left out: {absent}")
    return dest


def tool_env() -> dict:
    env = dict(os.environ)
    env.setdefault("RUSTUP_TOOLCHAIN", "stable")
    env["CARGO_TERM_COLOR"] = "never"
    return env


def count_packages(manifest: Path) -> tuple[int, int]:
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--manifest-path", str(manifest)],
        capture_output=True, check=True, env=tool_env(),
    ).stdout
    meta = json.loads(out)
    return len(meta["resolve"]["nodes"]), len(meta["workspace_members"])


# ---------------------------------------------------------------------------------------------
# running


TIME_FIELDS = {
    "Maximum resident set size (kbytes)": "max_rss_kib",
    "Elapsed (wall clock) time (h:mm:ss or m:ss)": "elapsed",
    "User time (seconds)": "user_s",
    "System time (seconds)": "sys_s",
    "Exit status": "exit_status",
}


def parse_time(text: str) -> dict:
    res = {}
    for line in text.splitlines():
        key, _, value = line.strip().rpartition(": ")
        if key in TIME_FIELDS:
            res[TIME_FIELDS[key]] = value
    if "max_rss_kib" in res:
        res["max_rss_kib"] = int(res["max_rss_kib"])
    for k in ("user_s", "sys_s"):
        if k in res:
            res[k] = float(res[k])
    return res


def run_app(app: dict, src: Path, bin_path: str, outdir: Path, timeout: float, warm: bool) -> dict:
    manifest = src / app.get("workspace", ".") / "Cargo.toml"
    out_json = outdir / f"{app['name']}.json"
    err_file = outdir / f"{app['name']}.stderr"
    time_file = outdir / f"{app['name']}.time"
    for f in (out_json, time_file):
        f.unlink(missing_ok=True)
    if not warm:
        shutil.rmtree(manifest.parent / "target" / "nonblock", ignore_errors=True)
    cmd = [bin_path, "nonblock", "--manifest-path", str(manifest), "--format", "json",
           "--output", str(out_json), "-v"]
    full = ["/usr/bin/time", "-v", "-o", str(time_file), *cmd]
    log(f"{app['name']}: {' '.join(cmd)}")
    load = os.getloadavg()[0]
    start = time.monotonic()
    with open(err_file, "wb") as err:
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=err, env=tool_env(),
                                start_new_session=True)
        status = "ok"
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            status = "timeout"
    wall = time.monotonic() - start
    res = {"name": app["name"], "command": cmd, "wall_s": round(wall, 2), "rc": rc,
           "status": status, "json": str(out_json), "stderr": str(err_file),
           "loadavg_at_start": round(load, 2)}
    if time_file.is_file():
        res.update(parse_time(time_file.read_text(errors="replace")))
        with open(err_file, "ab") as err:
            err.write(b"\n--- /usr/bin/time -v ---\n" + time_file.read_bytes())
        time_file.unlink()
    if status == "ok":
        if rc not in (0, 1):
            status = "crash" if rc < 0 or rc > 2 else "fatal"
        if not out_json.is_file():
            status = "no-report" if status == "ok" else status
    res["status"] = status
    log(f"{app['name']}: {status} rc={rc} wall={wall:.1f}s rss={res.get('max_rss_kib', 0) / 1024:.0f} MiB")
    return res


# ---------------------------------------------------------------------------------------------
# figures


def entry_key(f: dict) -> tuple:
    """(file:line of the entry, api). cargo-nonblock/v2 may carry an explicit `entry`; otherwise
    the entry is path[0], the call written inside the async context."""
    e = f.get("entry")
    if isinstance(e, dict):
        loc = f"{e.get('file', '?')}:{e.get('line', '?')}"
    elif isinstance(e, str) and e:
        loc = e
    elif f.get("path"):
        p0 = f["path"][0]
        loc = f"{p0.get('file', '?')}:{p0.get('line', '?')}"
    else:
        r = f.get("root", {})
        loc = f"{r.get('file', '?')}:{r.get('line', '?')}"
    return (loc, f.get("api", f.get("rule", "?")))


def async_entry_key(f: dict, async_fns: set) -> tuple:
    """(file:line, api) of the call where the path leaves async code: the explicit `entry` of v2
    when present; for v1 the last path step whose function is itself an async context. v1 has no
    async flag on steps, but every async fn / async block is a root, so the async contexts on a
    path are those that are the root of some finding of the same report (`async_fns`)."""
    if f.get("entry"):
        return entry_key(f)
    path = f.get("path") or []
    if not path:
        return entry_key(f)
    idx = max([i for i, s in enumerate(path) if s.get("function") in async_fns] + [0])
    s = path[idx]
    return (f"{s.get('file', '?')}:{s.get('line', '?')}", f.get("api", f.get("rule", "?")))


def async_contexts(findings: list) -> set:
    return {f.get("root", {}).get("function") for f in findings}


def sink_key(f: dict) -> tuple:
    """(file:line of the blocking call, api): the last path step, where the API is called."""
    last = f["path"][-1] if f.get("path") else f.get("root", {})
    return (f"{last.get('file', '?')}:{last.get('line', '?')}", f.get("api", f.get("rule", "?")))


def figures(report_path: Path) -> dict:
    size = report_path.stat().st_size
    with open(report_path, "rb") as fh:
        rep = json.load(fh)
    findings = rep.get("findings", [])
    stats = rep.get("stats", {})
    edges = stats.get("call_edges", 0)
    unres = stats.get("unresolved_calls", 0)
    reasons = sorted(stats.get("unresolved_by_reason", {}).items(), key=lambda kv: (-kv[1], kv[0]))
    entries = {entry_key(f) for f in findings}
    afns = async_contexts(findings)
    aentries = {async_entry_key(f, afns) for f in findings}
    sinks = {sink_key(f) for f in findings}
    roots = {(f.get("root", {}).get("file"), f.get("root", {}).get("line")) for f in findings}
    per_rule = collections.Counter(f"{f.get('rule')} {f.get('name', '')}".strip() for f in findings)
    per_conf = collections.Counter(f.get("confidence", "?") for f in findings)
    return {
        "schema": rep.get("schema"),
        "packages": stats.get("packages"),
        "files": stats.get("files"),
        "functions": stats.get("functions"),
        "functions_resolved": stats.get("functions_resolved"),
        "async_contexts": stats.get("async_contexts"),
        "findings": len(findings),
        "entries": len(entries),
        "findings_per_entry": round(len(findings) / len(entries), 2) if entries else None,
        "async_entries": len(aentries),
        "findings_per_async_entry": round(len(findings) / len(aentries), 2) if aentries else None,
        "sinks": len(sinks),
        "roots": len(roots),
        "json_bytes": size,
        "call_edges": edges,
        "unresolved_calls": unres,
        "unresolved_ratio": round(unres / (edges + unres), 4) if edges + unres else None,
        "resolved_calls": stats.get("resolved_calls"),
        "unresolved_share": (round(unres / (stats["resolved_calls"] + unres), 4)
                             if stats.get("resolved_calls") else None),
        "top_unresolved": reasons[:5],
        "per_rule": dict(sorted(per_rule.items())),
        "per_confidence": dict(sorted(per_conf.items())),
        "errors": len(rep.get("errors", [])),
        "errors_by_kind": dict(collections.Counter(e.get("kind", "?") for e in rep.get("errors", []))),
        "internal_errors": stats.get("internal_errors"),
        "tool_seconds": stats.get("seconds"),
    }


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:.1f}"


def render(label: str, bin_path: str, rows: list[dict], apps: dict) -> str:
    out = [f"## {label}: `{bin_path}`", ""]
    out.append("| app | commit | status | wall s | cpu s | load | peak RSS MiB | packages (metadata/analysed) | files | findings | entries "
               "| f/e | async entries | f/ae | sinks | JSON MiB | unresolved | errors |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a = apps[r["name"]]
        fg = r.get("figures") or {}
        ratio = fg.get("unresolved_ratio")
        cpu = r.get("user_s", 0) + r.get("sys_s", 0)
        out.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["name"], a["commit"][:12], r["status"] + ("" if r["rc"] in (0, 1) else f" (rc {r['rc']})"),
            f"{r['wall_s']:.1f}", f"{cpu:.1f}", r.get("loadavg_at_start", ""),
            f"{r.get('max_rss_kib', 0) / 1024:.0f}",
            f"{a.get('packages', '?')}/{fg.get('packages', '?')}", fg.get("files", ""), fg.get("findings", ""),
            fg.get("entries", ""), fg.get("findings_per_entry", ""), fg.get("async_entries", ""),
            fg.get("findings_per_async_entry", ""), fg.get("sinks", ""),
            mib(fg["json_bytes"]) if fg else "", f"{ratio:.1%}" if ratio is not None else "",
            fg.get("errors", "") if fg else ""))
    out += ["", "Unresolved calls: `unresolved_calls / (call_edges + unresolved_calls)` (ratio), "
            "`unresolved_calls / (resolved_calls + unresolved_calls)` (share of call expressions) "
            "and the top reasons (`stats.unresolved_by_reason`):", ""]
    out.append("| app | call_edges | resolved_calls | unresolved | ratio | share of calls | "
               "top 5 reasons |")
    out.append("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        fg = r.get("figures")
        if not fg:
            continue
        reasons = ", ".join(f"{k} {v}" for k, v in fg["top_unresolved"] if v)
        ratio = fg["unresolved_ratio"]
        share = fg.get("unresolved_share")
        out.append(f"| {r['name']} | {fg['call_edges']} | {fg.get('resolved_calls') or ''} | "
                   f"{fg['unresolved_calls']} | {'' if ratio is None else f'{ratio:.1%}'} | "
                   f"{'' if share is None else f'{share:.1%}'} | {reasons} |")
    rules = sorted({k for r in rows if r.get("figures") for k in r["figures"]["per_rule"]})
    if rules:
        out += ["", "Findings per rule:", ""]
        names = [r["name"] for r in rows if r.get("figures")]
        out.append("| rule | " + " | ".join(names) + " |")
        out.append("|---|" + "---:|" * len(names))
        for rule in rules:
            cells = [str(r["figures"]["per_rule"].get(rule, 0)) for r in rows if r.get("figures")]
            out.append(f"| {rule} | " + " | ".join(cells) + " |")
        out.append("| *confidence high/medium/low* | " + " | ".join(
            "/".join(str(r["figures"]["per_confidence"].get(c, 0)) for c in ("high", "medium", "low"))
            for r in rows if r.get("figures")) + " |")
    return "\n".join(out) + "\n"


def render_compare(label_a: str, runs_a: dict, label_b: str, runs_b: dict, order: list) -> str:
    """Side-by-side figures of two labels (e.g. base vs fixed)."""
    out = [f"## {label_a} vs {label_b}", "",
           "| app | status | cpu s | peak RSS MiB | findings | async entries | sinks | JSON MiB "
           "| unresolved | unresolved calls |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def pair(ra, rb, get):
        return f"{get(ra)} → {get(rb)}"

    for name in order:
        if name not in runs_a or name not in runs_b:
            continue
        ra, rb = runs_a[name], runs_b[name]
        fa, fb = ra.get("figures") or {}, rb.get("figures") or {}

        def fig(key, fmt=str):
            return lambda r: fmt((r.get("figures") or {}).get(key, "")) if r.get("figures") else "–"

        out.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            name, pair(ra, rb, lambda r: r["status"]),
            pair(ra, rb, lambda r: f"{r.get('user_s', 0) + r.get('sys_s', 0):.1f}"),
            pair(ra, rb, lambda r: f"{r.get('max_rss_kib', 0) / 1024:.0f}"),
            pair(ra, rb, fig("findings")), pair(ra, rb, fig("async_entries")),
            pair(ra, rb, fig("sinks")), pair(ra, rb, fig("json_bytes", mib)),
            pair(ra, rb, fig("unresolved_ratio", lambda v: f"{v:.1%}" if v is not None else "")),
            pair(ra, rb, fig("unresolved_share",
                             lambda v: f"{v:.1%}" if isinstance(v, (int, float)) else "–"))))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", type=Path, default=HERE / "apps.toml")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--work", type=Path, default=Path("/work/ext/apps"))
    ap.add_argument("--out", type=Path, default=Path("/work/ext/apps-out"))
    ap.add_argument("--bin", help="cargo-nonblock binary (invoked as BIN nonblock ...)")
    ap.add_argument("--label", help="output subdirectory name (default: the binary's file name)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per app (default 600)")
    ap.add_argument("--only", action="append", default=[], help="app name (repeatable)")
    ap.add_argument("--extract-only", action="store_true", help="extract the apps, run nothing")
    ap.add_argument("--metadata", action="store_true",
                    help="count cargo metadata packages per app and compare with apps.toml")
    ap.add_argument("--warm", action="store_true", help="keep the tool's dependency cache")
    ap.add_argument("--report-only", action="store_true",
                    help="recompute the tables from <out>/<label>/summary.json and the saved reports")
    ap.add_argument("--table", type=Path, help="also write the markdown tables to this file")
    ap.add_argument("--compare", metavar="LABEL",
                    help="append a side-by-side table: LABEL's summary.json vs this label's")
    args = ap.parse_args()

    with open(args.apps, "rb") as fh:
        apps_list = tomllib.load(fh)["app"]
    apps = {a["name"]: a for a in apps_list}
    unknown = [n for n in args.only if n not in apps]
    if unknown:
        sys.exit(f"unknown app(s): {unknown}; known: {sorted(apps)}")
    selected = [a for a in apps_list if not args.only or a["name"] in args.only]
    args.work.mkdir(parents=True, exist_ok=True)

    if args.extract_only or args.metadata:
        bad = 0
        for a in selected:
            src = extract(a, args.mirrors, args.work)
            if args.metadata:
                n, m = count_packages(src / a.get("workspace", ".") / "Cargo.toml")
                flag = "" if n == a.get("packages") else f"  (apps.toml says {a.get('packages')})"
                bad += bool(flag)
                print(f"{a['name']}: {n} packages, {m} members{flag}")
            else:
                print(f"{a['name']}: {src}")
        return 1 if bad else 0

    if not args.bin:
        ap.error("--bin is required unless --extract-only/--metadata")
    label = args.label or Path(args.bin).name
    outdir = args.out / label
    outdir.mkdir(parents=True, exist_ok=True)
    summary_path = outdir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    summary.setdefault("runs", {})

    if not args.report_only:
        if not os.access(args.bin, os.X_OK):
            sys.exit(f"not executable: {args.bin}")
        version = subprocess.run([args.bin, "nonblock", "--version"], capture_output=True,
                                 text=True).stdout.strip()
        with open(args.bin, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        summary.update({"bin": args.bin, "label": label, "version": version, "bin_sha256": digest,
                        "timeout_s": args.timeout, "cold": not args.warm,
                        "host_cpus": os.cpu_count()})
        for a in selected:
            src = extract(a, args.mirrors, args.work)
            res = run_app(a, src, args.bin, outdir, args.timeout, args.warm)
            res["commit"] = a["commit"]
            res["date"] = datetime.datetime.now().isoformat(timespec="seconds")
            if res["status"] in ("ok",) or Path(res["json"]).is_file() and res["status"] != "timeout":
                try:
                    res["figures"] = figures(Path(res["json"]))
                except (OSError, ValueError) as e:
                    res["figures"] = None
                    res["status"] += f" (unreadable report: {e})"
            summary["runs"][a["name"]] = res
            summary_path.write_text(json.dumps(summary, indent=1) + "\n")
    else:
        for name, res in summary["runs"].items():
            if Path(res["json"]).is_file() and res["status"] == "ok":
                res["figures"] = figures(Path(res["json"]))
        summary_path.write_text(json.dumps(summary, indent=1) + "\n")

    rows = [summary["runs"][a["name"]] for a in apps_list if a["name"] in summary["runs"]]
    text = render(label, summary.get("bin", args.bin), rows, apps)
    text += ("\nCommand per app: `BIN nonblock --manifest-path DIR/Cargo.toml --format json --output "
             "OUT.json -v` under `/usr/bin/time -v`, RUSTUP_TOOLCHAIN=stable, "
             f"{'warm' if summary.get('cold') is False else 'cold (target/nonblock removed first)'}, "
             f"timeout {summary.get('timeout_s', args.timeout):.0f} s, one app at a time; "
             f"`{summary.get('version', '')}`"
             + (f", binary sha256 {summary['bin_sha256'][:16]}" if summary.get("bin_sha256") else "")
             + ".\n")
    if args.compare:
        other = json.loads((args.out / args.compare / "summary.json").read_text())
        text += "\n" + render_compare(args.compare, other["runs"], label, summary["runs"],
                                      [a["name"] for a in apps_list])
    (outdir / "table.md").write_text(text)
    if args.table:
        args.table.parent.mkdir(parents=True, exist_ok=True)
        args.table.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

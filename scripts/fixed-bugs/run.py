#!/usr/bin/env python3
"""Run cargo-nonblock on real, fixed blocking-in-async bugs (bugs.toml) and score it.

For every bug the buggy and the fixed commit are extracted from a bare mirror
(<mirrors>/<owner>+<name>/repo, as brought by the `fetch` tool) into a scratch directory, the
analyzer is run on the bug's workspace, and the report is matched against the call sites recorded
in bugs.toml (chosen from the fix's diff before any run):

  buggy commit: FLAGGED  if any finding has its root or a path step in a buggy site's file and
                         line range, else MISSED
  fixed commit: STILL    if any finding touches a fixed site, else CLEAN
  either side:  ERROR    the analysis did not produce a report (cargo metadata failure, crash,
                         unreadable JSON); TIMEOUT when it ran longer than --timeout.
                Errors and timeouts are reported apart from misses.

Schema tolerance: reads `cargo-nonblock/v1` and any later version that keeps `findings[].root`
and `findings[].path[]` (file, line); locations found under `findings[].reached_from` (v2) are
matched too. Workspace files are relative to the workspace root (mapped to the repository root
with manifest_dir); absolute paths inside the extracted tree are mapped back as well.

Standard library only. One analysis at a time by default (--jobs 1).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUGS = os.path.join(HERE, "bugs.toml")
FIXED_BIN = "/work/bin/cargo-nonblock-fixed"
BASE_BIN = "/work/bin/cargo-nonblock-base"


CATEGORY_RULE_PREFIX = {
    "fs": "NB01", "sleep": "NB02", "net": "NB03", "http-blocking": "NB04", "db-sync": "NB05",
    "process": "NB06", "sync-prims": "NB07", "block-on": "NB08", "stdio": "NB09", "ffi": "NB10",
    "cpu": "NB11",
}


def default_bin():
    return FIXED_BIN if os.path.exists(FIXED_BIN) else BASE_BIN


def git_dir(mirrors, repo):
    root = os.path.join(mirrors, repo.replace("/", "+"), "repo")
    return os.path.join(root, ".git") if os.path.isdir(os.path.join(root, ".git")) else root


def git(gd, *args, **kw):
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True, **kw)


def extract(gd, commit, dest):
    """Extract `commit` into `dest` once (a marker file records a complete extraction)."""
    marker = os.path.join(dest, ".fixed-bugs-extracted")
    if os.path.exists(marker):
        return
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    # Snapshots may lack their largest blobs (media, LFS): leave those paths out.
    missing = missing_blobs(gd, commit)
    pathspec = ["--", "."] + [f":(exclude,literal){p}" for p in missing] if missing else []
    archive = subprocess.Popen(["git", "--git-dir", gd, "archive", commit, *pathspec],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tar = subprocess.run(["tar", "-x", "-C", dest], stdin=archive.stdout, capture_output=True)
    archive.stdout.close()
    err = archive.stderr.read().decode(errors="replace")
    if archive.wait() != 0 or tar.returncode != 0:
        raise RuntimeError(f"extracting {commit}: {(err + tar.stderr.decode(errors='replace'))[-500:]}")
    with open(marker, "w") as f:
        f.write(commit + "\n" + "".join(f"missing blob, not extracted: {p}\n" for p in missing))


def missing_blobs(gd, commit):
    """Paths of `commit` whose blobs are absent from the mirror."""
    listing = git(gd, "ls-tree", "-r", "-z", commit).stdout.decode(errors="replace")
    entries = []
    for item in filter(None, listing.split("\0")):
        meta, path = item.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind == "blob":
            entries.append((sha, path))
    check = subprocess.run(["git", "--git-dir", gd, "cat-file", "--batch-check"],
                           input="".join(f"{sha}\n" for sha, _ in entries).encode(),
                           capture_output=True)
    answers = check.stdout.decode(errors="replace").split("\n")
    return [path for (sha, path), ans in zip(entries, answers) if ans.endswith("missing")]


def locations(finding, roots=True):
    """Every (file, line) a finding names: its path steps, (v2) reached_from, and its root unless
    `roots` is false (v2 roots inside reached_from are skipped too: dicts with a `kind` key)."""
    out = []

    def walk(node):
        if isinstance(node, dict):
            is_root = "kind" in node and "callee" not in node
            if (isinstance(node.get("file"), str) and isinstance(node.get("line"), int)
                    and (roots or not is_root)):
                out.append((node["file"], node["line"]))
            for value in node.values():
                if isinstance(value, (dict, list)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for key in ("root", "path", "reached_from"):
        if key in finding and (roots or key != "root"):
            walk(finding[key])
    return out


def repo_relative(file, tree, manifest_dir):
    """Map a report path to a repository-relative path, or None for dependency files."""
    if os.path.isabs(file):
        real_tree = os.path.realpath(tree)
        real = os.path.realpath(file)
        if real == real_tree or real.startswith(real_tree + os.sep):
            return os.path.relpath(real, real_tree)
        return None
    return os.path.normpath(os.path.join(manifest_dir, file))


def match(report, sites, tree, manifest_dir, roots=True):
    """Findings touching any site: list of (finding, file, line). With roots=False only path
    steps count (a finding whose async root merely starts inside a site does not)."""
    hits = []
    for finding in report.get("findings", []):
        for file, line in locations(finding, roots):
            rel = repo_relative(file, tree, manifest_dir)
            if rel is None:
                continue
            for site in sites:
                lo, hi = site["lines"]
                if rel == os.path.normpath(site["file"]) and lo <= line <= hi:
                    hits.append((finding, rel, line))
                    break
            else:
                continue
            break
    return hits


def near_misses(report, sites, tree, manifest_dir, limit=3):
    """For diagnosis: findings in a site's file, nearest lines first."""
    files = {os.path.normpath(s["file"]) for s in sites}
    centre = {os.path.normpath(s["file"]): s["lines"][0] for s in sites}
    near = []
    for finding in report.get("findings", []):
        for file, line in locations(finding):
            rel = repo_relative(file, tree, manifest_dir)
            if rel in files:
                near.append((abs(line - centre[rel]), rel, line, finding.get("api", "?")))
    near.sort()
    seen, out = set(), []
    for _, rel, line, api in near:
        if (rel, line) not in seen:
            seen.add((rel, line))
            out.append(f"{rel}:{line} ({api})")
        if len(out) == limit:
            break
    return out


def run_analysis(binary, tree, bug, out_json, timeout, log_path):
    manifest = os.path.join(tree, bug.get("manifest_dir", "."), "Cargo.toml")
    cmd = [binary, "nonblock", "--manifest-path", manifest, "--format", "json",
           "--output", out_json, "--fail-on", "never"]
    if bug.get("features"):
        cmd += ["--features", ",".join(bug["features"])]
    env = dict(os.environ, RUSTUP_TOOLCHAIN="stable")
    if os.path.exists(out_json):
        os.remove(out_json)
    start = time.monotonic()
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # our own child's process group only
            proc.wait()
            return {"status": "timeout", "seconds": round(time.monotonic() - start, 1)}
    seconds = round(time.monotonic() - start, 1)
    try:
        with open(out_json) as f:
            report = json.load(f)
    except (OSError, ValueError):
        with open(log_path, errors="replace") as f:
            tail = f.read()[-600:]
        return {"status": "error", "seconds": seconds, "exit": code, "detail": tail.strip()}
    if not isinstance(report.get("findings"), list):
        return {"status": "error", "seconds": seconds, "exit": code, "detail": "no findings list"}
    return {"status": "ok", "seconds": seconds, "exit": code, "report": report}


def fingerprint(binary):
    st = os.stat(binary)
    h = hashlib.sha256()
    with open(binary, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return f"{h.hexdigest()[:16]}-{st.st_size}"


def score(side_result, report, sites, tree, bug):
    """Match one report against the sites; fills the verdict fields of side_result."""
    mdir = bug.get("manifest_dir", ".")
    hits = match(report, sites, tree, mdir)
    # Show first the findings of the bug's own category (a site line may also lie on the path of
    # an unrelated finding, e.g. a lock taken by a logging macro's argument).
    prefix = CATEGORY_RULE_PREFIX.get(bug.get("category"), "")
    hits.sort(key=lambda h: not (prefix and str(h[0].get("rule", "")).startswith(prefix)))
    stats = report.get("stats", {})
    side_result.update({
        "schema": report.get("schema"),
        "findings": len(report["findings"]),
        "unresolved_calls": stats.get("unresolved_calls"),
        "call_edges": stats.get("call_edges"),
        "errors": len(report.get("errors", [])),
        "hit": bool(hits),
        "hit_steps_only": bool(match(report, sites, tree, mdir, roots=False)),
        "matches": [
            {"at": f"{rel}:{line}", "rule": f.get("rule"), "api": f.get("api"),
             "confidence": f.get("confidence"),
             "root": (f"{f['root'].get('file')}:{f['root'].get('line')}"
                      if isinstance(f.get("root"), dict) else None)}
            for f, rel, line in hits[:5]],
    })
    side_result.pop("near", None)
    if not hits:
        side_result["near"] = near_misses(report, sites, tree, mdir)


def evaluate(bug, args, bin_id):
    gd = git_dir(args.mirrors, bug["repo"])
    result = {"name": bug["name"], "repo": bug["repo"], "blocking_in": bug["blocking_in"],
              "dep_fn_in_rules": bug.get("dep_fn_in_rules")}
    for side, commit, sites in (("buggy", bug["buggy_commit"], bug["buggy_sites"]),
                                ("fixed", bug["fix_commit"], bug["fixed_sites"])):
        base = os.path.join(args.work, bug["name"], side)
        tree = os.path.join(base, "tree")
        out_json = os.path.join(base, f"out-{bin_id}.json")
        log_path = os.path.join(base, f"run-{bin_id}.log")
        cached = os.path.join(base, f"result-{bin_id}.json")
        if args.reuse and os.path.exists(cached):
            with open(cached) as f:
                side_result = json.load(f)
            if side_result.get("status") == "ok" and os.path.exists(out_json):
                with open(out_json) as f:
                    score(side_result, json.load(f), sites, tree, bug)  # re-match, same report
            result[side] = side_result
            continue
        try:
            extract(gd, commit, tree)
        except Exception as e:  # noqa: BLE001 - reported as an error outcome
            result[side] = {"status": "error", "detail": f"extract: {e}"}
            continue
        run = run_analysis(args.bin, tree, bug, out_json, args.timeout, log_path)
        side_result = {k: v for k, v in run.items() if k != "report"}
        if run["status"] == "ok":
            score(side_result, run["report"], sites, tree, bug)
        with open(cached, "w") as f:
            json.dump(side_result, f, indent=1)
        result[side] = side_result
        if not args.keep:
            shutil.rmtree(tree, ignore_errors=True)
    return result


def outcome(side, kind):
    s = side.get("status")
    if s == "timeout":
        return "TIMEOUT"
    if s != "ok":
        return "ERROR"
    if kind == "buggy":
        return "FLAGGED" if side["hit"] else "missed"
    return "STILL" if side["hit"] else "clean"


def check(bugs, args):
    """Validate bugs.toml against the mirrors (no analysis): commits, files, lines, git deps."""
    bad = 0
    for bug in bugs:
        gd = git_dir(args.mirrors, bug["repo"])
        problems = []
        for side, commit, sites in (("buggy", bug["buggy_commit"], bug["buggy_sites"]),
                                    ("fixed", bug["fix_commit"], bug["fixed_sites"])):
            if git(gd, "cat-file", "-e", commit + "^{commit}").returncode != 0:
                problems.append(f"{side}: commit {commit} not in mirror")
                continue
            files = git(gd, "ls-tree", "-r", "--name-only", commit).stdout.decode().split("\n")
            mdir = os.path.normpath(bug.get("manifest_dir", "."))
            lock = os.path.normpath(os.path.join(mdir, "Cargo.lock"))
            if lock not in files:
                problems.append(f"{side}: no {lock}")
            else:
                text = git(gd, "show", f"{commit}:{lock}").stdout.decode(errors="replace")
                gits = sorted({l for l in text.split("\n") if l.startswith('source = "git+')})
                if gits:
                    problems.append(f"{side}: git sources in Cargo.lock: {gits[:2]}")
            # Cargo.toml files of separate projects (a directory below the workspace with its own
            # Cargo.lock, e.g. examples/) are not in the analysed graph.
            own_locks = {os.path.dirname(f) for f in files if f.endswith("Cargo.lock")}
            own_locks.discard("" if mdir == "." else mdir)

            def foreign(toml):
                d = os.path.dirname(toml)
                return any(d == l or d.startswith(l + "/") for l in own_locks)

            for toml in (f for f in files if f.endswith("Cargo.toml") and not foreign(f)):
                text = git(gd, "show", f"{commit}:{toml}").stdout.decode(errors="replace")
                for l in text.split("\n"):
                    s = l.strip()
                    if not s.startswith("#") and ("git =" in s or "git=" in s):
                        problems.append(f"{side}: git dependency in {toml}: {s[:80]}")
            for site in sites:
                blob = git(gd, "show", f"{commit}:{site['file']}")
                if blob.returncode != 0:
                    problems.append(f"{side}: {site['file']} missing")
                    continue
                lines = blob.stdout.decode(errors="replace").split("\n")
                lo, hi = site["lines"]
                if not (1 <= lo <= hi <= len(lines)):
                    problems.append(f"{side}: {site['file']}:{lo}-{hi} out of range")
                elif args.verbose:
                    print(f"  {bug['name']} {side} {site['file']}:{lo}-{hi}")
                    for n in range(lo, hi + 1):
                        print(f"    {n:5} {lines[n - 1]}")
        status = "ok" if not problems else "PROBLEM"
        bad += bool(problems)
        print(f"{bug['name']:32} {status}")
        for p in problems:
            print(f"    {p}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bugs", default=DEFAULT_BUGS)
    ap.add_argument("--bin", default=None,
                    help=f"cargo-nonblock binary (default {FIXED_BIN} if present, else {BASE_BIN})")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--work", default="/tmp/fixed-bugs-work", help="scratch directory")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per analysis")
    ap.add_argument("--only", action="append", default=[], help="run only this bug (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="bugs analysed at once (default 1)")
    ap.add_argument("--keep", action="store_true", help="keep extracted trees")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse per-side results cached in --work for the same binary")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--check", action="store_true",
                    help="only validate bugs.toml against the mirrors (no analysis)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    with open(args.bugs, "rb") as f:
        bugs = tomllib.load(f)["bug"]
    if args.only:
        unknown = set(args.only) - {b["name"] for b in bugs}
        if unknown:
            sys.exit(f"unknown bug(s): {', '.join(sorted(unknown))}")
        bugs = [b for b in bugs if b["name"] in args.only]
    if args.check:
        sys.exit(check(bugs, args))

    args.bin = args.bin or default_bin()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"not executable: {args.bin}")
    bin_id = fingerprint(args.bin)
    os.makedirs(args.work, exist_ok=True)
    print(f"binary: {args.bin} ({bin_id}); {len(bugs)} bugs; timeout {args.timeout:g}s; "
          f"jobs {args.jobs}", file=sys.stderr)

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(evaluate, b, args, bin_id): b["name"] for b in bugs}
        for fut in concurrent.futures.as_completed(futures):
            r = fut.result()
            results[r["name"]] = r
            print(f"  done {r['name']}: buggy {outcome(r['buggy'], 'buggy')}, "
                  f"fixed {outcome(r['fixed'], 'fixed')}", file=sys.stderr)
    ordered = [results[b["name"]] for b in bugs]

    # Table
    head = f"{'bug':32} {'blocking in':11} {'buggy':8} {'fixed':8} {'secs':>6}  matched at buggy / nearest findings"
    print(head)
    print("-" * len(head))
    for r in ordered:
        b, x = r["buggy"], r["fixed"]
        secs = (b.get("seconds") or 0) + (x.get("seconds") or 0)
        dep = r["blocking_in"] + ("*" if r["blocking_in"] != "app" and r["dep_fn_in_rules"] is False else "")
        if b.get("status") == "ok" and b["hit"]:
            m = b["matches"][0]
            detail = f"{m['at']} {m['api']} ({m['rule']}, {m['confidence']})"
        elif b.get("status") == "ok":
            detail = "near: " + ("; ".join(b.get("near") or []) or "no finding in the site files")
        else:
            detail = (b.get("detail") or "").replace("\n", " ")[-100:]
        print(f"{r['name']:32} {dep:11} {outcome(b, 'buggy'):8} {outcome(x, 'fixed'):8} {secs:6.0f}  {detail}")
    print("(* = the dependency function is not in the rule database: the tool must follow its source)")

    # Totals
    def tally(rows):
        an = [r for r in rows if r["buggy"].get("status") == "ok"]
        fl = [r for r in an if r["buggy"]["hit"]]
        fx = [r for r in rows if r["fixed"].get("status") == "ok"]
        st = [r for r in fx if r["fixed"]["hit"]]
        return len(rows), len(an), len(fl), len(fx), len(st)

    def pct(a, b):
        return f"{100 * a / b:.0f}%" if b else "n/a"

    print()
    n, an, fl, fx, st = tally(ordered)
    errs = sum(1 for r in ordered for s in ("buggy", "fixed") if r[s].get("status") == "error")
    tos = sum(1 for r in ordered for s in ("buggy", "fixed") if r[s].get("status") == "timeout")
    print(f"flagged at the buggy commit: {fl}/{an} analysed ({pct(fl, an)}; target >= 90%), "
          f"{fl}/{n} of all bugs")
    print(f"still flagged after the fix: {st}/{fx} analysed (target 0)")
    print(f"analysis failures: {errs} errors, {tos} timeouts (over {2 * n} runs)")
    for kind in ("dependency", "both", "app"):
        rows = [r for r in ordered if r["blocking_in"] == kind]
        if rows:
            n, an, fl, fx, st = tally(rows)
            print(f"  blocking in {kind:10}: flagged {fl}/{an} analysed ({pct(fl, an)}), "
                  f"still flagged after fix {st}/{fx}, of {n} bugs")
    an = [r for r in ordered if r["buggy"].get("status") == "ok"]
    fx = [r for r in ordered if r["fixed"].get("status") == "ok"]
    print(f"  path steps only (a finding whose root merely starts in a site does not count): "
          f"flagged {sum(1 for r in an if r['buggy'].get('hit_steps_only'))}/{len(an)}, "
          f"still flagged after fix {sum(1 for r in fx if r['fixed'].get('hit_steps_only'))}/{len(fx)}")
    rows = [r for r in ordered if r["blocking_in"] != "app" and r["dep_fn_in_rules"] is False]
    if rows:
        n, an, fl, fx, st = tally(rows)
        print(f"  dependency fn not in rules: flagged {fl}/{an} analysed ({pct(fl, an)})")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": args.bin, "binary_id": bin_id, "results": ordered}, f, indent=1)


if __name__ == "__main__":
    main()

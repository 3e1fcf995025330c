#!/usr/bin/env python3
"""Robustness corpus (issue 9): analyse every crate of one or more dependency graphs as if it were
the analysed root, and classify each run. Driven by scripts/corpus.sh; python3 stdlib only.

For every distinct package (name + version) in the *normal* dependency graph of the given
workspaces (`cargo metadata --format-version 1`, all targets, build and dev edges not followed),
the package's registry source directory is mirrored into a scratch directory and made a standalone
root package:

  * the tree is hard-linked (copied when linking fails), except `Cargo.toml` and `Cargo.lock`,
    which are written fresh, so nothing the run writes can reach the registry's files;
  * `Cargo.toml` gets an empty `[workspace]` table (the package is its own workspace root), loses
    `package.workspace`, every `[dev-dependencies]` / `[target.'..'.dev-dependencies]` table (offline
    resolution then needs only what the source workspace downloaded; `cfg(test)` is off in the
    analysis anyway), every `[[bench]]`, `[[test]]` and `[[example]]` target (not analysed; old
    packages name files they do not ship), `[[bin]]` targets whose file is not in the package, and
    `[patch]` / `[replace]` tables (they point at the author's checkout);
  * optional dependencies that the source workspace's resolve did not have are dropped, the
    features are limited to those the package had in that resolve and `default` is set to exactly
    them (cargo resolves a root with *all* its features and optional dependencies, and offline
    only the downloaded crates can be resolved); so the crate is analysed with the features it has
    in the source workspace;
  * a proc-macro library becomes a plain library (`proc-macro = false`): the tool skips
    proc-macro crates by design (they run in the compiler), and this way their source is parsed,
    indexed and resolved like any other crate's;
  * `Cargo.lock` is the lockfile of the workspace the package came from, so offline resolution
    picks the versions that were fetched (cargo prunes what the package does not use).

Then `cargo-nonblock nonblock --manifest-path <copy>/Cargo.toml --offline --format json -o out.json
--fail-on never` runs under `timeout`, with CARGO_TARGET_DIR pointing at one shared directory
(the tool's dependency cache lives there; --no-cache turns it off). Each run is classified:

  ok        exit 0/1 and a JSON report without internal errors
  internal  the report has stats.internal_errors > 0 or an `errors` entry of kind `internal`
  hang      killed by the time limit
  crash     killed by a signal, a Rust panic message on stderr, or exit 2 with a report missing
  fatal     exit 2, no report, no panic: e.g. offline resolution failed (reason: stderr's first
            `error:` line)

Exit status: 1 when any run was internal, hang or crash; 0 otherwise (fatal runs are listed with
their reasons, not failures of the analyzer).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

# Runs in flight (each in its own process group), killed if the corpus itself is interrupted.
RUNNING: set = set()
RUNNING_LOCK = threading.Lock()


def stop_all(signum, _frame):
    with RUNNING_LOCK:
        for proc in RUNNING:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
    os._exit(128 + signum)


PANIC_RE = re.compile(r"panicked at|RUST_BACKTRACE|stack overflow|fatal runtime error")


# --------------------------------------------------------------------------------------------
# Listing packages


def metadata(manifest: Path) -> dict:
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline", "--locked",
         "--manifest-path", str(manifest)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def normal_closure(meta: dict) -> list[dict]:
    """Packages reachable from the workspace members over normal edges (any target platform),
    members excluded."""
    pkgs = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    members = set(meta["workspace_members"])
    seen: set[str] = set()
    stack = list(members)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for dep in nodes[pid]["deps"]:
            if any(k["kind"] is None for k in dep["dep_kinds"]):
                stack.append(dep["pkg"])
    return [pkgs[i] for i in sorted(seen - members)]


def categories(pkg: dict) -> list[str]:
    """Heuristic labels, for the report only (a crate may have several)."""
    src = Path(pkg["manifest_path"]).parent
    cats = []
    kinds = {k for t in pkg["targets"] for k in t["kind"]}
    if "proc-macro" in kinds:
        cats.append("proc-macro")
    lib = next((t for t in pkg["targets"] if set(t["kind"]) & {"lib", "rlib", "proc-macro"}), None)
    head = ""
    if lib:
        try:
            head = Path(lib["src_path"]).read_text(errors="replace")[:20000]
        except OSError:
            pass
    if re.search(r"#!\[\s*no_std\s*\]", head):
        cats.append("no_std")
    elif re.search(r"#!\[\s*cfg_attr\([^\]]*no_std", head):
        cats.append("no_std-capable")
    if pkg["name"].endswith("-sys") or pkg.get("links"):
        cats.append("ffi")
    files = total = macros = generated = externs = 0
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if d not in ("target", ".git")]
        for n in names:
            if not n.endswith(".rs"):
                continue
            p = Path(root, n)
            try:
                text = p.read_bytes()
            except OSError:
                continue
            files += 1
            total += len(text)
            macros += text.count(b"macro_rules!")
            externs += text.count(b'extern "C"') + text.count(b'extern "system"')
            low = text[:2000].lower()
            if (b"@generated" in low or b"automatically generated" in low
                    or b"auto-generated" in low or b"autogenerated" in low
                    or b"generated by" in low or b"do not edit" in low
                    or b"generated file" in low or b"code generated" in low):
                generated += 1
    if "ffi" not in cats and externs >= 20:
        cats.append("ffi")
    if macros >= 10:
        cats.append("macro-heavy")
    if generated >= 5 or total >= 8 << 20:
        cats.append("generated")
    return cats


# --------------------------------------------------------------------------------------------
# Making a package a standalone root


BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(k: str) -> str:
    return k if BARE_KEY.match(k) else toml_value(k)


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        # JSON's escapes are TOML basic-string escapes; non-ASCII stays raw (JSON would write
        # astral characters as surrogate pairs, which TOML rejects) and DEL must be escaped.
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(str(v))  # dates: not used by Cargo manifests


def toml_dump(doc: dict) -> str:
    """A TOML writer for what tomllib reads from a Cargo manifest (no comments kept)."""
    out: list[str] = []

    def table(path: list[str], d: dict, array: bool = False):
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict)
                   and not (isinstance(v, list) and v and all(isinstance(x, dict) for x in v))]
        if path and (scalars or array or not d):
            hdr = ".".join(toml_key(k) for k in path)
            out.append(f"[[{hdr}]]" if array else f"[{hdr}]")
        for k, v in scalars:
            out.append(f"{toml_key(k)} = {toml_value(v)}")
        if path and (scalars or array):
            out.append("")
        for k, v in d.items():
            if isinstance(v, dict):
                table(path + [k], v)
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                for x in v:
                    table(path + [k], x, array=True)

    table([], doc)
    return "\n".join(out) + "\n"


DEP_TABLES = ("dependencies", "build-dependencies", "build_dependencies")


def dep_package(key: str, spec) -> str:
    return spec.get("package", key) if isinstance(spec, dict) else key


def standalone_manifest(text: str, pkg_dir: Path, resolved: set[str] | None,
                        enabled: list[str] | None = None) -> tuple[str, list[str]]:
    """The manifest rewritten as a standalone root (see the module doc), and what was changed.

    `resolved`: the package names this package's node depends on in the source workspace's
    resolve; optional dependencies outside it are dropped (cargo resolves every optional
    dependency of a root, and offline only what was downloaded can be resolved).
    `enabled`: the features the package had in that resolve; the other features are dropped
    (cargo resolves a root with all its features, which can reach optional dependencies of
    dependencies that were never fetched) and `default` becomes exactly this set, so the crate
    is analysed with the cfg it had in the source workspace."""
    doc = tomllib.loads(text)
    changes: list[str] = []

    def drop(key: str, what: str | None = None):
        if key in doc:
            del doc[key]
            changes.append(f"dropped {what or key}")

    for key in ("dev-dependencies", "dev_dependencies", "bench", "test", "example", "patch",
                "replace", "workspace"):
        drop(key, f"[{key}]")
    pkg = doc.get("package") or doc.get("project") or {}
    if "workspace" in pkg:
        del pkg["workspace"]
        changes.append("dropped package.workspace")
    for cfg, t in list(doc.get("target", {}).items()):
        for key in ("dev-dependencies", "dev_dependencies"):
            if key in t:
                del t[key]
                changes.append(f"dropped [target.{cfg}.{key}]")
        if not t:
            del doc["target"][cfg]
    bins = doc.get("bin")
    if isinstance(bins, list):
        kept = []
        for b in bins:
            path = b.get("path")
            if path and not (pkg_dir / path).is_file():
                changes.append(f"dropped [[bin]] {b.get('name', '?')} (file not shipped)")
            else:
                kept.append(b)
        doc["bin"] = kept
        if not kept:
            del doc["bin"]

    dropped_deps: set[str] = set()
    if resolved is not None:
        tables = [("", doc)] + [(f"target.{c}.", t) for c, t in doc.get("target", {}).items()]
        for prefix, t in tables:
            for tk in DEP_TABLES:
                deps = t.get(tk)
                if not isinstance(deps, dict):
                    continue
                for key, spec in list(deps.items()):
                    if (isinstance(spec, dict) and spec.get("optional")
                            and dep_package(key, spec) not in resolved):
                        del deps[key]
                        dropped_deps.add(key)
        if dropped_deps:
            # a key may still be declared in another table (e.g. another target): keep its refs
            still = {k for _, t in tables for tk in DEP_TABLES
                     for k in (t.get(tk) or {})}
            dropped_deps -= still
        if dropped_deps:
            changes.append("dropped optional deps not fetched: " + ",".join(sorted(dropped_deps)))
            feats = doc.get("features", {})

            def refers(entry: str) -> bool:
                dep = entry.removeprefix("dep:").split("/")[0].rstrip("?")
                if entry.startswith("dep:") or "/" in entry:
                    return dep in dropped_deps
                return entry in dropped_deps and entry not in feats  # implicit feature

            for f, entries in list(feats.items()):
                feats[f] = [e for e in entries if not refers(e)]
    if enabled is not None:
        feats = doc.get("features", {})
        gone = sorted(f for f in feats if f not in enabled and f != "default")
        for f in gone:
            del feats[f]
        kept = set(feats)
        deps_left = {k for _, t in [("", doc)] + list(doc.get("target", {}).items())
                     for tk in DEP_TABLES for k in (t.get(tk) or {})}

        def live(entry: str) -> bool:
            if entry.startswith("dep:") or "/" in entry:
                return entry.removeprefix("dep:").split("/")[0].rstrip("?") in deps_left
            return entry in kept or entry in deps_left

        for f in list(feats):
            feats[f] = [e for e in feats[f] if live(e)]
        default = sorted(f for f in enabled if f != "default" and (f in feats or f in deps_left))
        old_default = sorted(feats.get("default", []))
        if gone or default != old_default:
            feats["default"] = default
            doc["features"] = feats
            changes.append(f"features: default = {default}, dropped {len(gone)} not enabled")
    lib = doc.get("lib")
    if isinstance(lib, dict):
        for key in ("proc-macro", "proc_macro"):
            if lib.get(key):
                lib[key] = False
                changes.append("proc-macro = false (the tool skips proc-macro crates by design; "
                               "this way their source is parsed and analysed)")
    doc["workspace"] = {}
    changes.append("added [workspace]")
    result = "# Rewritten by scripts/corpus.py: analysed as its own workspace root.\n" + toml_dump(doc)
    tomllib.loads(result)  # must still be valid TOML
    return result, changes


def mirror(src: Path, dst: Path) -> None:
    def link(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, dst, symlinks=True, copy_function=link,
                    ignore=shutil.ignore_patterns("target", ".git"))
    for name in ("Cargo.toml", "Cargo.lock"):
        p = dst / name
        if p.exists() or p.is_symlink():
            p.unlink()  # never write through a hard link into the registry


# --------------------------------------------------------------------------------------------
# Running


def first_error_line(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("error"):
            return line[:400]
    lines = [l for l in stderr.splitlines() if l.strip()]
    return (lines[0] if lines else "(no stderr)")[:400]


def cargo_reason(stderr: str) -> str:
    """The most informative line of a cargo failure relayed by the tool."""
    keys = ("no matching package", "failed to select a version", "failed to parse manifest",
            "can't find", "feature `", "cargo-features", "attempting to make an HTTP request",
            "failed to get", "is only available", "requires rustc", "failed to load",
            "could not find", "candidate versions found which didn't match", "unsupported")
    for line in stderr.splitlines():
        if any(k in line for k in keys):
            return line.strip()[:400]
    return first_error_line(stderr)


def run_one(pkg: dict, lock: Path | None, resolved: tuple, target: str, args,
            workdir: Path) -> dict:
    name, version = pkg["name"], pkg["version"]
    key = f"{name}-{version}" + ("" if target == "host" else f"@{target}")
    src = Path(pkg["manifest_path"]).parent
    row = {"name": name, "version": version, "target": target, "class": "", "exit": "", "wall_s": "",
           "tool_s": "", "packages": "", "files": "", "bytes": "", "errors": "",
           "parse_errors": "", "root_errors": "", "internal": "", "categories": "",
           "changes": "", "reason": ""}
    row["categories"] = ",".join(categories(pkg)) or "-"
    copy = workdir / "src" / key
    if copy.exists():
        shutil.rmtree(copy)
    try:
        mirror(src, copy)
        text, changes = standalone_manifest((src / "Cargo.toml").read_text(), src, *resolved)
        (copy / "Cargo.toml").write_text(text)
        if lock is not None:
            shutil.copyfile(lock, copy / "Cargo.lock")
        row["changes"] = "; ".join(changes)
    except Exception as e:  # a method failure, not the analyzer's
        row.update({"class": "fatal", "reason": f"corpus copy failed: {e}"[:400]})
        return row

    out_json = workdir / "out" / f"{key}.json"
    err_txt = workdir / "out" / f"{key}.stderr"
    out_json.unlink(missing_ok=True)
    cmd = ["timeout", "-k", "10", str(args.timeout), str(args.bin), "nonblock",
           "--manifest-path", str(copy / "Cargo.toml"), "--offline", "--format", "json",
           "-o", str(out_json), "--fail-on", "never", "--color", "never"]
    if args.no_cache:
        cmd.append("--no-cache")
    if target != "host":
        cmd += ["--target", target]
    env = dict(os.environ, CARGO_TARGET_DIR=str(workdir / "target"))
    t0 = time.monotonic()
    with open(err_txt, "w") as errf:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf, env=env,
                                start_new_session=True)
        with RUNNING_LOCK:
            RUNNING.add(proc)
        try:
            proc.wait()
        finally:
            with RUNNING_LOCK:
                RUNNING.discard(proc)
    wall = time.monotonic() - t0
    stderr = err_txt.read_text(errors="replace")
    rc = proc.returncode
    row["exit"] = str(rc)
    row["wall_s"] = f"{wall:.1f}"

    report = None
    if out_json.is_file():
        try:
            report = json.loads(out_json.read_text())
        except ValueError as e:
            row["reason"] = f"report is not JSON: {e}"
    if report is not None:
        st = report.get("stats", {})
        errs = report.get("errors", [])
        row["tool_s"] = f'{st.get("seconds", 0):.2f}'
        for k in ("packages", "files", "bytes"):
            row[k] = str(st.get(k, ""))
        row["errors"] = str(len(errs))
        row["parse_errors"] = str(sum(1 for e in errs if e.get("kind") == "parse"))
        row["_diags"] = [(e.get("kind", ""), e.get("package") or "", e.get("file") or "",
                          e.get("message", "")) for e in errs]
        row["root_errors"] = str(sum(1 for e in errs if e.get("package") == name))
        internal = [e for e in errs if e.get("kind") == "internal"]
        n_internal = max(st.get("internal_errors", 0) or 0, len(internal))
        row["internal"] = str(n_internal)
        if n_internal:
            row["class"] = "internal"
            row["reason"] = " | ".join(
                f'{e.get("package")}: {e.get("file") or "-"}: {e.get("message")}' for e in internal
            )[:2000]
    if row["class"]:
        pass
    elif rc in (124, 137) or (rc == -9):
        row["class"] = "hang"
        row["reason"] = f"killed after {args.timeout}s"
    elif rc < 0 or rc > 128:
        row["class"] = "crash"
        row["reason"] = f"signal {-rc if rc < 0 else rc - 128}: {first_error_line(stderr)}"
    elif PANIC_RE.search(stderr):
        row["class"] = "crash"
        m = PANIC_RE.search(stderr)
        row["reason"] = stderr[max(0, m.start() - 200): m.start() + 400].replace("\n", " ")
    elif rc in (0, 1) and report is not None:
        row["class"] = "ok"
    elif rc == 2 and report is None:
        row["class"] = "fatal"
        row["reason"] = cargo_reason(stderr)
    else:
        row["class"] = "crash"
        row["reason"] = f"exit {rc}, report {'present' if report else 'missing'}: {first_error_line(stderr)}"
    if row["class"] == "ok" and not args.keep:
        out_json.unlink(missing_ok=True)
        err_txt.unlink(missing_ok=True)
    if not args.keep:
        shutil.rmtree(copy, ignore_errors=True)
    return row


COLUMNS = ["workspace", "name", "version", "target", "class", "exit", "wall_s", "tool_s", "packages",
           "files", "bytes", "errors", "parse_errors", "root_errors", "internal", "categories",
           "changes", "reason"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, type=Path, help="the cargo-nonblock binary")
    ap.add_argument("--workdir", required=True, type=Path, help="scratch and output directory")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per crate")
    ap.add_argument("--no-cache", action="store_true", help="pass --no-cache to every run")
    ap.add_argument("--target", action="append", default=[],
                    help="analyse for this target triple too ('host': no --target); repeatable")
    ap.add_argument("--keep", action="store_true", help="keep copies and reports of ok runs")
    ap.add_argument("--limit", type=int, default=0, help="only the first N packages (smoke test)")
    ap.add_argument("--only", default="", help="comma-separated crate names to run")
    ap.add_argument("--list", action="store_true", help="list the packages and exit")
    ap.add_argument("workspaces", nargs="+", type=Path, help="manifest paths")
    args = ap.parse_args()
    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)
    args.bin = args.bin.resolve()
    work = args.workdir.resolve()
    for d in ("src", "out", "target"):
        (work / d).mkdir(parents=True, exist_ok=True)

    todo: dict[tuple[str, str], tuple[str, dict, Path | None, tuple]] = {}
    per_ws: dict[str, int] = {}
    for manifest in args.workspaces:
        try:
            meta = metadata(manifest)
        except subprocess.CalledProcessError as e:
            print(f"corpus: cargo metadata failed for {manifest} (fetch it first?):\n{e.stderr}",
                  file=sys.stderr)
            return 2
        ws = Path(meta["workspace_root"]).name
        lock = Path(meta["workspace_root"]) / "Cargo.lock"
        closure = normal_closure(meta)
        names = {p["id"]: p["name"] for p in meta["packages"]}
        deps_of = {n["id"]: ({names[d["pkg"]] for d in n["deps"]}, n.get("features", []))
                   for n in meta["resolve"]["nodes"]}
        per_ws[ws] = len(closure)
        for p in closure:
            if p.get("source") is None or not p["source"].startswith("registry+"):
                continue
            todo.setdefault((p["name"], p["version"]), (ws, p, lock if lock.is_file() else None, deps_of[p["id"]]))
    items = sorted(todo.items())
    if args.only:
        wanted = set(args.only.split(","))
        items = [i for i in items if i[0][0] in wanted]
    if args.limit:
        items = items[: args.limit]
    print(f"corpus: {len(items)} distinct packages "
          f"({', '.join(f'{k}: {v}' for k, v in per_ws.items())} in the normal graphs)", flush=True)
    if args.list:
        for (n, v), (ws, *_) in items:
            print(f"{ws}\t{n}\t{v}")
        return 0
    targets = args.target or ["host"]
    runs = [(t, item) for t in targets for item in items]

    rows: list[dict] = []
    lock_ = threading.Lock()
    started = time.monotonic()

    def task(run):
        target, ((n, v), (ws, pkg, lockfile, resolved)) = run
        row = run_one(pkg, lockfile, resolved, target, args, work)
        row["workspace"] = ws
        with lock_:
            rows.append(row)
            flag = "" if row["class"] == "ok" else f"  <-- {row['reason'][:160]}"
            print(f"[{len(rows):4}/{len(runs)}] {row['class']:8} {n} {v} {target} "
                  f"{row['wall_s']}s files={row['files']}{flag}", flush=True)
        return row

    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(task, runs))
    total = time.monotonic() - started

    rows.sort(key=lambda r: (r["name"], r["version"], targets.index(r["target"])))
    tsv = work / "corpus.tsv"
    with open(tsv, "w") as f:
        f.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            f.write("\t".join(str(r.get(c, "")).replace("\t", " ").replace("\n", " ") for c in COLUMNS) + "\n")

    # Every distinct diagnostic (kind, package, file, message) seen in any run.
    diags: dict[tuple, set[str]] = {}
    for r in rows:
        for d in r.get("_diags", []):
            diags.setdefault(d, set()).add(r["target"])
    with open(work / "diagnostics.tsv", "w") as f:
        f.write("kind\tpackage\tfile\ttargets\tmessage\n")
        for (kind, pkg, file, msg), ts in sorted(diags.items()):
            f.write(f"{kind}\t{pkg}\t{file}\t{','.join(sorted(ts))}\t{msg}\n".replace("\r", " "))
    by_kind: dict[str, int] = {}
    for kind, *_ in diags:
        by_kind[kind] = by_kind.get(kind, 0) + 1

    classes = ["ok", "fatal", "hang", "internal", "crash"]
    counts = {c: sum(1 for r in rows if r["class"] == c) for c in classes}
    cats: dict[str, int] = {}
    seen_pkgs = {}
    for r in rows:
        seen_pkgs[(r["name"], r["version"])] = r["categories"]
    for c_list in seen_pkgs.values():
        for c in c_list.split(","):
            if c != "-":
                cats[c] = cats.get(c, 0) + 1
    ok = [r for r in rows if r["class"] == "ok"]
    union = len(seen_pkgs)
    table = ["| target | runs | ok | fatal | hang | internal | crash | files parsed (sum) | "
             "bytes (sum) | slowest run |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for t in targets:
        rt = [r for r in rows if r["target"] == t]
        okt = [r for r in rt if r["class"] == "ok"]
        slow = max(okt, key=lambda r: float(r["wall_s"] or 0), default=None)
        table.append(
            f"| {t} | {len(rt)} | " + " | ".join(str(sum(1 for r in rt if r['class'] == c)) for c in classes)
            + f" | {sum(int(r['files'] or 0) for r in okt)} | {sum(int(r['bytes'] or 0) for r in okt)}"
            + f" | {slow['name'] + ' ' + slow['version'] + ' ' + slow['wall_s'] + ' s' if slow else '-'} |")
    lines = [
        f"# cargo-nonblock corpus run, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        f"- packages: {union} distinct (name, version), from the normal dependency graphs of "
        + ", ".join(f"{k} ({v})" for k, v in per_ws.items()),
        f"- categories (heuristic, a crate may have several): "
        + ", ".join(f"{k} {v}" for k, v in sorted(cats.items())),
        f"- targets: {', '.join(targets)}; {len(rows)} runs; {args.jobs} jobs; limit {args.timeout} s "
        f"per run; wall time {total / 60:.1f} min; dependency cache "
        f"{'off (--no-cache)' if args.no_cache else 'shared across runs'}",
        f"- distinct diagnostics in the reports: {len(diags)} ("
        + (", ".join(f"{k} {v}" for k, v in sorted(by_kind.items())) or "none")
        + f"), listed in {work / 'diagnostics.tsv'}",
        "",
    ] + table + [""]
    for c in ("internal", "hang", "crash", "fatal"):
        bad = [r for r in rows if r["class"] == c]
        if bad:
            lines.append(f"## {c}")
            lines.append("")
            for r in bad:
                lines.append(f"- `{r['name']} {r['version']}` ({r['workspace']}, {r['target']}): {r['reason']}")
            lines.append("")
    summary = "\n".join(lines)
    (work / "summary.md").write_text(summary + "\n")
    print()
    print(summary)
    print(f"per-run table: {tsv}\nsummary: {work / 'summary.md'}")
    return 1 if counts["internal"] or counts["hang"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Draw a seeded random sample of findings from the apps' JSON reports and write a review template.

Python 3.11+ stdlib only. Reads `<outputs>/<app>.json` (written by scripts/apps/run.py, e.g.
/work/ext/apps-out/base/) for every app of scripts/apps/apps.toml that has a report, and writes a
TOML file of `[[finding]]` entries for reviewers to fill in (issue 16's precision audit). It never
fills in a verdict.

Sampling, per app, reproducible for a given seed and report:
  * the findings are put in a canonical order (fingerprint, then rule, api, root) so the draw does
    not depend on the report's order;
  * `random.Random(f"{seed}:{app}").shuffle` orders them, and findings are taken in that order,
    skipping duplicates, until --per-app are taken. Duplicates (--dedup):
        fingerprint   the same fingerprint was already taken (same rule, root and path functions)
        async-entry   (default) the same (async entry file:line, api) was already taken: one
                      real bug reported from many async ancestors is reviewed once. The async
                      entry is v2's `entry` when present, else the last path step inside an
                      async context (run.py's definition)
        entry         the same (entry file:line, api): v2's `entry`, else path[0]
        sink          the same (blocking call file:line, api) was already taken: each blocking call
                      site is reviewed once
  * --rules / --min-confidence restrict the population first (e.g. to the default rules).

When the output file exists, entries already there with the same (app, fingerprint) keep their
verdict, deciding_location, class and note (so re-drawing after a tool change keeps the work done);
entries no longer drawn are kept only with --keep-reviewed and a filled verdict.

Paths: workspace files stay relative to the app's workspace root; files in the cargo registry
become `registry:<crate>-<version>/<path>` (the registry's index directory name is dropped).

Example:
    python3 scripts/apps/sample.py --outputs /work/ext/apps-out/base --seed 16 --per-app 25 \\
        --output scripts/apps/review.toml
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402  (entry definitions shared with run.py)
REGISTRY = re.compile(r"^.*/registry/src/[^/]+/")
CONF = {"low": 0, "medium": 1, "high": 2}


def short(path: str) -> str:
    return REGISTRY.sub("registry:", path)


def entry_loc(f: dict) -> str:
    return short(run.entry_key(f)[0])


def async_entry_loc(f: dict, afns: set) -> str:
    return short(run.async_entry_key(f, afns)[0])


def sink_loc(f: dict) -> str:
    return short(run.sink_key(f)[0])


def step_text(s: dict) -> str:
    return f"{s.get('function', '?')} @ {short(s.get('file', '?'))}:{s.get('line', '?')} -> {s.get('callee', '?')}"


def toml_str(s) -> str:
    return json.dumps("" if s is None else str(s), ensure_ascii=False)


def draw(findings: list[dict], app: str, seed: int, n: int, dedup: str, afns: set) -> list[dict]:
    pool = sorted(findings, key=lambda f: (f.get("fingerprint", ""), f.get("rule", ""),
                                           f.get("api", ""), json.dumps(f.get("root", {}), sort_keys=True),
                                           json.dumps(f.get("path", []), sort_keys=True)))
    random.Random(f"{seed}:{app}").shuffle(pool)
    seen: set = set()
    taken = []
    for f in pool:
        if dedup == "fingerprint":
            key = f.get("fingerprint")
        elif dedup == "sink":
            key = (sink_loc(f), f.get("api"))
        elif dedup == "entry":
            key = (entry_loc(f), f.get("api"))
        else:
            key = (async_entry_loc(f, afns), f.get("api"))
        fp = f.get("fingerprint")
        if key in seen or ("fp", fp) in seen:
            continue
        seen.add(key)
        seen.add(("fp", fp))
        taken.append(f)
        if len(taken) == n:
            break
    return taken


def render_entry(app: dict, f: dict, prior: dict | None, afns: set) -> str:
    prior = prior or {}
    root = f.get("root", {})
    root_text = (f"{root.get('function', '?')} ({root.get('kind', '?')}) @ "
                 f"{short(root.get('file', '?'))}:{root.get('line', '?')}")
    lines = [
        "[[finding]]",
        f"app = {toml_str(app['name'])}",
        f"commit = {toml_str(app['commit'])}",
        f"fingerprint = {toml_str(f.get('fingerprint'))}",
        f"rule = {toml_str(f.get('rule'))}",
        f"name = {toml_str(f.get('name'))}",
        f"confidence = {toml_str(f.get('confidence'))}",
        f"kind = {toml_str(f.get('kind', 'worker'))}",
        f"api = {toml_str(f.get('api'))}",
        f"root = {toml_str(root_text)}",
        f"entry = {toml_str(entry_loc(f))}",
        f"async_entry = {toml_str(async_entry_loc(f, afns))}",
        f"sink = {toml_str(sink_loc(f))}",
        "path = [",
        *[f"  {toml_str(step_text(s))}," for s in f.get("path", [])],
        "]",
    ]
    if f.get("reached_from_count") is not None:
        lines.append(f"reached_from = {toml_str(f['reached_from_count'])}")
    elif f.get("reached_from") is not None:
        rf = f["reached_from"]
        lines.append(f"reached_from = {toml_str(rf if isinstance(rf, (str, int)) else len(rf))}")
    lines += [
        f"verdict = {toml_str(prior.get('verdict', ''))}            # true / false / unsure",
        f"deciding_location = {toml_str(prior.get('deciding_location', ''))}  # file:line that decides",
        f"class = {toml_str(prior.get('class', ''))}              # for false ones: a [classes.*] name",
        f"note = {toml_str(prior.get('note', ''))}",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", type=Path, default=HERE / "apps.toml")
    ap.add_argument("--outputs", type=Path, required=True,
                    help="directory with <app>.json reports (run.py's <out>/<label>)")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--per-app", type=int, default=25)
    ap.add_argument("--dedup", choices=["async-entry", "entry", "fingerprint", "sink"],
                    default="async-entry")
    ap.add_argument("--rules", help="comma-separated rule ids or names to sample from (default: all)")
    ap.add_argument("--min-confidence", choices=list(CONF), default="low")
    ap.add_argument("--only", action="append", default=[], help="app name (repeatable)")
    ap.add_argument("--new-since", type=Path,
                    help="directory of an earlier build's reports: draw only findings whose "
                         "fingerprint is not in that build's report of the same app (what a "
                         "change adds)")
    ap.add_argument("--output", type=Path, default=HERE / "review.toml")
    ap.add_argument("--keep-reviewed", action="store_true",
                    help="keep reviewed entries of the existing output that are no longer drawn")
    ap.add_argument("--carry", type=Path, nargs="*", default=[],
                    help="earlier review files: a drawn finding with the same app, fingerprint and "
                         "path as a reviewed entry there takes its verdict (noted as carried), so "
                         "reviewers only read what no earlier round decided")
    args = ap.parse_args()

    with open(args.apps, "rb") as fh:
        apps = tomllib.load(fh)["app"]
    rules = {r.strip() for r in args.rules.split(",")} if args.rules else None

    prior: dict = {}
    if args.output.is_file():
        with open(args.output, "rb") as fh:
            for e in tomllib.load(fh).get("finding", []):
                prior[(e.get("app"), e.get("fingerprint"))] = e

    # A verdict is about one claimed path: it carries only when the path is the same, step by step.
    carried: dict = {}
    for review in args.carry:
        if review.resolve() == args.output.resolve():
            continue
        with open(review, "rb") as fh:
            for e in tomllib.load(fh).get("finding", []):
                if e.get("verdict") and not e.get("note", "").startswith("carried from "):
                    carried[(e.get("app"), e.get("fingerprint"), tuple(e.get("path", [])))] = \
                        dict(e, note=f"carried from {review.name}: {e.get('note', '')}")

    chunks, counts, drawn_keys, n_carried = [], [], set(), 0
    for app in apps:
        if args.only and app["name"] not in args.only:
            continue
        report = args.outputs / f"{app['name']}.json"
        if not report.is_file():
            print(f"{app['name']}: no report at {report}, skipped", file=sys.stderr)
            continue
        with open(report, "rb") as fh:
            rep = json.load(fh)
        pop = [f for f in rep.get("findings", [])
               if (rules is None or f.get("rule") in rules or f.get("name") in rules)
               and CONF.get(f.get("confidence", "low"), 0) >= CONF[args.min_confidence]]
        if args.new_since:
            with open(args.new_since / f"{app['name']}.json", "rb") as fh:
                before = {f.get("fingerprint") for f in json.load(fh).get("findings", [])}
            pop = [f for f in pop if f.get("fingerprint") not in before]
        afns = run.async_contexts(rep.get("findings", []))
        taken = draw(pop, app["name"], args.seed, args.per_app, args.dedup, afns)
        counts.append((app["name"], len(pop), len(taken), rep.get("schema")))
        chunks.append(f"# ---- {app['name']} ({app['repo']}@{app['commit'][:12]}): {len(taken)} of "
                      f"{len(pop)} findings\n")
        for f in taken:
            drawn_keys.add((app["name"], f.get("fingerprint")))
            earlier = prior.get((app["name"], f.get("fingerprint")))
            if not (earlier and earlier.get("verdict")):
                steps = tuple(step_text(s) for s in f.get("path", []))
                earlier = carried.get((app["name"], f.get("fingerprint"), steps), earlier)
                n_carried += earlier is not None and earlier.get("note", "").startswith("carried from ")
            chunks.append(render_entry(app, f, earlier, afns))

    kept = [e for k, e in prior.items() if k not in drawn_keys and e.get("verdict")]
    header = [
        "# Review template for cargo-nonblock findings on large public applications (issue 16).",
        "# Drawn by scripts/apps/sample.py; do not edit the drawn fields, fill in the last four:",
        "#   verdict            \"true\" (the call really blocks a runtime worker / the block_on thread",
        "#                      whenever the root runs), \"false\", or \"unsure\"",
        "#   deciding_location  the file:line (registry:crate-version/path for dependencies) that",
        "#                      decides the verdict",
        "#   class              for \"false\": the false-positive class (e.g. wrong-impl, init-once,",
        "#                      block-on-thread, test-only, ffi-accessor, offloaded, dead-branch)",
        "#   note               one line of reasoning",
        f"# Command: python3 scripts/apps/sample.py --outputs {args.outputs} --seed {args.seed} "
        f"--per-app {args.per_app} --dedup {args.dedup}"
        + (f" --carry {' '.join(str(c) for c in args.carry)}" if args.carry else "")
        + (f" --rules {args.rules}" if args.rules else "")
        + (f" --min-confidence {args.min_confidence}" if args.min_confidence != "low" else "")
        + (f" --new-since {args.new_since}" if args.new_since else ""),
        "# Population and sample per app:",
        *[f"#   {n}: {t} drawn of {p} findings ({s})" for n, p, t, s in counts],
        "",
    ]
    text = "\n".join(header) + "\n" + "\n".join(chunks)
    if kept and args.keep_reviewed:
        text += "\n# ---- reviewed earlier, no longer drawn\n"
        for e in kept:
            text += "\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in e.items()).join(
                ["[[finding]]\n", "\n"])
    tomllib.loads(text)  # the template must parse
    args.output.write_text(text)
    total = sum(t for _, _, t, _ in counts)
    print(f"wrote {args.output}: {total} findings from {len(counts)} apps"
          + (f"; {n_carried} verdicts carried from earlier reviews" if args.carry else "")
          + (f"; {len(kept)} earlier reviewed entries {'kept' if args.keep_reviewed else 'dropped'}"
             if kept else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

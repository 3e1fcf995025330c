#!/usr/bin/env python3
"""What became of each reviewed finding under a later build: the fate table of issue 16's audit.

Python 3.11+ stdlib only. Reads a reviewed sample (review-s6.toml) and the later build's reports
(`<outputs>/<app>.json`, written by run.py), and matches each reviewed finding to the later
report by (entry file:line, api) — the fingerprint changes when the kind does, the entry does
not. A reviewed finding is then:

    kept        reported again with the same kind and the same path
    repathed    reported again with the same kind through another path (a false finding whose
                path went through a dead arm may now be true: review it again)
    rekinded    reported again with another kind (worker -> block_on)
    gone        not reported any more

Prints, per false-positive class, how many findings are kept / rekinded / gone, and for true
findings the same (a true finding that is gone is a lost real finding: each is listed).

Example:
    python3 scripts/apps/fate.py --review scripts/apps/review-s6.toml \\
        --outputs /work/ext/apps-out/s6b
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import sample  # noqa: E402  (path shortening shared with the sampler)


def key_of_report(f: dict) -> tuple:
    step = f["path"][0]
    return (sample.short(step["file"]) + ":" + str(step["line"]), f.get("api"))


def key_of_review(r: dict) -> tuple:
    return (r["entry"], r["api"])


def steps_of_report(f: dict) -> list[str]:
    return [sample.short(s["file"]) + ":" + str(s["line"]) for s in f["path"]]


def steps_of_review(r: dict) -> list[str]:
    # "function @ file:line -> callee"
    return [step.split(" @ ", 1)[1].rsplit(" -> ", 1)[0] for step in r["path"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--review", required=True)
    ap.add_argument("--outputs", required=True)
    args = ap.parse_args()
    reviewed = tomllib.load(open(args.review, "rb"))["finding"]
    later: dict[str, dict[tuple, list]] = {}
    for app in sorted({r["app"] for r in reviewed}):
        path = Path(args.outputs) / f"{app}.json"
        if not path.exists():
            print(f"missing report: {path}", file=sys.stderr)
            return 2
        findings = json.load(open(path))["findings"]
        # Several findings may share an entry and API (another kind, another async context).
        later[app] = collections.defaultdict(list)
        for f in findings:
            later[app][key_of_report(f)].append((f.get("kind", "worker"), steps_of_report(f)))
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    lost = []
    repathed = []
    for r in reviewed:
        found = later[r["app"]].get(key_of_review(r), [])
        same_kind = [steps for kind, steps in found if kind == r.get("kind", "worker")]
        if not found:
            fate = "gone"
        elif not same_kind:
            fate = "rekinded"
        elif steps_of_review(r) not in same_kind:
            fate = "repathed"
            repathed.append((r, same_kind[0]))
        else:
            fate = "kept"
        row = r["class"] if r["verdict"] == "false" else r["verdict"] or "unreviewed"
        table[row][fate] += 1
        if r["verdict"] == "true" and fate == "gone":
            lost.append(r)
    print("| class | findings | kept | repathed | rekinded | gone |")
    print("|---|---:|---:|---:|---:|---:|")
    for row, c in sorted(table.items(), key=lambda kv: -sum(kv[1].values())):
        print(
            f"| {row} | {sum(c.values())} | {c['kept']} | {c['repathed']} | {c['rekinded']}"
            f" | {c['gone']} |"
        )
    if repathed:
        print("\nReported through another path (review again):")
        for r, steps in repathed:
            verdict = r["verdict"] + (f" ({r['class']})" if r["class"] else "")
            print(f"- {r['app']} {r['fingerprint']} [{verdict}] now ends at {steps[-1]}")
    if lost:
        print("\nTrue findings no longer reported (check each):")
        for r in lost:
            print(f"- {r['app']} {r['fingerprint']} {r['api']} at {r['entry']}: {r['note'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

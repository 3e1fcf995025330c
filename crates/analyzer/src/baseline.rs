//! Baselines: adopt the tool on an existing codebase by recording today's findings
//! (`--write-baseline FILE`) and reporting only new ones afterwards (`--baseline FILE`).
//!
//! Entries are matched by fingerprint (rule, API and the entry: the package and name of the async
//! context and the callee of the call there — never line numbers, see
//! [`crate::report::fingerprint`]), so edits that move code do not make old findings new. The
//! baseline is a multiset: if a function gains a second identical entry, that one is new. Entries
//! that match nothing any more are reported as stale, so the file shrinks as debt is paid.
//!
//! **v1 baselines migrate on the fly.** A `cargo-nonblock-baseline/v1` file holds v1
//! fingerprints, one per (root call site, API) with every async fn a root. When the CLI is given
//! one, it asks the analysis for the v1 findings too (`Options::v1_fingerprints`): each v1 path is
//! fingerprinted as v1 did, and belongs to the finding of its entry (the last async context on
//! the path). A v1 entry then baselines the findings its fingerprint maps to, so the findings of
//! async callers that are now `reached_from` ancestors stay baselined rather than turning stale.
//! `--write-baseline` always writes v2.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::report::{self, Finding, Report, ReportInput};
use crate::suppress::Notice;

pub const SCHEMA: &str = "cargo-nonblock-baseline/v2";
/// The schema of baselines written before findings were reported at their entry.
pub const SCHEMA_V1: &str = "cargo-nonblock-baseline/v1";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub fingerprint: String,
    pub rule: String,
    /// The async context of the finding's entry (in a v1 file: the finding's root).
    pub root: String,
    pub api: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Baseline {
    pub schema: String,
    pub findings: Vec<Entry>,
}

impl Baseline {
    /// Today's findings, sorted: the file is stable across runs.
    pub fn from_report(report: &Report) -> Baseline {
        let mut findings: Vec<Entry> = report
            .findings
            .iter()
            .map(|f| Entry {
                fingerprint: f.fingerprint.clone(),
                rule: f.rule.clone(),
                root: f.root.function.clone(),
                api: f.api.clone(),
            })
            .collect();
        findings.sort();
        Baseline {
            schema: SCHEMA.to_string(),
            findings,
        }
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("baseline serialises");
        s.push('\n');
        s
    }

    /// A v2 or a v1 baseline (see [`Baseline::is_v1`]).
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let b: Baseline =
            serde_json::from_str(text).map_err(|e| format!("not a baseline file: {e}"))?;
        if b.schema != SCHEMA && b.schema != SCHEMA_V1 {
            return Err(format!(
                "baseline schema is `{}`, expected `{SCHEMA}` (or `{SCHEMA_V1}`)",
                b.schema
            ));
        }
        Ok(b)
    }

    /// A v1 file: its fingerprints are matched through `Report::v1_fingerprints`, which the run
    /// computes only when `Options::v1_fingerprints` is set.
    pub fn is_v1(&self) -> bool {
        self.schema == SCHEMA_V1
    }

    /// Removes baselined findings from `report`; stale entries become notices naming `file`.
    pub fn apply(&self, report: &mut Report, file: &str) {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &self.findings {
            *count.entry(e.fingerprint.as_str()).or_default() += 1;
        }
        let present: BTreeSet<&str> = report
            .findings
            .iter()
            .map(|f| f.fingerprint.as_str())
            .collect();
        let mut baselined: BTreeSet<String> = BTreeSet::new();
        // Per fingerprint of the file: how many of its entries match nothing.
        let mut stale: BTreeMap<&str, usize> = BTreeMap::new();
        for (fp, n) in count {
            let candidates: Vec<&str> = if self.is_v1() {
                report
                    .v1_fingerprints
                    .get(fp)
                    .into_iter()
                    .flatten()
                    .map(String::as_str)
                    .filter(|c| present.contains(c))
                    .collect()
            } else {
                present.get(fp).into_iter().copied().collect()
            };
            let matched = n.min(candidates.len());
            baselined.extend(candidates[..matched].iter().map(|c| c.to_string()));
            if matched < n {
                stale.insert(fp, n - matched);
            }
        }
        let before = report.findings.len();
        report
            .findings
            .retain(|f| !baselined.contains(&f.fingerprint));
        report.stats.baselined = before - report.findings.len();
        for e in &self.findings {
            if let Some(n) = stale.get_mut(e.fingerprint.as_str()) {
                if *n > 0 {
                    *n -= 1;
                    report.notices.push(Notice {
                        kind: "stale-baseline".into(),
                        file: file.to_string(),
                        line: 0,
                        message: format!(
                            "baseline entry {} ({} `{}` from `{}`) matches no finding; rewrite the baseline",
                            e.fingerprint, e.rule, e.api, e.root
                        ),
                    });
                }
            }
        }
        report.notices.sort();
    }
}

/// v1 fingerprint → the fingerprints of today's `findings` that v1's paths with that fingerprint
/// now belong to, in report order.
pub fn v1_fingerprints(input: &ReportInput, findings: &[Finding]) -> BTreeMap<String, Vec<String>> {
    // A finding is its context and its entry call: (context name, file, line, column, entry
    // line, entry column, API, rule).
    type EntryId = (String, String, u32, u32, u32, u32, String, String);
    let by_entry: BTreeMap<EntryId, usize> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let id = (
                f.root.function.clone(),
                f.root.file.clone(),
                f.root.line,
                f.root.column,
                f.path[0].line,
                f.path[0].column,
                f.api.clone(),
                f.rule.clone(),
            );
            (id, i)
        })
        .collect();
    let mut map: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for v in crate::propagate::v1_findings(input.graph, input.index) {
        let rule = &input.rules.rules[v.finding.api.rule];
        let root = report::body_name(input, v.finding.body);
        let path = report::path(input, &root, &v.finding.api, &v.finding.steps);
        let fingerprint = report::fingerprint_v1(&rule.id, &root, &path);
        let (context, pos) = v.entry;
        let body = &input.graph.bodies[context];
        let id = (
            report::body_name(input, context),
            report::fn_file(input, body.owner),
            body.pos.line,
            body.pos.column,
            pos.line,
            pos.column,
            v.finding.api.path.clone(),
            rule.id.clone(),
        );
        if let Some(&i) = by_entry.get(&id) {
            map.entry(fingerprint).or_default().insert(i);
        }
    }
    map.into_iter()
        .map(|(fp, found)| {
            let fps = found
                .into_iter()
                .map(|i| findings[i].fingerprint.clone())
                .collect();
            (fp, fps)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{fingerprint_v1, Step};
    use crate::testutil::{analyze_files, analyze_files_v1};

    const SRC: &str = "fn helper() { std::fs::read(\"x\"); }\nasync fn a() {\n helper();\n helper();\n}\nasync fn b() {\n std::thread::sleep(d());\n}\nfn d() -> std::time::Duration { todo!() }\n";

    #[test]
    fn baselined_findings_survive_line_shifts_and_new_ones_still_show() {
        let before = analyze_files(&[("src/lib.rs", SRC)]);
        assert_eq!(before.findings.len(), 3);
        let baseline = Baseline::parse(&Baseline::from_report(&before).to_json()).unwrap();
        assert!(!baseline.is_v1());
        // Move everything down, edit elsewhere, and add one more identical call in `a`.
        let edited = format!(
            "// a new header comment\n\nconst X: u8 = 1;\n{}",
            SRC.replace(" helper();\n}", " helper();\n helper();\n}")
        );
        let mut after = analyze_files(&[("src/lib.rs", &edited)]);
        assert_eq!(after.findings.len(), 4);
        baseline.apply(&mut after, "nonblock-baseline.json");
        assert_eq!(after.stats.baselined, 3);
        assert_eq!(after.findings.len(), 1, "the third helper() call is new");
        assert!(after.notices.is_empty());
    }

    #[test]
    fn entries_that_match_nothing_are_stale() {
        let before = analyze_files(&[("src/lib.rs", SRC)]);
        let baseline = Baseline::from_report(&before);
        let fixed = SRC.replace("std::thread::sleep(d());", "");
        let mut after = analyze_files(&[("src/lib.rs", &fixed)]);
        baseline.apply(&mut after, "b.json");
        assert!(after.findings.is_empty());
        let kinds: Vec<&str> = after.notices.iter().map(|n| n.kind.as_str()).collect();
        assert_eq!(kinds, ["stale-baseline"]);
        assert!(Baseline::parse("{\"schema\": \"other\", \"findings\": []}").is_err());
    }

    const CHAIN: &str = "fn helper() { std::fs::read(\"x\"); }\n\
                         async fn c() { helper(); }\n\
                         async fn b() { c().await; }\n\
                         async fn a() { b().await; }\n";

    /// The v1 baseline of CHAIN, fingerprinted as v1 did: one finding per async fn, each with
    /// the path from there (`steps` are (function, callee) pairs).
    fn v1_baseline(paths: &[(&str, &[(&str, &str)])]) -> Baseline {
        let findings = paths
            .iter()
            .map(|(root, steps)| {
                let path: Vec<Step> = steps
                    .iter()
                    .map(|(function, callee)| Step {
                        function: function.to_string(),
                        file: String::new(),
                        line: 0,
                        column: 0,
                        callee: callee.to_string(),
                        package: String::new(),
                    })
                    .collect();
                Entry {
                    fingerprint: fingerprint_v1("NB0101", root, &path),
                    rule: "NB0101".into(),
                    root: root.to_string(),
                    api: "std::fs::read".into(),
                }
            })
            .collect();
        let text = serde_json::to_string(&Baseline {
            schema: SCHEMA_V1.into(),
            findings,
        })
        .unwrap();
        Baseline::parse(&text).unwrap()
    }

    const C: (&str, &str) = ("app::c", "app::helper");
    const HELPER: (&str, &str) = ("app::helper", "std::fs::read");

    #[test]
    fn a_v1_baseline_matches_the_entry_its_paths_now_belong_to() {
        let v1 = v1_baseline(&[
            ("app::c", &[C, HELPER]),
            ("app::b", &[("app::b", "app::c"), C, HELPER]),
            (
                "app::a",
                &[("app::a", "app::b"), ("app::b", "app::c"), C, HELPER],
            ),
        ]);
        assert!(v1.is_v1());
        let mut report = analyze_files_v1(&[("src/lib.rs", CHAIN)], true);
        assert_eq!(report.findings.len(), 1);
        let entry = report.findings[0].fingerprint.clone();
        for e in &v1.findings {
            assert_eq!(
                report.v1_fingerprints[&e.fingerprint],
                std::slice::from_ref(&entry)
            );
        }
        v1.apply(&mut report, "old.json");
        assert!(report.findings.is_empty());
        assert_eq!(report.stats.baselined, 1);
        assert!(report.notices.is_empty(), "{:?}", report.notices);
    }

    #[test]
    fn a_v1_baseline_of_an_async_caller_alone_still_covers_the_entry() {
        // Only `a`'s v1 finding was baselined (say `c` was written later): its path goes
        // through the entry in `c`, so that finding is known.
        let v1 = v1_baseline(&[(
            "app::a",
            &[("app::a", "app::b"), ("app::b", "app::c"), C, HELPER],
        )]);
        let mut report = analyze_files_v1(&[("src/lib.rs", CHAIN)], true);
        v1.apply(&mut report, "old.json");
        assert!(report.findings.is_empty());
        // A new entry is new, and a v1 path that is gone is stale.
        let grown = format!("{CHAIN}async fn e() {{ helper(); }}\n");
        let mut report = analyze_files_v1(&[("src/lib.rs", &grown)], true);
        let gone = v1_baseline(&[("app::z", &[("app::z", "app::helper"), HELPER])]);
        gone.apply(&mut report, "old.json");
        assert_eq!(report.findings.len(), 2);
        v1.apply(&mut report, "old.json");
        let left: Vec<&str> = report
            .findings
            .iter()
            .map(|f| f.root.function.as_str())
            .collect();
        assert_eq!(left, ["app::e"]);
        let kinds: Vec<&str> = report.notices.iter().map(|n| n.kind.as_str()).collect();
        assert_eq!(kinds, ["stale-baseline"]);
    }

    #[test]
    fn without_being_asked_the_run_maps_no_v1_fingerprints() {
        assert!(analyze_files(&[("src/lib.rs", CHAIN)])
            .v1_fingerprints
            .is_empty());
    }
}

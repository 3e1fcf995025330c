//! Scores a report (the tool's JSON) against a workspace's markers.
//!
//! A finding's site is `(path[0].file, path[0].line, rule)`: its entry. An `expect:` marker is met
//! when some finding has its site and passes through every `via=` package (some path step has
//! `"package": PKG`). Findings at the site of a met marker are true positives (one marker may
//! match several findings: one per blocking API reached from that call). Every other finding is
//! a false positive; a marker that is not met is a false negative.
//!
//! The async callers a finding lists (`reached_from`) are held to the same standard: each
//! `(file, line, rule)` of them must meet a `reached:` marker (else it is an unexpected caller),
//! and a `reached:` marker is met when some finding of its rule lists a caller on its line and
//! passes through its `via=` packages (else it is a missed caller).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::markers::Markers;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// `expect:` markers (one per rule per line).
    pub positives: usize,
    /// `ok:` lines.
    pub negatives: usize,
    /// Findings that meet a marker.
    pub tp: usize,
    /// Findings that meet no marker.
    pub fp: usize,
    /// The part of `fp` on `ok:` lines.
    pub fp_on_negatives: usize,
    /// Markers that no finding meets.
    pub fn_: usize,
    /// `reached:` markers (one per rule per line).
    pub callers: usize,
    /// `reached:` markers that no finding's `reached_from` meets.
    pub callers_missed: usize,
    /// `reached_from` entries (per finding) on a line without a `reached:` marker of the rule.
    pub callers_unexpected: usize,
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.positives += o.positives;
        self.negatives += o.negatives;
        self.tp += o.tp;
        self.fp += o.fp;
        self.fp_on_negatives += o.fp_on_negatives;
        self.fn_ += o.fn_;
        self.callers += o.callers;
        self.callers_missed += o.callers_missed;
        self.callers_unexpected += o.callers_unexpected;
    }

    /// Met markers over all markers (1.0 without markers).
    pub fn recall(&self) -> f64 {
        ratio(self.positives - self.fn_, self.positives)
    }

    /// True positives over all findings (1.0 without findings).
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    pub fn is_perfect(&self) -> bool {
        self.fp == 0 && self.fn_ == 0 && self.callers_missed == 0 && self.callers_unexpected == 0
    }

    /// One line: counts, recall and precision, and the async callers met.
    pub fn summary(&self) -> String {
        format!(
            "positives {:>3}  negatives {:>3}  TP {:>3}  FP {:>3} ({} on ok lines)  FN {:>3}  recall {:>5.1}%  precision {:>5.1}%  callers {:>2}/{:<2} ({} unexpected)",
            self.positives,
            self.negatives,
            self.tp,
            self.fp,
            self.fp_on_negatives,
            self.fn_,
            self.recall() * 100.0,
            self.precision() * 100.0,
            self.callers - self.callers_missed,
            self.callers,
            self.callers_unexpected
        )
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

#[derive(Debug, Default)]
pub struct Score {
    pub tally: Tally,
    /// Every mismatch, one line each: `file:line RULE what`, with the finding's path.
    pub mismatches: Vec<String>,
}

type Site = (String, u32, String);

/// Compares the findings of `report` (top-level `"findings"`) with `markers`.
pub fn score(markers: &Markers, report: &Value) -> Score {
    let findings: &[Value] = report["findings"].as_array().map_or(&[], Vec::as_slice);
    let mut expected: BTreeMap<Site, &[String]> = BTreeMap::new();
    let mut kinds: BTreeMap<Site, &str> = BTreeMap::new();
    for e in &markers.expected {
        expected.insert((e.file.clone(), e.line, e.rule.clone()), &e.via);
        kinds.insert((e.file.clone(), e.line, e.rule.clone()), &e.kind);
    }
    // Reports without a `kind` field (before it existed) are all worker findings.
    let kind_of = |f: &Value| f["kind"].as_str().unwrap_or("worker").to_string();
    let negatives: BTreeSet<(&str, u32)> = markers
        .negatives
        .iter()
        .map(|n| (n.file.as_str(), n.line))
        .collect();

    let met: BTreeSet<&Site> = expected
        .iter()
        .filter(|(site, via)| {
            findings.iter().any(|f| {
                &site_of(f) == *site
                    && via.iter().all(|v| passes_through(f, v))
                    && kinds[*site] == kind_of(f)
            })
        })
        .map(|(site, _)| site)
        .collect();

    let mut out = Score::default();
    out.tally.positives = expected.len();
    out.tally.negatives = negatives.len();
    for f in findings {
        let site = site_of(f);
        let kind = kind_of(f);
        if met.contains(&site) && kinds[&site] == kind {
            out.tally.tp += 1;
            continue;
        }
        out.tally.fp += 1;
        let what = match expected.get(&site) {
            Some(_) if kinds[&site] != kind => {
                format!("is of kind {kind}, not {}", kinds[&site])
            }
            Some(via) => format!("does not pass through {}", via.join(", ")),
            None if negatives.contains(&(site.0.as_str(), site.1)) => {
                out.tally.fp_on_negatives += 1;
                "false positive on an `ok:` line".to_string()
            }
            None => "unexpected finding".to_string(),
        };
        out.mismatches.push(format!(
            "{}:{} {} {what}: `{}` via {}",
            site.0,
            site.1,
            site.2,
            f["api"].as_str().unwrap_or("?"),
            path_text(f)
        ));
    }
    for (site, via) in &expected {
        if met.contains(site) {
            continue;
        }
        out.tally.fn_ += 1;
        let mut line = format!("{}:{} {} missed", site.0, site.1, site.2);
        if !via.is_empty() {
            let _ = write!(line, " (via {})", via.join(", "));
        }
        let here: BTreeSet<&str> = findings
            .iter()
            .filter(|f| {
                let s = site_of(f);
                s.0 == site.0 && s.1 == site.1
            })
            .filter_map(|f| f["rule"].as_str())
            .collect();
        if !here.is_empty() {
            let _ = write!(
                line,
                "; findings on this line: {}",
                here.into_iter().collect::<Vec<_>>().join(" ")
            );
        }
        out.mismatches.push(line);
    }
    score_callers(markers, findings, &mut out);
    out
}

/// Checks every finding's `reached_from` against the `reached:` markers.
fn score_callers(markers: &Markers, findings: &[Value], out: &mut Score) {
    let mut reached: BTreeMap<Site, &[String]> = BTreeMap::new();
    for e in &markers.reached {
        reached.insert((e.file.clone(), e.line, e.rule.clone()), &e.via);
    }
    out.tally.callers = reached.len();
    let callers_of = |f: &Value| -> Vec<Site> {
        f["reached_from"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|caller| {
                (
                    caller["file"].as_str().unwrap_or_default().to_string(),
                    caller["line"].as_u64().unwrap_or(0) as u32,
                    f["rule"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    // As for `expect:`, one finding through the `via=` packages meets the marker.
    let met: BTreeSet<Site> = findings
        .iter()
        .flat_map(|f| {
            callers_of(f).into_iter().filter(|site| {
                reached
                    .get(site)
                    .is_some_and(|via| via.iter().all(|v| passes_through(f, v)))
            })
        })
        .collect();
    for f in findings {
        for site in callers_of(f) {
            if met.contains(&site) {
                continue;
            }
            out.tally.callers_unexpected += 1;
            let what = match reached.get(&site) {
                Some(via) => format!(
                    "async caller of a finding that does not pass through {}",
                    via.join(", ")
                ),
                None => "unexpected async caller".to_string(),
            };
            out.mismatches.push(format!(
                "{}:{} {} {what} of `{}` via {}",
                site.0,
                site.1,
                site.2,
                f["api"].as_str().unwrap_or("?"),
                path_text(f)
            ));
        }
    }
    for site in reached.keys() {
        if !met.contains(site) {
            out.tally.callers_missed += 1;
            out.mismatches.push(format!(
                "{}:{} {} async caller missed",
                site.0, site.1, site.2
            ));
        }
    }
}

fn site_of(f: &Value) -> Site {
    let first = &f["path"][0];
    (
        first["file"].as_str().unwrap_or_default().to_string(),
        first["line"].as_u64().unwrap_or(0) as u32,
        f["rule"].as_str().unwrap_or_default().to_string(),
    )
}

fn passes_through(f: &Value, package: &str) -> bool {
    f["path"]
        .as_array()
        .is_some_and(|p| p.iter().any(|s| s["package"] == package))
}

/// `fn (file:line) → fn (file:line) → …` for a finding's path.
pub fn path_text(f: &Value) -> String {
    f["path"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{} [{}] ({}:{})",
                s["function"].as_str().unwrap_or("?"),
                s["package"].as_str().unwrap_or("?"),
                s["file"].as_str().unwrap_or("?"),
                s["line"]
            )
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers;
    use serde_json::json;

    fn finding(rule: &str, steps: &[(&str, u32, &str)]) -> Value {
        let path: Vec<Value> = steps
            .iter()
            .map(|(file, line, package)| {
                json!({"file": file, "line": line, "column": 5, "function": "f", "callee": "g", "package": package})
            })
            .collect();
        json!({"rule": rule, "api": "std::fs::read", "path": path})
    }

    fn marks() -> Markers {
        let mut m = Markers::default();
        markers::parse(
            "src/lib.rs",
            "a(); // expect: NB0101 via=dep\nb(); // expect: NB0201\nc(); // ok: offloaded\nd();\n",
            &mut m,
        );
        m
    }

    #[test]
    fn perfect_report_scores_full_marks_and_several_apis_per_site_are_all_tp() {
        let report = json!({"findings": [
            finding("NB0101", &[("src/lib.rs", 1, "app"), ("/reg/dep/src/lib.rs", 9, "dep")]),
            finding("NB0101", &[("src/lib.rs", 1, "app")]),
            finding("NB0201", &[("src/lib.rs", 2, "app")]),
        ]});
        let s = score(&marks(), &report);
        assert_eq!(
            s.tally,
            Tally {
                positives: 2,
                negatives: 1,
                tp: 3,
                ..Tally::default()
            }
        );
        assert!(s.mismatches.is_empty(), "{:?}", s.mismatches);
        assert!(s.tally.is_perfect());
        assert_eq!(s.tally.recall(), 1.0);
        assert_eq!(s.tally.precision(), 1.0);
    }

    #[test]
    fn wrong_rule_negative_line_unmarked_line_and_missing_via_are_mismatches() {
        let report = json!({"findings": [
            finding("NB0101", &[("src/lib.rs", 1, "app")]),
            finding("NB0701", &[("src/lib.rs", 2, "app")]),
            finding("NB0101", &[("src/lib.rs", 3, "app")]),
            finding("NB0101", &[("src/lib.rs", 4, "app")]),
        ]});
        let s = score(&marks(), &report);
        assert_eq!(s.tally.tp, 0);
        assert_eq!(s.tally.fp, 4);
        assert_eq!(s.tally.fp_on_negatives, 1);
        assert_eq!(s.tally.fn_, 2);
        assert_eq!(s.tally.recall(), 0.0);
        assert_eq!(s.tally.precision(), 0.0);
        let all = s.mismatches.join("\n");
        assert!(
            all.contains("src/lib.rs:1 NB0101 does not pass through dep"),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:2 NB0701 unexpected finding"),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:3 NB0101 false positive on an `ok:` line"),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:4 NB0101 unexpected finding"),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:1 NB0101 missed (via dep)"),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:2 NB0201 missed; findings on this line: NB0701"),
            "{all}"
        );
    }

    fn with_callers(mut f: Value, callers: &[(&str, u32)]) -> Value {
        f["reached_from"] = callers
            .iter()
            .map(|(file, line)| json!({"function": "c", "kind": "async fn", "file": file, "line": line, "column": 5}))
            .collect();
        f
    }

    #[test]
    fn async_callers_must_meet_reached_markers_and_reached_markers_a_caller() {
        let mut m = Markers::default();
        markers::parse(
            "src/lib.rs",
            "a(); // expect: NB0101\nb().await; // reached: NB0101\nc().await; // reached: NB0101 via=dep\nd().await;\n",
            &mut m,
        );
        let entry = finding("NB0101", &[("src/lib.rs", 1, "app")]);
        // Line 2 met, line 3 listed but the path does not pass through `dep`, line 4 unmarked.
        let report = json!({"findings": [with_callers(entry.clone(), &[("src/lib.rs", 2), ("src/lib.rs", 3), ("src/lib.rs", 4)])]});
        let s = score(&m, &report);
        assert_eq!((s.tally.tp, s.tally.fp, s.tally.fn_), (1, 0, 0));
        assert_eq!(s.tally.callers, 2);
        assert_eq!(s.tally.callers_missed, 1);
        assert_eq!(s.tally.callers_unexpected, 2);
        assert!(!s.tally.is_perfect());
        let all = s.mismatches.join("\n");
        assert!(
            all.contains(
                "src/lib.rs:3 NB0101 async caller of a finding that does not pass through dep"
            ),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:4 NB0101 unexpected async caller"),
            "{all}"
        );
        assert!(
            all.contains("src/lib.rs:3 NB0101 async caller missed"),
            "{all}"
        );
        let good = json!({"findings": [with_callers(
            finding("NB0101", &[("src/lib.rs", 1, "app"), ("/reg/dep/src/lib.rs", 9, "dep")]),
            &[("src/lib.rs", 2), ("src/lib.rs", 3)],
        )]});
        assert!(
            score(&m, &good).tally.is_perfect(),
            "{:?}",
            score(&m, &good).mismatches
        );
    }

    #[test]
    fn no_findings_means_full_precision_and_no_recall() {
        let s = score(&marks(), &json!({"findings": []}));
        assert_eq!(s.tally.fn_, 2);
        assert_eq!(s.tally.precision(), 1.0);
        assert_eq!(s.tally.recall(), 0.0);
    }
}

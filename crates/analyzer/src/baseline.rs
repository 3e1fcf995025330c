//! Baselines: adopt the tool on an existing codebase by recording today's findings
//! (`--write-baseline FILE`) and reporting only new ones afterwards (`--baseline FILE`).
//!
//! Entries are matched by fingerprint (rule, root function, and the functions and callees along
//! the path — never line numbers), so edits that move code do not make old findings new. The
//! baseline is a multiset: if a function gains a second identical path, that one is new. Entries
//! that match nothing any more are reported as stale, so the file shrinks as debt is paid.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::report::Report;
use crate::suppress::Notice;

pub const SCHEMA: &str = "cargo-nonblock-baseline/v1";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub fingerprint: String,
    pub rule: String,
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

    pub fn parse(text: &str) -> Result<Baseline, String> {
        let b: Baseline =
            serde_json::from_str(text).map_err(|e| format!("not a baseline file: {e}"))?;
        if b.schema != SCHEMA {
            return Err(format!(
                "baseline schema is `{}`, expected `{SCHEMA}`",
                b.schema
            ));
        }
        Ok(b)
    }

    /// Removes baselined findings from `report`; stale entries become notices naming `file`.
    pub fn apply(&self, report: &mut Report, file: &str) {
        let mut remaining: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &self.findings {
            *remaining.entry(e.fingerprint.as_str()).or_default() += 1;
        }
        let before = report.findings.len();
        report
            .findings
            .retain(|f| match remaining.get_mut(f.fingerprint.as_str()) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            });
        report.stats.baselined = before - report.findings.len();
        let mut stale: BTreeMap<&str, usize> = BTreeMap::new();
        for (fp, n) in remaining {
            if n > 0 {
                stale.insert(fp, n);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::analyze_files;

    const SRC: &str = "fn helper() { std::fs::read(\"x\"); }\nasync fn a() {\n helper();\n helper();\n}\nasync fn b() {\n std::thread::sleep(d());\n}\nfn d() -> std::time::Duration { todo!() }\n";

    #[test]
    fn baselined_findings_survive_line_shifts_and_new_ones_still_show() {
        let before = analyze_files(&[("src/lib.rs", SRC)]);
        assert_eq!(before.findings.len(), 3);
        let baseline = Baseline::parse(&Baseline::from_report(&before).to_json()).unwrap();
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
}

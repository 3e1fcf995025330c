//! Inline suppressions: `// nonblock:allow(NB0101): reason` on the line above a call written in
//! an async context silences that call's findings of the listed rules; above an async fn (or its
//! attributes and doc comments), every finding rooted in that function.
//!
//! A directive without a reason is reported and suppresses nothing: a suppression must say why.
//! A directive that suppresses nothing is reported as unused, so suppressions cannot outlive the
//! code they were written for.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::report::Finding;
use crate::rules::RuleDb;

/// A reported problem with a suppression or a baseline entry; counts as a warning for
/// `--fail-on`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Notice {
    pub kind: String,
    pub file: String,
    pub line: u32,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    pub file: String,
    pub line: u32,
    /// Rule ids (names are mapped to ids when parsed).
    pub rules: Vec<String>,
    pub reason: String,
}

const TAG: &str = "nonblock:allow(";

/// Parses the directives of one file's text. Unknown rules and missing reasons become notices.
pub fn parse(file: &str, text: &str, rules: &RuleDb, notices: &mut Vec<Notice>) -> Vec<Directive> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(comment) = line.find("//").map(|c| &line[c..]) else {
            continue;
        };
        let Some(start) = comment.find(TAG) else {
            continue;
        };
        let line_no = i as u32 + 1;
        let rest = &comment[start + TAG.len()..];
        let Some(close) = rest.find(')') else {
            notices.push(notice(
                "bad-suppression",
                file,
                line_no,
                "suppression is missing its closing `)`".into(),
            ));
            continue;
        };
        let mut ids = Vec::new();
        for name in rest[..close]
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            match rules.find(name) {
                Some(r) => ids.push(r.id.clone()),
                None => notices.push(notice(
                    "bad-suppression",
                    file,
                    line_no,
                    format!("suppression names unknown rule `{name}`"),
                )),
            }
        }
        let reason = rest[close + 1..]
            .trim_start()
            .strip_prefix(':')
            .map(str::trim)
            .unwrap_or("");
        if reason.is_empty() {
            notices.push(notice(
                "suppression-without-reason",
                file,
                line_no,
                "suppression has no reason: write `// nonblock:allow(RULE): why this is fine`"
                    .into(),
            ));
            continue;
        }
        if !ids.is_empty() {
            out.push(Directive {
                file: file.to_string(),
                line: line_no,
                rules: ids,
                reason: reason.to_string(),
            });
        }
    }
    out
}

fn notice(kind: &str, file: &str, line: u32, message: String) -> Notice {
    Notice {
        kind: kind.to_string(),
        file: file.to_string(),
        line,
        message,
    }
}

/// The lines a directive may stand on to cover a finding: the line above the call, and the
/// comment/attribute block directly above the root fn (`fn_line` is the root's line).
fn covering_lines(text_lines: &[&str], line: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut l = line.saturating_sub(1);
    while l >= 1 {
        let t = text_lines
            .get(l as usize - 1)
            .map(|s| s.trim_start())
            .unwrap_or("");
        out.push(l);
        let continues = t.starts_with("//")
            || t.starts_with("#[")
            || t.starts_with("#![")
            || t.ends_with(']') && t.starts_with('#');
        if !continues {
            break;
        }
        l -= 1;
    }
    out
}

/// Removes suppressed findings; returns them, and adds notices for unused directives.
pub fn apply(
    findings: Vec<Finding>,
    sources: &BTreeMap<String, String>,
    directives: &[Directive],
    notices: &mut Vec<Notice>,
) -> (Vec<Finding>, Vec<Finding>) {
    let mut by_line: BTreeMap<(&str, u32), Vec<usize>> = BTreeMap::new();
    for (i, d) in directives.iter().enumerate() {
        by_line
            .entry((d.file.as_str(), d.line))
            .or_default()
            .push(i);
    }
    let mut used = BTreeSet::new();
    let mut kept = Vec::new();
    let mut suppressed = Vec::new();
    for f in findings {
        let mut hit = None;
        let sites = [
            (&f.path[0].file, f.path[0].line),
            (&f.root.file, f.root.line),
        ];
        'outer: for (file, line) in sites {
            let Some(text) = sources.get(file.as_str()) else {
                continue;
            };
            let lines: Vec<&str> = text.lines().collect();
            for l in covering_lines(&lines, line) {
                for &d in by_line
                    .get(&(file.as_str(), l))
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
                {
                    if directives[d].rules.contains(&f.rule) {
                        hit = Some(d);
                        break 'outer;
                    }
                }
            }
        }
        match hit {
            Some(d) => {
                used.insert(d);
                suppressed.push(f);
            }
            None => kept.push(f),
        }
    }
    for (i, d) in directives.iter().enumerate() {
        if !used.contains(&i) {
            notices.push(notice(
                "unused-suppression",
                &d.file,
                d.line,
                format!(
                    "suppression of {} matches no finding; remove it",
                    d.rules.join(", ")
                ),
            ));
        }
    }
    (kept, suppressed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::analyze_files;

    #[test]
    fn directives_need_known_rules_and_a_reason() {
        let db = RuleDb::builtin();
        let mut notices = Vec::new();
        let text = "// nonblock:allow(NB0101): cached\n// nonblock:allow(std-fs, NB0201): both\n// nonblock:allow(NB0101)\n// nonblock:allow(NB4242): what\n";
        let d = parse("src/a.rs", text, &db, &mut notices);
        assert_eq!(
            d.len(),
            2,
            "the reasonless and the unknown-rule directives suppress nothing"
        );
        assert_eq!(d[1].rules, ["NB0101", "NB0201"]);
        let kinds: Vec<&str> = notices.iter().map(|n| n.kind.as_str()).collect();
        assert_eq!(kinds, ["suppression-without-reason", "bad-suppression"]);
    }

    #[test]
    fn suppressions_above_a_call_or_a_root_fn_silence_only_their_rules() {
        let src = "async fn a() {\n\
                   // nonblock:allow(NB0101): config is cached by the page cache\n\
                   std::fs::read(\"x\");\n\
                   std::thread::sleep(d());\n}\n\
                   /// Docs.\n// nonblock:allow(NB0201): test helper, runs once at startup\n#[allow(dead_code)]\n\
                   async fn b() {\n std::thread::sleep(d());\n std::fs::read(\"y\");\n}\n\
                   // nonblock:allow(NB0801): nothing here blocks on\n\
                   async fn c() {}\nfn d() -> std::time::Duration { todo!() }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        let left: Vec<(u32, &str)> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.rule.as_str()))
            .collect();
        assert_eq!(left, [(4, "NB0201"), (11, "NB0101")]);
        assert_eq!(r.stats.suppressed, 2);
        let notices: Vec<(u32, &str)> = r
            .notices
            .iter()
            .map(|n| (n.line, n.kind.as_str()))
            .collect();
        assert_eq!(notices, [(13, "unused-suppression")]);
    }
}

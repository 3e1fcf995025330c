//! Inline suppressions: `// nonblock:allow(NB0101): reason` silences every path of the listed
//! rules through the code it stands on. It may stand on the line above (comments and attributes
//! may sit in between) or at the end of:
//!
//! - a call, anywhere in the workspace: no path of those rules goes through that call. On the
//!   blocking call inside a helper, or on an awaited call in an async fn, it stops every path
//!   through that line;
//! - a function's `fn` line: no path of those rules enters, leaves or starts in the function. On
//!   a sync helper several calls below the entry, every finding whose path goes through the
//!   helper is gone; on an async fn, its own findings are, and it no longer reaches others.
//!
//! The directives become [`Cuts`] that propagation applies while it builds paths, so a path that
//! avoids the suppressed code is still found, and a finding whose context is only reached from
//! suppressed async callers is gone with them.
//!
//! A directive without a reason is reported and suppresses nothing: a suppression must say why.
//! A directive that stops no path is reported as unused, so suppressions cannot outlive the code
//! they were written for.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::index::{FileId, Index};
use crate::propagate::Cuts;
use crate::rules::RuleDb;

/// A reported problem with a suppression or a baseline entry; counts as a warning for
/// `--fail-on`.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq, PartialOrd, Ord)]
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
    /// Written after code on its line (`call(); // nonblock:allow(..): ..`): it covers that line
    /// only.
    pub trailing: bool,
}

const TAG: &str = "nonblock:allow(";

/// Parses the directives of one file's text. Unknown rules and missing reasons become notices.
pub fn parse(file: &str, text: &str, rules: &RuleDb, notices: &mut Vec<Notice>) -> Vec<Directive> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find("//") else {
            continue;
        };
        let comment = &line[at..];
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
                trailing: !line[..at].trim().is_empty(),
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

/// A workspace member's source file, where directives are read.
pub struct MemberFile {
    pub id: FileId,
    /// As reported (workspace-relative).
    pub path: String,
    pub text: String,
}

/// The lines a directive covers: its own line when it trails code; otherwise the lines below it
/// up to and including the first that is not a comment or an attribute (the call or `fn` line).
fn covered_lines(lines: &[&str], d: &Directive) -> Vec<u32> {
    if d.trailing {
        return vec![d.line];
    }
    let mut out = Vec::new();
    let mut l = d.line + 1;
    // Open `[` of an attribute spanning several lines (`#[instrument(\n skip(db)\n)]`).
    let mut open = 0i32;
    while let Some(text) = lines.get(l as usize - 1) {
        out.push(l);
        let t = text.trim_start();
        let attribute = open > 0 || t.starts_with("#[") || t.starts_with("#!");
        if attribute {
            open += t.matches('[').count() as i32 - t.matches(']').count() as i32;
        } else if !t.starts_with("//") {
            break;
        }
        l += 1;
    }
    out
}

/// The cuts of `directives` (tagged with their index), for the rules that are enabled: a
/// directive naming only disabled rules stops nothing and is reported as unused.
pub fn cuts(directives: &[Directive], files: &[MemberFile], index: &Index, rules: &RuleDb) -> Cuts {
    let mut cuts = Cuts::default();
    if directives.is_empty() {
        return cuts;
    }
    let by_path: BTreeMap<&str, &MemberFile> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    // (file, line) → [(rule index, directive)], for the `fn` lines below.
    let mut covered: BTreeMap<(FileId, u32), Vec<(usize, usize)>> = BTreeMap::new();
    for (i, d) in directives.iter().enumerate() {
        let Some(file) = by_path.get(d.file.as_str()) else {
            continue;
        };
        let lines: Vec<&str> = file.text.lines().collect();
        let rule_ids: Vec<usize> = d
            .rules
            .iter()
            .filter(|id| !rules.disabled.contains(*id))
            .filter_map(|id| rules.rules.iter().position(|r| &r.id == id))
            .collect();
        for line in covered_lines(&lines, d) {
            for &r in &rule_ids {
                cuts.lines.entry((file.id, line, r)).or_insert(i);
                covered.entry((file.id, line)).or_default().push((r, i));
            }
        }
    }
    for (f, def) in index.fns.iter().enumerate() {
        if let Some(hits) = covered.get(&(def.file, def.ir.attrs.item_line)) {
            for &(r, i) in hits {
                cuts.fns.entry((f, r)).or_insert(i);
            }
        }
    }
    cuts
}

/// Notices for the directives that stopped no path (`used` holds the tags propagation returned).
pub fn report_unused(directives: &[Directive], used: &BTreeSet<usize>, notices: &mut Vec<Notice>) {
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
    fn trailing_directives_cover_their_line_and_others_the_code_below() {
        let db = RuleDb::builtin();
        let text = "f(); // nonblock:allow(NB0101): once\n\
                    // nonblock:allow(NB0101): attrs below\n\
                    #[instrument(\n    skip(db)\n)]\n\
                    /// docs\n\
                    fn g() {}\n\
                    // nonblock:allow(NB0101): blank line below\n\n\
                    fn h() {}\n";
        let d = parse("src/a.rs", text, &db, &mut Vec::new());
        let lines: Vec<&str> = text.lines().collect();
        let covered: Vec<Vec<u32>> = d.iter().map(|d| covered_lines(&lines, d)).collect();
        assert_eq!(covered, [vec![1], vec![3, 4, 5, 6, 7], vec![9]]);
    }

    /// What a run leaves: finding sites, how many were suppressed, notices as (line, kind).
    struct Left {
        kept: Vec<(u32, String)>,
        suppressed: usize,
        notices: Vec<(u32, String)>,
    }

    fn left(src: &str) -> Left {
        let r = analyze_files(&[("src/lib.rs", src)]);
        Left {
            kept: crate::testutil::sites(&r),
            suppressed: r.stats.suppressed,
            notices: r.notices.iter().map(|n| (n.line, n.kind.clone())).collect(),
        }
    }

    #[test]
    fn suppressions_above_a_call_or_an_async_fn_silence_only_their_rules() {
        let src = "async fn a() {\n\
                   // nonblock:allow(NB0101): config is cached by the page cache\n\
                   std::fs::read(\"x\");\n\
                   std::thread::sleep(d());\n}\n\
                   /// Docs.\n// nonblock:allow(NB0201): test helper, runs once at startup\n#[allow(dead_code)]\n\
                   async fn b() {\n std::thread::sleep(d());\n std::fs::read(\"y\");\n}\n\
                   // nonblock:allow(NB0801): nothing here blocks on\n\
                   async fn c() {}\nfn d() -> std::time::Duration { todo!() }\n";
        let l = left(src);
        assert_eq!(l.kept, [(4, "NB0201".into()), (11, "NB0101".into())]);
        assert_eq!(l.suppressed, 2);
        assert_eq!(l.notices, [(13, "unused-suppression".into())]);
    }

    /// The entry is in `a`; the directive sits on a helper three calls below it.
    const DEEP: &str = "fn leaf() { std::fs::read(\"x\"); }\n\
                        // nonblock:allow(NB0101): reads a 10-byte file once\n\
                        fn helper() { leaf(); }\n\
                        fn mid() { helper(); }\n\
                        fn step() { mid(); }\n\
                        fn other() { leaf(); }\n\
                        pub async fn a() {\n step();\n other();\n}\n\
                        pub async fn b() { a().await; step(); }\n";

    #[test]
    fn a_directive_on_a_helper_several_calls_down_silences_every_path_through_it() {
        let l = left(DEEP);
        // `a`'s and `b`'s calls of `step` go through `helper`; `other` does not.
        assert_eq!(l.kept, [(9, "NB0101".into())]);
        assert_eq!(l.suppressed, 2);
        assert!(l.notices.is_empty(), "{:?}", l.notices);
        let unsuppressed = left(&DEEP.replace("nonblock:allow", "note"));
        assert_eq!(unsuppressed.kept.len(), 3);
    }

    #[test]
    fn a_directive_on_the_blocking_call_trailing_or_above_silences_paths_through_it() {
        let trailing = DEEP
            .replace("// nonblock:allow(NB0101): reads a 10-byte file once\n", "")
            .replace(
                "fn leaf() { std::fs::read(\"x\"); }",
                "fn leaf() {\n    std::fs::read(\"x\"); // nonblock:allow(NB0101): tiny file\n}",
            );
        let l = left(&trailing);
        assert!(l.kept.is_empty(), "{:?}", l.kept);
        assert_eq!(l.suppressed, 3);
        assert!(l.notices.is_empty(), "{:?}", l.notices);
        // On the line above, the same.
        let above = trailing.replace(
            "    std::fs::read(\"x\"); // nonblock:allow(NB0101): tiny file",
            "    // nonblock:allow(NB0101): tiny file\n    std::fs::read(\"x\");",
        );
        assert!(left(&above).kept.is_empty());
    }

    #[test]
    fn a_path_that_avoids_the_suppressed_helper_is_still_found() {
        // Through `short` the path is shortest; with `short` suppressed, `long_way` still blocks.
        let src = "// nonblock:allow(NB0101): cached\n\
                   fn short() { std::fs::read(\"x\"); }\n\
                   fn long_way() { inner(); }\n\
                   fn inner() { std::fs::read(\"x\"); }\n\
                   fn both() { short(); long_way(); }\n\
                   pub async fn a() {\n both();\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(r.findings.len(), 1);
        let names: Vec<&str> = r.findings[0]
            .path
            .iter()
            .map(|s| s.function.as_str())
            .collect();
        assert_eq!(
            names,
            ["app::a", "app::both", "app::long_way", "app::inner"]
        );
        assert_eq!(r.stats.suppressed, 0, "the finding is still there");
        assert!(r.notices.is_empty(), "the directive stopped a path");
    }

    #[test]
    fn suppressing_an_async_caller_removes_it_from_reached_from() {
        let src = "fn helper() { std::fs::read(\"x\"); }\n\
                   pub async fn c() { helper(); }\n\
                   pub async fn b() {\n\
                   // nonblock:allow(NB0101): b runs once at startup\n\
                   c().await;\n}\n\
                   // nonblock:allow(NB0101): a is a test helper\n\
                   pub async fn a() { b().await; c().await; }\n\
                   pub async fn z() { c().await; }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(crate::testutil::sites(&r), [(2, "NB0101".into())]);
        let callers: Vec<&str> = r.findings[0]
            .reached_from
            .iter()
            .map(|c| c.function.as_str())
            .collect();
        assert_eq!(callers, ["app::z"]);
        assert_eq!(r.findings[0].reached_from_count, 1);
        assert_eq!(r.stats.suppressed, 0);
        assert!(r.notices.is_empty(), "{:?}", r.notices);
    }
}

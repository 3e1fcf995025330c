//! Expected findings written in fixture sources, next to the code that triggers them (ruff's
//! fixture style):
//!
//! - `call(); // expect: NB0101 NB0201 via=dotenvy` — findings of these rules have `path[0]` on
//!   this line (the entry: the call where the path leaves async code); with `via=PKG`, the path of
//!   each of these findings passes through a function of cargo package PKG (several `via=` may be
//!   given; all must hold).
//! - `call(); // expect: NB0101 kind=block_on` — ... and these findings are of that kind
//!   (`worker`, `block_on`, `init`: where the call runs); without `kind=`, `worker`.
//! - `inner().await; // reached: NB0101 via=PKG` — an async caller: a finding of this rule (whose
//!   entry is further down, in the awaited async fn) lists this call in `reached_from`; with
//!   `via=PKG`, that finding's path passes through PKG. A line may carry both `expect:` and
//!   `reached:` (`// expect: NB0101 // reached: NB0201`).
//! - `call(); // ok: reason` — a negative site: no finding may have `path[0]` on this line.
//! - `call(); // ok(NB0501): reason` (or `ok(NB0501, NB1001)`) — the same, tied to the rules it
//!   is a negative for: the look-alike or offloaded form of those rules' APIs. The rule coverage
//!   test requires at least one tied negative per rule.
//!
//! Only this module knows the syntax; `score` compares the parsed markers with a report.

use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub file: String,
    pub line: u32,
    pub rule: String,
    pub via: Vec<String>,
    /// The finding kind every finding at the site must have (`kind=`; default `worker`).
    pub kind: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Negative {
    pub file: String,
    pub line: u32,
    /// The rules this negative is tied to (`// ok(NB0501): ..`); empty for a plain `// ok:`.
    pub rules: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Markers {
    pub expected: Vec<Expected>,
    /// `reached:` markers: async callers listed in a finding's `reached_from` (`via` as above).
    pub reached: Vec<Expected>,
    pub negatives: Vec<Negative>,
    /// Malformed markers (`file:line: what is wrong`): a typo must not silently drop a site.
    pub errors: Vec<String>,
}

const EXPECT: &str = "// expect:";
const REACHED: &str = "// reached:";
const OK: &str = "// ok:";
const OK_TIED: &str = "// ok(";

/// Parses the markers of one source text. `file` is the path reported for it.
pub fn parse(file: &str, text: &str, out: &mut Markers) {
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let expect = marker_text(line, EXPECT);
        let reached = marker_text(line, REACHED);
        let ok = marker_text(line, OK)
            .map(|reason| (Vec::new(), reason))
            .or_else(|| {
                marker_text(line, OK_TIED).map(|rest| parse_tied(file, line_no, rest, out))
            });
        if ok.is_some() && (expect.is_some() || reached.is_some()) {
            out.errors.push(format!(
                "{file}:{line_no}: a line is either `expect:`/`reached:` or `ok:`, not both"
            ));
            continue;
        }
        if let Some(rest) = expect {
            let rules = parse_expect(file, line_no, "expect:", rest, out);
            out.expected.extend(rules);
        }
        if let Some(rest) = reached {
            let rules = parse_expect(file, line_no, "reached:", rest, out);
            out.reached.extend(rules);
        }
        if let Some((rules, reason)) = ok {
            if reason.is_empty() {
                out.errors
                    .push(format!("{file}:{line_no}: `// ok:` needs a reason"));
            }
            out.negatives.push(Negative {
                file: file.to_string(),
                line: line_no,
                rules,
            });
        }
    }
}

/// The rules and `via=` packages of an `expect:` or `reached:` marker (`tag`, for messages).
fn parse_expect(file: &str, line: u32, tag: &str, rest: &str, out: &mut Markers) -> Vec<Expected> {
    let mut rules: Vec<String> = Vec::new();
    let mut via = Vec::new();
    let mut kind = "worker".to_string();
    for word in rest.split_whitespace() {
        let word = word.trim_matches(',');
        if let Some(k) = word.strip_prefix("kind=") {
            if matches!(k, "worker" | "block_on" | "init") {
                kind = k.to_string();
            } else {
                out.errors.push(format!(
                    "{file}:{line}: `kind={k}` is not worker, block_on or init"
                ));
            }
            continue;
        }
        match word.strip_prefix("via=") {
            Some("") => out.errors.push(format!("{file}:{line}: empty `via=`")),
            Some(pkg) => via.push(pkg.to_string()),
            None if is_rule_id(word) => {
                if !rules.iter().any(|r| r == word) {
                    rules.push(word.to_string());
                }
            }
            None => out.errors.push(format!(
                "{file}:{line}: `{word}` is neither a rule id (NB0000) nor `via=PKG`"
            )),
        }
    }
    if rules.is_empty() {
        out.errors
            .push(format!("{file}:{line}: `// {tag}` names no rule"));
    }
    rules
        .into_iter()
        .map(|rule| Expected {
            file: file.to_string(),
            line,
            rule,
            via: via.clone(),
            kind: kind.clone(),
        })
        .collect()
}

/// `NB0501, NB1001): reason` (the text after `// ok(`) → the rules and the reason.
fn parse_tied<'a>(
    file: &str,
    line: u32,
    rest: &'a str,
    out: &mut Markers,
) -> (Vec<String>, &'a str) {
    let Some((ids, after)) = rest.split_once(')') else {
        out.errors
            .push(format!("{file}:{line}: `// ok(` without a closing `)`"));
        return (Vec::new(), "");
    };
    let Some(reason) = after.strip_prefix(':') else {
        out.errors.push(format!(
            "{file}:{line}: `// ok(..)` must be followed by `: reason`"
        ));
        return (Vec::new(), "");
    };
    let mut rules: Vec<String> = Vec::new();
    for word in ids.split(',').map(str::trim) {
        if !is_rule_id(word) {
            out.errors.push(format!(
                "{file}:{line}: `{word}` in `// ok(..)` is not a rule id (NB0000)"
            ));
        } else if !rules.iter().any(|r| r == word) {
            rules.push(word.to_string());
        }
    }
    (rules, reason.trim())
}

fn is_rule_id(word: &str) -> bool {
    word.len() == 6 && word.starts_with("NB") && word[2..].bytes().all(|b| b.is_ascii_digit())
}

/// The text after `tag` on `line`, up to the next comment marker (`// expect: .. // reached: ..`).
fn marker_text<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    line.find(tag).map(|i| {
        let rest = &line[i + tag.len()..];
        rest.split("//").next().unwrap_or(rest).trim()
    })
}

/// Markers of every `.rs` file under `workspace` (build scripts and files that are not modules
/// included: their `ok:` lines are negatives too), skipping `target/` and hidden directories.
/// Paths are relative to `workspace`, with `/` separators, as the JSON report writes them.
pub fn scan(workspace: &Path) -> Markers {
    let mut out = Markers::default();
    let mut files: Vec<_> = walkdir::WalkDir::new(workspace)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0 || (name != "target" && !name.starts_with('.'))
        })
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.path().to_path_buf())
        .collect();
    files.sort();
    for path in files {
        let rel = path
            .strip_prefix(workspace)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        match std::fs::read_to_string(&path) {
            Ok(text) => parse(&rel, &text, &mut out),
            Err(e) => out.errors.push(format!("{rel}: unreadable: {e}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Markers {
        let mut m = Markers::default();
        parse("src/a.rs", text, &mut m);
        m
    }

    #[test]
    fn parses_several_rules_via_and_negatives() {
        let m = parsed(
            "fn a() {\n    x(); // expect: NB0101 NB0201 via=dotenvy via=core-lib\n    y(); // ok: offloaded\n    z();\n}\n",
        );
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.expected.len(), 2);
        assert_eq!(
            m.expected[0],
            Expected {
                file: "src/a.rs".into(),
                line: 2,
                rule: "NB0101".into(),
                via: vec!["dotenvy".into(), "core-lib".into()],
                kind: "worker".into()
            }
        );
        assert_eq!(m.expected[1].rule, "NB0201");
        assert_eq!(m.expected[1].via, m.expected[0].via);
        assert_eq!(
            m.negatives,
            vec![Negative {
                file: "src/a.rs".into(),
                line: 3,
                rules: vec![]
            }]
        );
    }

    #[test]
    fn negatives_can_be_tied_to_rules() {
        let m = parsed(
            "a(); // ok(NB0501): offloaded\nb(); // ok(NB0501, NB1001, NB0501): both\nc(); // ok: plain\n",
        );
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let tied: Vec<(u32, Vec<String>)> = m
            .negatives
            .iter()
            .map(|n| (n.line, n.rules.clone()))
            .collect();
        assert_eq!(
            tied,
            vec![
                (1, vec!["NB0501".to_string()]),
                (2, vec!["NB0501".to_string(), "NB1001".to_string()]),
                (3, vec![]),
            ]
        );
    }

    #[test]
    fn malformed_tied_negatives_are_errors() {
        let m = parsed(
            "a(); // ok(NB501): x\nb(); // ok(NB0501) no colon\nc(); // ok(NB0501:\nd(); // ok(NB0501):\ne(); // expect: NB0101 // ok(NB0101): both\n",
        );
        for line in 1..=5 {
            let prefix = format!("src/a.rs:{line}:");
            assert!(
                m.errors.iter().any(|e| e.starts_with(&prefix)),
                "no error for line {line}: {:#?}",
                m.errors
            );
        }
    }

    #[test]
    fn one_rule_per_line_once_and_commas_are_ignored() {
        let m = parsed("f(); // expect: NB0101, NB0101, NB0701\n");
        let rules: Vec<&str> = m.expected.iter().map(|e| e.rule.as_str()).collect();
        assert_eq!(rules, ["NB0101", "NB0701"]);
        assert!(m.expected.iter().all(|e| e.line == 1 && e.via.is_empty()));
    }

    #[test]
    fn reached_markers_name_async_callers_alone_or_beside_an_expectation() {
        let m = parsed(
            "a().await; // reached: NB0101 via=dep\nb(a().await); // expect: NB0201 // reached: NB0101\n",
        );
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let reached: Vec<(u32, &str, usize)> = m
            .reached
            .iter()
            .map(|e| (e.line, e.rule.as_str(), e.via.len()))
            .collect();
        assert_eq!(reached, [(1, "NB0101", 1), (2, "NB0101", 0)]);
        let expected: Vec<(u32, &str)> = m
            .expected
            .iter()
            .map(|e| (e.line, e.rule.as_str()))
            .collect();
        assert_eq!(expected, [(2, "NB0201")]);
        let bad = parsed("a(); // reached:\nb(); // reached: NB0101 // ok: both\n");
        assert_eq!(bad.errors.len(), 2, "{:?}", bad.errors);
        assert!(bad.reached.is_empty() && bad.negatives.is_empty());
    }

    #[test]
    fn lines_without_markers_and_plain_comments_are_ignored() {
        let m = parsed("// a comment about expect\nlet x = 1; // nothing to see\n/// ok fine\n");
        assert!(m.expected.is_empty() && m.negatives.is_empty() && m.errors.is_empty());
    }

    #[test]
    fn malformed_markers_are_errors() {
        let m = parsed(
            "a(); // expect: NB101\nb(); // expect:\nc(); // expect: NB0101 via=\nd(); // ok:\ne(); // expect: NB0101 // ok: both\n",
        );
        for line in 1..=5 {
            let prefix = format!("src/a.rs:{line}:");
            assert!(
                m.errors.iter().any(|e| e.starts_with(&prefix)),
                "no error for line {line}: {:#?}",
                m.errors
            );
        }
        assert!(m.expected.iter().all(|e| e.line != 1));
    }

    #[test]
    fn scan_walks_every_rs_file_with_relative_paths() {
        let dir = std::env::temp_dir().join(format!("nb-markers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("crates/app/src")).unwrap();
        std::fs::create_dir_all(dir.join("target/debug")).unwrap();
        std::fs::write(dir.join("build.rs"), "x(); // ok: build script\n").unwrap();
        std::fs::write(
            dir.join("crates/app/src/lib.rs"),
            "\ny(); // expect: NB0301\n",
        )
        .unwrap();
        std::fs::write(dir.join("target/debug/gen.rs"), "z(); // expect: NB0101\n").unwrap();
        let m = scan(&dir);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            m.expected,
            vec![Expected {
                file: "crates/app/src/lib.rs".into(),
                line: 2,
                rule: "NB0301".into(),
                via: vec![],
                kind: "worker".into()
            }]
        );
        assert_eq!(
            m.negatives,
            vec![Negative {
                file: "build.rs".into(),
                line: 1,
                rules: vec![]
            }]
        );
    }
}

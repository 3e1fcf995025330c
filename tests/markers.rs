//! Expected findings written in fixture sources, next to the code that triggers them (ruff's
//! fixture style):
//!
//! - `call(); // expect: NB0101 NB0201 via=dotenvy` — findings of these rules have `path[0]` on
//!   this line; with `via=PKG`, each such finding's path passes through package PKG.
//! - `call(); // ok: reason` — a negative site: no finding may have `path[0]` on this line.

use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub file: String,
    pub line: u32,
    pub rule: String,
    pub via: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Negative {
    pub file: String,
    pub line: u32,
}

#[derive(Debug, Default)]
pub struct Markers {
    pub expected: Vec<Expected>,
    pub negatives: Vec<Negative>,
}

/// Parses the markers of one source text. `file` is the path reported for it.
pub fn parse(file: &str, text: &str, out: &mut Markers) {
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        if let Some(rest) = marker_text(line, "// expect:") {
            let mut rules = Vec::new();
            let mut via = Vec::new();
            for word in rest.split_whitespace() {
                match word.strip_prefix("via=") {
                    Some(pkg) => via.push(pkg.to_string()),
                    None => rules.push(word.trim_matches(',').to_string()),
                }
            }
            for rule in rules {
                out.expected.push(Expected {
                    file: file.to_string(),
                    line: line_no,
                    rule,
                    via: via.clone(),
                });
            }
        } else if marker_text(line, "// ok:").is_some() {
            out.negatives.push(Negative {
                file: file.to_string(),
                line: line_no,
            });
        }
    }
}

fn marker_text<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    line.find(tag).map(|i| line[i + tag.len()..].trim())
}

/// Markers of every `.rs` file under `workspace` (skipping `target/`), with paths relative to it.
pub fn scan(workspace: &Path) -> Markers {
    let mut out = Markers::default();
    let mut files: Vec<_> = walkdir::WalkDir::new(workspace)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
        .filter_map(|e| e.ok())
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
        if let Ok(text) = std::fs::read_to_string(&path) {
            parse(&rel, &text, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_several_rules_via_and_negatives() {
        let mut m = Markers::default();
        parse(
            "src/a.rs",
            "fn a() {\n    x(); // expect: NB0101 NB0201 via=dotenvy via=core\n    y(); // ok: offloaded\n    z();\n}\n",
            &mut m,
        );
        assert_eq!(m.expected.len(), 2);
        assert_eq!(
            m.expected[0],
            Expected {
                file: "src/a.rs".into(),
                line: 2,
                rule: "NB0101".into(),
                via: vec!["dotenvy".into(), "core".into()]
            }
        );
        assert_eq!(m.expected[1].rule, "NB0201");
        assert_eq!(
            m.negatives,
            vec![Negative {
                file: "src/a.rs".into(),
                line: 3
            }]
        );
    }
}

//! GitHub Actions annotations (`--format github`): one `::error` or `::warning` workflow command
//! per finding, at the entry call written in the async context, with the whole path and the
//! async callers that reach it in the message.
//!
//! ```text
//! ::error file=crates/api/src/main.rs,line=13,col=20,title=NB0101 std-fs…::synchronous …%0Apath …
//! ```
//!
//! Escaping follows the runner's own (`@actions/core`): in the message `%`, `\r` and `\n` become
//! `%25`, `%0D` and `%0A`; in properties (`file`, `title`) `:` and `,` become `%3A` and `%2C` too.
//! File paths are relative to the repository root (`Roots::srcroot`), as annotations need.
//!
//! GitHub shows only [`ANNOTATIONS_PER_LEVEL`] annotations of each level per step: the most
//! severe come first, the rest are counted in a closing `::notice` that points to the SARIF log.

use super::sarif::{Roots, CARGO_HOME};
use crate::report::{Diagnostic, Finding, Report};
use crate::rules::RuleDb;

/// GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (and 50 per job):
/// further workflow commands of a level are dropped without a trace ("Limitations" in
/// actions/toolkit's `docs/problem-matchers.md`; the same limit applies to `::error` and
/// `::warning` commands). So [`render`] prints the most severe first and at most this many of
/// each level, then one `::notice` saying how many were left out and where they are.
pub const ANNOTATIONS_PER_LEVEL: usize = 10;

/// Renders the annotations, most severe first, at most [`ANNOTATIONS_PER_LEVEL`] of each level:
/// `::error` (caught internal errors, then error findings), then `::warning` (warning findings,
/// then member files that could not be analysed and suppression or baseline notices, which fail
/// the run under `--fail-on warning`, then gaps in dependencies, which do not); within each group
/// the report's sorted order. One command per line; a `::notice` closes when some were left out.
pub fn render(report: &Report, rules: &RuleDb, roots: &Roots) -> String {
    // (level, rank within the level, command); sorted stably by the first two.
    let mut commands: Vec<(Level, u8, String)> = Vec::new();
    for f in &report.findings {
        let level = if f.severity == "error" {
            Level::Error
        } else {
            Level::Warning
        };
        commands.push((level, 1, finding(f, level, rules, roots)));
    }
    for d in &report.errors {
        // An internal error means part of the graph went unanalysed: the run failed.
        let (level, rank) = if d.kind == "internal" {
            (Level::Error, 0)
        } else if d.fails_the_run() {
            (Level::Warning, 2)
        } else {
            (Level::Warning, 3)
        };
        commands.push((level, rank, diagnostic(d, level, roots)));
    }
    for n in &report.notices {
        let mut props = file_props(roots, &n.file, n.line, 0);
        props.push(("title", format!("nonblock: {}", n.kind)));
        commands.push((
            Level::Warning,
            2,
            command_line(Level::Warning.command(), &props, &n.message),
        ));
    }
    commands.sort_by_key(|(level, rank, _)| (*level, *rank));
    let mut out = String::new();
    let mut hidden = [0usize; 2];
    for level in [Level::Error, Level::Warning] {
        let of_level = commands.iter().filter(|(l, ..)| *l == level);
        for (i, (_, _, command)) in of_level.enumerate() {
            if i < ANNOTATIONS_PER_LEVEL {
                out.push_str(command);
                out.push('\n');
            } else {
                hidden[level as usize] += 1;
            }
        }
    }
    if hidden.iter().sum::<usize>() > 0 {
        out.push_str(&not_shown(hidden[0], hidden[1]));
        out.push('\n');
    }
    out
}

/// An annotation's level; the order is the order of severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Error = 0,
    Warning = 1,
}

impl Level {
    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
        }
    }
}

/// The `::notice` that says how many annotations were left out and where the full list is.
fn not_shown(errors: usize, warnings: usize) -> String {
    let mut counts = Vec::new();
    if errors > 0 {
        counts.push(super::plural(errors, "error", "errors"));
    }
    if warnings > 0 {
        counts.push(super::plural(warnings, "warning", "warnings"));
    }
    let hidden = errors + warnings;
    let (noun, verb) = if hidden == 1 {
        ("annotation", "is")
    } else {
        ("annotations", "are")
    };
    let message = format!(
        "{hidden} more {noun} ({}) {verb} not shown: GitHub shows {ANNOTATIONS_PER_LEVEL} \
         annotations of each level per step. Every finding is in the SARIF log \
         (`cargo nonblock --format sarif`; in code scanning when it is uploaded) and the JSON \
         report (`--format json`); `--format summary` counts them per rule for the step summary",
        counts.join(", "),
    );
    command_line(
        "notice",
        &[("title", "nonblock: annotations not shown".to_string())],
        &message,
    )
}

fn finding(f: &Finding, level: Level, rules: &RuleDb, roots: &Roots) -> String {
    let first = &f.path[0];
    let summary = rules
        .find(&f.rule)
        .map(|r| r.summary.as_str())
        .unwrap_or(f.name.as_str());
    let title = format!("{} {}: {}", f.rule, f.name, summary);
    let mut message = f.message.clone();
    message.push_str(&format!(
        "\npath ({} step{}):",
        f.path.len(),
        if f.path.len() == 1 { "" } else { "s" }
    ));
    for (i, s) in f.path.iter().enumerate() {
        message.push_str(&format!(
            "\n  {}. {}:{}:{} `{}` calls `{}`",
            i + 1,
            roots.display(&s.file),
            s.line,
            s.column,
            s.function,
            s.callee
        ));
    }
    if f.reached_from_count > 0 {
        message.push_str(&format!(
            "\nreached from {}:",
            super::async_callers(f.reached_from_count)
        ));
        for r in &f.reached_from {
            message.push_str(&format!(
                "\n  - {}:{}:{} {} `{}`",
                roots.display(&r.file),
                r.line,
                r.column,
                r.kind,
                r.function
            ));
        }
        if f.reached_from_count > f.reached_from.len() {
            message.push_str(&format!(
                "\n  - and {} more",
                f.reached_from_count - f.reached_from.len()
            ));
        }
    }
    if f.confidence != "high" {
        message.push_str(&format!("\nconfidence: {}", f.confidence));
    }
    message.push_str(&format!("\nhelp: {}", f.help));
    let mut props = file_props(roots, &first.file, first.line, first.column);
    props.push(("title", title));
    command_line(level.command(), &props, &message)
}

fn diagnostic(d: &Diagnostic, level: Level, roots: &Roots) -> String {
    let title = format!("nonblock: {} ({})", d.title(), d.kind);
    let mut message = match (&d.file, &d.package) {
        (Some(file), _) => format!("{}: ", roots.display(file)),
        (None, Some(p)) => format!("package {p}: "),
        _ => String::new(),
    };
    message.push_str(&d.message);
    let mut props = match &d.file {
        Some(file) => {
            let (line, col) = d.position().unwrap_or((0, 0));
            file_props(roots, file, line, col)
        }
        None => Vec::new(),
    };
    props.push(("title", title));
    command_line(level.command(), &props, &message)
}

/// `file`, `line`, `col` for a file of the repository; nothing for one outside it (a dependency's
/// source under `CARGO_HOME`), which GitHub could not show.
fn file_props(roots: &Roots, file: &str, line: u32, col: u32) -> Vec<(&'static str, String)> {
    let mut props = Vec::new();
    if let Some((base, rel)) = roots.locate(file) {
        if base != CARGO_HOME && !rel.starts_with("../") {
            props.push(("file", rel));
            if line > 0 {
                props.push(("line", line.to_string()));
                if col > 0 {
                    props.push(("col", col.to_string()));
                }
            }
        }
    }
    props
}

fn command_line(command: &str, props: &[(&str, String)], message: &str) -> String {
    let props: Vec<String> = props
        .iter()
        .map(|(k, v)| format!("{k}={}", escape_property(v)))
        .collect();
    if props.is_empty() {
        format!("::{command}::{}", escape_data(message))
    } else {
        format!("::{command} {}::{}", props.join(","), escape_data(message))
    }
}

/// Escapes a workflow command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::report::{ReachedFrom, Root, Step};

    pub(crate) fn roots() -> Roots {
        Roots {
            workspace: PathBuf::from("/repo/svc"),
            srcroot: PathBuf::from("/repo"),
            cargo_home: Some(PathBuf::from("/home/u/.cargo")),
        }
    }

    #[test]
    fn data_and_properties_are_escaped_like_the_runner_does() {
        assert_eq!(escape_data("100% a\r\nb: c, d"), "100%25 a%0D%0Ab: c, d");
        assert_eq!(
            escape_property("100% a\r\nb: c, d"),
            "100%25 a%0D%0Ab%3A c%2C d"
        );
        // `%` first, so an escape already in the text is not decoded by the runner.
        assert_eq!(escape_data("%0A"), "%250A");
        assert_eq!(escape_property("a::b"), "a%3A%3Ab");
    }

    fn report() -> Report {
        crate::render::sarif::tests::report(
            vec![Finding {
                rule: "NB0201".into(),
                name: "thread-sleep".into(),
                category: "sleep".into(),
                severity: "error".into(),
                confidence: "medium".into(),
                kind: "worker".into(),
                api: "std::thread::sleep".into(),
                message: "thread sleep: `std::thread::sleep` reached from async fn `a::h` via `dep::wait`"
                    .into(),
                help: "use tokio::time::sleep, or 50% less".into(),
                root: Root {
                    function: "a::h".into(),
                    kind: "async fn".into(),
                    file: "src/a,b.rs".into(),
                    line: 1,
                    column: 1,
                },
                path: vec![
                    Step {
                        function: "a::h".into(),
                        file: "src/a,b.rs".into(),
                        line: 2,
                        column: 5,
                        callee: "dep::wait".into(),
                        package: "a".into(),
                    },
                    Step {
                        function: "dep::wait".into(),
                        file: "/home/u/.cargo/registry/src/idx/dep-1.0.0/src/lib.rs".into(),
                        line: 7,
                        column: 9,
                        callee: "std::thread::sleep".into(),
                        package: "dep".into(),
                    },
                ],
                reached_from: vec![ReachedFrom {
                    function: "a::main".into(),
                    kind: "async fn".into(),
                    file: "src/main.rs".into(),
                    line: 9,
                    column: 5,
                }],
                reached_from_count: 3,
                fingerprint: "f".into(),
            }],
            vec![
                Diagnostic {
                    kind: "parse".into(),
                    file: Some("src/bad.rs".into()),
                    package: Some("a".into()),
                    message: "3:1: expected item".into(),
                    member: true,
                    ..Default::default()
                },
                Diagnostic {
                    kind: "parse".into(),
                    file: Some("/home/u/.cargo/registry/src/idx/dep-1.0.0/src/x.rs".into()),
                    package: Some("dep".into()),
                    message: "1:1: bad".into(),
                    ..Default::default()
                },
            ],
        )
    }

    #[test]
    fn one_command_per_finding_with_the_path_and_async_callers_in_the_message() {
        let mut report = report();
        report.notices = vec![crate::render::sarif::tests::notice()];
        let out = render(&report, &RuleDb::builtin(), &roots());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            "::error file=svc/src/a%2Cb.rs,line=2,col=5,\
             title=NB0201 thread-sleep%3A std%3A%3Athread%3A%3Asleep and friends::\
             thread sleep: `std::thread::sleep` reached from async fn `a::h` via `dep::wait`\
             %0Apath (2 steps):\
             %0A  1. svc/src/a,b.rs:2:5 `a::h` calls `dep::wait`\
             %0A  2. dep-1.0.0/src/lib.rs:7:9 `dep::wait` calls `std::thread::sleep`\
             %0Areached from 3 async callers:\
             %0A  - svc/src/main.rs:9:5 async fn `a::main`\
             %0A  - and 2 more\
             %0Aconfidence: medium\
             %0Ahelp: use tokio::time::sleep, or 50%25 less"
                .replace(
                    "std%3A%3Athread%3A%3Asleep and friends",
                    &escape_property(&RuleDb::builtin().find("NB0201").unwrap().summary)
                )
        );
        assert_eq!(
            lines[1],
            "::warning file=svc/src/bad.rs,line=3,col=1,title=nonblock%3A analysis incomplete (parse)::\
             svc/src/bad.rs: 3:1: expected item"
        );
        // A notice fails the run under `--fail-on warning`, as a member's file that could not
        // be parsed does; a dependency's gap does not, and comes last.
        assert_eq!(
            lines[2],
            "::warning file=svc/src/main.rs,line=7,title=nonblock%3A unused-suppression::\
             `nonblock:allow(NB0101)` matches no finding"
        );
        // A dependency's file is not in the repository: no `file=`, the path is in the message.
        assert_eq!(
            lines[3],
            "::warning title=nonblock%3A analysis incomplete (parse)::\
             dep-1.0.0/src/x.rs: 1:1: bad"
        );
        assert!(!out.contains("/home/"));
    }

    /// `n` findings of `severity` in `src/f.rs`, at lines 1 to n.
    fn findings(n: u32, severity: &str) -> Vec<Finding> {
        let template = report().findings.remove(0);
        (1..=n)
            .map(|line| {
                let mut f = template.clone();
                f.severity = severity.into();
                f.path.truncate(1);
                f.path[0].file = "src/f.rs".into();
                f.path[0].line = line;
                f
            })
            .collect()
    }

    #[test]
    fn at_most_ten_annotations_per_level_most_severe_first_then_a_notice() {
        let mut report = report();
        // Report order: warnings before errors (their files sort first).
        report.findings = findings(12, "warning");
        for f in &mut report.findings {
            f.path[0].file = "src/a.rs".into();
        }
        report.findings.extend(findings(11, "error"));
        report.notices = vec![crate::render::sarif::tests::notice()];
        report.errors.push(Diagnostic {
            kind: "internal".into(),
            package: Some("a".into()),
            message: "panicked: boom".into(),
            ..Default::default()
        });
        let out = render(&report, &RuleDb::builtin(), &roots());
        let lines: Vec<&str> = out.lines().collect();
        let level = |l: &str| l.split([' ', ':']).nth(2).unwrap_or("").to_string();
        let levels: Vec<String> = lines.iter().map(|l| level(l)).collect();
        assert_eq!(lines.len(), 2 * ANNOTATIONS_PER_LEVEL + 1, "{out}");
        assert!(levels[..10].iter().all(|l| l == "error"), "{levels:?}");
        assert!(levels[10..20].iter().all(|l| l == "warning"), "{levels:?}");
        // The internal error first, then error findings in report order (line 1, 2, …).
        assert!(lines[0].starts_with("::error title=nonblock%3A analysis incomplete (internal)::"));
        assert!(lines[1].starts_with("::error file=svc/src/f.rs,line=1,col=5,"));
        assert!(lines[9].starts_with("::error file=svc/src/f.rs,line=9,col=5,"));
        // Warning findings first; left out: the last two, the member's `src/bad.rs`, the notice
        // and the dependency's gap.
        assert!(lines[10].starts_with("::warning file=svc/src/a.rs,line=1,col=5,"));
        assert!(lines[19].starts_with("::warning file=svc/src/a.rs,line=10,col=5,"));
        assert_eq!(
            lines[20],
            "::notice title=nonblock%3A annotations not shown::7 more annotations (2 errors, \
             5 warnings) are not shown: GitHub shows 10 annotations of each level per step. Every \
             finding is in the SARIF log (`cargo nonblock --format sarif`; in code scanning when \
             it is uploaded) and the JSON report (`--format json`); `--format summary` counts \
             them per rule for the step summary"
        );
    }

    #[test]
    fn no_notice_when_every_annotation_is_shown() {
        let mut report = report();
        report.errors.clear();
        report.findings = findings(ANNOTATIONS_PER_LEVEL as u32, "error");
        report
            .findings
            .extend(findings(ANNOTATIONS_PER_LEVEL as u32, "warning"));
        let out = render(&report, &RuleDb::builtin(), &roots());
        assert_eq!(out.lines().count(), 2 * ANNOTATIONS_PER_LEVEL);
        assert!(!out.contains("::notice"));
    }
}

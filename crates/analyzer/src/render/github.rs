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

use super::sarif::{Roots, CARGO_HOME};
use crate::report::{Diagnostic, Finding, Report};
use crate::rules::RuleDb;

/// Renders every finding, then every file that could not be analysed, then every problem with a
/// suppression or baseline entry: one command per line.
pub fn render(report: &Report, rules: &RuleDb, roots: &Roots) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&finding(f, rules, roots));
        out.push('\n');
    }
    for d in &report.errors {
        out.push_str(&diagnostic(d, roots));
        out.push('\n');
    }
    for n in &report.notices {
        let mut props = file_props(roots, &n.file, n.line, 0);
        props.push(("title", format!("nonblock: {}", n.kind)));
        out.push_str(&command_line("warning", &props, &n.message));
        out.push('\n');
    }
    out
}

fn finding(f: &Finding, rules: &RuleDb, roots: &Roots) -> String {
    let command = if f.severity == "error" {
        "error"
    } else {
        "warning"
    };
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
    command_line(command, &props, &message)
}

fn diagnostic(d: &Diagnostic, roots: &Roots) -> String {
    let title = format!("nonblock: analysis incomplete ({})", d.kind);
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
    // An internal error means part of the graph went unanalysed: the run failed.
    let command = if d.kind == "internal" {
        "error"
    } else {
        "warning"
    };
    command_line(command, &props, &message)
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
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::report::{ReachedFrom, Root, Step};

    fn roots() -> Roots {
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
        // A dependency's file is not in the repository: no `file=`, the path is in the message.
        assert_eq!(
            lines[2],
            "::warning title=nonblock%3A analysis incomplete (parse)::\
             dep-1.0.0/src/x.rs: 1:1: bad"
        );
        assert_eq!(
            lines[3],
            "::warning file=svc/src/main.rs,line=7,title=nonblock%3A unused-suppression::\
             `nonblock:allow(NB0101)` matches no finding"
        );
        assert!(!out.contains("/home/"));
    }
}

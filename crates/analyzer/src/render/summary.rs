//! A Markdown summary (`--format summary`), written for `$GITHUB_STEP_SUMMARY`: the totals, a
//! table of findings per rule, the most severe findings with their paths, the files that could
//! not be analysed and the notices, and where the rest is.
//!
//! A step summary is read on the run's page, where there is no room for a whole report (GitHub
//! caps it at 1 MiB per step): the summary lists [`TOP`] findings and [`TOP`] problems and points
//! to the SARIF log and the JSON report, which hold everything. Paths are repository-relative and
//! dependency files are shown as `dotenvy-0.15.7/src/lib.rs`, as in the annotations
//! ([`Roots::display`]). Output is deterministic: findings are ordered by severity, then in the
//! report's order (file, line, column, rule), which is sorted.

use std::collections::BTreeMap;

use super::sarif::Roots;
use crate::report::{Diagnostic, Finding, Report};
use crate::rules::RuleDb;

/// How many findings, and how many problems (unanalysed files and notices), are listed in full.
pub const TOP: usize = 10;

pub fn render(report: &Report, rules: &RuleDb, roots: &Roots) -> String {
    let mut out = String::new();
    heading(&mut out, report);
    if !report.findings.is_empty() {
        per_rule(&mut out, report, rules);
        top_findings(&mut out, report, roots);
    }
    problems(&mut out, report, roots);
    let rest = [
        (report.findings.len(), "finding", "findings"),
        (
            report.errors.len() + report.notices.len(),
            "problem",
            "problems",
        ),
    ]
    .into_iter()
    .filter(|(n, ..)| *n > TOP)
    .map(|(n, one, many)| super::plural(n - TOP, &format!("more {one}"), &format!("more {many}")))
    .collect::<Vec<_>>();
    if !rest.is_empty() {
        out.push_str(&format!(
            "\nNot listed here: {}. Every finding and problem, with its whole path, is in the \
             SARIF log (`cargo nonblock --format sarif`; in code scanning when it is uploaded) \
             and in the JSON report (`cargo nonblock --format json`).\n",
            rest.join(" and ")
        ));
    }
    out
}

/// Severity first: errors before warnings (anything else after both).
fn severity_rank(severity: &str) -> u8 {
    match severity {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    }
}

fn heading(out: &mut String, report: &Report) {
    let (errors, warnings) = report.findings_by_severity();
    out.push_str("## cargo-nonblock: ");
    if report.findings.is_empty() {
        out.push_str("no blocking call reachable from async code\n\n");
    } else {
        out.push_str(&format!(
            "{} ({}, {})\n\n",
            super::plural(report.findings.len(), "finding", "findings"),
            super::plural(errors, "error", "errors"),
            super::plural(warnings, "warning", "warnings"),
        ));
    }
    let s = &report.stats;
    let mut facts = vec![format!(
        "{} and {} analysed",
        super::plural(s.packages, "package", "packages"),
        super::plural(s.files, "file", "files"),
    )];
    if s.suppressed > 0 {
        facts.push(format!("{} suppressed in the source", s.suppressed));
    }
    if s.baselined > 0 {
        facts.push(format!("{} in the baseline", s.baselined));
    }
    let (gaps, models) = report.diagnostics_by_cause();
    if gaps > 0 {
        facts.push(format!(
            "{} not fully analysed",
            super::plural(gaps, "problem", "problems")
        ));
    }
    if models > 0 {
        facts.push(format!(
            "{} in libraries' models",
            super::plural(models, "problem", "problems")
        ));
    }
    if !report.notices.is_empty() {
        facts.push(super::plural(report.notices.len(), "notice", "notices"));
    }
    out.push_str(&facts.join("; "));
    out.push_str(".\n");
}

/// One row per rule and severity (a rule's findings in `block_on` code are warnings even when
/// the rule's are errors), errors first, then the most frequent, then by id.
fn per_rule(out: &mut String, report: &Report, rules: &RuleDb) {
    let mut counts: BTreeMap<(u8, &str, &str, &str), usize> = BTreeMap::new();
    for f in &report.findings {
        *counts
            .entry((
                severity_rank(&f.severity),
                f.rule.as_str(),
                f.name.as_str(),
                f.severity.as_str(),
            ))
            .or_default() += 1;
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|((rank_a, id_a, ..), n_a), ((rank_b, id_b, ..), n_b)| {
        (rank_a, std::cmp::Reverse(n_a), id_a).cmp(&(rank_b, std::cmp::Reverse(n_b), id_b))
    });
    out.push_str("\n| Rule | Name | Severity | Findings | What it finds |\n");
    out.push_str("|:--|:--|:--|--:|:--|\n");
    for ((_, id, name, severity), n) in rows {
        let what = rules.find(id).map(|r| r.summary.as_str()).unwrap_or("");
        out.push_str(&format!(
            "| {} | {} | {} | {n} | {} |\n",
            cell(&code(id)),
            cell(&inline(name)),
            severity,
            cell(&inline(what)),
        ));
    }
}

fn top_findings(out: &mut String, report: &Report, roots: &Roots) {
    let mut order: Vec<&Finding> = report.findings.iter().collect();
    // Stable: equal severities keep the report's sorted order.
    order.sort_by_key(|f| severity_rank(&f.severity));
    let shown = order.len().min(TOP);
    out.push_str(&if shown == order.len() {
        "\n### Findings, most severe first\n\n".to_string()
    } else {
        format!(
            "\n### The {shown} most severe findings (of {})\n\n",
            order.len()
        )
    });
    // `path:line:col` of a step, as a code span.
    let at = |s: &crate::report::Step| {
        code(&format!(
            "{}:{}:{}",
            roots.display(&s.file),
            s.line,
            s.column
        ))
    };
    for (i, f) in order.iter().take(TOP).enumerate() {
        out.push_str(&format!(
            "{}. **{}** {} {} at {}: {}\n",
            i + 1,
            f.severity,
            code(&f.rule),
            inline(&f.name),
            at(&f.path[0]),
            inline(&f.message),
        ));
        // Four spaces: deeper than the content of `10. `, so the list stays nested.
        for (n, s) in f.path.iter().enumerate() {
            out.push_str(&format!(
                "    {}. {} {} calls {}\n",
                n + 1,
                at(s),
                code(&s.function),
                code(&s.callee),
            ));
        }
        if f.reached_from_count > 0 {
            let listed: Vec<String> = f
                .reached_from
                .iter()
                .take(3)
                .map(|r| {
                    format!(
                        "{} ({})",
                        code(&r.function),
                        code(&format!("{}:{}", roots.display(&r.file), r.line))
                    )
                })
                .collect();
            let more = f.reached_from_count - listed.len();
            out.push_str(&format!(
                "    - reached from {}: {}{}\n",
                super::async_callers(f.reached_from_count),
                listed.join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            ));
        }
        if f.confidence != "high" {
            out.push_str(&format!("    - confidence: {}\n", f.confidence));
        }
        out.push_str(&format!("    - help: {}\n", inline(&f.help)));
    }
}

/// Files that could not be analysed and notices (unused suppressions, stale baseline entries):
/// the ones that fail the run first.
fn problems(out: &mut String, report: &Report, roots: &Roots) {
    let mut lines: Vec<(u8, String)> = Vec::new();
    for d in &report.errors {
        let rank = if d.kind == "internal" {
            0
        } else if d.fails_the_run() {
            1
        } else {
            3
        };
        lines.push((rank, diagnostic(d, roots)));
    }
    for n in &report.notices {
        let at = format!("{}:{}", roots.display(&n.file), n.line);
        lines.push((
            2,
            format!("{} {}: {}", inline(&n.kind), code(&at), inline(&n.message)),
        ));
    }
    if lines.is_empty() {
        return;
    }
    lines.sort_by_key(|(rank, _)| *rank);
    out.push_str("\n### Problems and notices\n\n");
    for (_, line) in lines.iter().take(TOP) {
        out.push_str(&format!("- {line}\n"));
    }
}

fn diagnostic(d: &Diagnostic, roots: &Roots) -> String {
    let at = match (&d.file, &d.package, d.position()) {
        (Some(file), _, Some((line, col))) => {
            format!(
                " {}",
                code(&format!("{}:{line}:{col}", roots.display(file)))
            )
        }
        (Some(file), _, None) => format!(" {}", code(&roots.display(file))),
        (None, Some(p), _) => format!(" package {}", code(p)),
        _ => String::new(),
    };
    format!("{}{at}: {}", inline(&d.kind), inline(d.text()))
}

/// `text` as a Markdown code span, with a fence longer than any run of backticks inside it.
fn code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest > 0 {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// Report text as Markdown: the code spans it already has (`` `std::fs::read` ``) are kept,
/// and outside them the characters Markdown would take as markup are escaped, so that
/// `<T as Trait>` is not read as an HTML tag nor `*const u8` as emphasis. Newlines become
/// spaces: each entry is one list item.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        let chars: Vec<char> = part.chars().collect();
        for (j, &c) in chars.iter().enumerate() {
            let alnum = |k: Option<usize>| {
                k.and_then(|k| chars.get(k))
                    .is_some_and(|c| c.is_alphanumeric())
            };
            match c {
                // `spawn_blocking`: GitHub's Markdown never takes an underscore inside a word as
                // emphasis, so only the others are escaped.
                '_' if alnum(j.checked_sub(1)) && alnum(Some(j + 1)) => out.push(c),
                '\\' | '*' | '_' | '[' | ']' | '#' => {
                    out.push('\\');
                    out.push(c);
                }
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '\n' | '\r' => out.push(' '),
                _ => out.push(c),
            }
        }
    }
    out
}

/// A table cell: `|` ends a cell even inside a code span, so it is escaped everywhere.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::github::tests::roots;
    use crate::render::sarif::tests::{notice, report, step};
    use crate::report::{ReachedFrom, Root};

    /// A finding of `rule` in `function` at `src/lib.rs:line`, reaching `api` through a
    /// dependency's function.
    fn finding(rule: &str, name: &str, severity: &str, function: &str, line: u32) -> Finding {
        Finding {
            rule: rule.into(),
            name: name.into(),
            category: "fs".into(),
            severity: severity.into(),
            confidence: "high".into(),
            kind: "worker".into(),
            api: "std::fs::read".into(),
            message: format!(
                "synchronous filesystem call: `std::fs::read` reached from async fn `{function}`"
            ),
            help: "use tokio::fs::read".into(),
            root: Root {
                function: function.into(),
                kind: "async fn".into(),
                file: "src/lib.rs".into(),
                line: line - 1,
                column: 1,
            },
            path: vec![
                step(function, "src/lib.rs", line, "dep::load", "a"),
                step(
                    "dep::load",
                    "/home/u/.cargo/registry/src/idx/dep-1.0.0/src/lib.rs",
                    7,
                    "std::fs::read",
                    "a",
                ),
            ],
            reached_from: Vec::new(),
            reached_from_count: 0,
            fingerprint: format!("{rule}{line}"),
        }
    }

    #[test]
    fn a_clean_report_is_a_heading_and_the_totals() {
        let mut r = report(Vec::new(), Vec::new());
        r.stats.packages = 1;
        r.stats.files = 3;
        assert_eq!(
            render(&r, &RuleDb::builtin(), &roots()),
            "## cargo-nonblock: no blocking call reachable from async code\n\n\
             1 package and 3 files analysed.\n"
        );
    }

    #[test]
    fn counts_per_rule_then_findings_most_severe_first_with_their_paths() {
        let rules = RuleDb::builtin();
        let mut sleep = finding("NB0201", "thread-sleep", "error", "a::tick", 40);
        sleep.confidence = "medium".into();
        sleep.reached_from = vec![ReachedFrom {
            function: "a::main".into(),
            kind: "async fn".into(),
            file: "src/main.rs".into(),
            line: 9,
            column: 5,
        }];
        sleep.reached_from_count = 2;
        // Report order (by file and line): the warning comes first, the summary lists it last.
        let mut r = report(
            vec![
                finding("NB0101", "std-fs", "warning", "a::boot", 10),
                finding("NB0101", "std-fs", "error", "a::get", 20),
                finding("NB0101", "std-fs", "error", "a::put", 30),
                sleep,
            ],
            Vec::new(),
        );
        r.stats.packages = 2;
        r.stats.files = 5;
        r.stats.baselined = 1;
        let fs = &rules.find("NB0101").unwrap().summary;
        let sleep_summary = &rules.find("NB0201").unwrap().summary;
        let expected = format!(
            "## cargo-nonblock: 4 findings (3 errors, 1 warning)\n\
             \n\
             2 packages and 5 files analysed; 1 in the baseline.\n\
             \n\
             | Rule | Name | Severity | Findings | What it finds |\n\
             |:--|:--|:--|--:|:--|\n\
             | `NB0101` | std-fs | error | 2 | {fs} |\n\
             | `NB0201` | thread-sleep | error | 1 | {sleep} |\n\
             | `NB0101` | std-fs | warning | 1 | {fs} |\n\
             \n\
             ### Findings, most severe first\n\
             \n\
             1. **error** `NB0101` std-fs at `svc/src/lib.rs:20:5`: synchronous filesystem call: `std::fs::read` reached from async fn `a::get`\n    \
                 1. `svc/src/lib.rs:20:5` `a::get` calls `dep::load`\n    \
                 2. `dep-1.0.0/src/lib.rs:7:5` `dep::load` calls `std::fs::read`\n    \
                 - help: use tokio::fs::read\n\
             2. **error** `NB0101` std-fs at `svc/src/lib.rs:30:5`: synchronous filesystem call: `std::fs::read` reached from async fn `a::put`\n    \
                 1. `svc/src/lib.rs:30:5` `a::put` calls `dep::load`\n    \
                 2. `dep-1.0.0/src/lib.rs:7:5` `dep::load` calls `std::fs::read`\n    \
                 - help: use tokio::fs::read\n\
             3. **error** `NB0201` thread-sleep at `svc/src/lib.rs:40:5`: synchronous filesystem call: `std::fs::read` reached from async fn `a::tick`\n    \
                 1. `svc/src/lib.rs:40:5` `a::tick` calls `dep::load`\n    \
                 2. `dep-1.0.0/src/lib.rs:7:5` `dep::load` calls `std::fs::read`\n    \
                 - reached from 2 async callers: `a::main` (`svc/src/main.rs:9`), and 1 more\n    \
                 - confidence: medium\n    \
                 - help: use tokio::fs::read\n\
             4. **warning** `NB0101` std-fs at `svc/src/lib.rs:10:5`: synchronous filesystem call: `std::fs::read` reached from async fn `a::boot`\n    \
                 1. `svc/src/lib.rs:10:5` `a::boot` calls `dep::load`\n    \
                 2. `dep-1.0.0/src/lib.rs:7:5` `dep::load` calls `std::fs::read`\n    \
                 - help: use tokio::fs::read\n",
            fs = inline(fs),
            sleep = inline(sleep_summary),
        );
        let out = render(&r, &rules, &roots());
        assert_eq!(out, expected);
        assert!(!out.contains("/home/"), "no absolute path: {out}");
        // Same input, same bytes.
        assert_eq!(render(&r, &rules, &roots()), out);
    }

    #[test]
    fn past_the_top_entries_a_line_points_to_the_sarif_and_json() {
        let findings: Vec<Finding> = (0..TOP as u32 + 3)
            .map(|i| finding("NB0101", "std-fs", "warning", &format!("a::f{i}"), 10 + i))
            .chain([finding("NB0101", "std-fs", "error", "a::last", 99)])
            .collect();
        let mut r = report(findings, Vec::new());
        r.notices = vec![notice(); TOP + 1];
        let out = render(&r, &RuleDb::builtin(), &roots());
        assert!(
            out.contains("\n### The 10 most severe findings (of 14)\n\n1. **error** `NB0101` std-fs at `svc/src/lib.rs:99:5`"),
            "{out}"
        );
        let items: Vec<&str> = out
            .lines()
            .filter(|l| {
                l.split_once(". **")
                    .is_some_and(|(n, _)| n.parse::<usize>().is_ok())
            })
            .collect();
        assert_eq!(items.len(), TOP);
        assert!(
            items[TOP - 1].starts_with("10. **warning** `NB0101` std-fs at `svc/src/lib.rs:18:5`")
        );
        assert!(out.ends_with(
            "\nNot listed here: 4 more findings and 1 more problem. Every finding and problem, \
             with its whole path, \
             is in the SARIF log (`cargo nonblock --format sarif`; in code scanning when it is \
             uploaded) and in the JSON report (`cargo nonblock --format json`).\n"
        ), "{out}");
    }

    #[test]
    fn unanalysed_files_and_notices_are_listed_those_that_fail_the_run_first() {
        let mut r = report(
            Vec::new(),
            vec![
                Diagnostic::new(
                    "parse",
                    Some("/home/u/.cargo/registry/src/idx/dep-1.0.0/src/x.rs".into()),
                    Some("dep".into()),
                    "1:1: expected item".into(),
                    false,
                ),
                Diagnostic::new(
                    "parse",
                    Some("src/bad.rs".into()),
                    Some("a".into()),
                    "3:7: unclosed delimiter".into(),
                    true,
                ),
            ],
        );
        r.notices = vec![notice()];
        let out = render(&r, &RuleDb::builtin(), &roots());
        assert!(
            out.ends_with(
                "2 problems not fully analysed; 1 notice.\n\
                 \n\
                 ### Problems and notices\n\
                 \n\
                 - parse `svc/src/bad.rs:3:7`: unclosed delimiter\n\
                 - unused-suppression `svc/src/main.rs:7`: `nonblock:allow(NB0101)` matches no finding\n\
                 - parse `dep-1.0.0/src/x.rs:1:1`: expected item\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn markup_outside_code_spans_is_escaped() {
        assert_eq!(
            inline("reads *const <T as R>::f_x [x] _y_ `<T as R>::f_x` #1\nnext"),
            "reads \\*const &lt;T as R&gt;::f_x \\[x\\] \\_y\\_ `<T as R>::f_x` \\#1 next"
        );
        assert_eq!(code("a::b"), "`a::b`");
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(cell("`a|b`"), "`a\\|b`");
        assert_eq!(cell(&inline("a | b_c")), "a \\| b_c");
    }
}

//! rustc-style diagnostics through annotate-snippets, one block per finding (per entry and API):
//! the primary span on the entry call written in the async context, one `note:` per further step
//! of the path, a `note:` naming the async callers that reach the entry, `help:` with the
//! alternative.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::{plural, SourceProvider};
use crate::report::{Diagnostic, Finding, Report};

pub fn render(report: &Report, sources: &dyn SourceProvider, styled: bool) -> String {
    render_with(report, sources, styled, Detail::default())
}

/// How much of the report the human rendering shows beside the findings.
#[derive(Clone, Copy, Debug)]
pub struct Detail {
    /// Every gap in dependencies, instead of one line summing them up (`-v`).
    pub every_gap: bool,
    /// The summary line at the end (`-q` leaves it out: findings only).
    pub summary: bool,
}

impl Default for Detail {
    fn default() -> Detail {
        Detail {
            every_gap: false,
            summary: true,
        }
    }
}

/// [`render`] with the detail asked for.
pub fn render_with(
    report: &Report,
    sources: &dyn SourceProvider,
    styled: bool,
    detail: Detail,
) -> String {
    let renderer = if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&render_finding(f, sources, &renderer));
        out.push_str("\n\n");
    }
    let (shown, collapsed): (Vec<&Diagnostic>, Vec<&Diagnostic>) =
        report.errors.iter().partition(|e| {
            detail.every_gap || e.member || e.kind == "internal" || e.is_library_model()
        });
    for e in shown {
        // `path:line:col: ` as rustc prints it: terminals and editors make it a link.
        let location = match (&e.file, &e.package, e.position()) {
            (Some(file), _, Some((line, col))) => format!("{file}:{line}:{col}: "),
            (Some(file), _, None) => format!("{file}: "),
            (None, Some(p), _) => format!("package {p}: "),
            _ => String::new(),
        };
        let title = format!("{} ({}): {location}{}", e.title(), e.kind, e.text());
        // An internal error means part of the graph went unanalysed: the run failed.
        let level = if e.kind == "internal" {
            Level::ERROR
        } else {
            Level::WARNING
        };
        let group = [Group::with_title(level.primary_title(title))];
        out.push_str(&renderer.render(&group));
        out.push('\n');
    }
    if !collapsed.is_empty() {
        // Gaps in dependencies' sources cost part of a dependency's analysis, not the user's
        // code: one line, the details under `-v`.
        let mut by_kind: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut packages = std::collections::BTreeSet::new();
        for e in &collapsed {
            *by_kind.entry(e.kind.as_str()).or_default() += 1;
            packages.extend(e.package.as_deref());
        }
        let kinds: Vec<String> = by_kind.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let title = format!(
            "analysis incomplete in {} of {} ({}); `-v` lists them",
            plural(collapsed.len(), "place", "places"),
            plural(packages.len(), "dependency", "dependencies"),
            kinds.join(", ")
        );
        out.push_str(&renderer.render(&[Group::with_title(Level::NOTE.primary_title(title))]));
        out.push('\n');
    }
    for n in &report.notices {
        let location = if n.line > 0 {
            format!("{}:{}", n.file, n.line)
        } else {
            n.file.clone()
        };
        let title = format!("{} ({}): {location}: {}", "nonblock", n.kind, n.message);
        out.push_str(&renderer.render(&[Group::with_title(Level::WARNING.primary_title(title))]));
        out.push('\n');
    }
    if detail.summary {
        out.push_str(&summary_line(report));
        out.push('\n');
    }
    out
}

/// `nonblock: 3 findings (2 errors, 1 warning) in 4 async contexts; 12 packages, 80 files analysed`.
pub fn summary_line(report: &Report) -> String {
    let (errors, warnings) = report.findings_by_severity();
    let s = &report.stats;
    let mut line = format!(
        "nonblock: {} ({}, {}); {} and {} analysed",
        plural(report.findings.len(), "finding", "findings"),
        plural(errors, "error", "errors"),
        plural(warnings, "warning", "warnings"),
        plural(s.packages, "package", "packages"),
        plural(s.files, "file", "files"),
    );
    if s.suppressed + s.baselined > 0 {
        line.push_str(&format!(
            " ({} suppressed, {} in the baseline)",
            s.suppressed, s.baselined
        ));
    }
    if !report.notices.is_empty() {
        line.push_str(&format!(
            ", {}",
            plural(report.notices.len(), "notice", "notices")
        ));
    }
    // Roots left out are findings nobody sees: say how many, and how to bring them back.
    if s.uncalled_roots > 0 {
        line.push_str(&format!(
            ", {} nothing calls left out (`[report] uncalled = true` keeps them)",
            plural(s.uncalled_roots, "async fn", "async fns")
        ));
    }
    let (gaps, models) = report.diagnostics_by_cause();
    if gaps > 0 {
        line.push_str(&format!(
            ", {} not fully analysed",
            plural(gaps, "problem", "problems")
        ));
    }
    if models > 0 {
        line.push_str(&format!(
            ", {} in libraries' models",
            plural(models, "problem", "problems")
        ));
    }
    line
}

fn render_finding(f: &Finding, sources: &dyn SourceProvider, renderer: &Renderer) -> String {
    let level = if f.severity == "error" {
        Level::ERROR
    } else {
        Level::WARNING
    };
    let first = &f.path[0];
    let title = format!(
        "{}: `{}` reached from {} `{}`",
        f.name, f.api, f.root.kind, f.root.function
    );
    let label = if f.path.len() == 1 {
        "blocking call".to_string()
    } else {
        format!("reaches `{}` in {} steps", f.api, f.path.len())
    };
    // Line 0 is an unknown position (a call spliced in by a macro without a span): no snippet.
    let source = (first.line > 0)
        .then(|| sources.source(&first.file))
        .flatten()
        .and_then(|text| {
            text.lines()
                .nth(first.line as usize - 1)
                .map(str::to_string)
        });
    let mut group = Group::with_title(level.primary_title(title).id(f.rule.clone()));
    match &source {
        Some(line_text) => {
            let span = callee_span(line_text, first.column);
            group = group.element(
                Snippet::source(line_text.as_str())
                    .line_start(first.line as usize)
                    .path(first.file.as_str())
                    .annotation(AnnotationKind::Primary.span(span).label(label)),
            );
        }
        None => {
            group = group.element(
                Level::NOTE.message(format!("at {}:{}:{}", first.file, first.line, first.column)),
            );
        }
    }
    for step in &f.path[1..] {
        group = group.element(Level::NOTE.message(format!(
            "via {} ({}:{}) calls {}",
            step.function, step.file, step.line, step.callee
        )));
    }
    if f.reached_from_count > 0 {
        group = group.element(Level::NOTE.message(super::reached_from_note(f)));
    }
    if f.confidence != "high" {
        group = group.element(Level::NOTE.message(format!("confidence: {}", f.confidence)));
    }
    group = group.element(Level::HELP.message(f.help.clone()));
    let groups: [Group; 1] = [group];
    renderer.render(&groups)
}

/// The byte range of the callee written at `column` (1-based, in characters): a path such as
/// `std::fs::read` or a method name.
fn callee_span(line: &str, column: u32) -> std::ops::Range<usize> {
    let start = line
        .char_indices()
        .nth(column.saturating_sub(1) as usize)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let rest = &line[start..];
    let mut end = 0;
    let bytes = rest.as_bytes();
    while end < bytes.len() {
        let c = bytes[end];
        if c.is_ascii_alphanumeric() || c == b'_' {
            end += 1;
        } else if rest[end..].starts_with("::") {
            end += 2;
        } else {
            break;
        }
    }
    let end = if end == 0 {
        rest.chars().next().map(char::len_utf8).unwrap_or(0)
    } else {
        end
    };
    start..start + end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callee_span_covers_the_whole_path_or_method_name() {
        let line = "    let x = std::fs::read(p)?;";
        let r = callee_span(line, 13);
        assert_eq!(&line[r], "std::fs::read");
        let m = "    file.sync_all()?;";
        assert_eq!(&m[callee_span(m, 10)], "sync_all");
        let u = "    é.lock()";
        assert_eq!(&u[callee_span(u, 7)], "lock");
    }

    /// Found by the `module_tree` fuzz target (crash-835b9279): fuzz builds compile proc-macro2
    /// with `cfg(fuzzing)`, which records no span locations, so every position is line 0; the
    /// snippet lookup then subtracted below zero. An unknown position renders as a note.
    #[test]
    fn a_step_without_a_position_renders_without_a_snippet() {
        let mut report = crate::testutil::analyze_files(&[(
            "src/lib.rs",
            "pub async fn a() {\n std::fs::read(\"x\");\n}\n",
        )]);
        assert_eq!(report.findings.len(), 1);
        report.findings[0].path[0].line = 0;
        report.findings[0].path[0].column = 0;
        let out = render(
            &report,
            &crate::render::DiskSources {
                workspace_root: std::path::PathBuf::from("/nonexistent"),
            },
            false,
        );
        assert!(out.contains("error[NB0101]"), "{out}");
        assert!(out.contains("at src/lib.rs:0:0"), "{out}");
    }

    #[test]
    fn one_block_per_entry_with_a_note_naming_its_async_callers() {
        let mut src = String::from(
            "fn helper() { std::fs::read(\"x\"); }\npub async fn c() {\n helper();\n}\n",
        );
        for i in 0..22 {
            src.push_str(&format!("pub async fn caller_{i:02}() {{ c().await; }}\n"));
        }
        let report = crate::testutil::analyze_files(&[("src/lib.rs", &src)]);
        let out = render(
            &report,
            &crate::render::DiskSources {
                workspace_root: std::path::PathBuf::from("/nonexistent"),
            },
            false,
        );
        assert_eq!(out.matches("error[NB0101]").count(), 1, "{out}");
        assert!(
            out.contains(
                "note: reached from 22 async callers: `app::caller_00` (src/lib.rs:5), `app::caller_01` (src/lib.rs:6)"
            ),
            "{out}"
        );
        assert!(out.contains("(src/lib.rs:24), and 2 more\n"), "{out}");
    }
}

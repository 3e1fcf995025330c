//! Stage 7, *report*: the `Report` value every renderer reads, and the JSON output contract.
//!
//! Contract `cargo-nonblock/v1` (stdout of `--format json`): `findings`, `errors`, `stats`, as
//! documented in README.md. Fields may be added within v1; none is renamed or removed without a
//! new schema version. Findings and errors are sorted before rendering: output never depends on
//! hash order or thread count (the timing figures in `stats` are the one exception).

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::Digest;

use crate::discover::Workspace;
use crate::graph::CallGraph;
use crate::index::Index;
use crate::load::SourceFile;
use crate::propagate::{Next, RawFinding};
use crate::rules::{hex, RuleDb};

pub const SCHEMA: &str = "cargo-nonblock/v1";

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    pub message: String,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Root {
    pub function: String,
    pub kind: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Step {
    pub function: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub callee: String,
    pub package: String,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Finding {
    pub rule: String,
    pub name: String,
    pub category: String,
    pub severity: String,
    pub confidence: String,
    /// Where the blocking call runs: `worker` (stalls a runtime worker), `block_on` (on the
    /// thread that called `block_on`: stalls that future only) or `init` (one-time
    /// initialisation, reported only with `[report] init = true`).
    pub kind: String,
    pub api: String,
    pub message: String,
    pub help: String,
    pub root: Root,
    pub path: Vec<Step>,
    pub fingerprint: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub packages: usize,
    pub files: usize,
    pub bytes: u64,
    /// Functions in the analysed graph (workspace and dependencies).
    pub functions: usize,
    /// Functions whose bodies were resolved: those that may hold an async root and every function
    /// reachable from them by calls. The rest cannot take part in a finding and are not resolved.
    pub functions_resolved: usize,
    pub async_contexts: usize,
    /// Resolved call effects (a call resolved to one function is one edge, a trait call resolved
    /// to several impls several), counted over the functions reachable from async roots
    /// (`functions_resolved`), not the whole graph.
    pub call_edges: usize,
    /// Call expressions with no target, counted over the functions reachable from async roots.
    pub unresolved_calls: usize,
    /// Unresolved call expressions by reason (`closure_value`, `fn_pointer`, `unknown_receiver`,
    /// `unknown_path`, `unknown_method`), counted over the functions reachable from async roots.
    pub unresolved_by_reason: BTreeMap<String, usize>,
    /// Findings silenced by `// nonblock:allow(..)` directives.
    pub suppressed: usize,
    /// Findings left out because `--baseline` lists them.
    pub baselined: usize,
    /// Panics caught while analysing (each also an `internal` error): a report with a hole in
    /// it, so the CLI exits 2. Always 0 unless cargo-nonblock has a bug.
    pub internal_errors: usize,
    pub seconds: f64,
    /// Wall-clock seconds per pipeline phase (timing: the one non-deterministic part).
    pub phases: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub findings: Vec<Finding>,
    pub errors: Vec<Diagnostic>,
    /// Problems with suppressions and baseline entries (unused, stale, without a reason).
    pub notices: Vec<crate::suppress::Notice>,
    pub stats: Stats,
    /// Cache hits and misses of this run: shown by `-v`, never serialised (the JSON must not
    /// depend on the cache's state).
    #[serde(skip)]
    pub cache: crate::cache::CacheStats,
}

impl Report {
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("report serialises");
        s.push('\n');
        s
    }

    /// The report of a run that panicked outside any single crate: no findings can be trusted,
    /// so none are reported; the error says why and the CLI exits 2.
    pub fn internal_failure(
        error: Diagnostic,
        packages: usize,
        start: std::time::Instant,
    ) -> Report {
        Report {
            schema: SCHEMA,
            findings: Vec::new(),
            errors: vec![error],
            notices: Vec::new(),
            stats: Stats {
                packages,
                internal_errors: 1,
                seconds: start.elapsed().as_secs_f64(),
                ..Stats::default()
            },
            cache: crate::cache::CacheStats::default(),
        }
    }

    /// The same report without timing figures: byte-identical across runs.
    pub fn without_timings(&self) -> Report {
        let mut r = self.clone();
        r.stats.seconds = 0.0;
        r.stats.phases.clear();
        r
    }
}

pub struct ReportInput<'a> {
    pub ws: &'a Workspace,
    pub index: &'a Index,
    pub rules: &'a RuleDb,
    pub graph: &'a CallGraph,
    pub files: &'a [SourceFile],
}

/// Turns raw findings into reported ones: names, files, messages, fingerprints; sorted.
pub fn assemble(input: &ReportInput, raw: Vec<RawFinding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = raw
        .into_iter()
        .filter(|r| {
            !input
                .rules
                .disabled
                .contains(&input.rules.rules[r.api.rule].id)
        })
        .map(|r| finding(input, r))
        .collect();
    out.sort_by(|a, b| {
        let ka = (
            &a.path[0].file,
            a.path[0].line,
            a.path[0].column,
            &a.rule,
            &a.api,
            &a.root.function,
            &a.fingerprint,
        );
        let kb = (
            &b.path[0].file,
            b.path[0].line,
            b.path[0].column,
            &b.rule,
            &b.api,
            &b.root.function,
            &b.fingerprint,
        );
        ka.cmp(&kb)
    });
    out
}

fn fn_file(input: &ReportInput, f: usize) -> String {
    let file = input.index.fns[f].file;
    input
        .files
        .get(file)
        .map(|s| input.ws.display_path(&s.path))
        .unwrap_or_default()
}

fn fn_package(input: &ReportInput, f: usize) -> String {
    let unit = input.index.fns[f].unit;
    input.ws.packages[input.index.units[unit].package]
        .name
        .clone()
}

fn finding(input: &ReportInput, r: RawFinding) -> Finding {
    let index = input.index;
    let rule = &input.rules.rules[r.api.rule];
    let body = &input.graph.bodies[r.body];
    let owner = index.fn_display(body.owner);
    let root_function = match r.root {
        crate::graph::RootKind::AsyncBlock => format!("{owner}::{{async block}}"),
        crate::graph::RootKind::AsyncClosure => format!("{owner}::{{async closure}}"),
        _ => owner,
    };
    let root = Root {
        function: root_function.clone(),
        kind: r.root.as_str().to_string(),
        file: fn_file(input, body.owner),
        line: body.pos.line,
        column: body.pos.column,
    };
    let path: Vec<Step> = r
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| Step {
            function: if i == 0 {
                root_function.clone()
            } else {
                index.fn_display(s.function)
            },
            file: fn_file(input, s.function),
            line: s.pos.line,
            column: s.pos.column,
            callee: match &s.callee {
                Next::Api => r.api.path.clone(),
                Next::Fn(f) => index.fn_display(*f),
            },
            package: fn_package(input, s.function),
        })
        .collect();
    let alternative = if r.api.api_index == usize::MAX {
        rule.alternative.clone()
    } else {
        input
            .rules
            .alternative(crate::rules::ApiMatch {
                rule: r.api.rule,
                api: r.api.api_index,
            })
            .to_string()
    };
    let help = if alternative.contains("::")
        && !alternative.contains(' ')
        && !alternative.contains("spawn_blocking")
    {
        format!("use {alternative} or move the call into tokio::task::spawn_blocking")
    } else {
        rule.help.clone()
    };
    let via = if path.len() > 1 {
        format!(" via `{}`", path[1].function)
    } else {
        String::new()
    };
    let kind = finding_kind(&r);
    let mut message = format!(
        "{}: `{}` reached from {} `{}`{}",
        rule.summary,
        r.api.path,
        r.root.as_str(),
        root_function,
        via
    );
    match kind {
        "block_on" => message.push_str(
            "; it runs on the thread that called `block_on`: it stalls that future, not the worker pool",
        ),
        "init" => message.push_str("; inside a one-time initialiser: it runs once per process"),
        _ => {}
    }
    let fingerprint = fingerprint(&rule.id, &root_function, &path);
    let ffi_library = if rule.ffi {
        r.api.path.split("::").next()
    } else {
        None
    };
    Finding {
        rule: rule.id.clone(),
        name: rule.name.clone(),
        category: rule.category.clone(),
        severity: if kind == "worker" {
            input
                .rules
                .severity_of(r.api.rule, &r.api.path, ffi_library)
                .as_str()
                .to_string()
        } else {
            crate::rules::Severity::Warning.as_str().to_string()
        },
        confidence: r.confidence.as_str().to_string(),
        kind: kind.to_string(),
        api: r.api.path.clone(),
        message,
        help,
        root,
        path,
        fingerprint,
    }
}

/// Where a finding's blocking call runs ([`Finding::kind`]).
fn finding_kind(r: &RawFinding) -> &'static str {
    if r.api.init || r.root == crate::graph::RootKind::InitAsync {
        "init"
    } else if r.root == crate::graph::RootKind::BlockOnThread {
        "block_on"
    } else {
        "worker"
    }
}

/// A stable identity for a finding: rule, root function and the functions and callees along the
/// path — no line numbers, so it survives edits that move code.
pub fn fingerprint(rule: &str, root: &str, path: &[Step]) -> String {
    let mut h = sha2::Sha256::new();
    h.update(rule.as_bytes());
    h.update([0]);
    h.update(root.as_bytes());
    for s in path {
        h.update([0]);
        h.update(s.function.as_bytes());
        h.update([1]);
        h.update(s.callee.as_bytes());
    }
    hex(&h.finalize()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(function: &str, line: u32, callee: &str) -> Step {
        Step {
            function: function.into(),
            file: "src/a.rs".into(),
            line,
            column: 1,
            callee: callee.into(),
            package: "a".into(),
        }
    }

    #[test]
    fn fingerprint_ignores_lines_but_not_functions() {
        let a = fingerprint("NB0101", "a::h", &[step("a::h", 3, "std::fs::read")]);
        let moved = fingerprint("NB0101", "a::h", &[step("a::h", 40, "std::fs::read")]);
        let other = fingerprint("NB0101", "a::g", &[step("a::g", 3, "std::fs::read")]);
        assert_eq!(a, moved);
        assert_ne!(a, other);
        assert_eq!(a.len(), 16);
    }
}

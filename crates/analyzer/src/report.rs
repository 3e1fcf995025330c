//! Stage 7, *report*: the `Report` value every renderer reads, and the JSON output contract.
//!
//! Contract `cargo-nonblock/v2` (stdout of `--format json`): `findings`, `errors`, `notices`,
//! `stats`, as documented in README.md. A finding is an *entry* (see [`crate::propagate`]): the
//! call where a path leaves async code, with the blocking API it reaches; `root` is the async
//! context that call is written in, and `reached_from` lists the async contexts that reach that
//! context through calls. Fields may be added within v2; none is renamed or removed without a new
//! schema version. Findings and errors are sorted before rendering: output never depends on hash
//! order or thread count (the timing figures in `stats` are the one exception).

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::Digest;

use crate::discover::Workspace;
use crate::graph::{ApiKey, CallGraph};
use crate::index::Index;
use crate::load::SourceFile;
use crate::propagate::{Ancestor, Next, RawFinding, RawStep};
use crate::resolve::BodyKind;
use crate::rules::{hex, RuleDb};

pub const SCHEMA: &str = "cargo-nonblock/v2";

/// At most this many `reached_from` entries are listed per finding (`reached_from_count` has the
/// true number): on a large application one entry can be reached from thousands of handlers,
/// and listing them all is what made v1 reports hundreds of megabytes.
pub const REACHED_FROM_LIMIT: usize = 20;

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

/// An async context that reaches a finding's entry through calls (awaited async fns, or sync
/// helpers that build the future): where its path towards the entry starts.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ReachedFrom {
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
    /// The async context the entry call (`path[0]`) is written in.
    pub root: Root,
    pub path: Vec<Step>,
    /// The first [`REACHED_FROM_LIMIT`] async contexts that reach `root` through calls, sorted by
    /// file, line, column and function.
    pub reached_from: Vec<ReachedFrom>,
    /// How many async contexts reach `root` (the length of `reached_from` before the limit).
    pub reached_from_count: usize,
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
    /// Unresolved call expressions by reason (`closure_value`, `fn_pointer`, `macro_metavar`, `unknown_receiver`,
    /// `unknown_path`, `unknown_method`), counted over the functions reachable from async roots.
    pub unresolved_by_reason: BTreeMap<String, usize>,
    /// Findings silenced by `// nonblock:allow(..)` directives: those that exist without the
    /// directives and not with them.
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
    /// v1 fingerprint → the fingerprints of the findings its path now belongs to, when the run
    /// was asked for them (`Options::v1_fingerprints`, to migrate a v1 baseline); never
    /// serialised.
    #[serde(skip)]
    pub v1_fingerprints: BTreeMap<String, Vec<String>>,
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
            v1_fingerprints: BTreeMap::new(),
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

/// Turns raw findings into reported ones: names, files, messages, fingerprints; sorted, members'
/// files first.
pub fn assemble(input: &ReportInput, raw: Vec<RawFinding>) -> Vec<Finding> {
    let mut callers = Callers::new(input);
    let mut out: Vec<Finding> = raw
        .into_iter()
        .filter(|r| {
            !input
                .rules
                .disabled
                .contains(&input.rules.rules[r.api.rule].id)
        })
        .map(|r| finding(input, &mut callers, r))
        .collect();
    // Stable: findings equal in every key (bodies spliced in by one macro call) keep the
    // deterministic order of the graph.
    out.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    number_fingerprints(&mut out);
    out
}

type SortKey<'a> = (bool, &'a str, u32, u32, &'a str, &'a str, &'a str, u32, u32);

fn sort_key(f: &Finding) -> SortKey<'_> {
    let first = &f.path[0];
    (
        std::path::Path::new(&first.file).is_absolute(),
        &first.file,
        first.line,
        first.column,
        &f.rule,
        &f.api,
        &f.root.function,
        f.root.line,
        f.root.column,
    )
}

/// Makes fingerprints unique: the n-th finding (in report order, n > 0) sharing a fingerprint
/// with earlier ones gets the fingerprint hashed with n. Two calls of one helper in one async fn
/// are two findings; adding a third makes exactly one new fingerprint, wherever it is added.
fn number_fingerprints(findings: &mut [Finding]) {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for f in findings {
        let n = seen.entry(f.fingerprint.clone()).or_default();
        if *n > 0 {
            f.fingerprint = hash(&[&f.fingerprint, &n.to_string()]);
        }
        *n += 1;
    }
}

pub(crate) fn fn_file(input: &ReportInput, f: usize) -> String {
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

/// The name of a body as reported: its function's, with `{async block}` or `{async closure}`
/// appended for those.
pub(crate) fn body_name(input: &ReportInput, body: usize) -> String {
    let b = &input.graph.bodies[body];
    let owner = input.index.fn_display(b.owner);
    match b.kind {
        BodyKind::AsyncBlock => format!("{owner}::{{async block}}"),
        BodyKind::AsyncClosure => format!("{owner}::{{async closure}}"),
        BodyKind::Fn => owner,
    }
}

/// A raw path as reported; `steps[0]` is written in the body named `first`.
pub(crate) fn path(input: &ReportInput, first: &str, api: &ApiKey, steps: &[RawStep]) -> Vec<Step> {
    let index = input.index;
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| Step {
            function: if i == 0 {
                first.to_string()
            } else {
                index.fn_display(s.function)
            },
            file: fn_file(input, s.function),
            line: s.pos.line,
            column: s.pos.column,
            callee: match &s.callee {
                Next::Api => api.path.clone(),
                Next::Fn(f) => index.fn_display(*f),
            },
            package: fn_package(input, s.function),
        })
        .collect()
}

/// Lists the async callers of findings: the first [`REACHED_FROM_LIMIT`] by file, line and
/// column, named. Only those are named (a deep chain of awaited async fns gives each entry
/// thousands of ancestors), and each list propagation shares between findings is done once.
struct Callers<'a> {
    input: &'a ReportInput<'a>,
    /// Reported path per file id, filled as needed.
    files: BTreeMap<usize, String>,
    /// Per shared ancestor list (by address; the list is kept so the address stays its own):
    /// the listed callers.
    done: BTreeMap<usize, (std::sync::Arc<[Ancestor]>, Vec<ReachedFrom>)>,
}

impl<'a> Callers<'a> {
    fn new(input: &'a ReportInput<'a>) -> Callers<'a> {
        Callers {
            input,
            files: BTreeMap::new(),
            done: BTreeMap::new(),
        }
    }

    fn listed(&mut self, ancestors: &std::sync::Arc<[Ancestor]>) -> Vec<ReachedFrom> {
        let key = ancestors.as_ptr() as usize;
        if let Some((_, listed)) = self.done.get(&key) {
            return listed.clone();
        }
        let input = self.input;
        let file_of = |a: &Ancestor| input.index.fns[input.graph.bodies[a.body].owner].file;
        for a in ancestors.iter() {
            self.files
                .entry(file_of(a))
                .or_insert_with(|| fn_file(input, input.graph.bodies[a.body].owner));
        }
        let mut order: Vec<&Ancestor> = ancestors.iter().collect();
        // Ties at one position (bodies spliced in by one macro call) by body: deterministic.
        order.sort_by_key(|a| (&self.files[&file_of(a)], a.pos.line, a.pos.column, a.body));
        let mut listed: Vec<ReachedFrom> = order
            .into_iter()
            .take(REACHED_FROM_LIMIT)
            .map(|a| ReachedFrom {
                function: body_name(input, a.body),
                kind: input.graph.bodies[a.body]
                    .root
                    .map_or("", |k| k.as_str())
                    .to_string(),
                file: self.files[&file_of(a)].clone(),
                line: a.pos.line,
                column: a.pos.column,
            })
            .collect();
        listed.sort_by(|a, b| {
            (&a.file, a.line, a.column, &a.function).cmp(&(&b.file, b.line, b.column, &b.function))
        });
        self.done.insert(key, (ancestors.clone(), listed.clone()));
        listed
    }
}

fn finding(input: &ReportInput, callers: &mut Callers, r: RawFinding) -> Finding {
    let rule = &input.rules.rules[r.api.rule];
    let body = &input.graph.bodies[r.body];
    let root_function = body_name(input, r.body);
    let root = Root {
        function: root_function.clone(),
        kind: r.root.as_str().to_string(),
        file: fn_file(input, body.owner),
        line: body.pos.line,
        column: body.pos.column,
    };
    let path = path(input, &root_function, &r.api, &r.steps);
    let reached_from = callers.listed(&r.reached_from);
    let reached_from_count = r.reached_from.len();
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
    let fingerprint = fingerprint(&rule.id, &path[0], &r.api.path, kind);
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
        reached_from,
        reached_from_count,
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

/// A finding's identity (before [`number_fingerprints`]): rule, API, and the entry — the package
/// and name of the async context it is written in and the callee it calls. No line numbers and
/// nothing below the entry's callee, so it survives edits that move code or change how a helper
/// reaches the API, and no ancestor, so a new async caller does not make a finding new.
/// The kind joins the hash only when it is not `worker`, so a worker finding's fingerprint is the
/// entry's alone, and the same entry reaching an API through a one-time initialiser too is a
/// second, distinct finding.
pub fn fingerprint(rule: &str, entry: &Step, api: &str, kind: &str) -> String {
    let mut parts = vec![
        "v2",
        rule,
        &entry.package,
        &entry.function,
        &entry.callee,
        api,
    ];
    if kind != "worker" {
        parts.push(kind);
    }
    hash(&parts)
}

/// The v1 fingerprint of a v1 finding: rule, root function, and the functions and callees along
/// the path. Kept to migrate v1 baselines (see [`crate::baseline`]).
pub fn fingerprint_v1(rule: &str, root: &str, path: &[Step]) -> String {
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

/// 16 hex digits of the SHA-256 of `parts`, each followed by a zero byte.
fn hash(parts: &[&str]) -> String {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    hex(&h.finalize()[..8])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::testutil::analyze_files;

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
    fn fingerprint_ignores_lines_but_not_the_entry() {
        let a = fingerprint(
            "NB0101",
            &step("a::h", 3, "a::load"),
            "std::fs::read",
            "worker",
        );
        let moved = fingerprint(
            "NB0101",
            &step("a::h", 40, "a::load"),
            "std::fs::read",
            "worker",
        );
        let other_fn = fingerprint(
            "NB0101",
            &step("a::g", 3, "a::load"),
            "std::fs::read",
            "worker",
        );
        let other_callee = fingerprint(
            "NB0101",
            &step("a::h", 3, "a::read"),
            "std::fs::read",
            "worker",
        );
        let other_api = fingerprint(
            "NB0101",
            &step("a::h", 3, "a::load"),
            "std::fs::write",
            "worker",
        );
        let as_init = fingerprint(
            "NB0101",
            &step("a::h", 3, "a::load"),
            "std::fs::read",
            "init",
        );
        assert_eq!(a, moved);
        assert_eq!(a.len(), 16);
        let all = BTreeSet::from([&a, &other_fn, &other_callee, &other_api, &as_init]);
        assert_eq!(all.len(), 5);
    }

    const ENTRIES: &str = "fn load() { std::fs::read(\"x\"); }\n\
                           pub async fn h() {\n load();\n load();\n async { load(); };\n async { load(); };\n}\n\
                           pub async fn g() { h().await; load(); }\n";

    #[test]
    fn fingerprints_are_unique_per_finding() {
        let r = analyze_files(&[("src/lib.rs", ENTRIES)]);
        let sites: Vec<(u32, &str)> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.root.function.as_str()))
            .collect();
        assert_eq!(
            sites,
            [
                (3, "app::h"),
                (4, "app::h"),
                (5, "app::h::{async block}"),
                (6, "app::h::{async block}"),
                (8, "app::g"),
            ]
        );
        let fingerprints: BTreeSet<&str> =
            r.findings.iter().map(|f| f.fingerprint.as_str()).collect();
        assert_eq!(fingerprints.len(), r.findings.len());
    }

    #[test]
    fn fingerprints_survive_unrelated_edits() {
        let before = analyze_files(&[("src/lib.rs", ENTRIES)]);
        // Lines move, a new function and a new async caller of `h` appear, `load` reaches the
        // API through another helper: every finding keeps its fingerprint.
        let edited = format!(
            "// header\n\nfn unrelated() {{}}\n{}\npub async fn k() {{ h().await; }}\n",
            ENTRIES.replace(
                "fn load() { std::fs::read(\"x\"); }",
                "fn load() { read_it(); }\nfn read_it() { std::fs::read(\"x\"); }"
            )
        );
        let after = analyze_files(&[("src/lib.rs", &edited)]);
        let prints = |r: &Report| -> Vec<String> {
            r.findings.iter().map(|f| f.fingerprint.clone()).collect()
        };
        assert_eq!(prints(&before), prints(&after));
        assert_eq!(after.findings[0].path.len(), 3, "the path did change");
        assert_eq!(after.findings[0].reached_from_count, 2, "g and k");
    }

    #[test]
    fn reached_from_is_sorted_and_capped_with_the_true_count() {
        let mut src =
            String::from("fn helper() { std::fs::read(\"x\"); }\npub async fn c() { helper(); }\n");
        // Written in reverse name order: the list is sorted by position, not by name.
        for i in (0..25).rev() {
            src.push_str(&format!("pub async fn caller_{i:02}() {{ c().await; }}\n"));
        }
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(r.findings.len(), 1);
        let f = &r.findings[0];
        assert_eq!(f.reached_from_count, 25);
        assert_eq!(f.reached_from.len(), REACHED_FROM_LIMIT);
        let lines: Vec<u32> = f.reached_from.iter().map(|c| c.line).collect();
        assert_eq!(
            lines,
            (3..3 + REACHED_FROM_LIMIT as u32).collect::<Vec<_>>()
        );
        assert_eq!(f.reached_from[0].function, "app::caller_24");
    }
}

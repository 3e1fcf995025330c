//! cargo-nonblock's analyzer: finds every path from async code to a known blocking API in a cargo
//! workspace and the source of its dependencies, without building or running any of it.
//!
//! The pipeline (see ARCHITECTURE.md): discover → load/parse (+ lower to IR) → index → resolve →
//! graph → propagate → report. Each stage is a module; data flows one way between them.

pub mod baseline;
pub mod cache;
pub mod cfg;
pub mod closure_params;
pub mod config;
pub mod critical;
pub mod data_literals;
pub mod dedicated;
pub mod discover;
pub mod exports;
pub mod field_fns;
pub mod fields;
pub mod graph;
pub mod guard;
pub mod index;
pub mod infer;
pub mod inputs;
pub mod instances;
pub mod ir;
pub mod link;
pub mod load;
pub mod lower;
pub mod macro_rules;
pub(crate) mod member_changes;
pub mod memo;
pub mod metadata_cache;
pub mod models;
pub mod options;
pub mod progress;
pub mod propagate;
pub mod render;
pub mod report;
pub mod resolve;
pub(crate) mod resolve_memo;
pub mod roots;
pub mod rules;
pub mod run_cache;
pub mod scope;
pub mod std_types;
pub mod stored;
pub mod suppress;
pub mod synthetic;
pub mod threads;
pub mod ty;
pub mod values;

#[cfg(test)]
pub(crate) mod testutil;

use std::collections::BTreeMap;
use std::time::Instant;

use rayon::prelude::*;

pub use options::Options;
pub use report::{Diagnostic, Finding, Report};
pub use rules::RuleDb;

/// Stack size of analysis threads: syn and the lowering recurse once per nesting level, and
/// hostile input may nest thousands of levels deep.
const ANALYSIS_STACK_BYTES: usize = 256 * 1024 * 1024;

/// A run that could not produce a report (no manifest, cargo metadata failed).
#[derive(Debug)]
pub struct FatalError(pub String);

impl std::fmt::Display for FatalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FatalError {}

/// Runs the whole pipeline on a thread pool whose threads have room for deep recursion.
pub fn analyze(opts: &Options, rules: &RuleDb) -> Result<Report, FatalError> {
    analyze_with_progress(opts, rules, &progress::Silent)
}

/// [`analyze`], reporting phases and parsed crates to `progress`.
pub fn analyze_with_progress(
    opts: &Options,
    rules: &RuleDb,
    progress: &dyn progress::Progress,
) -> Result<Report, FatalError> {
    let pool = analysis_pool(opts.threads)?;
    let result = pool.install(|| analyze_in_pool(opts, rules, progress));
    progress.finish();
    result
}

/// The thread pool every analysis runs in: threads with room for deep recursion.
pub(crate) fn analysis_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, FatalError> {
    let mut builder = rayon::ThreadPoolBuilder::new().stack_size(ANALYSIS_STACK_BYTES);
    if let Some(n) = threads {
        builder = builder.num_threads(n);
    }
    builder
        .build()
        .map_err(|e| FatalError(format!("cannot start analysis threads: {e}")))
}

fn analyze_in_pool(
    opts: &Options,
    rules: &RuleDb,
    progress: &dyn progress::Progress,
) -> Result<Report, FatalError> {
    let start = Instant::now();
    let mut phases = BTreeMap::new();
    let mut phase_start = Instant::now();
    let mut lap = |name: &str, phases: &mut BTreeMap<String, f64>| {
        phases.insert(name.to_string(), phase_start.elapsed().as_secs_f64());
        phase_start = Instant::now();
    };

    progress.phase("discover", 0);
    let mut ws = discover::discover(opts).map_err(FatalError)?;
    let config = config::load(&ws.root, rules).map_err(|errs| {
        let lines: Vec<String> = errs.iter().map(|e| format!("  {e}")).collect();
        FatalError(format!(
            "invalid configuration ({} problems):\n{}",
            errs.len(),
            lines.join("\n")
        ))
    })?;
    ws.skip_crates(&config.skip);
    lap("discover", &mut phases);
    // Per-crate stages guard themselves; this catches a panic in the whole-graph stages (index,
    // call graph, propagation), where no single crate is to blame.
    let v1 = opts.v1_fingerprints;
    match guard::guard(|| run_cache::analyze(&ws, rules, &config, progress, start, phases, v1)) {
        Ok(report) => Ok(report),
        Err(panic) => Ok(Report::internal_failure(
            guard::internal_error(None, "analysing", &panic),
            ws.packages.len(),
            start,
        )),
    }
}

/// Runs every stage after discovery. Public so tests can analyse a synthetic workspace without
/// `cargo metadata`. With `v1_fingerprints`, the report also maps the fingerprints of the v1
/// contract to today's findings (`Report::v1_fingerprints`), to migrate a v1 baseline.
pub fn analyze_workspace(
    ws: &discover::Workspace,
    rules: &RuleDb,
    config: &config::Config,
    progress: &dyn progress::Progress,
    start: Instant,
    phases: BTreeMap<String, f64>,
    v1_fingerprints: bool,
) -> Report {
    let models = models::load(ws, rules);
    let rules = configured_rules(rules, config, &models);
    analyze_configured(
        ws,
        &rules,
        config,
        models,
        progress,
        start,
        phases,
        v1_fingerprints,
        None,
    )
    .0
}

/// The rules a run applies. Precedence on a path: workspace configuration > a library's own
/// model > rule database.
pub(crate) fn configured_rules(
    rules: &RuleDb,
    config: &config::Config,
    (library_models, _): &models::Loaded,
) -> RuleDb {
    config.apply(&models::apply(library_models, rules))
}

/// Loads every unit, in parallel, each able to expand its direct dependencies' `#[macro_export]`
/// macros (`anyhow!`, `bail!`, `pin_project!`), found first by [`exports::scan`] (read back from
/// the cache for registry and git crates: [`cache::unit_exports`]). The macros of
/// `opaque` crates (logging: `rules/runtime.toml`'s `opaque_macros`) are not expanded, as they
/// are not walked. Results are in unit order, whatever the thread count.
fn load_units(
    ws: &discover::Workspace,
    opaque: &[String],
    cache_stats: &std::sync::Mutex<cache::CacheStats>,
    progress: &dyn progress::Progress,
) -> Vec<load::UnitLoad> {
    use std::sync::Arc;
    let exports: Vec<Arc<macro_rules::Exports>> = ws
        .units
        .par_iter()
        .enumerate()
        .map(|(u, unit)| {
            let offered = !unit.skip
                && matches!(unit.kind, discover::UnitKind::Lib)
                && !opaque.contains(&unit.crate_name);
            Arc::new(if offered {
                macro_rules::Exports::new(cache::unit_exports(ws, u))
            } else {
                macro_rules::Exports::default()
            })
        })
        .collect();
    (0..ws.units.len())
        .into_par_iter()
        .map(|u| {
            let deps = ws.units[u]
                .deps
                .iter()
                .filter_map(|(name, target)| match target {
                    discover::DepTarget::Unit(d) => Some((name.clone(), exports[*d].clone())),
                    discover::DepTarget::Opaque(_) => None,
                })
                .collect();
            let externs = macro_rules::ExternMacros::new(deps);
            let externs = Arc::new(if opaque.contains(&ws.units[u].crate_name) {
                externs.for_opaque_crate()
            } else {
                externs
            });
            let load = guard::guard(|| {
                guard::inject("parse", &ws.units[u].crate_name);
                cache::load_unit(ws, u, externs.clone(), cache_stats)
            })
            .unwrap_or_else(|panic| {
                let package = &ws.packages[ws.units[u].package].name;
                load::UnitLoad::failed(u, guard::internal_error(Some(package), "parsing", &panic))
            });
            progress.advance();
            load
        })
        .collect()
}

/// [`analyze_workspace`] with the rules configured and the library models loaded. Also returns
/// what the report depends on besides the workspace, rules and configuration (the files of
/// workspace members and path dependencies, [`inputs`]), or `None` when some of it could not be
/// recorded: then the report must not be reused ([`run_cache`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_configured(
    ws: &discover::Workspace,
    rules: &RuleDb,
    config: &config::Config,
    (library_models, model_warnings): models::Loaded,
    progress: &dyn progress::Progress,
    start: Instant,
    mut phases: BTreeMap<String, f64>,
    v1_fingerprints: bool,
    run_key: Option<&str>,
) -> (Report, Option<Vec<inputs::Input>>) {
    let ws = ws.clone();
    let mut phase_start = Instant::now();
    let mut lap = |name: &str, phases: &mut BTreeMap<String, f64>| {
        phases.insert(name.to_string(), phase_start.elapsed().as_secs_f64());
        phase_start = Instant::now();
    };

    let cache_stats = std::sync::Mutex::new(cache::CacheStats::default());
    progress.phase("parse", ws.units.len());
    let loads = load_units(&ws, &rules.opaque_macros, &cache_stats, progress);
    let memo_prefetch = run_key.and_then(|_| resolve_memo::Prefetch::start(&ws));
    lap("parse", &mut phases);
    progress.phase("index", 0);

    // Rebase per-unit file ids into one table, in unit order.
    let mut files = Vec::new();
    let mut errors: Vec<Diagnostic> = model_warnings;
    let mut loaded = Vec::new();
    let mut run_inputs = Some(Vec::new());
    // What each member's lowered IR is this run, when its sources were recorded
    // (`member_changes`, for the memo of resolutions).
    let mut member_shapes: Vec<Option<member_changes::MemberShape>> =
        (0..ws.units.len()).map(|_| None).collect();
    for mut l in loads {
        if cache::is_mutable(&ws, &ws.units[l.loaded.unit]) {
            let unit_inputs = l.inputs.take();
            if unit_inputs.is_some() {
                member_shapes[l.loaded.unit] = l.shape.take();
            }
            match (&mut run_inputs, unit_inputs) {
                (Some(all), Some(unit_inputs)) => all.extend(unit_inputs),
                _ => run_inputs = None,
            }
        }
        let base = files.len() as u32;
        for m in &mut l.loaded.modules {
            m.file += base;
        }
        files.extend(l.files);
        errors.extend(l.diagnostics);
        loaded.push(l.loaded);
    }
    for (name, why) in &ws.skipped {
        errors.push(Diagnostic {
            kind: "skipped".into(),
            file: None,
            package: Some(name.clone()),
            message: why.clone(),
            ..Default::default()
        });
    }
    let mut index = index::Index::build(&ws, loaded);
    lap("index", &mut phases);
    progress.phase("resolve", 0);

    // The field values read neither resolved bodies nor instances: computed on the other core
    // while root candidates are found, the memo is read and functions resolved (deno, one edit:
    // a quarter of the graph stage, which ran on one core).
    let (fields, resolution) = rayon::join(
        || fields::FieldValues::compute(&ws, &index, &config.roots),
        || {
            // Opening the memo is serial: started first, so the core that finishes the field
            // values takes over the (parallel) search for root candidates.
            let (memo, root_fns) = rayon::join(
                || {
                    run_key.and_then(|key| {
                        resolve_memo::Memo::open(&ws, &index, key, &member_shapes, memo_prefetch)
                    })
                },
                || roots::candidates(&ws, &index, &config.roots),
            );
            resolve::resolve_reachable_with(&index, rules, &root_fns, memo)
        },
    );
    let resolve::Resolution {
        bodies: resolved,
        panics,
        resolved: functions_resolved,
        instances,
        reused,
        memo_mismatches,
        memo_saving,
    } = resolution;
    {
        let mut stats = cache_stats.lock().unwrap_or_else(|e| e.into_inner());
        stats.resolutions_reused = reused;
        stats.memo_mismatches = memo_mismatches;
    }
    // Source functions; the instances of provided trait methods follow them in `index.fns`.
    let functions = index.fns.len();
    instances::materialize(&mut index, instances);
    for (f, panic) in panics {
        let package = &ws.packages[index.units[index.fns[f].unit].package].name;
        errors.push(guard::internal_error(
            Some(package),
            "resolving calls in",
            &panic,
        ));
    }
    let mut unresolved_by_reason: BTreeMap<String, usize> = resolve::Unresolved::ALL
        .iter()
        .map(|u| (u.as_str().to_string(), 0))
        .collect();
    // Counted once per source function: an instance's calls are its base's ([`instances`]).
    let mut resolved_calls = 0;
    let mut counted = vec![false; functions];
    for (f, bodies) in resolved.iter().enumerate() {
        let source = index.instances.get(f).map_or(f, |i| i.base);
        if bodies.is_empty() || std::mem::replace(&mut counted[source], true) {
            continue;
        }
        for b in bodies {
            resolved_calls += count_calls(&b.calls, &mut unresolved_by_reason);
        }
    }
    trace_unresolved(&ws, &index, &files, &resolved);
    lap("resolve", &mut phases);
    progress.phase("graph", 0);

    guard::inject("graph", "");
    // Members' suppression comments are read on the other core meanwhile (counted in `graph`).
    let (graph, (sources, directives, mut notices)) = rayon::join(
        || graph::build_with_fields(&ws, &index, rules, &config.roots, resolved, &fields),
        || {
            let sources = member_sources(&ws, &index, &files);
            let mut notices = Vec::new();
            let mut directives = Vec::new();
            for file in &sources {
                directives.extend(suppress::parse(&file.path, &file.text, rules, &mut notices));
            }
            (sources, directives, notices)
        },
    );
    drop(fields);
    lap("graph", &mut phases);

    let cuts = suppress::cuts(&directives, &sources, &index, rules);
    let propagated = propagate::run(&graph, &index, &cuts);
    lap("propagate", &mut phases);

    let input = report::ReportInput {
        ws: &ws,
        index: &index,
        rules,
        graph: &graph,
        files: &files,
    };
    let findings = report::assemble(&input, propagated.findings);
    let suppressed = report::assemble(&input, propagated.suppressed).len();
    suppress::report_unused(&directives, &propagated.used, &mut notices);
    let member_manifests: Vec<(String, std::path::PathBuf)> = ws
        .packages
        .iter()
        .filter(|p| p.is_member && p.nonblock_metadata)
        .map(|p| {
            let manifest = p.manifest_dir.join("Cargo.toml");
            (ws.display_path(&manifest), manifest)
        })
        .collect();
    notices.extend(config::ignored_config_notices(&ws.root, &member_manifests));
    let v1_fingerprints = if v1_fingerprints {
        baseline::v1_fingerprints(&input, &findings)
    } else {
        BTreeMap::new()
    };
    notices.sort();
    errors.sort();
    errors.dedup();
    let internal_errors = errors.iter().filter(|e| e.kind == "internal").count();
    // Written while the graph was built and propagated; what is left counts as `report`.
    memo_saving.wait();
    lap("report", &mut phases);

    let stats = report::Stats {
        packages: ws.packages.len(),
        files: files.len(),
        bytes: files.iter().map(|f| f.bytes).sum(),
        functions,
        functions_resolved,
        async_contexts: graph.bodies.iter().filter(|b| b.root.is_some()).count(),
        call_edges: graph.call_edges,
        resolved_calls,
        unresolved_calls: unresolved_by_reason.values().sum(),
        unresolved_by_reason,
        dead_field_branch_calls: graph.dead_field_branch_calls,
        uncalled_roots: graph.uncalled_roots,
        suppressed,
        baselined: 0,
        internal_errors,
        seconds: start.elapsed().as_secs_f64(),
        phases,
    };
    if index.fns.len() >= FREE_IN_BACKGROUND_FNS {
        free_in_background((index, graph));
    }
    // The manifests read for library models and ignored-configuration notices.
    for p in ws.packages.iter().filter(|p| p.nonblock_metadata) {
        if p.source.is_mutable() {
            let manifest = p.manifest_dir.join("Cargo.toml");
            match (&mut run_inputs, std::fs::read(&manifest)) {
                (Some(all), Ok(text)) => all.push(inputs::Input::read(&manifest, &text)),
                _ => run_inputs = None,
            }
        }
    }
    let report = Report {
        schema: report::SCHEMA,
        findings,
        errors,
        notices,
        stats,
        cache: cache_stats.into_inner().unwrap_or_default(),
        v1_fingerprints,
        library_models,
    };
    (report, run_inputs)
}

/// From this many functions on, [`free_in_background`] frees the index: below it, freeing is
/// quicker than starting a thread (the fuzz targets analyse thousands of tiny inputs a second).
const FREE_IN_BACKGROUND_FNS: usize = 10_000;

/// Frees `value` on a thread of its own. The index holds the whole graph's IR, millions of small
/// allocations: freeing them took about a seventh of a warm run's CPU time on the benchmark
/// workspace, and nothing needs to wait for it (the CLI renders and exits meanwhile). The thread
/// has the analysis threads' stack: dropping deeply nested IR recurses as deeply as lowering it.
/// Should the thread not start, `value` is freed here.
fn free_in_background<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("nonblock-free".into())
        .stack_size(ANALYSIS_STACK_BYTES)
        .spawn(move || drop(value));
}

/// Every workspace member's source file with its text (where suppressions are read).
fn member_sources(
    ws: &discover::Workspace,
    index: &index::Index,
    files: &[load::SourceFile],
) -> Vec<suppress::MemberFile> {
    files
        .iter()
        .enumerate()
        .filter(|(_, f)| ws.packages[index.units[f.unit].package].is_member)
        .filter_map(|(id, f)| {
            std::fs::read_to_string(&f.path)
                .ok()
                .map(|text| suppress::MemberFile {
                    id,
                    path: ws.display_path(&f.path),
                    text,
                })
        })
        .collect()
}

/// A developer's aid for resolution work: `NONBLOCK_TRACE_UNRESOLVED=<path substring>` prints
/// every unresolved call of the resolved functions whose file path contains the substring to
/// stderr (`path:line:col: reason target`), sorted. Never part of any report.
fn trace_unresolved(
    ws: &discover::Workspace,
    index: &index::Index,
    files: &[load::SourceFile],
    resolved: &[Vec<resolve::Body>],
) {
    let Ok(filter) = std::env::var("NONBLOCK_TRACE_UNRESOLVED") else {
        return;
    };
    let all = std::env::var_os("NONBLOCK_TRACE_ALL").is_some();
    let mut out = Vec::new();
    for (f, bodies) in resolved.iter().enumerate() {
        let Some(file) = files.get(index.fns[f].file) else {
            continue;
        };
        let path = ws.display_path(&file.path);
        if !path.contains(&filter) {
            continue;
        }
        for b in bodies {
            each_call(&b.calls, &mut |c| {
                for t in &c.targets {
                    let what = match (unresolved_reason(t), t) {
                        (Some(reason), resolve::Target::UnknownMethod(m, _)) => {
                            format!("{reason} .{m}()")
                        }
                        (Some(reason), _) => reason.to_string(),
                        (None, other) if all => format!("resolved {other:?}"),
                        (None, _) => continue,
                    };
                    out.push(format!("{path}:{}:{}: {what}", c.pos.line, c.pos.column));
                }
            });
        }
    }
    // Several calls at one position (an expanded dependency macro's calls sit at the invocation)
    // are one line with their count.
    let mut counted: BTreeMap<String, usize> = BTreeMap::new();
    for line in out {
        *counted.entry(line).or_default() += 1;
    }
    for (line, n) in counted {
        match n {
            1 => eprintln!("unresolved: {line}"),
            n => eprintln!("unresolved: {line} (x{n})"),
        }
    }
}

/// Every call site of `calls`, those written in sync closure arguments included.
fn each_call(calls: &[resolve::CallSite], f: &mut dyn FnMut(&resolve::CallSite)) {
    for c in calls {
        f(c);
        for ca in &c.closure_args {
            each_call(&ca.calls, f);
        }
    }
}

/// The `stats.unresolved_by_reason` key of a call target that is not resolved.
fn unresolved_reason(t: &resolve::Target) -> Option<&'static str> {
    match t {
        resolve::Target::Unresolved(u) => Some(u.as_str()),
        resolve::Target::UnknownMethod(..) => Some("unknown_receiver"),
        _ => None,
    }
}

/// Counts the calls' unresolved targets by reason into `unresolved` (`stats.unresolved_by_reason`)
/// and returns the number of call expressions with at least one resolved target (a function of
/// the graph, a path outside it, a parameter's closure): `stats.resolved_calls`.
fn count_calls(calls: &[resolve::CallSite], unresolved: &mut BTreeMap<String, usize>) -> usize {
    let mut resolved = 0;
    each_call(calls, &mut |c| {
        let mut any_resolved = false;
        for t in &c.targets {
            match unresolved_reason(t) {
                Some(reason) => *unresolved.entry(reason.to_string()).or_default() += 1,
                None => any_resolved = true,
            }
        }
        resolved += usize::from(any_resolved);
    });
    resolved
}

#[cfg(test)]
mod tests {
    use crate::discover::SourceKind;
    use crate::testutil::{analyze_workspace_of, scratch_workspace};

    /// The stages that run in parallel (import passes, impl resolution, resolution, the graph's
    /// per-function flattening) give the same report whatever the thread count.
    #[test]
    fn the_report_does_not_depend_on_the_thread_count() {
        let src = "use std::io::Read;\n\
                   pub mod io { pub use std::fs::*; pub fn load() -> String { read_to_string(\"x\").unwrap() } }\n\
                   pub mod api { pub use super::io::*; }\n\
                   pub struct S;\n\
                   impl S { pub fn slow(&self) { std::thread::sleep(std::time::Duration::from_secs(1)); } }\n\
                   pub trait Work { fn work(&self) { api::load(); } }\n\
                   impl Work for S {}\n\
                   pub async fn a() { S.slow(); S.work(); }\n\
                   pub async fn b() { let mut f = std::fs::File::open(\"x\").unwrap(); let mut s = String::new(); f.read_to_string(&mut s).unwrap(); }\n\
                   pub async fn c() { tokio::spawn(async { api::load(); }); tokio::task::spawn_blocking(|| api::load()); }\n\
                   pub fn main() { let _ = std::sync::Mutex::new(0).lock(); }\n";
        let (ws, _scratch) = scratch_workspace("lib-threads", src, SourceKind::Workspace, false);
        let report = |threads: usize| {
            let mut r = crate::analysis_pool(Some(threads))
                .unwrap()
                .install(|| analyze_workspace_of(&ws));
            r.stats.seconds = 0.0;
            r.stats.phases.clear();
            serde_json::to_string(&r).unwrap()
        };
        let one = report(1);
        assert!(one.contains("NB"), "no finding: {one}");
        assert_eq!(one, report(3));
    }
}

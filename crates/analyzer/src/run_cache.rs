//! The last report, reused when nothing it depends on changed: a warm run with no edit costs
//! discovery and a check of the workspace's files, not a whole analysis.
//!
//! A report is a function of the analysed workspace (packages, units, cfg sets, dependency
//! edges: everything `cargo metadata` and `rustc --print cfg` gave), the configured rules, the
//! configuration, the library models, the analyzer's own code, and the sources. Registry and git
//! sources are immutable given their package ids, which the workspace already names; the rest
//! (workspace members, path dependencies, the manifests read for models) is recorded as
//! [`Input`]s. The *key* hashes the first group; the *entry* under it holds the inputs and the
//! report. An entry is reused only if every input is unchanged ([`crate::inputs`]); otherwise
//! the run analyses as usual and overwrites it. A run that asks for v1 fingerprints (baseline
//! migration) always analyses, as does one with an injected panic or a trace ([`debugging`]).
//!
//! Entries are JSON (`report-<key>.json` in the cache directory), written through a temporary
//! file and a rename; one that does not parse, or was written for another schema, is a miss.
//! The reused report is the stored one with this run's timings (`stats.seconds`, `phases`), so
//! its output is byte-identical to the analysing run's, timings aside.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::discover::Workspace;
use crate::inputs::Input;
use crate::progress::Progress;
use crate::report::{Diagnostic, Finding, Report, Stats, SCHEMA};
use crate::rules::RuleDb;
use crate::suppress::Notice;

/// Bumped when the entry's layout changes.
const FORMAT: u32 = 1;

#[derive(Deserialize)]
struct Entry {
    schema: String,
    inputs: Vec<Input>,
    findings: Vec<Finding>,
    errors: Vec<Diagnostic>,
    notices: Vec<Notice>,
    stats: Stats,
}

/// [`Entry`] as written: borrowed from the report, so writing never copies its findings.
#[derive(Serialize)]
struct EntryRef<'a> {
    schema: &'a str,
    inputs: &'a [Input],
    findings: &'a [Finding],
    errors: &'a [Diagnostic],
    notices: &'a [Notice],
    stats: &'a Stats,
}

/// Analyses the workspace, or reuses the report of an earlier run with the same inputs.
pub fn analyze(
    ws: &Workspace,
    rules: &RuleDb,
    config: &Config,
    progress: &dyn Progress,
    start: Instant,
    mut phases: BTreeMap<String, f64>,
    v1_fingerprints: bool,
) -> Report {
    let models = crate::models::load(ws, rules);
    let rules = crate::configured_rules(rules, config, &models);
    let run_key = match &ws.cache_dir {
        Some(_) if !v1_fingerprints && !debugging() => Some(key(ws, &rules, config, &models)),
        _ => None,
    };
    let entry_path = match (&ws.cache_dir, &run_key) {
        (Some(dir), Some(key)) => Some(dir.join(format!("report-{key}.json"))),
        _ => None,
    };
    if let Some(path) = &entry_path {
        let reuse_start = Instant::now();
        if let Some(entry) = read(path) {
            phases.insert("reuse".into(), reuse_start.elapsed().as_secs_f64());
            let mut stats = entry.stats;
            stats.seconds = start.elapsed().as_secs_f64();
            stats.phases = phases;
            return Report {
                schema: SCHEMA,
                findings: entry.findings,
                errors: entry.errors,
                notices: entry.notices,
                stats,
                cache: crate::cache::CacheStats {
                    report_reused: true,
                    ..Default::default()
                },
                v1_fingerprints: BTreeMap::new(),
                library_models: models.0,
            };
        }
    }
    let (report, inputs) = crate::analyze_configured(
        ws,
        &rules,
        config,
        models,
        progress,
        start,
        phases,
        v1_fingerprints,
        run_key.as_deref(),
    );
    if let (Some(path), Some(inputs)) = (&entry_path, inputs) {
        // A report with a hole in it (a caught panic) is not worth keeping.
        if report.stats.internal_errors == 0 {
            write(path, inputs, &report);
        }
    }
    report
}

/// A run asked for something only an analysis does: an injected panic (`guard::inject`, for
/// tests) or a trace of unresolved calls (`NONBLOCK_TRACE_UNRESOLVED`).
fn debugging() -> bool {
    crate::guard::injection().is_some() || std::env::var_os("NONBLOCK_TRACE_UNRESOLVED").is_some()
}

/// Everything but the sources that the report depends on. `Debug` forms are complete (derived)
/// and deterministic (ordered maps only), so equal keys mean equal values.
fn key(ws: &Workspace, rules: &RuleDb, config: &Config, models: &crate::models::Loaded) -> String {
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(env!("NONBLOCK_SOURCE_FINGERPRINT").as_bytes());
    h.update(FORMAT.to_le_bytes());
    for part in [
        format!("{ws:?}"),
        format!("{rules:?}"),
        format!("{config:?}"),
        format!("{models:?}"),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    crate::rules::hex(&h.finalize()[..16])
}

fn read(path: &Path) -> Option<Entry> {
    let text = std::fs::read(path).ok()?;
    let entry: Entry = serde_json::from_slice(&text).ok()?;
    (entry.schema == SCHEMA && crate::inputs::all_unchanged(&entry.inputs)).then_some(entry)
}

/// Writes the entry atomically; failures are ignored (the cache is an optimisation).
fn write(path: &Path, inputs: Vec<Input>, report: &Report) {
    let mut stats = report.stats.clone();
    stats.seconds = 0.0;
    stats.phases.clear();
    let entry = EntryRef {
        schema: SCHEMA,
        inputs: &inputs,
        findings: &report.findings,
        errors: &report.errors,
        notices: &report.notices,
        stats: &stats,
    };
    let Ok(bytes) = serde_json::to_vec(&entry) else {
        return;
    };
    crate::cache::write_atomically(path, &bytes);
    if let Some(dir) = path.parent() {
        crate::cache::keep_newest(dir, "report-", KEEP_REPORTS);
    }
}

/// Reports kept per cache directory: a few option sets (`-p`, features) used in turn each keep
/// theirs, and an upgrade does not leave its predecessor's behind for good.
const KEEP_REPORTS: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::SourceKind;
    use crate::testutil::scratch_workspace;

    const LIB: &str = "mod a;\npub async fn r() {\n a::f();\n}\n";

    fn run(ws: &Workspace, rules: &RuleDb, config: &Config, v1: bool) -> Report {
        analyze(
            ws,
            rules,
            config,
            &crate::progress::Silent,
            Instant::now(),
            BTreeMap::new(),
            v1,
        )
    }

    fn plain(ws: &Workspace) -> Report {
        run(ws, &RuleDb::builtin(), &Config::default(), false)
    }

    fn member(name: &str) -> (Workspace, crate::testutil::Scratch) {
        let (ws, scratch) = scratch_workspace(name, LIB, SourceKind::Workspace, true);
        std::fs::write(
            scratch.0.join("src/a.rs"),
            "pub fn f() {\n std::fs::read(\"x\");\n}\n",
        )
        .unwrap();
        (ws, scratch)
    }

    #[test]
    fn a_run_with_nothing_changed_reuses_the_report_byte_for_byte() {
        let (ws, _scratch) = member("run-reuse");
        let cold = plain(&ws);
        assert!(!cold.cache.report_reused);
        assert_eq!(cold.findings.len(), 1);
        let warm = plain(&ws);
        assert!(warm.cache.report_reused);
        assert_eq!(
            cold.without_timings().to_json(),
            warm.without_timings().to_json()
        );
        assert!(warm.stats.phases.contains_key("reuse"), "its own timings");
    }

    #[test]
    fn an_edit_a_rule_an_option_or_a_configuration_change_analyses_again() {
        let (ws, scratch) = member("run-change");
        plain(&ws);
        std::fs::write(scratch.0.join("src/a.rs"), "pub fn f() {}\n").unwrap();
        let edited = plain(&ws);
        assert!(!edited.cache.report_reused);
        assert!(edited.findings.is_empty(), "the edit is analysed");
        assert!(plain(&ws).cache.report_reused);

        let mut rules = RuleDb::builtin();
        rules.add_user_api("fs", "dep::a::f", "reads the legacy file", None);
        let ruled = run(&ws, &rules, &Config::default(), false);
        assert!(!ruled.cache.report_reused);
        assert_eq!(ruled.findings.len(), 1, "the new rule applies");

        let config = Config {
            disabled_rules: vec!["NB0101".into()],
            ..Default::default()
        };
        assert!(
            !run(&ws, &RuleDb::builtin(), &config, false)
                .cache
                .report_reused
        );

        let v1 = run(&ws, &RuleDb::builtin(), &Config::default(), true);
        assert!(!v1.cache.report_reused, "v1 fingerprints need the analysis");

        let mut featured = ws.clone();
        featured.units[0].cfg = featured.units[0].cfg.with_features(["extra"]);
        assert!(!plain(&featured).cache.report_reused, "another cfg set");
    }

    #[test]
    fn a_damaged_entry_is_a_miss_and_is_rewritten() {
        let (ws, _scratch) = member("run-damaged");
        let reference = plain(&ws).without_timings().to_json();
        let dir = ws.cache_dir.clone().unwrap();
        let entry = crate::testutil::cache_file(&dir, |n| n.starts_with("report-"))
            .expect("a report entry");
        let good = std::fs::read(&entry).unwrap();
        std::fs::write(&entry, &good[..good.len() / 2]).unwrap();
        let again = plain(&ws);
        assert!(!again.cache.report_reused);
        assert_eq!(again.without_timings().to_json(), reference);
        assert!(plain(&ws).cache.report_reused, "rewritten whole");
    }

    #[test]
    fn a_workspace_whose_files_cannot_be_recorded_is_always_analysed() {
        let (ws, scratch) = member("run-unrecordable");
        let huge = vec![b'/'; crate::load::MAX_FILE_BYTES as usize + 1];
        std::fs::write(scratch.0.join("src/a.rs"), huge).unwrap();
        plain(&ws);
        let warm = plain(&ws);
        assert!(!warm.cache.report_reused);
        assert!(warm.errors.iter().any(|e| e.kind == "size"));
    }
}

//! Snapshot of the human output on examples/demo-service, and checks of the JSON contract.

use nonblock_analyzer::render::{human, DiskSources};
use nonblock_analyzer::{analyze, Options, RuleDb};
use nonblock_tests::{repo_root, run_tool};

#[test]
fn demo_service_human_output_snapshot() {
    let ws = repo_root().join("examples/demo-service");
    let report = run_tool(&ws.join("Cargo.toml"));
    let text = human::render(&report, &DiskSources { workspace_root: ws }, false);
    insta::with_settings!({filters => vec![
        (r"/[^\s:]*/registry/src/[^/]+/", "$$CARGO_REGISTRY/"),
        (r"\d+ packages and \d+ files", "N packages and N files"),
    ]}, {
        insta::assert_snapshot!(text);
    });
}

#[test]
fn json_contract_fields_and_invariants_hold_on_the_demo() {
    let ws = repo_root().join("examples/demo-service");
    let json = nonblock_tests::run_tool_json(&ws.join("Cargo.toml"));
    assert_eq!(json["schema"], "cargo-nonblock/v2");
    let findings = json["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    let mut fingerprints = std::collections::BTreeSet::new();
    let mut entries = std::collections::BTreeSet::new();
    for f in findings {
        assert!(
            fingerprints.insert(f["fingerprint"].as_str().unwrap()),
            "fingerprints are unique: {f}"
        );
        let first = &f["path"][0];
        assert!(
            entries.insert((
                first["file"].as_str().unwrap(),
                first["line"].as_u64(),
                first["column"].as_u64(),
                f["api"].as_str().unwrap()
            )),
            "one finding per entry and API: {f}"
        );
        let callers = f["reached_from"].as_array().unwrap();
        let count = f["reached_from_count"].as_u64().unwrap() as usize;
        assert!(callers.len() <= count.min(20), "{f}");
        for c in callers {
            for key in ["function", "kind", "file", "line", "column"] {
                assert!(!c[key].is_null(), "reached_from.{key} missing in {f}");
            }
        }
        let order: Vec<(&str, u64, u64)> = callers
            .iter()
            .map(|c| {
                let at = |k: &str| c[k].as_u64().unwrap();
                (c["file"].as_str().unwrap(), at("line"), at("column"))
            })
            .collect();
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "sorted: {f}");
        for key in [
            "rule",
            "name",
            "category",
            "severity",
            "confidence",
            "api",
            "message",
            "help",
            "fingerprint",
        ] {
            assert!(f[key].is_string(), "{key} missing in {f}");
        }
        for key in ["function", "kind", "file", "line", "column"] {
            assert!(!f["root"][key].is_null(), "root.{key} missing");
        }
        let path = f["path"].as_array().unwrap();
        assert_eq!(
            path[0]["function"], f["root"]["function"],
            "path[0] is the entry call inside the root"
        );
        assert_eq!(
            path.last().unwrap()["callee"],
            f["api"],
            "the last step calls the API"
        );
        for s in path {
            let file = s["file"].as_str().unwrap();
            let is_member = s["package"] == "api" || s["package"] == "storage";
            assert_eq!(
                is_member,
                !file.starts_with('/'),
                "workspace files are relative, others absolute: {file}"
            );
        }
    }
    for key in [
        "packages",
        "files",
        "bytes",
        "functions",
        "async_contexts",
        "call_edges",
        "unresolved_calls",
        "seconds",
    ] {
        assert!(json["stats"][key].is_number(), "stats.{key}");
    }
}

/// JSON and SARIF of one run (timings zeroed).
fn outputs(manifest: &std::path::Path, threads: Option<usize>, no_cache: bool) -> (String, String) {
    let opts = Options {
        manifest_path: Some(manifest.to_path_buf()),
        threads,
        no_cache,
        ..Options::default()
    };
    let rules = RuleDb::builtin();
    let report = analyze(&opts, &rules).unwrap().without_timings();
    let root = manifest.parent().unwrap().to_path_buf();
    let sarif = nonblock_analyzer::render::sarif::render(
        &report,
        &rules,
        &nonblock_analyzer::render::sarif::Roots::detect(&root),
        &nonblock_analyzer::render::DiskSources {
            workspace_root: root.clone(),
        },
    );
    (report.to_json(), sarif)
}

/// Byte-identical JSON and SARIF across repeated runs, rayon thread counts, and a cold (no
/// cache) versus warm cache.
fn assert_deterministic(manifest: &std::path::Path, thread_counts: &[usize]) {
    let cold = outputs(manifest, Some(thread_counts[0]), true);
    // The first cached run fills the cache (or reuses it); the second certainly reads it.
    let filled = outputs(manifest, None, false);
    assert_eq!(cold, filled, "cold and cache-filling runs differ");
    let warm = outputs(manifest, None, false);
    assert_eq!(cold, warm, "cold and warm-cache runs differ");
    for &n in thread_counts {
        assert_eq!(
            cold,
            outputs(manifest, Some(n), false),
            "output differs with {n} threads"
        );
    }
}

#[test]
fn output_is_identical_across_runs_thread_counts_and_cache_states() {
    assert_deterministic(
        &repo_root().join("examples/demo-service/Cargo.toml"),
        &[1, 2, 8],
    );
}

/// The same on the benchmark workspace (a service with a 200-crate dependency graph), where
/// parallel parsing and the cache see real contention.
#[test]
fn output_is_identical_on_the_benchmark_workspace() {
    assert_deterministic(
        &repo_root().join("bench/workspaces/large/Cargo.toml"),
        &[1, 8],
    );
}

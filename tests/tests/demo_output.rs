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
    assert_eq!(json["schema"], "cargo-nonblock/v1");
    let findings = json["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
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
            "path[0] is the call inside the root"
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

#[test]
fn output_is_identical_across_runs_and_thread_counts() {
    let manifest = repo_root().join("examples/demo-service/Cargo.toml");
    let run = |threads: Option<usize>| {
        let opts = Options {
            manifest_path: Some(manifest.clone()),
            threads,
            ..Options::default()
        };
        analyze(&opts, &RuleDb::builtin())
            .unwrap()
            .without_timings()
            .to_json()
    };
    let reference = run(None);
    assert_eq!(reference, run(None), "two runs differ");
    for n in [1, 2, 8] {
        assert_eq!(reference, run(Some(n)), "output differs with {n} threads");
    }
}

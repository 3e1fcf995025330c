//! The binary as a user runs it: exit codes, selection flags, output files and subcommands.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cargo-nonblock"))
}

fn demo_manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-service/Cargo.toml")
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn findings_exit_1_and_fail_on_controls_it() {
    let manifest = demo_manifest();
    let m = manifest.to_str().unwrap();
    let out = run(&["nonblock", "--manifest-path", m, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["severity"] == "warning")
            && findings.iter().any(|f| f["severity"] == "error")
    );
    assert_eq!(
        run(&["nonblock", "--manifest-path", m, "--fail-on", "never", "-q"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run(&["nonblock", "--manifest-path", m, "--fail-on", "error", "-q"])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn a_missing_manifest_is_exit_2_with_a_message() {
    let out = run(&["nonblock", "--manifest-path", "/nonexistent/Cargo.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: cargo metadata failed"), "{err}");
}

#[test]
fn package_selection_limits_roots_not_analysis() {
    let manifest = demo_manifest();
    let m = manifest.to_str().unwrap();
    let all = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
    ]));
    let storage = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
        "-p",
        "storage",
    ]));
    let excluded = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
        "--exclude",
        "api",
    ]));
    assert!(!all["findings"].as_array().unwrap().is_empty());
    // storage has no async code: no roots, but the same packages were analysed.
    assert_eq!(storage["findings"].as_array().unwrap().len(), 0);
    assert_eq!(excluded["findings"].as_array().unwrap().len(), 0);
    assert_eq!(storage["stats"]["packages"], all["stats"]["packages"]);
    let unknown = run(&["nonblock", "--manifest-path", m, "-p", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn output_file_gets_the_report_and_stderr_the_summary() {
    let manifest = demo_manifest();
    let file = std::env::temp_dir().join(format!("nonblock-cli-{}.json", std::process::id()));
    let out = run(&[
        "nonblock",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "--format",
        "json",
        "--output",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "nothing on stdout when --output is given"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nonblock: "),
        "summary on stderr"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["schema"], "cargo-nonblock/v1");
    std::fs::remove_file(&file).ok();
}

#[test]
fn works_with_and_without_the_cargo_subcommand_name() {
    let manifest = demo_manifest();
    let m = manifest.to_str().unwrap();
    let a = run(&["nonblock", "--manifest-path", m, "--format", "json"]);
    let b = run(&["--manifest-path", m, "--format", "json"]);
    let strip = |v: serde_json::Value| v["findings"].clone();
    assert_eq!(strip(json(&a)), strip(json(&b)));
}

#[test]
fn rules_and_explain_print_the_database() {
    let rules = run(&["nonblock", "rules", "--format", "json"]);
    assert_eq!(rules.status.code(), Some(0));
    let table = json(&rules);
    let ids: Vec<&str> = table
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"NB0101") && ids.contains(&"NB1001"));
    let explain = run(&["nonblock", "explain", "NB0101"]);
    let text = String::from_utf8_lossy(&explain.stdout);
    for section in [
        "## What it does",
        "## Why is this bad",
        "## Example",
        "## Use instead",
        "tokio::fs::read_to_string",
    ] {
        assert!(text.contains(section), "explain lacks {section}");
    }
    assert_eq!(
        run(&["nonblock", "explain", "NB9999"]).status.code(),
        Some(2)
    );
}

#[test]
fn unresolvable_manifests_and_broken_members_exit_2_with_cargos_reason() {
    let dir = std::env::temp_dir().join(format!("nonblock-broken-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("good/src")).unwrap();
    std::fs::create_dir_all(dir.join("bad/src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"good\", \"bad\"]\n",
    )
    .unwrap();
    std::fs::write(dir.join("good/Cargo.toml"), "[package]\nname = \"good\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nno-such-crate-nonblock-test = \"1\"\n").unwrap();
    std::fs::write(dir.join("good/src/lib.rs"), "").unwrap();
    std::fs::write(
        dir.join("bad/Cargo.toml"),
        "[package]\nname = \"bad\"\nversion = \n",
    )
    .unwrap();
    std::fs::write(dir.join("bad/src/lib.rs"), "").unwrap();
    let manifest = dir.join("Cargo.toml");
    let broken = run(&[
        "nonblock",
        "--offline",
        "--manifest-path",
        manifest.to_str().unwrap(),
    ]);
    assert_eq!(broken.status.code(), Some(2));
    let err = String::from_utf8_lossy(&broken.stderr);
    assert!(
        err.contains("cargo metadata failed") && err.contains("bad"),
        "{err}"
    );
    // Fix the member: the unresolvable offline dependency is now the reason.
    std::fs::write(
        dir.join("bad/Cargo.toml"),
        "[package]\nname = \"bad\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let offline = run(&[
        "nonblock",
        "--offline",
        "--manifest-path",
        manifest.to_str().unwrap(),
    ]);
    assert_eq!(offline.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&offline.stderr).contains("no-such-crate-nonblock-test"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn min_confidence_filters_low_confidence_findings() {
    let manifest = demo_manifest();
    let m = manifest.to_str().unwrap();
    let all = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
    ]));
    let high = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
        "--min-confidence",
        "high",
    ]));
    let confidences = |v: &serde_json::Value| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["confidence"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        confidences(&all).iter().any(|c| c == "low"),
        "the demo has a low-confidence DNS finding"
    );
    assert!(confidences(&high).iter().all(|c| c == "high"));
    assert_eq!(
        confidences(&high).len(),
        confidences(&all).iter().filter(|c| *c == "high").count()
    );
}

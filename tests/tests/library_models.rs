//! Models shipped by libraries (`[package.metadata.nonblock]` in a dependency's own manifest), on
//! `tests/fixtures/library-models`: each key changes what is reported (checked against the same
//! workspace with the models removed), the workspace's configuration wins over a library's
//! model, and a malformed model is a warning naming its package, never a failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nonblock_tests::{repo_root, run_tool_json};
use serde_json::Value;

fn fixture() -> PathBuf {
    repo_root().join("tests/fixtures/library-models")
}

/// `(line, rule)` of every finding's entry in `src/main.rs`.
fn sites(report: &Value) -> BTreeSet<(u64, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["path"][0]["file"] == "src/main.rs")
        .map(|f| {
            (
                f["path"][0]["line"].as_u64().unwrap_or(0),
                f["rule"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The finding whose entry is on `line` of `src/main.rs`.
fn finding_at(report: &Value, line: u64) -> &Value {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| {
            f["path"][0]["file"] == "src/main.rs" && f["path"][0]["line"].as_u64() == Some(line)
        })
        .unwrap_or_else(|| panic!("no finding at src/main.rs:{line}"))
}

/// The line of `src/main.rs` that contains `needle` (1-based).
fn line_of(needle: &str) -> u64 {
    let text = std::fs::read_to_string(fixture().join("src/main.rs")).expect("fixture source");
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no `{needle}` in the fixture")) as u64
        + 1
}

/// A copy of the fixture (without `target/`), for variants of its configuration.
fn copy_fixture(name: &str) -> PathBuf {
    let to = std::env::temp_dir().join(format!(
        "nonblock-library-models-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&to);
    copy_dir(&fixture(), &to);
    to
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if entry.file_name() == "target" {
            continue;
        }
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy file");
        }
    }
}

/// Removes the `[package.metadata.nonblock]` table (to the end of the file, where the fixture's
/// manifests keep it).
fn strip_model(manifest: &Path) {
    let text = std::fs::read_to_string(manifest).expect("manifest");
    let cut = text
        .find("\n[package.metadata.nonblock]")
        .expect("the manifest has a model");
    std::fs::write(manifest, &text[..cut]).expect("write manifest");
}

#[test]
fn each_key_of_a_librarys_model_changes_what_is_reported() {
    let query = (line_of("conn.query("), "NB0501".to_string());
    let alive = (line_of("conn.is_alive()"), "NB0301".to_string());
    let offloaded = (line_of("run_blocking("), "NB0101".to_string());
    let decoded = (line_of("decode_file("), "NB0101".to_string());

    let with_models = sites(&run_tool_json(&fixture().join("Cargo.toml")));
    assert!(with_models.contains(&query), "blocking: {with_models:?}");
    assert!(
        with_models.contains(&decoded),
        "valid entry of a malformed model: {with_models:?}"
    );
    assert!(
        !with_models.contains(&alive),
        "nonblocking: {with_models:?}"
    );
    assert!(
        !with_models.contains(&offloaded),
        "offload: {with_models:?}"
    );

    let copy = copy_fixture("stripped");
    strip_model(&copy.join("vendor/fastdb/Cargo.toml"));
    strip_model(&copy.join("vendor/legacy-codec/Cargo.toml"));
    std::fs::remove_file(copy.join("nonblock.toml")).expect("remove nonblock.toml");
    let without = sites(&run_tool_json(&copy.join("Cargo.toml")));
    let _ = std::fs::remove_dir_all(&copy);
    // Without the models the analyzer sees neither wait behind the trait object, and reports
    // the non-blocking peek and the offloaded closure.
    assert!(!without.contains(&query), "{without:?}");
    assert!(!without.contains(&decoded), "{without:?}");
    assert!(without.contains(&alive), "{without:?}");
    assert!(without.contains(&offloaded), "{without:?}");
}

#[test]
fn the_workspace_configuration_wins_over_a_librarys_model() {
    let ping = (line_of("conn.ping()"), "NB0501".to_string());
    let flush = (line_of("conn.flush_hint()"), "NB0101".to_string());
    // nonblock.toml: `allow` beats fastdb's blocking `ping`, `[[blocking]]` beats its
    // non-blocking `flush_hint`.
    let configured = run_tool_json(&fixture().join("Cargo.toml"));
    let with_config = sites(&configured);
    assert!(!with_config.contains(&ping), "{with_config:?}");
    assert!(with_config.contains(&flush), "{with_config:?}");
    let flush_finding = finding_at(&configured, flush.0);
    assert!(
        flush_finding.to_string().contains("(project rule)"),
        "the project's reason is shown: {flush_finding}"
    );

    let copy = copy_fixture("unconfigured");
    std::fs::remove_file(copy.join("nonblock.toml")).expect("remove nonblock.toml");
    let report = run_tool_json(&copy.join("Cargo.toml"));
    let _ = std::fs::remove_dir_all(&copy);
    let library_only = sites(&report);
    assert!(library_only.contains(&ping), "{library_only:?}");
    assert!(
        !library_only.iter().any(|(l, _)| *l == flush.0),
        "{library_only:?}"
    );
    let ping_finding = finding_at(&report, ping.0);
    assert!(
        ping_finding
            .to_string()
            .contains("(declared by fastdb 0.3.1) a round trip to the server"),
        "the library's reason and name are shown: {ping_finding}"
    );
}

#[test]
fn a_malformed_model_is_a_warning_naming_the_package_and_its_line() {
    let report = run_tool_json(&fixture().join("Cargo.toml"));
    let warnings: Vec<(String, String, u64, String)> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "metadata")
        .map(|e| {
            assert_ne!(e["member"], true, "{e}");
            (
                e["package"].as_str().unwrap_or("").to_string(),
                e["file"].as_str().unwrap_or("").to_string(),
                e["line"].as_u64().unwrap_or(0),
                e["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let codec = "vendor/legacy-codec/Cargo.toml";
    let expected: &[(&str, &str, u64, &str)] = &[
        (
            "fastdb",
            "vendor/fastdb/Cargo.toml",
            19,
            "`std::fs::read` is outside the package",
        ),
        ("legacy-codec", codec, 12, "unknown category `disk`"),
        (
            "legacy-codec",
            codec,
            13,
            "needs `path`, `category` and `reason`",
        ),
        ("legacy-codec", codec, 14, "`not a path` is not a Rust path"),
        (
            "legacy-codec",
            codec,
            16,
            "an `offload` entry is a path string",
        ),
        ("legacy-codec", codec, 17, "unknown key `roots`"),
    ];
    assert_eq!(warnings.len(), expected.len(), "{warnings:#?}");
    for (package, file, line, text) in expected {
        assert!(
            warnings.iter().any(|(p, f, l, m)| p == package
                && f == file
                && l == line
                && m.contains(text)
                && m.contains(&format!("[package.metadata.nonblock] of {package} "))),
            "no warning {package} {file}:{line} `{text}` in {warnings:#?}"
        );
    }
}

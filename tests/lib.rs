//! End-to-end test support: run the analyzer on a fixture workspace and read the expected
//! findings its sources declare as markers.

pub mod markers;
pub mod score;

use std::path::{Path, PathBuf};

use nonblock_analyzer::{analyze, Options, Report, RuleDb};

/// The repository root (this crate lives in `tests/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Analyses the workspace of `manifest_path` with default options.
pub fn run_tool(manifest_path: &Path) -> Report {
    let opts = Options {
        manifest_path: Some(manifest_path.to_path_buf()),
        ..Options::default()
    };
    analyze(&opts, &RuleDb::builtin())
        .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display()))
}

/// The tool's JSON for a workspace, as `--format json` prints it (timings zeroed).
pub fn run_tool_json(manifest_path: &Path) -> serde_json::Value {
    let report = run_tool(manifest_path).without_timings();
    serde_json::from_str(&report.to_json()).expect("report JSON parses")
}

/// Every workspace the marker harness checks: `tests/fixtures/*/` and `examples/demo-service/`.
pub fn labelled_workspaces() -> Vec<PathBuf> {
    let root = repo_root();
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("tests/fixtures"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.join("Cargo.toml").is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.push(root.join("examples/demo-service"));
    out
}

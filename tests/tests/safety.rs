//! The tool never runs code from the repository it scans, and writes nothing into it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use nonblock_tests::{repo_root, run_tool};

fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .map(|e| e.path().to_path_buf())
        .collect()
}

#[test]
fn scanning_runs_no_build_script_and_no_proc_macro_and_writes_nothing() {
    let fixture = repo_root().join("tests/fixtures-safety/no-exec");
    let markers = std::env::temp_dir().join(format!("nonblock-markers-{}", std::process::id()));
    std::fs::create_dir_all(&markers).unwrap();
    let built = markers.join("build-script-ran");
    let expanded = markers.join("proc-macro-ran");

    // Arm the fixture: compiling it does run both (otherwise this test could not fail).
    let target = markers.join("target");
    let status = Command::new(env!("CARGO"))
        .args(["check", "-q", "--offline", "--manifest-path"])
        .arg(fixture.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env("NONBLOCK_MARKER_DIR", &markers)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        built.is_file() && expanded.is_file(),
        "cargo check runs the build script and the proc macro"
    );
    std::fs::remove_file(&built).unwrap();
    std::fs::remove_file(&expanded).unwrap();

    let before = files_under(&fixture);
    std::env::set_var("NONBLOCK_MARKER_DIR", &markers);
    let report = run_tool(&fixture.join("Cargo.toml"));
    std::env::remove_var("NONBLOCK_MARKER_DIR");
    assert!(!built.exists(), "the build script ran during the scan");
    assert!(!expanded.exists(), "the proc macro ran during the scan");
    // The caches under the target directory (`target/nonblock/`, beside cargo's own output) are
    // the only thing a scan may leave; they hold no code that runs.
    let target = fixture.join("target");
    let caches = target.join("nonblock");
    let after: BTreeSet<PathBuf> = files_under(&fixture)
        .into_iter()
        .filter(|p| !p.starts_with(&caches) && (p != &target || before.contains(p)))
        .collect();
    let _ = std::fs::remove_dir_all(&caches);
    if !before.contains(&target) {
        let _ = std::fs::remove_dir(&target);
    }
    assert_eq!(after, before, "the scan wrote into the scanned workspace");
    // The scan itself worked: the attributed async fn is analysed as written.
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].rule, "NB0101");
    std::fs::remove_dir_all(&markers).ok();
}

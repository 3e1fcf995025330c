//! The labelled corpus: every fixture workspace (`tests/fixtures/*/`) and `examples/demo-service`
//! is analysed, and its findings are scored against the `// expect:` / `// ok:` markers in its
//! source. Prints the tally per workspace and in total; fails below 100 % recall or precision,
//! on any async caller (`reached_from`) that does not meet a `reached:` marker or marker not met,
//! and on any notice (an unused or reasonless suppression in a fixture is a mistake too), listing
//! every mismatch.
//!
//! `NONBLOCK_FIXTURES=basics,members` limits the run to workspaces with those directory names;
//! `NONBLOCK_FIXTURE_TIMEOUT=SECS` (default 300) bounds each workspace's analysis.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nonblock_tests::score::{score, Tally};
use nonblock_tests::{labelled_workspaces, markers, run_tool_json};

#[test]
fn labelled_fixtures_have_full_recall_and_precision() {
    let workspaces = selected(labelled_workspaces());
    assert!(!workspaces.is_empty(), "no labelled workspace selected");
    let mut total = Tally::default();
    let mut problems = Vec::new();
    for ws in &workspaces {
        let name = ws.file_name().unwrap().to_string_lossy().into_owned();
        let m = markers::scan(ws);
        problems.extend(m.errors.iter().map(|e| format!("{name}: bad marker: {e}")));
        let started = Instant::now();
        let json = analyse_with_time_limit(ws);
        let s = score(&m, &json);
        let errors = json["errors"].as_array().map_or(0, Vec::len);
        println!(
            "{name:<14} {}  ({:.1}s, {errors} analysis diagnostics)",
            s.tally.summary(),
            started.elapsed().as_secs_f64()
        );
        problems.extend(s.mismatches.iter().map(|p| format!("{name}: {p}")));
        for n in json["notices"].as_array().into_iter().flatten() {
            problems.push(format!(
                "{name}: notice {}:{} {}: {}",
                n["file"].as_str().unwrap_or("?"),
                n["line"],
                n["kind"].as_str().unwrap_or("?"),
                n["message"].as_str().unwrap_or("?")
            ));
        }
        total.add(&s.tally);
    }
    println!("{:<14} {}", "TOTAL", total.summary());
    assert!(
        problems.is_empty() && total.is_perfect(),
        "{} mismatches:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Workspaces named in `NONBLOCK_FIXTURES` (comma-separated directory names), or all.
fn selected(all: Vec<PathBuf>) -> Vec<PathBuf> {
    let Ok(filter) = std::env::var("NONBLOCK_FIXTURES") else {
        return all;
    };
    let names: Vec<&str> = filter.split(',').map(str::trim).collect();
    all.into_iter()
        .filter(|p| p.file_name().is_some_and(|n| names.iter().any(|x| n == *x)))
        .collect()
}

/// Runs the analyzer on another thread so that a runaway analysis fails this test with the
/// workspace's name instead of hanging it.
fn analyse_with_time_limit(ws: &Path) -> serde_json::Value {
    let secs = std::env::var("NONBLOCK_FIXTURE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let manifest = ws.join("Cargo.toml");
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("analyse {}", ws.display()))
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(run_tool_json(&manifest));
        })
        .expect("spawn analysis thread");
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(json) => json,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{}: analysis did not finish within {secs} s", ws.display())
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("{}: analysis panicked (see above)", ws.display())
        }
    }
}

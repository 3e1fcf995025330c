//! `cargo nonblock confirm` on a real runtime. In a test binary of its own: cargo runs test
//! binaries one after another, so no scan of `cli.rs`'s parallel tests competes with the
//! workload for the machine's cores (on a 2-core CI machine that competition once left a worker
//! unstarved by a sleep on every worker: "starved 1/2").

#![cfg(feature = "confirm")]

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-nonblock"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// `confirm` runs the category's blocking API on a real 4-worker runtime. Only the far side of
/// the threshold is asserted (thread sleep on every worker starves it in every run); the
/// alternative's verdict is left to `bench-fixtures`' serial tests.
#[test]
fn confirm_runs_a_category_on_a_real_runtime() {
    let out = run(&["nonblock", "confirm", "NB0201", "--runs", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{text}");
    let blocking = text
        .lines()
        .find(|l| l.contains("std::thread::sleep"))
        .unwrap_or_else(|| panic!("no blocking row: {text}"));
    assert!(blocking.contains("starved 2/2"), "{blocking}");
    assert!(text.contains("tokio::time::sleep"), "{text}");
    // The columns are explained under the table, with the verdict's half rule.
    assert!(text.contains("Columns:"), "{text}");
    assert!(text.contains("at least half of its runs"), "{text}");
    let help = run(&["nonblock", "confirm", "--help"]);
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("at least half of its runs"),
        "{}",
        String::from_utf8_lossy(&help.stdout)
    );
    let unknown = run(&["nonblock", "confirm", "no-such-category"]);
    assert_eq!(unknown.status.code(), Some(2));
}

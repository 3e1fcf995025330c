//! The labelled corpus: every fixture workspace's findings against the markers in its source.
//! Prints recall and precision per workspace and in total; fails below 100 %.

use std::collections::BTreeSet;

use nonblock_tests::{labelled_workspaces, markers, run_tool_json};

#[derive(Default)]
struct Tally {
    positives: usize,
    negatives: usize,
    tp: usize,
    fp: usize,
    fn_: usize,
    fp_on_negative: usize,
}

#[test]
fn labelled_fixtures_have_full_recall_and_precision() {
    let mut total = Tally::default();
    let mut problems = Vec::new();
    for ws in labelled_workspaces() {
        let name = ws.file_name().unwrap().to_string_lossy().into_owned();
        let m = markers::scan(&ws);
        let json = run_tool_json(&ws.join("Cargo.toml"));
        let findings = json["findings"].as_array().expect("findings array");
        let mut t = Tally {
            positives: m.expected.len(),
            negatives: m.negatives.len(),
            ..Tally::default()
        };
        let mut matched_markers = BTreeSet::new();
        for f in findings {
            let first = &f["path"][0];
            let file = first["file"].as_str().unwrap_or_default();
            let line = first["line"].as_u64().unwrap_or(0) as u32;
            let rule = f["rule"].as_str().unwrap_or_default();
            let packages: BTreeSet<&str> = f["path"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s["package"].as_str())
                .collect();
            let hit = m
                .expected
                .iter()
                .position(|e| e.file == file && e.line == line && e.rule == rule);
            match hit {
                Some(i) => {
                    let e = &m.expected[i];
                    let missing: Vec<&String> = e
                        .via
                        .iter()
                        .filter(|v| !packages.contains(v.as_str()))
                        .collect();
                    if missing.is_empty() {
                        matched_markers.insert(i);
                        t.tp += 1;
                    } else {
                        problems.push(format!("{name}: {file}:{line} {rule}: path does not pass through {missing:?}: {}", path_text(f)));
                    }
                }
                None => {
                    t.fp += 1;
                    let on_negative = m.negatives.iter().any(|n| n.file == file && n.line == line);
                    if on_negative {
                        t.fp_on_negative += 1;
                    }
                    let kind = if on_negative {
                        "finding on an `ok:` line"
                    } else {
                        "unexpected finding"
                    };
                    problems.push(format!(
                        "{name}: {kind} {file}:{line} {rule} ({}): {}",
                        f["api"],
                        path_text(f)
                    ));
                }
            }
        }
        for (i, e) in m.expected.iter().enumerate() {
            if !matched_markers.contains(&i) {
                t.fn_ += 1;
                problems.push(format!("{name}: missed {}:{} {}", e.file, e.line, e.rule));
            }
        }
        println!(
            "{name:<24} positives {:>3}  negatives {:>3}  TP {:>3}  FP {:>3}  FN {:>3}",
            t.positives, t.negatives, t.tp, t.fp, t.fn_
        );
        total.positives += t.positives;
        total.negatives += t.negatives;
        total.tp += t.tp;
        total.fp += t.fp;
        total.fn_ += t.fn_;
        total.fp_on_negative += t.fp_on_negative;
    }
    let matched = total.positives - total.fn_;
    let recall = if total.positives == 0 {
        1.0
    } else {
        matched as f64 / total.positives as f64
    };
    let precision = if total.tp + total.fp == 0 {
        1.0
    } else {
        total.tp as f64 / (total.tp + total.fp) as f64
    };
    println!(
        "TOTAL: {} positive sites, {} negative sites; recall {:.1}% ({matched}/{}), precision {:.1}% ({} TP, {} FP, {} on negatives)",
        total.positives,
        total.negatives,
        recall * 100.0,
        total.positives,
        precision * 100.0,
        total.tp,
        total.fp,
        total.fp_on_negative
    );
    assert!(
        problems.is_empty(),
        "{} mismatches:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn path_text(f: &serde_json::Value) -> String {
    f["path"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            format!(
                "{} ({}:{})",
                s["function"].as_str().unwrap_or("?"),
                s["file"].as_str().unwrap_or("?"),
                s["line"]
            )
        })
        .collect::<Vec<_>>()
        .join(" → ")
}

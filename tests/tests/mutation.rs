//! Offload mutation test: rewrite the labelled fixtures mechanically and check that the analyzer
//! follows. Every positive site (`expect:` or `reached:`) whose call is a whole statement or `let`
//! initialiser is wrapped in `std::thread::spawn(move || ..)`: its findings, and its listings as
//! an async caller in `reached_from`, must disappear. Every negative site that is a
//! one-line `spawn_blocking(|| EXPR)` / `spawn_blocking(move || EXPR)` is unwrapped to `EXPR`: a
//! finding must appear. The rewritten code need not compile (the analyzer never compiles); it must
//! parse, which the analyzer reports otherwise.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nonblock_tests::{labelled_workspaces, markers, run_tool_json};

/// Splits a source line into code and its trailing marker comment.
fn split_marker(line: &str) -> Option<(&str, &str)> {
    let i = line
        .find("// expect:")
        .or_else(|| line.find("// reached:"))
        .or_else(|| line.find("// ok"))?;
    Some((&line[..i], &line[i..]))
}

fn balanced(code: &str) -> bool {
    let mut depth = 0i32;
    for c in code.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

/// `EXPR;` → `std::thread::spawn(move || { EXPR; });`, `let P = EXPR;` →
/// `let P = std::thread::spawn(move || EXPR);`. `None`: not a shape we rewrite.
fn wrap(code: &str) -> Option<String> {
    let indent = &code[..code.len() - code.trim_start().len()];
    let body = code.trim();
    // An `async` block stays an async context of its own wherever it is written, so wrapping
    // the line does not offload what runs inside it.
    if !body.ends_with(';')
        || !balanced(body)
        || body.starts_with("return")
        || body.contains("=>")
        || body.contains("async ")
    {
        return None;
    }
    let stmt = &body[..body.len() - 1];
    if let Some(rest) = stmt.strip_prefix("let ") {
        let eq = rest.find(" = ")?;
        let (pat, expr) = (&rest[..eq], &rest[eq + 3..]);
        if expr.trim_start().starts_with("async") {
            return None;
        }
        return Some(format!(
            "{indent}let {pat} = std::thread::spawn(move || {expr}); "
        ));
    }
    if stmt.starts_with("async")
        || stmt.starts_with("for ")
        || stmt.starts_with("if ")
        || stmt.starts_with("match ")
    {
        return None;
    }
    Some(format!(
        "{indent}std::thread::spawn(move || {{ {stmt}; }}); "
    ))
}

/// `..spawn_blocking(|| EXPR)..` or `..spawn_blocking(move || EXPR)..` with EXPR on the line →
/// the same line with the call replaced by `EXPR`.
fn unwrap_offload(code: &str) -> Option<String> {
    let start = code.find("spawn_blocking(")?;
    let open = start + "spawn_blocking(".len();
    let after = &code[open..];
    let closure = after.strip_prefix("move ").unwrap_or(after);
    let inner = closure.strip_prefix("|| ")?;
    let inner_start = code.len() - inner.len();
    // Find the matching close paren of `spawn_blocking(`.
    let mut depth = 1;
    let mut end = None;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    let expr = &code[inner_start..end];
    if expr.trim().is_empty() || expr.contains('{') {
        return None;
    }
    // Replace from the start of the callee path (`tokio::task::spawn_blocking`, `rt.spawn_blocking`).
    let prefix_start = code[..start]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '.'))
        .map(|i| i + 1)
        .unwrap_or(0);
    Some(format!(
        "{}({}){}",
        &code[..prefix_start],
        expr,
        &code[end + 1..]
    ))
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_entry(|e| e.file_name() != "target")
    {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

struct Outcome {
    wrapped: usize,
    wrapped_silenced: usize,
    unwrapped: usize,
    unwrapped_reported: usize,
    skipped: usize,
    problems: Vec<String>,
}

fn mutate(ws: &Path, scratch: &Path) -> Outcome {
    let m = markers::scan(ws);
    let positive_lines: BTreeSet<(String, u32)> = m
        .expected
        .iter()
        .chain(&m.reached)
        .map(|e| (e.file.clone(), e.line))
        .collect();
    let negative_lines: BTreeSet<(String, u32)> = m
        .negatives
        .iter()
        .map(|n| (n.file.clone(), n.line))
        .collect();
    let _ = std::fs::remove_dir_all(scratch);
    copy_dir(ws, scratch);
    let mut out = Outcome {
        wrapped: 0,
        wrapped_silenced: 0,
        unwrapped: 0,
        unwrapped_reported: 0,
        skipped: 0,
        problems: Vec::new(),
    };
    let mut wrapped_sites = BTreeSet::new();
    let mut unwrapped_sites = BTreeSet::new();
    let files: BTreeSet<&String> = positive_lines
        .iter()
        .chain(&negative_lines)
        .map(|(f, _)| f)
        .collect();
    for file in files {
        let path = scratch.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (i, line) in lines.iter_mut().enumerate() {
            let key = (file.clone(), i as u32 + 1);
            let Some((code, marker)) = split_marker(line) else {
                continue;
            };
            if positive_lines.contains(&key) {
                match wrap(code) {
                    Some(new) => {
                        *line = format!("{new}{marker}");
                        wrapped_sites.insert(key);
                    }
                    None => out.skipped += 1,
                }
            } else if negative_lines.contains(&key) {
                if let Some(new) = unwrap_offload(code) {
                    *line = format!("{new}{marker}");
                    unwrapped_sites.insert(key);
                }
            }
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    let json = run_tool_json(&scratch.join("Cargo.toml"));
    for e in json["errors"].as_array().into_iter().flatten() {
        if e["kind"] == "parse" && e["file"].as_str().is_some_and(|f| !f.starts_with('/')) {
            out.problems.push(format!("rewrite does not parse: {e}"));
        }
    }
    // Entries and the async callers listed with them.
    let mut reported: BTreeSet<(String, u32)> = BTreeSet::new();
    for f in json["findings"].as_array().unwrap() {
        let callers = f["reached_from"].as_array().unwrap();
        for place in std::iter::once(&f["path"][0]).chain(callers) {
            reported.insert((
                place["file"].as_str().unwrap().to_string(),
                place["line"].as_u64().unwrap() as u32,
            ));
        }
    }
    for site in &wrapped_sites {
        out.wrapped += 1;
        if reported.contains(site) {
            out.problems.push(format!(
                "{}:{} still reported after wrapping it in thread::spawn",
                site.0, site.1
            ));
        } else {
            out.wrapped_silenced += 1;
        }
    }
    for site in &unwrapped_sites {
        out.unwrapped += 1;
        if reported.contains(site) {
            out.unwrapped_reported += 1;
        } else {
            out.problems.push(format!(
                "{}:{} not reported after removing its spawn_blocking",
                site.0, site.1
            ));
        }
    }
    out
}

#[test]
fn wrapping_positives_silences_them_and_unwrapping_offloads_reports_them() {
    let scratch_root: PathBuf =
        std::env::temp_dir().join(format!("nonblock-mutation-{}", std::process::id()));
    let (mut wrapped, mut silenced, mut unwrapped, mut reported, mut skipped) = (0, 0, 0, 0, 0);
    let mut problems = Vec::new();
    for ws in labelled_workspaces() {
        let name = ws.file_name().unwrap().to_string_lossy().into_owned();
        let o = mutate(&ws, &scratch_root.join(&name));
        println!(
            "{name:<14} wrapped {:>3} (silenced {:>3})  unwrapped {:>2} (reported {:>2})  skipped {:>3}",
            o.wrapped, o.wrapped_silenced, o.unwrapped, o.unwrapped_reported, o.skipped
        );
        wrapped += o.wrapped;
        silenced += o.wrapped_silenced;
        unwrapped += o.unwrapped;
        reported += o.unwrapped_reported;
        skipped += o.skipped;
        problems.extend(o.problems.into_iter().map(|p| format!("{name}: {p}")));
    }
    let _ = std::fs::remove_dir_all(&scratch_root);
    println!("TOTAL: wrapped {wrapped} positive sites, {silenced} silenced; unwrapped {unwrapped} offloads, {reported} reported; {skipped} sites not rewritable");
    assert!(
        wrapped >= 200 && unwrapped >= 10,
        "too few rewritable sites: {wrapped} wrapped, {unwrapped} unwrapped"
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn rewrites_have_the_intended_shape() {
    assert_eq!(
        wrap("    std::fs::read(\"x\").ok();").unwrap(),
        "    std::thread::spawn(move || { std::fs::read(\"x\").ok(); }); "
    );
    assert_eq!(
        wrap("    let v = load(p)?;").unwrap(),
        "    let v = std::thread::spawn(move || load(p)?); "
    );
    assert!(wrap("    match get(x).await {").is_none());
    assert!(wrap("    let r = tokio::join!(async { f() });").is_none());
    assert_eq!(
        unwrap_offload("    tokio::task::spawn_blocking(|| std::fs::read(\"a\")).await.ok();")
            .unwrap(),
        "    (std::fs::read(\"a\")).await.ok();"
    );
    assert_eq!(
        unwrap_offload("    let _ = rt.spawn_blocking(move || f(x)).await;").unwrap(),
        "    let _ = (f(x)).await;"
    );
    assert!(unwrap_offload("    tokio::task::spawn_blocking(move || {").is_none());
}

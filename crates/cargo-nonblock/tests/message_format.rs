//! `--message-format`: cargo's messages as rust-analyzer's `check.overrideCommand` reads them.
//! The output is parsed with `cargo_metadata::Message`, the parser rust-analyzer uses, and checked
//! against the report of the same workspace (`--format json`), against `cargo metadata`, and
//! against the files on disk.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cargo_metadata::diagnostic::{Diagnostic, DiagnosticLevel, DiagnosticSpan};
use cargo_metadata::{CompilerMessage, Message, Metadata, MetadataCommand};
use serde_json::Value;

fn manifest(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir)
        .join("Cargo.toml")
}

fn run(manifest: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-nonblock"))
        .arg("nonblock")
        .arg("--manifest-path")
        .arg(manifest)
        .args(args)
        .output()
        .expect("binary runs")
}

fn report(manifest: &Path) -> (Value, Option<i32>) {
    let out = run(manifest, &["--format", "json", "-q"]);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "report is JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (report, out.status.code())
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().expect("findings")
}

fn rule_ids() -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-nonblock"))
        .args(["nonblock", "rules", "--format", "json"])
        .output()
        .unwrap();
    let rules: Value = serde_json::from_slice(&out.stdout).unwrap();
    rules
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// Every line of `stdout` as a cargo message; a line that is not one fails the test.
fn messages(stdout: &[u8]) -> Vec<Message> {
    let messages: Vec<Message> = Message::parse_stream(stdout)
        .collect::<Result<_, _>>()
        .expect("stdout reads");
    for m in &messages {
        if let Message::TextLine(line) = m {
            panic!("not a cargo message: {line}");
        }
    }
    assert_eq!(messages.len(), stdout.split(|b| *b == b'\n').count() - 1);
    messages
}

/// The compiler messages, after checking that `build-finished` comes last, once, with `success`.
fn compiler_messages(messages: &[Message], success: bool) -> Vec<&CompilerMessage> {
    let finished: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::BuildFinished(_)))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(finished, [messages.len() - 1], "one build-finished, last");
    match messages.last() {
        Some(Message::BuildFinished(f)) => assert_eq!(f.success, success),
        other => panic!("last message: {other:?}"),
    }
    messages[..messages.len() - 1]
        .iter()
        .map(|m| match m {
            Message::CompilerMessage(c) => c,
            other => panic!("not a compiler message: {other:?}"),
        })
        .collect()
}

fn absolute(metadata: &Metadata, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        metadata.workspace_root.as_std_path().join(p)
    }
}

/// A span names an existing file and a line of it; its text is that line, its byte range
/// covers exactly the highlighted columns, and the highlight is not empty.
fn check_span(metadata: &Metadata, span: &DiagnosticSpan) {
    let path = absolute(metadata, &span.file_name);
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines: Vec<&str> = source.lines().collect();
    assert!(
        span.line_start >= 1 && span.line_start <= lines.len(),
        "{}:{} has {} lines",
        span.file_name,
        span.line_start,
        lines.len()
    );
    assert_eq!(span.line_end, span.line_start);
    let line = lines[span.line_start - 1];
    assert_eq!(span.text.len(), 1);
    assert_eq!(span.text[0].text, line);
    assert_eq!(
        (span.text[0].highlight_start, span.text[0].highlight_end),
        (span.column_start, span.column_end)
    );
    assert!(span.column_start >= 1 && span.column_end > span.column_start);
    let highlighted: String = line
        .chars()
        .skip(span.column_start - 1)
        .take(span.column_end - span.column_start)
        .collect();
    let bytes = &source.as_bytes()[span.byte_start as usize..span.byte_end as usize];
    assert_eq!(
        std::str::from_utf8(bytes).unwrap(),
        highlighted,
        "{}:{}",
        span.file_name,
        span.line_start
    );
}

/// Checks every span of `d` and of its children; returns how many there were.
fn check_spans(metadata: &Metadata, d: &Diagnostic) -> usize {
    for s in &d.spans {
        check_span(metadata, s);
    }
    d.spans.len()
        + d.children
            .iter()
            .map(|c| check_spans(metadata, c))
            .sum::<usize>()
}

/// The messages of `--message-format json` on the workspace at `dir`, checked against its
/// report: one compiler message per finding, in report order, at the finding's entry call, with
/// one note per path step at that step's call, the fix as help, the rule id as code, and the
/// package, manifest and target of the member that owns the entry.
fn check_workspace(dir: &str) -> (Metadata, Value, Vec<CompilerMessage>) {
    let manifest = manifest(dir);
    let metadata = MetadataCommand::new()
        .manifest_path(&manifest)
        .no_deps()
        .exec()
        .unwrap();
    let (report, status) = report(&manifest);
    let findings = findings(&report);
    assert!(!findings.is_empty(), "{dir} has findings");
    let out = run(&manifest, &["--message-format", "json", "-q"]);
    assert_eq!(
        out.status.code(),
        status,
        "the same exit status as the report"
    );
    let messages = messages(&out.stdout);
    let compiler = compiler_messages(&messages, status == Some(0));
    assert_eq!(compiler.len(), findings.len(), "one message per finding");
    let rules = rule_ids();
    let mut spans = 0;
    for (m, f) in compiler.iter().zip(findings) {
        let d = &m.message;
        let code = d.code.as_ref().expect("a code");
        assert!(rules.contains(&code.code), "{} is a rule id", code.code);
        assert_eq!(code.code, f["rule"].as_str().unwrap());
        assert!(code
            .explanation
            .as_deref()
            .unwrap()
            .contains("## What it does"));
        let level = match f["severity"].as_str().unwrap() {
            "error" => DiagnosticLevel::Error,
            _ => DiagnosticLevel::Warning,
        };
        assert_eq!(d.level, level);
        assert_eq!(d.message, f["message"].as_str().unwrap());
        let entry = &f["path"][0];
        let primary: Vec<&DiagnosticSpan> = d.spans.iter().filter(|s| s.is_primary).collect();
        assert_eq!(primary.len(), 1);
        assert_eq!(primary[0].file_name, entry["file"].as_str().unwrap());
        assert_eq!(
            primary[0].line_start as u64,
            entry["line"].as_u64().unwrap()
        );
        assert_eq!(
            primary[0].column_start as u64,
            entry["column"].as_u64().unwrap()
        );
        let rendered = d.rendered.as_deref().unwrap();
        let at = format!(
            "--> {}:{}:{}",
            primary[0].file_name, primary[0].line_start, primary[0].column_start
        );
        assert!(
            rendered.contains(&format!("[{}]", code.code)) && rendered.contains(&at),
            "{rendered}"
        );
        assert!(!rendered.contains('\x1b'));

        let path = f["path"].as_array().unwrap();
        let steps: Vec<(&str, usize)> = d
            .children
            .iter()
            .filter(|c| c.level == DiagnosticLevel::Note && !c.spans.is_empty())
            .map(|c| (c.spans[0].file_name.as_str(), c.spans[0].line_start))
            .collect();
        let expected: Vec<(&str, usize)> = path
            .iter()
            .map(|s| {
                (
                    s["file"].as_str().unwrap(),
                    s["line"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        assert_eq!(steps, expected, "one note per path step, at its call");
        let help = d.children.last().unwrap();
        assert_eq!(help.level, DiagnosticLevel::Help);
        assert_eq!(help.message, f["help"].as_str().unwrap());
        spans += check_spans(&metadata, d);

        let member = metadata
            .packages
            .iter()
            .find(|p| p.id == m.package_id)
            .unwrap_or_else(|| panic!("{} is a package of the workspace", m.package_id));
        assert!(metadata.workspace_members.contains(&member.id));
        assert_eq!(member.name.as_str(), entry["package"].as_str().unwrap());
        let target = member
            .targets
            .iter()
            .find(|t| t.name == m.target.name && t.kind == m.target.kind)
            .expect("a target of the member");
        assert_eq!(target.src_path, m.target.src_path);
        let file = absolute(&metadata, &primary[0].file_name);
        assert!(file.starts_with(target.src_path.parent().unwrap()));
        if let Some(root_of) = member
            .targets
            .iter()
            .find(|t| t.src_path.as_std_path() == file)
        {
            assert_eq!(
                (&root_of.name, &root_of.kind),
                (&m.target.name, &m.target.kind),
                "the target whose root file it is"
            );
        }
    }
    assert!(spans > findings.len(), "children have spans too");
    let owned: Vec<CompilerMessage> = compiler.into_iter().cloned().collect();
    (metadata, report, owned)
}

#[test]
fn json_messages_of_the_demo_service_parse_as_cargo_messages_one_per_finding() {
    let (_, report, messages) = check_workspace("examples/demo-service");
    // A path into a dependency: its steps there are absolute paths, as cargo gives them.
    let into_dependency = messages.iter().any(|m| {
        m.message
            .children
            .iter()
            .flat_map(|c| &c.spans)
            .any(|s| Path::new(&s.file_name).is_absolute())
    });
    assert!(into_dependency);
    assert!(findings(&report).len() >= 10);
}

#[test]
fn json_messages_of_a_multi_member_workspace_name_each_finding_s_member_and_target() {
    let (metadata, _, messages) = check_workspace("tests/fixtures/members");
    let packages: BTreeSet<&str> = messages
        .iter()
        .map(|m| m.package_id.repr.as_str())
        .collect();
    assert!(packages.len() >= 2, "{packages:?}");
    let members: BTreeSet<&str> = metadata
        .workspace_members
        .iter()
        .map(|p| p.repr.as_str())
        .collect();
    assert!(packages.is_subset(&members));
}

#[test]
fn build_finished_reports_success_by_fail_on() {
    let manifest = manifest("examples/demo-service");
    let failing = run(&manifest, &["--message-format", "json", "-q"]);
    assert_eq!(failing.status.code(), Some(1));
    compiler_messages(&messages(&failing.stdout), false);
    let passing = run(
        &manifest,
        &["--message-format", "json", "--fail-on", "never", "-q"],
    );
    assert_eq!(passing.status.code(), Some(0));
    let messages = messages(&passing.stdout);
    assert!(!compiler_messages(&messages, true).is_empty());
}

#[test]
fn short_lines_are_rustc_s_short_form_of_each_finding() {
    let manifest = manifest("examples/demo-service");
    let (report, _) = report(&manifest);
    let out = run(&manifest, &["--message-format", "short"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let expected: Vec<String> = findings(&report)
        .iter()
        .map(|f| {
            let entry = &f["path"][0];
            format!(
                "{}:{}:{}: {}[{}]: {}",
                entry["file"].as_str().unwrap(),
                entry["line"],
                entry["column"],
                f["severity"].as_str().unwrap(),
                f["rule"].as_str().unwrap(),
                f["message"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
    // The report is elsewhere: the summary goes to stderr.
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains(&format!("nonblock: {} findings", expected.len())));
}

#[test]
fn rendered_has_ansi_colours_only_for_json_diagnostic_rendered_ansi() {
    let manifest = manifest("examples/demo-service");
    let rendered = |format: &str| -> Vec<String> {
        let out = run(&manifest, &["--message-format", format, "-q"]);
        let messages = messages(&out.stdout);
        compiler_messages(&messages, false)
            .iter()
            .map(|m| m.message.rendered.clone().unwrap())
            .collect()
    };
    let ansi = rendered("json-diagnostic-rendered-ansi");
    assert!(!ansi.is_empty() && ansi.iter().all(|r| r.contains("\x1b[")));
    let short = rendered("json,json-diagnostic-short");
    assert!(short
        .iter()
        .all(|r| r.lines().count() == 1 && !r.contains('\x1b')));
}

#[test]
fn message_formats_conflict_with_format_and_with_each_other() {
    let manifest = manifest("examples/demo-service");
    let out = run(
        &manifest,
        &["--message-format", "json", "--format", "sarif"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--message-format json") && err.contains("--format sarif"),
        "{err}"
    );
    let out = run(&manifest, &["--message-format", "json,short"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let out = run(
        &manifest,
        &["--message-format", "human", "--format", "json", "-q"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "human leaves --format in charge"
    );
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
}

#[test]
fn an_unused_suppression_is_a_warning_at_its_line_and_fails_the_build() {
    let dir = std::env::temp_dir().join(format!("nonblock-msgfmt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    let lib = "pub async fn h() {\n    // nonblock:allow(NB0101): reads a small file\n    let _ = 1;\n}\n";
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let out = run(
        &dir.join("Cargo.toml"),
        &["--message-format", "json", "--offline", "-q"],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = messages(&out.stdout);
    let compiler = compiler_messages(&messages, false);
    assert_eq!(compiler.len(), 1);
    let d = &compiler[0].message;
    assert_eq!(d.level, DiagnosticLevel::Warning);
    assert_eq!(d.code.as_ref().unwrap().code, "unused-suppression");
    assert_eq!(d.spans[0].file_name, "src/lib.rs");
    assert_eq!(d.spans[0].line_start, 2);
    assert_eq!(
        d.spans[0].text[0].text,
        "    // nonblock:allow(NB0101): reads a small file"
    );
    assert_eq!(compiler[0].target.name, "app");
}

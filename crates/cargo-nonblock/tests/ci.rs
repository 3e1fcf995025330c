//! The CI surface as a user copies it: the composite action's script (`scripts/ci/action.sh`, run
//! with the `GITHUB_*` files in a temporary directory), `action.yml`, the workflows in
//! `examples/ci/`, the commands in `docs/ci.md` and the pre-commit hook. Every `cargo nonblock`
//! command line they contain is run on the demo service, so a flag that does not exist, a value
//! clap refuses or a combination the CLI rejects fails here, not in a user's first CI run.
//!
//! The YAML is read line by line (`with:` inputs, `uses:` lines, the hook's keys): the shapes
//! written in these few files are simple, and a YAML parser would be a dev-dependency for that
//! alone. actionlint validates the same workflows against `action.yml` when it is at hand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn demo_manifest() -> PathBuf {
    repo().join("examples/demo-service/Cargo.toml")
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cargo-nonblock")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fresh scratch directory `nonblock-ci-<name>-<pid>` under the temp dir, removed when the
/// test is done with it.
fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("nonblock-ci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The files of the CI surface: what users copy or point `uses:` at.
fn ci_files() -> Vec<String> {
    let mut files: Vec<String> = [
        "action.yml",
        ".pre-commit-hooks.yaml",
        "docs/ci.md",
        "scripts/ci/action.sh",
    ]
    .map(String::from)
    .to_vec();
    files.extend(workflows());
    files
}

fn workflows() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("examples/ci"))
        .unwrap()
        .map(|e| format!("examples/ci/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".yml") || f.ends_with(".yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files
}

/// The action script run in `cwd` with `env`, the `GITHUB_*` files in `dir`.
struct ActionRun {
    output: Output,
    outputs: BTreeMap<String, String>,
    summary: String,
    path: String,
}

fn action(subcommand: &str, dir: &Path, cwd: &Path, env: &[(&str, &str)]) -> ActionRun {
    let files = ["output", "summary.md", "path"].map(|f| dir.join(f));
    for f in &files {
        std::fs::write(f, "").unwrap();
    }
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("scripts/ci/action.sh"))
        .arg(subcommand)
        .current_dir(cwd)
        .env("GITHUB_OUTPUT", &files[0])
        .env("GITHUB_STEP_SUMMARY", &files[1])
        .env("GITHUB_PATH", &files[2])
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_TEMP", dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().expect("bash runs");
    let text = |f: &PathBuf| std::fs::read_to_string(f).unwrap();
    let outputs = text(&files[0])
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ActionRun {
        output,
        outputs,
        summary: text(&files[1]),
        path: text(&files[2]),
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The demo service's report, as `--format json` gives it.
fn demo_report() -> serde_json::Value {
    let out = Command::new(bin())
        .args(["nonblock", "--format", "json", "-q", "--manifest-path"])
        .arg(demo_manifest())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

#[test]
fn the_scan_writes_the_sarif_annotations_summary_and_outputs() {
    let dir = scratch("scan");
    let sarif = dir.join("out.sarif");
    let run = action(
        "scan",
        &dir,
        &dir,
        &[
            ("NONBLOCK_BIN", bin()),
            ("NONBLOCK_MANIFEST_PATH", demo_manifest().to_str().unwrap()),
            ("NONBLOCK_ARGS", "--locked  --min-confidence low"),
            ("NONBLOCK_SARIF", sarif.to_str().unwrap()),
        ],
    );
    assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));

    let report = demo_report();
    let findings = report["findings"].as_array().unwrap();
    let errors = findings.iter().filter(|f| f["severity"] == "error").count();
    let warnings = findings.len() - errors;
    assert!(errors > 0 && warnings > 0);
    let o = &run.outputs;
    assert_eq!(o["findings"], findings.len().to_string());
    assert_eq!(o["errors"], errors.to_string());
    assert_eq!(o["warnings"], warnings.to_string());
    // The default fail-on is `warning`: findings fail the job (in the verdict step).
    assert_eq!(o["exit-code"], "1");
    assert_eq!(o["sarif-file"], sarif.to_str().unwrap());

    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(
        log["runs"][0]["results"].as_array().unwrap().len(),
        findings.len()
    );

    // Annotations on stdout, errors first, within GitHub's limit of each level.
    let out = stdout(&run.output);
    let levels: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("::"))
        .map(|l| l.split([' ', ':']).next().unwrap())
        .collect();
    let first_warning = levels.iter().position(|l| *l == "warning").unwrap();
    assert_eq!(levels[..first_warning], vec!["error"; errors.min(10)][..]);
    assert!(levels.iter().filter(|l| **l == "warning").count() <= 10);
    // The summary line goes to stderr once (the SARIF run), not once per format.
    assert_eq!(
        stderr(&run.output).matches("nonblock: ").count(),
        1,
        "{}",
        stderr(&run.output)
    );

    // The step summary: totals, one row per rule and severity, the top findings, the SARIF.
    let s = &run.summary;
    assert!(
        s.starts_with(&format!(
            "## cargo-nonblock: {} findings ({errors} error{}, {warnings} warning{})\n",
            findings.len(),
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" },
        )),
        "{s}"
    );
    for f in findings {
        let row = format!(
            "| `{}` | {} | {} |",
            f["rule"].as_str().unwrap(),
            f["name"].as_str().unwrap(),
            f["severity"].as_str().unwrap()
        );
        assert!(s.contains(&row), "no row {row}: {s}");
    }
    let items = s
        .lines()
        .filter(|l| {
            l.split_once(". **")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(items, findings.len().min(10));
    assert!(s.contains(&format!(
        "The SARIF log `{}` holds every finding",
        sarif.display()
    )));

    let verdict = action("verdict", &dir, &dir, &[("NONBLOCK_EXIT_CODE", "1")]);
    assert_eq!(verdict.output.status.code(), Some(1));
}

#[test]
fn fail_on_never_passes_and_switches_leave_out_annotations_and_summary() {
    let dir = scratch("never");
    let run = action(
        "scan",
        &dir,
        &dir,
        &[
            ("NONBLOCK_BIN", bin()),
            ("NONBLOCK_MANIFEST_PATH", demo_manifest().to_str().unwrap()),
            ("NONBLOCK_FAIL_ON", "never"),
            ("NONBLOCK_ANNOTATIONS", "false"),
            ("NONBLOCK_SUMMARY", "false"),
        ],
    );
    assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));
    assert_eq!(run.outputs["exit-code"], "0");
    // The default SARIF file, in the working directory.
    assert_eq!(run.outputs["sarif-file"], "nonblock.sarif");
    assert!(dir.join("nonblock.sarif").is_file());
    assert!(
        !stdout(&run.output).contains("::"),
        "{}",
        stdout(&run.output)
    );
    assert_eq!(run.summary, "");
    let verdict = action("verdict", &dir, &dir, &[("NONBLOCK_EXIT_CODE", "0")]);
    assert_eq!(verdict.output.status.code(), Some(0));
}

#[test]
fn a_failed_run_is_exit_code_2_with_the_reason_in_the_summary() {
    let dir = scratch("failed");
    let run = action(
        "scan",
        &dir,
        &dir,
        &[
            ("NONBLOCK_BIN", bin()),
            ("NONBLOCK_MANIFEST_PATH", "/nonexistent/Cargo.toml"),
        ],
    );
    // The scan step records the failure; the verdict step fails the job after the upload.
    assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));
    assert_eq!(run.outputs["exit-code"], "2");
    assert!(!run.outputs.contains_key("sarif-file"), "{:?}", run.outputs);
    assert!(
        run.summary
            .starts_with("## cargo-nonblock: the run failed (exit 2)\n"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("cargo metadata failed"),
        "{}",
        run.summary
    );
    let verdict = action("verdict", &dir, &dir, &[("NONBLOCK_EXIT_CODE", "2")]);
    assert_eq!(verdict.output.status.code(), Some(2));
}

#[test]
fn arguments_the_action_sets_itself_are_refused() {
    let dir = scratch("refused");
    for args in [
        "--format json",
        "--locked -q",
        "--output=x",
        "--fail-on error",
    ] {
        let run = action(
            "scan",
            &dir,
            &dir,
            &[("NONBLOCK_BIN", bin()), ("NONBLOCK_ARGS", args)],
        );
        assert_eq!(run.output.status.code(), Some(2), "{args}");
        assert!(
            stdout(&run.output).starts_with("::error title=cargo-nonblock::args: "),
            "{args}: {}",
            stdout(&run.output)
        );
        assert!(run.outputs.is_empty(), "{args}: {:?}", run.outputs);
    }
}

/// A `cargo` that records its arguments and installs a stub `cargo-nonblock` into `--root`.
fn fake_cargo(dir: &Path) -> PathBuf {
    let bin_dir = dir.join("fake-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let cargo = bin_dir.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/usr/bin/env bash\n\
             echo \"$@\" >> '{log}'\n\
             while [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n\
             mkdir -p \"$root/bin\"\n\
             printf '#!/bin/sh\\necho cargo-nonblock 0.0.0\\n' > \"$root/bin/cargo-nonblock\"\n\
             chmod +x \"$root/bin/cargo-nonblock\"\n",
            log = dir.join("cargo.log").display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&cargo)
        .status()
        .unwrap();
    bin_dir
}

#[test]
fn install_builds_from_the_action_s_checkout_unless_the_cache_restored_it() {
    let dir = scratch("install");
    let fake = fake_cargo(&dir);
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = dir.join("root");
    let env = [
        ("PATH", path.as_str()),
        ("NONBLOCK_ROOT", root.to_str().unwrap()),
    ];
    let run = action("install", &dir, &dir, &env);
    assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));
    let log = std::fs::read_to_string(dir.join("cargo.log")).unwrap();
    assert_eq!(
        log,
        format!(
            "install --locked --path {}/crates/cargo-nonblock --root {}\n",
            repo().display(),
            root.display()
        )
    );
    assert_eq!(run.path, format!("{}/bin\n", root.display()));
    assert_eq!(
        run.outputs["bin"],
        format!("{}/bin/cargo-nonblock", root.display())
    );

    // The cache restored the root: no build.
    let again = action("install", &dir, &dir, &env);
    assert_eq!(again.output.status.code(), Some(0));
    assert!(stdout(&again.output).contains("restored from the cache"));
    assert_eq!(
        std::fs::read_to_string(dir.join("cargo.log")).unwrap(),
        log,
        "cargo ran again"
    );
}

#[test]
fn the_cache_key_names_the_os_and_follows_the_toolchain() {
    let dir = scratch("key");
    let key = |env: &[(&str, &str)]| {
        let run = action("key", &dir, &dir, env);
        assert_eq!(run.output.status.code(), Some(0), "{}", stderr(&run.output));
        assert_eq!(
            run.outputs["root"],
            format!("{}/cargo-nonblock", dir.display())
        );
        run.outputs["key"].clone()
    };
    let first = key(&[]);
    assert!(first.starts_with("cargo-nonblock-Linux-"), "{first}");
    assert_eq!(first.len(), "cargo-nonblock-Linux-".len() + 20);
    assert_eq!(key(&[]), first, "the key is deterministic");
    // Another toolchain (a `rustc -vV` that says something else) is another key.
    let fake = dir.join("rustc-bin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(
        fake.join("rustc"),
        "#!/bin/sh\necho 'rustc 0.0.1 (other)'\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(fake.join("rustc"))
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    assert_ne!(key(&[("PATH", &path)]), first);
}

/// The `cargo nonblock …` command lines written in `text`: each occurrence up to the end of the
/// line, a closing backtick, a comment, a redirection or the next command.
fn command_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find("cargo nonblock") {
            let after = &rest[at + "cargo nonblock".len()..];
            // `cargo nonblock's exit code`: prose, not a command.
            if !(after.is_empty() || after.starts_with([' ', '`'])) {
                rest = after;
                continue;
            }
            let end = [" #", "`", ">", "&&", ";", "|", "\""]
                .iter()
                .filter_map(|stop| after.find(stop))
                .min()
                .unwrap_or(after.len());
            lines.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    lines
}

/// The `with:` inputs of each step that uses the action at `./` in a workflow (`text`).
fn action_steps(text: &str) -> Vec<BTreeMap<String, String>> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let lines: Vec<&str> = text.lines().collect();
    let mut steps = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let key = line.trim_start().trim_start_matches("- ");
        if key.split('#').next().unwrap().trim() != "uses: ./" {
            continue;
        }
        // The step's keys sit at the indent of `uses:` (after a leading `- `).
        let key_indent = line.len() - key.len();
        let mut inputs = BTreeMap::new();
        let mut in_with = false;
        for l in &lines[i + 1..] {
            if l.trim().is_empty() || l.trim_start().starts_with('#') {
                continue;
            }
            if indent(l) < key_indent
                || (indent(l) == key_indent && l.trim_start().starts_with("- "))
            {
                break;
            }
            if indent(l) == key_indent {
                in_with = l.trim() == "with:";
            } else if in_with {
                let (k, v) = l.trim().split_once(':').expect("key: value");
                let v = v.split(" #").next().unwrap().trim();
                inputs.insert(
                    k.to_string(),
                    v.trim_matches('\'').trim_matches('"').to_string(),
                );
            }
        }
        steps.push(inputs);
    }
    steps
}

/// The fenced blocks of a Markdown text with this info string.
fn fenced(text: &str, lang: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim() == format!("```{lang}") => current = Some(String::new()),
            Some(block) if line.trim() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// `args` split as the shell and the action split them, with `--manifest-path` pointed at the
/// demo service (the documentation's `path/to/Cargo.toml` is a stand-in for the user's own).
fn on_demo(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = args.split_whitespace();
    while let Some(w) = words.next() {
        if w == "--manifest-path" {
            words.next();
        } else if !w.starts_with("--manifest-path=") {
            out.push(w.trim_matches('"').trim_matches('\'').to_string());
        }
    }
    out.push("--manifest-path".into());
    out.push(demo_manifest().to_str().unwrap().to_string());
    out
}

#[test]
fn every_cargo_nonblock_command_line_runs_on_the_demo_service() {
    let dir = scratch("commands");
    // `--baseline nonblock-baseline.json` needs the file the documentation has you write first.
    let write = Command::new(bin())
        .args(on_demo("nonblock --write-baseline nonblock-baseline.json"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(write.status.code(), Some(0), "{}", stderr(&write));

    let mut checked = BTreeMap::<String, usize>::new();
    for file in ci_files() {
        for args in command_lines(&read(&file)) {
            assert!(
                !args.contains('<') && !args.contains("example"),
                "{file}: a placeholder in `cargo nonblock {args}`"
            );
            let mut cmd = Command::new(bin());
            cmd.arg("nonblock").args(on_demo(&args)).current_dir(&dir);
            let out = cmd.output().unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{file}: `cargo nonblock {args}` exited {:?}: {}",
                out.status.code(),
                stderr(&out)
            );
            assert!(
                !stderr(&out).contains("error:"),
                "{file}: `cargo nonblock {args}`: {}",
                stderr(&out)
            );
            *checked.entry(file.clone()).or_default() += 1;
        }
    }
    // The extraction found the lines it is there to check.
    assert!(
        checked.get("docs/ci.md").copied().unwrap_or(0) >= 8,
        "{checked:?}"
    );
    assert!(
        checked.contains_key(".pre-commit-hooks.yaml"),
        "{checked:?}"
    );
}

#[test]
fn every_workflow_s_use_of_the_action_runs_as_written() {
    let declared = declared_inputs();
    let mut runs = 0;
    let mut texts: Vec<(String, String)> = workflows().into_iter().map(|f| (read(&f), f)).collect();
    for block in fenced(&read("docs/ci.md"), "yaml") {
        texts.push((block, "docs/ci.md".into()));
    }
    for (text, file) in texts {
        for inputs in action_steps(&text) {
            let dir = scratch(&format!("workflow-{runs}"));
            let mut env = vec![
                ("NONBLOCK_BIN".to_string(), bin().to_string()),
                (
                    "NONBLOCK_MANIFEST_PATH".to_string(),
                    demo_manifest().to_str().unwrap().to_string(),
                ),
            ];
            for (k, v) in &inputs {
                assert!(
                    declared.contains(k),
                    "{file}: input `{k}` is not declared in action.yml"
                );
                assert!(!v.contains("${{"), "{file}: `{k}: {v}` needs an expression");
                let var = match k.as_str() {
                    "manifest-path" => continue,
                    "args" => "NONBLOCK_ARGS",
                    "fail-on" => "NONBLOCK_FAIL_ON",
                    "annotations" => "NONBLOCK_ANNOTATIONS",
                    "summary" => "NONBLOCK_SUMMARY",
                    "sarif-file" => "NONBLOCK_SARIF",
                    "upload-sarif" => "NONBLOCK_UPLOAD",
                    "sarif-category" => "NONBLOCK_CATEGORY",
                    other => panic!("{file}: input `{other}` has no variable in this test"),
                };
                env.push((var.to_string(), v.clone()));
            }
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let run = action("scan", &dir, &dir, &env);
            assert_eq!(
                run.output.status.code(),
                Some(0),
                "{file}: {inputs:?}: {}{}",
                stdout(&run.output),
                stderr(&run.output)
            );
            let expected = match inputs.get("fail-on").map(String::as_str) {
                Some("never") => "0",
                _ => "1",
            };
            assert_eq!(run.outputs["exit-code"], expected, "{file}: {inputs:?}");
            runs += 1;
        }
    }
    assert!(runs >= 3, "{runs} uses of the action found");
}

/// The inputs `action.yml` declares: the keys indented once under `inputs:`.
fn declared_inputs() -> Vec<String> {
    let text = read("action.yml");
    let mut inputs = Vec::new();
    let mut in_inputs = false;
    for line in text.lines() {
        if !line.starts_with(' ') && !line.trim().is_empty() {
            in_inputs = line.trim() == "inputs:";
        } else if in_inputs && line.starts_with("  ") && !line.starts_with("   ") {
            inputs.push(line.trim().trim_end_matches(':').to_string());
        }
    }
    inputs
}

#[test]
fn action_yml_references_only_what_exists() {
    let text = read("action.yml");
    let script = read("scripts/ci/action.sh");
    let declared = declared_inputs();
    assert!(declared.contains(&"fail-on".to_string()), "{declared:?}");
    // Every `${{ inputs.x }}` is declared; every declared input is used.
    let used: Vec<&str> = text
        .split("inputs.")
        .skip(1)
        .map(|s| {
            s.split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .next()
                .unwrap()
        })
        .collect();
    for u in &used {
        assert!(
            declared.iter().any(|d| d == u),
            "inputs.{u} is not declared"
        );
    }
    for d in &declared {
        assert!(used.contains(&d.as_str()), "input {d} is never used");
    }
    // Every `steps.<id>.outputs.<name>` names a step of the action, and the script writes the
    // output (`output <name> …`).
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- id: "))
        .collect();
    for reference in text.split("steps.").skip(1) {
        let mut parts = reference.splitn(3, '.');
        let (id, outputs, name) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap(),
        );
        assert_eq!(outputs, "outputs");
        let name = name
            .split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .next()
            .unwrap();
        assert!(ids.contains(&id), "no step {id}");
        if id != "cache" {
            assert!(
                script.contains(&format!("output {name} ")),
                "action.sh never writes the output {name}"
            );
        }
    }
    // Every `NONBLOCK_*` variable the action sets is read by the script, and each subcommand it
    // runs exists.
    for var in text.split("NONBLOCK_").skip(1) {
        let var = var.split(':').next().unwrap();
        assert!(
            script.contains(&format!("NONBLOCK_{var}")),
            "action.sh never reads NONBLOCK_{var}"
        );
    }
    let subcommands: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("run: bash \"$GITHUB_ACTION_PATH/scripts/ci/action.sh\" ")
        })
        .collect();
    assert_eq!(subcommands, ["key", "install", "scan", "verdict"]);
    for s in subcommands {
        assert!(
            script.contains(&format!("\n  {s}) cmd_")),
            "no subcommand {s}"
        );
    }
    // The install is from the action's own checkout.
    assert!(script.contains(
        "cargo install --locked --path \"$action_path/crates/cargo-nonblock\" --root \"$root\""
    ));
}

#[test]
fn no_ci_file_holds_a_placeholder_url_and_workflows_use_real_actions() {
    for file in ci_files() {
        let text = read(&file);
        assert!(!text.contains("example.invalid"), "{file}: example.invalid");
        // Every `uses:` actually written (not in a comment or prose) names the action here
        // (`./`) or a published action at a version.
        let yaml: Vec<String> = if file.ends_with(".md") {
            fenced(&text, "yaml")
        } else {
            vec![text.clone()]
        };
        for block in yaml {
            for line in block.lines() {
                let Some(uses) = line
                    .trim_start()
                    .trim_start_matches("- ")
                    .strip_prefix("uses: ")
                else {
                    continue;
                };
                let uses = uses.split(" #").next().unwrap().trim();
                let published = uses.split_once('@').is_some_and(|(name, version)| {
                    name.split('/').count() >= 2
                        && (version == "stable"
                            || version
                                .strip_prefix('v')
                                .is_some_and(|v| v.parse::<u32>().is_ok()))
                });
                assert!(uses == "./" || published, "{file}: uses: {uses}");
            }
        }
    }
}

#[test]
fn the_documented_local_pre_commit_hook_matches_the_hook_definition() {
    let definition = read(".pre-commit-hooks.yaml");
    let field = |text: &str, key: &str| -> String {
        text.lines()
            .filter_map(|l| {
                l.trim()
                    .trim_start_matches("- ")
                    .strip_prefix(&format!("{key}: "))
            })
            .map(str::to_string)
            .next()
            .unwrap_or_else(|| panic!("no {key}: in {text}"))
    };
    let docs = fenced(&read("docs/ci.md"), "yaml");
    let local = docs
        .iter()
        .find(|b| b.contains("repo: local"))
        .expect("docs/ci.md shows a local hook");
    for key in ["id", "entry", "language", "files", "pass_filenames"] {
        assert_eq!(field(local, key), field(&definition, key), "{key}");
    }
    assert_eq!(field(&definition, "entry"), "cargo nonblock");
    assert_eq!(field(&definition, "language"), "system");
    // pre-commit matches `files` as a Python regex against paths relative to the repository.
    let files = field(&definition, "files");
    for (path, matched) in [
        ("src/main.rs", true),
        ("Cargo.toml", true),
        ("crates/api/Cargo.toml", true),
        ("Cargo.lock", true),
        ("nonblock.toml", true),
        ("README.md", false),
        ("MyCargo.toml", false),
    ] {
        assert_eq!(regex_lite_match(&files, path), matched, "{files} on {path}");
    }
}

/// `(\.rs|/Cargo\.toml|^Cargo\.toml|Cargo\.lock|nonblock\.toml)$`, the one shape of regex the hook
/// uses (alternatives, each optionally anchored with `^`, the group anchored with `$`), matched
/// as `re.search` would: no regex crate needed for one pattern.
fn regex_lite_match(pattern: &str, path: &str) -> bool {
    let inner = pattern
        .strip_prefix('(')
        .and_then(|p| p.strip_suffix(")$"))
        .expect("(…|…)$");
    inner.split('|').any(|alt| {
        let literal = alt.replace('\\', "");
        match literal.strip_prefix('^') {
            Some(whole) => path == whole,
            None => path.ends_with(&literal),
        }
    })
}

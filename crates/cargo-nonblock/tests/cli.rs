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

/// A fresh scratch directory `nonblock-<name>-<pid>` under the temp dir holding `files`
/// (relative path, text), parent directories created.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nonblock-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
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
    assert_eq!(written["schema"], "cargo-nonblock/v2");
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
    // Each rule lists its API patterns, as many as it counts.
    let std_fs = table
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "NB0101")
        .unwrap();
    let patterns: Vec<&str> = std_fs["api_patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(patterns.contains(&"std::fs::read"), "{patterns:?}");
    assert_eq!(Some(patterns.len() as u64), std_fs["apis"].as_u64());
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
    let dir = scratch(
        "broken",
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"good\", \"bad\"]\n"),
            ("good/Cargo.toml", "[package]\nname = \"good\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nno-such-crate-nonblock-test = \"1\"\n"),
            ("good/src/lib.rs", ""),
            ("bad/Cargo.toml", "[package]\nname = \"bad\"\nversion = \n"),
            ("bad/src/lib.rs", ""),
        ],
    );
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

/// A panic inside the analyzer (injected: a correct analyzer has no other way to panic on purpose)
/// is caught per crate: the report names the crate as an internal error, keeps every finding the
/// rest of the graph produced, prints no raw panic message, and exits 2 whatever `--fail-on` says.
#[test]
fn a_panic_in_one_crate_is_an_internal_error_and_exit_2() {
    let manifest = demo_manifest();
    let m = manifest.to_str().unwrap();
    let clean = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
    ]));
    let all = clean["findings"].as_array().unwrap().len();
    assert_eq!(clean["stats"]["internal_errors"], 0);

    let inject = |spec: &str, extra: &[&str]| {
        let mut args = vec!["nonblock", "--manifest-path", m, "--fail-on", "never"];
        args.extend_from_slice(extra);
        bin()
            .args(&args)
            .env("NONBLOCK_INJECT_PANIC", spec)
            .output()
            .expect("binary runs")
    };
    // `dotenvy` (a dependency) fails to parse: only the path through it is lost.
    for (spec, package, stage) in [
        ("parse:dotenvy", "dotenvy", "parsing"),
        ("resolve:storage", "storage", "resolving calls in"),
    ] {
        let out = inject(spec, &["--format", "json"]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked at"), "{spec}: {stderr}");
        let report = json(&out);
        assert_eq!(report["stats"]["internal_errors"], 1, "{spec}");
        let internal: Vec<&serde_json::Value> = report["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "internal")
            .collect();
        assert_eq!(internal.len(), 1, "{spec}");
        assert_eq!(internal[0]["package"], package);
        let message = internal[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("internal error while {stage} crate `{package}`")),
            "{message}"
        );
        let kept = report["findings"].as_array().unwrap().len();
        assert!(kept > 0 && kept < all, "{spec}: {kept} of {all}");
    }
    // A panic in the whole-graph stage leaves nothing to trust: no findings, still exit 2.
    let out = inject("graph", &["--format", "sarif"]);
    assert_eq!(out.status.code(), Some(2));
    let sarif = json(&out);
    let invocation = &sarif["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert_eq!(
        invocation["toolExecutionNotifications"][0]["level"],
        "error"
    );
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 0);
    let human = inject("graph", &[]);
    assert_eq!(human.status.code(), Some(2));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("error: analysis incomplete (internal)"),
        "{text}"
    );
}

/// `explain` says when a rule is opt-in and names the workload that confirms its category.
#[test]
fn explain_names_opt_in_state_and_the_confirmation() {
    let out = run(&["nonblock", "explain", "NB1101"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("off by default (enable with `[rules.NB1101] enabled = true`"),
        "{text}"
    );
    // The workload's name comes from bench-fixtures, built only with the `confirm` feature.
    let named = |text: &str, expected: &str| {
        if cfg!(feature = "confirm") {
            assert!(text.contains(expected), "{text}");
        } else {
            let command = expected.split(" runs ").next().unwrap_or(expected);
            assert!(text.contains(command), "{text}");
        }
    };
    named(
        &text,
        "Confirmation: `cargo nonblock confirm cpu` runs serde_json::from_slice",
    );
    let out = run(&["nonblock", "explain", "NB0201"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("off by default"), "{text}");
    named(
        &text,
        "Confirmation: `cargo nonblock confirm sleep` runs std::thread::sleep",
    );
}

/// The default build leaves the workloads out; `confirm` then says how to get them instead of
/// clap's "unrecognized subcommand", whatever arguments follow.
#[cfg(not(feature = "confirm"))]
#[test]
fn confirm_without_the_feature_says_how_to_install_it() {
    for args in [
        &["nonblock", "confirm", "fs"][..],
        &["nonblock", "confirm", "--all", "--runs", "3"],
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--features confirm"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let explain = run(&["nonblock", "explain", "NB0201"]);
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(text.contains("--features confirm"), "{text}");
}

/// A workspace whose `rust-toolchain.toml` names a toolchain that is not installed: the scan
/// stops with rustup's own reason and how to scan anyway, not "printed no host triple".
#[test]
fn an_uninstalled_pinned_toolchain_is_reported_in_rustups_words() {
    let rustup_present = Command::new("rustup")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !rustup_present || std::env::var_os("RUSTC").is_some() {
        eprintln!("skipped: the toolchain file is a rustup feature and rustup is not in use here");
        return;
    }
    let dir = scratch(
        "toolchain",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"pinned\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", ""),
            ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.31.0\"\n"),
        ],
    );
    let out = bin()
        .args(["nonblock", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        // Never let rustup try to download it; run from elsewhere so only the file decides.
        .env("RUSTUP_AUTO_INSTALL", "0")
        .env_remove("RUSTUP_TOOLCHAIN")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("binary runs");
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("1.31.0") && !err.contains("not installed") {
        eprintln!("skipped: toolchain 1.31.0 happens to be installed here: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("toolchain '1.31.0") && err.contains("is not installed"),
        "{err}"
    );
    assert!(err.contains("RUSTUP_TOOLCHAIN=stable"), "{err}");
    assert!(
        !err.contains("Stack backtrace") && !err.contains("no host triple"),
        "{err}"
    );
}

/// A member file that does not parse is part of the user's code left unanalysed: it fails the
/// run under `--fail-on warning` (the default), in rustc's words at a clickable
/// `path:line:col`. A dependency's gaps are one summary line; `-v` lists them.
#[test]
fn an_unparsable_member_file_fails_the_run_and_dependency_gaps_collapse() {
    let dir = scratch(
        "cli-gaps",
        &[
            (
                "app/Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\ndep = { path = \"../dep\" }\n",
            ),
            (
                "app/src/lib.rs",
                "mod bad;\npub fn ok() -> u32 { dep::one() }\n",
            ),
            ("app/src/bad.rs", "pub fn f() {\n    let x = (1, 2);\n"),
            (
                "dep/Cargo.toml",
                "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("dep/src/lib.rs", "mod broken;\npub fn one() -> u32 { 1 }\n"),
            ("dep/src/broken.rs", "fn (\n"),
        ],
    );
    let manifest = dir.join("app/Cargo.toml");
    let m = manifest.to_str().unwrap();

    let out = run(&["nonblock", "--manifest-path", m, "--color", "never"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "warning: analysis incomplete (parse): src/bad.rs:1:12: this file contains an \
             unclosed delimiter"
        ),
        "{text}"
    );
    assert!(
        text.contains("analysis incomplete in 1 place of 1 dependency (parse 1); `-v` lists them"),
        "{text}"
    );
    assert!(!text.contains("broken.rs"), "{text}");
    let verbose = run(&["nonblock", "--manifest-path", m, "--color", "never", "-v"]);
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(text.contains("broken.rs:1:4:"), "{text}");

    assert_eq!(
        run(&["nonblock", "--manifest-path", m, "--fail-on", "error", "-q"])
            .status
            .code(),
        Some(0)
    );
    let report = json(&run(&[
        "nonblock",
        "--manifest-path",
        m,
        "--format",
        "json",
    ]));
    let errors = report["errors"].as_array().unwrap();
    let member: Vec<_> = errors.iter().filter(|e| e["member"] == true).collect();
    assert_eq!(member.len(), 1, "{errors:?}");
    assert_eq!(
        (member[0]["line"].as_u64(), member[0]["column"].as_u64()),
        (Some(1), Some(12))
    );
    assert!(errors
        .iter()
        .any(|e| e["package"] == "dep" && e.get("member").is_none() && e["line"] == 1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--help` groups options as cargo's commands do, and no option is listed without a
/// description.
#[test]
fn help_is_grouped_like_cargo_and_every_option_says_what_it_does() {
    let out = run(&["nonblock", "-h"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for heading in [
        "Package Selection:",
        "Feature Selection:",
        "Compilation Options:",
        "Manifest Options:",
        "Output:",
        "Reporting:",
    ] {
        assert!(help.contains(heading), "{heading} missing:\n{help}");
    }
    let lines: Vec<&str> = help.lines().collect();
    let mut options = 0;
    for (i, line) in lines.iter().enumerate() {
        let flags = line.trim_start();
        if !flags.starts_with('-') {
            continue;
        }
        options += 1;
        // `  -p, --package <SPEC>  Report findings ...` (flags, two spaces, text), or, when the
        // flags are long, the text on the next line, indented deeper than the flags.
        let same_line = flags
            .find("  ")
            .is_some_and(|at| !flags[at..].trim().is_empty());
        let indent = |l: &str| l.len() - l.trim_start().len();
        let next_line = lines.get(i + 1).is_some_and(|next| {
            !next.trim().is_empty() && indent(next) > indent(line) && !next.trim().starts_with('-')
        });
        assert!(
            same_line || next_line,
            "an option without help text: {line:?}"
        );
    }
    assert!(options >= 20, "{help}");
}

#[test]
fn completions_are_generated_for_the_shells_clap_complete_knows() {
    let bash = run(&["nonblock", "completions", "bash"]);
    assert_eq!(bash.status.code(), Some(0));
    let script = String::from_utf8_lossy(&bash.stdout);
    assert!(
        script.contains("cargo-nonblock") && script.contains("--manifest-path"),
        "{script}"
    );
    let zsh = String::from_utf8_lossy(&run(&["nonblock", "completions", "zsh"]).stdout).to_string();
    assert!(zsh.starts_with("#compdef cargo-nonblock"), "{zsh}");
    assert_eq!(
        run(&["nonblock", "completions", "tcsh"]).status.code(),
        Some(2)
    );
}

/// Colour follows cargo's rules when stdout is not a terminal: `CARGO_TERM_COLOR` picks the
/// default, `CLICOLOR_FORCE` forces auto on, `--color` wins over both; `-q` prints the
/// findings and nothing else.
#[test]
fn color_follows_cargo_term_color_and_clicolor_force_and_quiet_prints_findings_only() {
    let manifest = demo_manifest();
    let m = manifest.to_str().unwrap();
    let colored = |envs: &[(&str, &str)], extra: &[&str]| {
        let mut cmd = bin();
        cmd.args(["nonblock", "--manifest-path", m]).args(extra);
        cmd.env_remove("CARGO_TERM_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("NO_COLOR");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stdout).contains('\u{1b}')
    };
    assert!(!colored(&[], &[]));
    assert!(colored(&[("CARGO_TERM_COLOR", "always")], &[]));
    assert!(colored(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!colored(&[("CLICOLOR_FORCE", "0")], &[]));
    assert!(!colored(
        &[("CARGO_TERM_COLOR", "always")],
        &["--color", "never"]
    ));

    let quiet = run(&["nonblock", "--manifest-path", m, "-q", "--color", "never"]);
    let stdout = String::from_utf8_lossy(&quiet.stdout);
    assert!(stdout.contains("warning[NB"), "{stdout}");
    assert!(!stdout.contains("nonblock: "), "{stdout}");
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// A member's `[package.metadata.nonblock]` (seen through `cargo metadata`) is reported where it
/// is written, as an `ignored-config` notice that fails the run under `--fail-on warning`.
#[test]
fn a_member_s_package_metadata_table_is_an_ignored_config_notice() {
    let dir = scratch(
        "cli-pkgmeta",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [package.metadata.nonblock]\nroots = []\n",
            ),
            ("src/lib.rs", "pub fn f() {}\n"),
        ],
    );
    let manifest = dir.join("Cargo.toml");
    let out = run(&[
        "nonblock",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let notices = report["notices"].as_array().unwrap();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0]["kind"], "ignored-config");
    assert_eq!(notices[0]["file"], "Cargo.toml");
    assert_eq!(notices[0]["line"], 6);
}

/// A dependency's malformed `[package.metadata.nonblock]` is a warning naming the package, never
/// a failure (exit 0 under `--fail-on warning` with nothing else to report); `-v` lists the
/// valid part of its model, which still applies.
#[test]
fn a_dependency_s_malformed_model_warns_without_failing_and_v_lists_models() {
    let dir = scratch(
        "cli-depmodel",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nshaky = { path = \"shaky\" }\n\n[workspace]\nexclude = [\"shaky\"]\n",
            ),
            ("src/lib.rs", "pub async fn f() { shaky::run(); }\n"),
            (
                "shaky/Cargo.toml",
                "[package]\nname = \"shaky\"\nversion = \"0.2.0\"\nedition = \"2021\"\n\n\
                 [package.metadata.nonblock]\noffload = [\"shaky::pool\"]\nnonblocking = [\"std::thread::sleep\"]\n",
            ),
            ("shaky/src/lib.rs", "pub fn run() {}\npub fn pool() {}\n"),
        ],
    );
    let manifest = dir.join("Cargo.toml");
    let out = run(&[
        "nonblock",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "-v",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("shaky/Cargo.toml:8:1: [package.metadata.nonblock] of shaky 0.2.0: `std::thread::sleep` is outside the package"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 problem in libraries' models"),
        "{stdout}"
    );
    assert!(
        stderr.contains("nonblock: model declared by shaky 0.2.0 (shaky/Cargo.toml):\n    offload shaky::pool\n"),
        "{stderr}"
    );
}

/// Warm runs reuse `cargo metadata`'s output and the last report, and see every change that
/// matters: a member appearing under a glob (no manifest edited), an edited source file, a new
/// configuration. Each warm report equals a `--no-cache` run of the same state.
#[test]
fn warm_runs_reuse_metadata_and_the_report_until_an_input_changes() {
    let member = |name: &str, call: &str| {
        (
            format!("crates/{name}/Cargo.toml"),
            format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            format!("crates/{name}/src/lib.rs"),
            format!("pub async fn handler() {{\n    {call};\n}}\n"),
        )
    };
    let (am, at, al, ac) = member("a", "std::fs::read(\"x\").ok()");
    let dir = scratch(
        "cli-warm",
        &[
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n",
            ),
            (&am, &at),
            (&al, &ac),
        ],
    );
    let manifest = dir.join("Cargo.toml");
    let m = manifest.to_str().unwrap();
    let analyse = |extra: &[&str]| {
        let mut args = vec!["nonblock", "--manifest-path", m, "--format", "json", "-v"];
        args.extend_from_slice(extra);
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let mut report = json(&out);
        report["stats"]["seconds"] = 0.into();
        report["stats"]["phases"] = serde_json::json!({});
        (report, stderr)
    };
    let findings = |r: &serde_json::Value| r["findings"].as_array().unwrap().len();

    let (cold, _) = analyse(&[]);
    assert_eq!(findings(&cold), 1);
    let entries: Vec<String> = std::fs::read_dir(dir.join("target/nonblock"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        entries.iter().any(|e| e.starts_with("metadata-")),
        "{entries:?}"
    );
    let (warm, stderr) = analyse(&[]);
    assert!(stderr.contains("report reused"), "{stderr}");
    assert_eq!(warm, cold, "byte for byte, timings aside");

    // A new member under the glob: no manifest changes, the listing does.
    let (bm, bt, bl, bc) = member("b", "std::thread::sleep(std::time::Duration::ZERO)");
    std::fs::create_dir_all(dir.join("crates/b/src")).unwrap();
    std::fs::write(dir.join(&bm), bt).unwrap();
    std::fs::write(dir.join(&bl), bc).unwrap();
    let (grown, stderr) = analyse(&[]);
    assert!(!stderr.contains("report reused"), "{stderr}");
    assert_eq!(findings(&grown), 2, "the new member is analysed");
    assert_eq!(grown, analyse(&["--no-cache"]).0);

    // An edited source file.
    std::fs::write(dir.join(&al), "pub async fn handler() {}\n").unwrap();
    let (edited, stderr) = analyse(&[]);
    assert!(
        stderr.contains("1 parsed (1 changed since cached)"),
        "{stderr}"
    );
    assert_eq!(findings(&edited), 1);
    assert_eq!(edited, analyse(&["--no-cache"]).0);

    // A configuration.
    std::fs::write(
        dir.join("nonblock.toml"),
        "[rules.NB0201]\nenabled = false\n",
    )
    .unwrap();
    let (configured, _) = analyse(&[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(findings(&configured), 0, "{configured}");
}

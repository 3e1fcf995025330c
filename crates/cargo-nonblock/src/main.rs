//! `cargo nonblock`: the thin command-line front end. Parses arguments, calls the analyzer
//! library, renders. All logic lives in `nonblock-analyzer`.
//!
//! Exit codes (ripgrep's convention): 0 no finding at or above `--fail-on`, 1 findings, 2 the run
//! failed (bad arguments, no manifest, cargo metadata failed) or hit an internal error (a caught
//! panic: the report is printed, but part of the graph went unanalysed; see `exit_code`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use nonblock_analyzer::baseline::Baseline;
use nonblock_analyzer::progress::{Progress, Silent};
use nonblock_analyzer::render::cargo_messages::{self, Members, MessageFormat};
use nonblock_analyzer::render::{github, human, sarif, summary, DiskSources};
use nonblock_analyzer::{analyze_with_progress, Options, Report, RuleDb};

#[derive(Parser, Debug)]
#[command(
    name = "cargo-nonblock",
    bin_name = "cargo nonblock",
    version,
    about = "Find blocking calls reachable from async code, through your workspace and its dependencies' source",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    scan: ScanArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the rule database: id, name, category, severity, number of APIs.
    Rules {
        #[arg(long, value_enum, default_value_t = TableFormat::Human)]
        format: TableFormat,
    },
    /// Show a rule's documentation and its async alternative.
    Explain {
        /// A rule id (NB0101) or name (std-fs).
        rule: String,
    },
    /// Run a rule category's blocking pattern on a real multi-thread Tokio runtime, next to the
    /// async alternative, and show the starvation it causes (build in release mode for timing).
    #[cfg(feature = "confirm")]
    Confirm(bench_fixtures::ConfirmArgs),
    /// Run a rule category's blocking pattern on a real multi-thread Tokio runtime (not in this
    /// build: install with `--features confirm`).
    #[cfg(not(feature = "confirm"))]
    Confirm {
        /// Ignored: this build cannot run the workloads.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    ///
    /// E.g. `cargo nonblock completions bash > ~/.local/share/bash-completion/completions/cargo-nonblock`.
    Completions {
        /// The shell to generate the script for.
        shell: clap_complete::Shell,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TableFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum OutputFormat {
    Human,
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions annotations (`::error file=…::…` workflow commands).
    Github,
    /// Markdown for `$GITHUB_STEP_SUMMARY`: totals, counts per rule, the top findings and paths.
    Summary,
}

/// cargo's `--message-format` values (comma-separated or repeated, as cargo takes them).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum MessageFormatArg {
    /// The report as `--format` says (the default).
    Human,
    /// rustc's short form, one line per finding: `path:line:col: warning[NB0101]: message`.
    Short,
    /// cargo's JSON messages: one `compiler-message` per finding, then `build-finished`.
    Json,
    /// JSON, with rustc's short form in `rendered`.
    JsonDiagnosticShort,
    /// JSON, with ANSI colours in `rendered`.
    JsonDiagnosticRenderedAnsi,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum FailOn {
    Error,
    Warning,
    Never,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, PartialOrd, Ord)]
enum MinConfidence {
    Low,
    Medium,
    High,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Color {
    Auto,
    Always,
    Never,
}

// Help headings as cargo's own commands group their options (`cargo check --help`).
const PACKAGE_SELECTION: &str = "Package Selection";
const FEATURE_SELECTION: &str = "Feature Selection";
const COMPILATION_OPTIONS: &str = "Compilation Options";
const MANIFEST_OPTIONS: &str = "Manifest Options";
const OUTPUT: &str = "Output";
const REPORTING: &str = "Reporting";

#[derive(Args, Debug)]
struct ScanArgs {
    /// Path to Cargo.toml of the workspace (or a member) to analyse.
    #[arg(long, value_name = "PATH", help_heading = MANIFEST_OPTIONS)]
    manifest_path: Option<PathBuf>,
    /// Report findings rooted in this member only (repeatable). Everything is still analysed.
    #[arg(short = 'p', long = "package", value_name = "SPEC", help_heading = PACKAGE_SELECTION)]
    package: Vec<String>,
    /// Report findings from every workspace member (the default).
    #[arg(long, help_heading = PACKAGE_SELECTION)]
    workspace: bool,
    /// Do not report findings rooted in this member (repeatable).
    #[arg(long, value_name = "SPEC", help_heading = PACKAGE_SELECTION)]
    exclude: Vec<String>,
    /// Space or comma separated features to activate.
    #[arg(short = 'F', long, value_name = "FEATURES", help_heading = FEATURE_SELECTION)]
    features: Vec<String>,
    /// Activate all available features of all selected packages.
    #[arg(long, help_heading = FEATURE_SELECTION)]
    all_features: bool,
    /// Do not activate the `default` feature of the selected packages.
    #[arg(long, help_heading = FEATURE_SELECTION)]
    no_default_features: bool,
    /// Evaluate cfg for this target triple (default: the host).
    #[arg(long, value_name = "TRIPLE", help_heading = COMPILATION_OPTIONS)]
    target: Option<String>,
    /// Run `cargo metadata` without accessing the network.
    #[arg(long, help_heading = MANIFEST_OPTIONS)]
    offline: bool,
    /// Assert that `Cargo.lock` will remain unchanged.
    #[arg(long, help_heading = MANIFEST_OPTIONS)]
    locked: bool,
    /// Equivalent to specifying both --locked and --offline.
    #[arg(long, help_heading = MANIFEST_OPTIONS)]
    frozen: bool,
    /// The report's format (default: human). Not with a --message-format other than human.
    #[arg(long, value_enum, help_heading = OUTPUT)]
    format: Option<OutputFormat>,
    /// Print cargo's messages instead of the report, as `cargo check --message-format` does: for
    /// rust-analyzer's `check.overrideCommand` and other readers of cargo's output
    /// (docs/editors.md).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FMT", help_heading = OUTPUT)]
    message_format: Vec<MessageFormatArg>,
    /// Write the report to FILE instead of stdout (the summary still goes to stderr).
    #[arg(long, short = 'o', value_name = "FILE", help_heading = OUTPUT)]
    output: Option<PathBuf>,
    /// Coloring: auto, always, never (default: `CARGO_TERM_COLOR`, else auto; auto honours
    /// `CLICOLOR_FORCE` and `NO_COLOR`).
    #[arg(long, value_enum, value_name = "WHEN", help_heading = OUTPUT)]
    color: Option<Color>,
    /// No summary line, no progress: the findings only.
    #[arg(short, long, help_heading = OUTPUT)]
    quiet: bool,
    /// Per-phase timings and resolution statistics on stderr; every gap in dependencies.
    #[arg(short, long, action = clap::ArgAction::Count, help_heading = OUTPUT)]
    verbose: u8,
    /// Exit with 1 when a finding at or above this severity is reported.
    #[arg(long, value_enum, default_value_t = FailOn::Warning, help_heading = REPORTING)]
    fail_on: FailOn,
    /// Report only findings of at least this confidence (high: every step resolved exactly;
    /// medium: through a trait or generic with several impls; low: matched by method name).
    #[arg(long, value_enum, default_value_t = MinConfidence::Low, help_heading = REPORTING)]
    min_confidence: MinConfidence,
    /// Report only findings not recorded in this baseline file (see --write-baseline).
    #[arg(long, value_name = "FILE", help_heading = REPORTING)]
    baseline: Option<PathBuf>,
    /// Record the current findings as the baseline in FILE, then exit 0.
    #[arg(long, value_name = "FILE", help_heading = REPORTING)]
    write_baseline: Option<PathBuf>,
    /// Do not read or write the caches in target/nonblock (lowered crates, the last report, cargo metadata).
    #[arg(long, help_heading = REPORTING)]
    no_cache: bool,
}

/// mimalloc instead of glibc's malloc. The parse phase builds and drops every dependency's
/// syntax trees on the rayon threads while the IR it keeps is allocated beside them; glibc keeps
/// the freed memory in each thread's arena, interleaved with live IR, so a cold run on deno
/// peaked ~300 MiB above a warm one (docs/performance.md, "Where the memory goes").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (`mimalloc.h`'s `mi_option_e`; the sys crate names no
/// constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc returns freed pages to the OS after 10 ms by default. Resolution and the graph
/// allocate and free a lot of short-lived memory, and the kernel zeroed the same pages again
/// each time they came back: a third of a warm deno run's CPU samples were `clear_page`. The
/// process is short-lived and its peak is its peak, so freed pages are kept for reuse. deno,
/// measured in one session with `MIMALLOC_PURGE_DELAY=-1`: cold 17.3 s → 15.0 s, peak RSS 964 →
/// 992 MiB; one member file edited (hyperfine, 4 runs each) 5.0 → 4.2 s, system time 1.5 → 0.7 s.
/// `MIMALLOC_PURGE_DELAY` still overrides it.
fn keep_freed_pages() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's documented options; no memory is touched.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

fn main() -> ExitCode {
    keep_freed_pages();
    // `cargo nonblock ...` runs `cargo-nonblock nonblock ...`: drop the subcommand name.
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("nonblock") {
        args.remove(1);
    }
    let cli = Cli::parse_from(args);
    let rules = RuleDb::builtin();
    match cli.command {
        Some(Command::Rules { format }) => print_rules(&rules, format),
        Some(Command::Explain { rule }) => explain(&rules, &rule),
        #[cfg(feature = "confirm")]
        Some(Command::Confirm(args)) => ExitCode::from(bench_fixtures::confirm_command(&args)),
        #[cfg(not(feature = "confirm"))]
        Some(Command::Confirm { .. }) => {
            eprintln!("{CONFIRM_NOT_BUILT}");
            ExitCode::from(2)
        }
        Some(Command::Completions { shell }) => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(
                shell,
                &mut command,
                "cargo-nonblock",
                &mut std::io::stdout(),
            );
            ExitCode::SUCCESS
        }
        None => scan(&cli.scan, &rules),
    }
}

/// Whether to colour output, as cargo decides it: `--color`, else `CARGO_TERM_COLOR`, else auto;
/// auto colours when `CLICOLOR_FORCE` is set (and not `0`), never when `NO_COLOR` is set, else
/// when stdout is a terminal that the report goes to.
fn use_color(flag: Option<Color>, writes_to_file: bool) -> bool {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let choice = flag.or_else(|| match env("CARGO_TERM_COLOR").as_deref() {
        Some("always") => Some(Color::Always),
        Some("never") => Some(Color::Never),
        _ => None,
    });
    match choice.unwrap_or(Color::Auto) {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            if env("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                return true;
            }
            !writes_to_file && std::io::stdout().is_terminal() && env("NO_COLOR").is_none()
        }
    }
}

fn print_rules(rules: &RuleDb, format: TableFormat) -> ExitCode {
    match format {
        TableFormat::Json => {
            let rows: Vec<serde_json::Value> = rules
                .rules
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.id, "name": r.name, "category": r.category,
                        "severity": r.severity.as_str(), "apis": r.apis.len(),
                        "api_patterns": r.apis.iter().map(|a| a.pattern.as_str()).collect::<Vec<_>>(),
                        "enabled_by_default": r.enabled_by_default,
                        "alternative": r.alternative, "summary": r.summary,
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&rows).expect("rules serialise")
            );
        }
        TableFormat::Human => {
            println!(
                "{:<8} {:<22} {:<14} {:<8} {:>5}  summary",
                "id", "name", "category", "severity", "apis"
            );
            for r in &rules.rules {
                let apis = if r.ffi {
                    "extern".to_string()
                } else {
                    r.apis.len().to_string()
                };
                let opt_in = if r.enabled_by_default {
                    ""
                } else {
                    " (opt-in)"
                };
                println!(
                    "{:<8} {:<22} {:<14} {:<8} {:>5}  {}{opt_in}",
                    r.id,
                    r.name,
                    r.category,
                    r.severity.as_str(),
                    apis,
                    r.summary
                );
            }
        }
    }
    ExitCode::SUCCESS
}

/// Why `confirm` is missing and how to get it. The workloads pull in a Tokio runtime, bundled
/// SQLite, an HTTP client and a plotting library, which triple the install time of a scanner
/// that needs none of them, so they are an opt-in feature.
#[cfg(not(feature = "confirm"))]
const CONFIRM_NOT_BUILT: &str =
    "error: this cargo-nonblock was built without the `confirm` feature \
(the starvation workloads: a Tokio runtime, SQLite, an HTTP client)
help: reinstall with it: cargo install --locked --path crates/cargo-nonblock --features confirm
      (from a clone of cargo-nonblock), or run the workloads from the clone without installing:
      cargo run --release -p bench-fixtures --bin confirm -- <CATEGORY|RULE_ID|seeds|--all>";

/// The workload that shows a rule's category starving a runtime, for `explain`.
fn confirmation_text(category: &str) -> Option<String> {
    #[cfg(feature = "confirm")]
    let scenario = bench_fixtures::confirmation_name(category)?;
    #[cfg(not(feature = "confirm"))]
    let scenario = "its category's workload (this build lacks the `confirm` feature: install with \
                    `--features confirm`)";
    Some(format!(
        "Confirmation: `cargo nonblock confirm {category}` runs {scenario}\n"
    ))
}

fn explain(rules: &RuleDb, id: &str) -> ExitCode {
    let Some(r) = rules.find(id) else {
        eprintln!("error: no rule `{id}`; `cargo nonblock rules` lists them");
        return ExitCode::from(2);
    };
    let mut s = cargo_messages::explanation(r);
    if let Some(c) = confirmation_text(&r.category) {
        s.push_str(&c);
    }
    if !r.apis.is_empty() {
        s.push_str("\nAPIs matched:\n");
        for a in &r.apis {
            match &a.alternative {
                Some(alt) => s.push_str(&format!("  {}  →  {}\n", a.pattern, alt)),
                None => s.push_str(&format!("  {}\n", a.pattern)),
            }
        }
    } else if r.ffi {
        s.push_str("\nAPIs matched: every function declared in an `extern` block\n");
    }
    print!("{s}");
    ExitCode::SUCCESS
}

fn scan(args: &ScanArgs, rules: &RuleDb) -> ExitCode {
    let styled = use_color(args.color, args.output.is_some());
    let message_format = match message_format(args, styled) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // Read the baseline first: a bad file fails before the analysis, and a v1 file asks the
    // analysis for the v1 fingerprints it is matched with.
    let baseline = match &args.baseline {
        Some(path) => {
            let loaded = std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| Baseline::parse(&text));
            match loaded {
                Ok(b) => Some((b, path.display().to_string())),
                Err(e) => {
                    eprintln!("error: baseline {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    let opts = Options {
        manifest_path: args.manifest_path.clone(),
        packages: args.package.clone(),
        exclude: args.exclude.clone(),
        features: args.features.clone(),
        all_features: args.all_features,
        no_default_features: args.no_default_features,
        target: args.target.clone(),
        offline: args.offline,
        locked: args.locked,
        frozen: args.frozen,
        threads: None,
        no_cache: args.no_cache,
        v1_fingerprints: baseline.as_ref().is_some_and(|(b, _)| b.is_v1()),
    };
    // A bar only on an interactive stderr, never under -q, never mixed into stdout.
    let bar = (!args.quiet && std::io::stderr().is_terminal()).then(Bar::new);
    let progress: &dyn Progress = match &bar {
        Some(b) => b,
        None => &Silent,
    };
    let mut report = match analyze_with_progress(&opts, rules, progress) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    report.findings.retain(|f| {
        let c = match f.confidence.as_str() {
            "high" => MinConfidence::High,
            "medium" => MinConfidence::Medium,
            _ => MinConfidence::Low,
        };
        c >= args.min_confidence
    });
    if let Some(path) = &args.write_baseline {
        let baseline = Baseline::from_report(&report);
        return match std::fs::write(path, baseline.to_json()) {
            Ok(()) => {
                eprintln!(
                    "nonblock: wrote {} findings to the baseline {}",
                    baseline.findings.len(),
                    path.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                ExitCode::from(2)
            }
        };
    }
    if let Some((b, path)) = &baseline {
        b.apply(&mut report, path);
        if b.is_v1() && !args.quiet {
            eprintln!(
                "nonblock: baseline {path} has v1 fingerprints (one per async caller); they were \
                 matched to today's findings. Rewrite it with --write-baseline to store v2 ones"
            );
        }
    }
    let format = args.format.unwrap_or(OutputFormat::Human);
    let rendered = match message_format {
        Some(message_format) => {
            // cargo's messages name packages by id, which the report does not carry.
            let members = match Members::load(args.manifest_path.as_deref()) {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let sources = DiskSources {
                workspace_root: members.workspace_root().to_path_buf(),
            };
            let success = exit_status(&report, args.fail_on) == 0;
            cargo_messages::render(&report, rules, &members, &sources, message_format, success)
        }
        None => {
            let workspace_root = workspace_root(args);
            match format {
                OutputFormat::Json => report.to_json(),
                OutputFormat::Human => human::render_with(
                    &report,
                    &DiskSources { workspace_root },
                    styled,
                    human::Detail {
                        every_gap: args.verbose > 0,
                        summary: !args.quiet,
                    },
                ),
                OutputFormat::Sarif => {
                    let roots = sarif::Roots::detect(&workspace_root);
                    sarif::render(&report, rules, &roots, &DiskSources { workspace_root })
                }
                OutputFormat::Github => {
                    github::render(&report, rules, &sarif::Roots::detect(&workspace_root))
                }
                OutputFormat::Summary => {
                    summary::render(&report, rules, &sarif::Roots::detect(&workspace_root))
                }
            }
        }
    };
    let written = match &args.output {
        Some(path) => std::fs::write(path, &rendered)
            .map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(rendered.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| format!("cannot write to stdout: {e}"))
        }
    };
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let report_on_stdout =
        args.output.is_none() && message_format.is_none() && format == OutputFormat::Human;
    if !args.quiet && !report_on_stdout {
        eprintln!("{}", human::summary_line(&report));
    }
    if args.verbose > 0 {
        print_verbose(&report);
    }
    ExitCode::from(exit_status(&report, args.fail_on))
}

/// The `--message-format` asked for: `None` for `human` (the report, as `--format` says).
/// Combinations follow cargo's rules: `json-diagnostic-*` imply `json`, and `human`, `short`
/// and JSON exclude each other. cargo's messages replace the report, so an explicit `--format`
/// beside them is refused rather than ignored.
fn message_format(args: &ScanArgs, styled: bool) -> Result<Option<MessageFormat>, String> {
    use MessageFormatArg as M;
    let name = |m: &M| {
        m.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    };
    let given = &args.message_format;
    let kind = |m: &M| match m {
        M::Human => 0,
        M::Short => 1,
        M::Json | M::JsonDiagnosticShort | M::JsonDiagnosticRenderedAnsi => 2,
    };
    if let Some(first) = given.first() {
        if let Some(other) = given.iter().find(|m| kind(m) != kind(first)) {
            return Err(format!(
                "--message-format {} and {} cannot be combined: choose human, short or json",
                name(first),
                name(other)
            ));
        }
    }
    let chosen = match given.first() {
        None | Some(M::Human) => return Ok(None),
        Some(M::Short) => MessageFormat::Short { styled },
        Some(_) => MessageFormat::Json {
            short: given.contains(&M::JsonDiagnosticShort),
            ansi: given.contains(&M::JsonDiagnosticRenderedAnsi),
        },
    };
    if let Some(format) = args.format {
        let names: Vec<String> = given.iter().map(name).collect();
        return Err(format!(
            "--message-format {} prints cargo's messages instead of the report that --format {} \
             formats: use one or the other",
            names.join(","),
            format
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default()
        ));
    }
    Ok(Some(chosen))
}

fn workspace_root(args: &ScanArgs) -> PathBuf {
    // Findings' workspace files are relative to the workspace root; cargo metadata knows it, and
    // the report does not carry it, so ask cargo's locate-project the same way cargo does.
    let mut cmd =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["locate-project", "--workspace", "--message-format", "plain"]);
    if let Some(p) = &args.manifest_path {
        cmd.arg("--manifest-path").arg(p);
    }
    cmd.output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| PathBuf::from(s.trim()).parent().map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."))
}

fn print_verbose(report: &Report) {
    let s = &report.stats;
    eprintln!(
        "nonblock: {} packages, {} files, {} bytes, {} functions, {} async contexts",
        s.packages, s.files, s.bytes, s.functions, s.async_contexts
    );
    eprintln!(
        "nonblock: {} functions reachable from async roots resolved, {} call edges in them",
        s.functions_resolved, s.call_edges
    );
    let share = |part: usize, whole: usize| {
        if whole == 0 {
            0.0
        } else {
            part as f64 * 100.0 / whole as f64
        }
    };
    eprintln!(
        "nonblock: {} unresolved call expressions ({:.1}% of {} call expressions; {:.1}% of \
         call edges + unresolved)",
        s.unresolved_calls,
        share(s.unresolved_calls, s.resolved_calls + s.unresolved_calls),
        s.resolved_calls + s.unresolved_calls,
        share(s.unresolved_calls, s.call_edges + s.unresolved_calls)
    );
    for (why, n) in &s.unresolved_by_reason {
        eprintln!("    {why}: {n}");
    }
    for (phase, secs) in &s.phases {
        eprintln!("nonblock: phase {phase}: {secs:.3}s");
    }
    if report.library_models.is_empty() {
        eprintln!("nonblock: no package declares a model ([package.metadata.nonblock])");
    }
    for m in &report.library_models {
        eprintln!(
            "nonblock: model declared by {} ({}):",
            m.package, m.manifest
        );
        for line in m.describe() {
            eprintln!("    {line}");
        }
    }
    let c = report.cache;
    if c.report_reused {
        eprintln!("nonblock: cache: report reused (no source, manifest, rule or option changed)");
    } else {
        eprintln!(
            "nonblock: cache: {} crates reused, {} parsed ({} changed since cached), {} corrupted entries rebuilt",
            c.hits,
            c.misses + c.stale,
            c.stale,
            c.rejected
        );
        eprintln!(
            "nonblock: cache: {} functions' resolutions reused",
            c.resolutions_reused
        );
        if c.memo_mismatches > 0 {
            eprintln!(
                "nonblock: cache: {} reused resolutions differ from a fresh one",
                c.memo_mismatches
            );
        }
    }
    eprintln!("nonblock: total {:.3}s", s.seconds);
}

/// The exit status: 0 clean, 1 findings (or notices) at or above `fail_on`, 2 an internal error.
/// Unused suppressions, stale baseline entries and member source files that could not be read or
/// parsed (`Diagnostic::fails_the_run`: part of the user's code went unanalysed) count as
/// warnings.
/// A caught internal error (a panic in the analyzer) always exits 2: part of the graph went
/// unanalysed, so a clean result would be a lie.
fn exit_status(report: &Report, fail_on: FailOn) -> u8 {
    if report.stats.internal_errors > 0 {
        return 2;
    }
    let failing = report.findings.iter().any(|f| match fail_on {
        FailOn::Never => false,
        FailOn::Error => f.severity == "error",
        FailOn::Warning => true,
    }) || (fail_on == FailOn::Warning
        && (!report.notices.is_empty() || report.errors.iter().any(|e| e.fails_the_run())));
    u8::from(failing)
}

/// The terminal progress bar: crates parsed as a bar, other phases as a spinner message.
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new() -> Bar {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(0),
            indicatif::ProgressDrawTarget::stderr(),
        );
        bar.set_style(Bar::spinner());
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Bar(bar)
    }

    fn spinner() -> indicatif::ProgressStyle {
        indicatif::ProgressStyle::with_template("{spinner} nonblock: {msg}")
            .expect("static template")
    }

    fn counted() -> indicatif::ProgressStyle {
        indicatif::ProgressStyle::with_template(
            "{spinner} nonblock: {msg} [{bar:30}] {pos}/{len} crates",
        )
        .expect("static template")
        .progress_chars("=> ")
    }
}

impl Progress for Bar {
    fn phase(&self, name: &'static str, total: usize) {
        self.0.set_style(if total > 0 {
            Bar::counted()
        } else {
            Bar::spinner()
        });
        self.0.set_message(name);
        self.0.set_length(total as u64);
        self.0.set_position(0);
    }
    fn advance(&self) {
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

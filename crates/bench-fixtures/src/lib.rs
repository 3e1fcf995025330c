//! Confirmation fixtures for cargo-nonblock: run every flagged pattern on a real multi-thread
//! runtime and show the starvation it causes.
//!
//! * [`scenarios::seeds`] re-implements the seed articles' demos (`demo_panic`,
//!   `demo_load_ramp`, `demo_per_request`, the scheduling-overhead benchmark), also available as
//!   binaries with the seeds' names and flags, and the later seeds' workloads: thread-pool
//!   starvation ([`scenarios::pool`]), the inject queue ([`scenarios::inject`]) and CPU work
//!   across runtimes ([`scenarios::cross_runtime`]).
//! * [`scenarios::category`] runs one workload per rule category with a *real* API of that
//!   category, next to the same work done the right way, while a probe measures the scheduling
//!   delay of unrelated tasks.
//! * [`verdict`] turns noisy runs into a robust `healthy` / `starved` verdict over fresh runtimes.
//!
//! The `cargo nonblock confirm` subcommand is [`ConfirmArgs`] + [`run_confirm`]; the `confirm`
//! binary of this crate is the same thing standalone.

pub mod doc;
pub mod plot;
pub mod probe;
pub mod report;
pub mod runtime;
pub mod scenarios;
pub mod servers;
pub mod verdict;

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use report::{ConfirmReport, Machine};
pub use scenarios::category::{
    category, category_of_rule, CategoryConfig, CategorySpec, CATEGORIES,
};
pub use scenarios::seeds::SeedSweep;
pub use scenarios::ScenarioResult;
pub use verdict::{Summary, Verdict};

/// Arguments of `cargo nonblock confirm` (and of this crate's `confirm` binary).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["target", "all"])))]
pub struct ConfirmArgs {
    /// What to confirm: a rule category (fs, sleep, net, http-blocking, db-sync, process,
    /// sync-prims, block-on, stdio, ffi, cpu), a rule id (NB0101: its category), `seeds`, or one
    /// seed demo (demo_panic, demo_load_ramp, demo_per_request, sched_overhead, pool_starvation,
    /// inject_queue, cross_runtime)
    pub target: Option<String>,

    /// Confirm everything: the seed demos and every category
    #[arg(long)]
    pub all: bool,

    /// Worker threads of the runtime under test
    #[arg(long, default_value_t = 4, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=256))]
    pub workers: usize,

    /// Fresh runtimes per scenario: a scenario is starved when at least half of its runs are (the
    /// table shows the spread)
    #[arg(long, default_value_t = 10, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub runs: usize,

    /// Write SVG charts into DIR
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// Write the full markdown report (the format of docs/confirmation.md) to FILE
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// CI-sized scenarios: fewer sweep points and shorter workloads, far from the threshold
    #[arg(long)]
    pub quick: bool,

    /// Wall-time budget per seed point, in seconds: points whose runs would exceed it get fewer
    /// runs (at least one). The 2000-concurrent per-request point takes minutes per run.
    #[arg(long, default_value_t = 40, value_name = "SECS")]
    pub budget: u64,

    /// No progress lines on stderr
    #[arg(long, short)]
    pub quiet: bool,
}

impl ConfirmArgs {
    /// Arguments for confirming `target` with defaults otherwise (for callers that do not parse).
    pub fn for_target(target: &str) -> ConfirmArgs {
        ConfirmArgs {
            target: Some(target.to_string()),
            all: false,
            workers: 4,
            runs: 10,
            plot: None,
            markdown: None,
            quick: false,
            budget: 40,
            quiet: false,
        }
    }
}

/// Runs `confirm` as both front ends do (`cargo nonblock confirm` and this crate's `confirm`
/// binary): the table and the files written on stdout, errors on stderr. Returns the exit code:
/// 0 when every confirmation held, 1 when one did not, 2 on usage or output errors.
pub fn confirm_command(args: &ConfirmArgs) -> u8 {
    match run_confirm(args) {
        Ok(report) => {
            print!("{report}");
            for p in &report.plots {
                println!("wrote {}", p.display());
            }
            if let Some(md) = &args.markdown {
                println!("wrote {}", md.display());
            }
            if report.all_as_expected() {
                0
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// A short description of a category's confirmation scenario (what `explain` prints), by
/// category name (`fs`) or rule id (`NB0101`).
pub fn confirmation_name(category_or_rule: &str) -> Option<&'static str> {
    scenarios::category::category(category_or_rule)
        .or_else(|| scenarios::category::category_of_rule(category_or_rule))
        .map(|c| c.confirmation)
}

/// What a `confirm` target resolved to.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Seed(SeedSweep),
    Category(&'static CategorySpec),
}

impl Target {
    pub fn name(&self) -> &'static str {
        match self {
            Target::Seed(s) => s.name(),
            Target::Category(c) => c.name,
        }
    }
}

/// Errors of [`run_confirm`].
#[derive(Debug)]
pub enum ConfirmError {
    /// The target is neither a category, a rule id, `seeds` nor a seed demo.
    UnknownTarget(String),
    /// Writing the plots or the markdown failed.
    Output { path: PathBuf, message: String },
}

impl fmt::Display for ConfirmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfirmError::UnknownTarget(t) => write!(
                f,
                "unknown confirm target `{t}`: expected a category ({}), a rule id such as NB0101, \
                 `seeds`, or a seed demo ({})",
                CATEGORIES.iter().map(|c| c.name).collect::<Vec<_>>().join(", "),
                SeedSweep::ALL.map(SeedSweep::name).join(", ")
            ),
            ConfirmError::Output { path, message } => {
                write!(f, "cannot write {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for ConfirmError {}

/// Resolves the arguments to the scenarios to run, in table order (seeds first).
pub fn resolve_targets(args: &ConfirmArgs) -> Result<Vec<Target>, ConfirmError> {
    let seeds = || SeedSweep::ALL.into_iter().map(Target::Seed);
    let categories = || CATEGORIES.iter().map(Target::Category);
    if args.all {
        return Ok(seeds().chain(categories()).collect());
    }
    let Some(raw) = args.target.as_deref() else {
        return Err(ConfirmError::UnknownTarget(String::new()));
    };
    let t = raw.trim();
    if t.eq_ignore_ascii_case("seeds") || t.eq_ignore_ascii_case("seed") {
        return Ok(seeds().collect());
    }
    if let Some(s) = SeedSweep::from_name(&t.to_ascii_lowercase()) {
        return Ok(vec![Target::Seed(s)]);
    }
    if let Some(c) = scenarios::category::category(t) {
        return Ok(vec![Target::Category(c)]);
    }
    let looks_like_rule = t.len() >= 4 && t.get(..2).is_some_and(|p| p.eq_ignore_ascii_case("NB"));
    if looks_like_rule {
        if let Some(c) = scenarios::category::category_of_rule(t) {
            return Ok(vec![Target::Category(c)]);
        }
    }
    Err(ConfirmError::UnknownTarget(raw.to_string()))
}

/// Runs the scenarios `args` selects and returns the report (print it with `{}` for the table).
/// Writes the SVGs (`--plot`) and the markdown (`--markdown`) when asked. Progress goes to stderr
/// unless `--quiet`.
pub fn run_confirm(args: &ConfirmArgs) -> Result<ConfirmReport, ConfirmError> {
    let mut progress = |line: &str| {
        if !args.quiet {
            eprintln!("confirm: {line}");
        }
    };
    run_confirm_with(args, &mut progress)
}

/// [`run_confirm`] with a custom progress sink.
pub fn run_confirm_with(
    args: &ConfirmArgs,
    progress: &mut dyn FnMut(&str),
) -> Result<ConfirmReport, ConfirmError> {
    let targets = resolve_targets(args)?;
    let started = Instant::now();
    let mut machine = Machine::detect();
    let workers = args.workers.max(1);
    let runs = args.runs.max(1);
    let budget = Duration::from_secs(args.budget.max(1));
    let category_cfg = if args.quick {
        CategoryConfig::quick(workers)
    } else {
        CategoryConfig::full(workers)
    };

    let mut results = Vec::new();
    for target in targets {
        match target {
            Target::Seed(sweep) => {
                for point in sweep.points(workers, args.quick) {
                    let n = point.runs_within(runs, budget);
                    results.push(point.run(n, progress));
                }
            }
            Target::Category(spec) => {
                results.extend(scenarios::category::run_category(
                    spec,
                    &category_cfg,
                    runs,
                    progress,
                ));
            }
        }
    }
    machine.load_after = report::load_average();
    let mut report = ConfirmReport {
        workers,
        runs,
        quick: args.quick,
        results,
        machine,
        elapsed_s: started.elapsed().as_secs_f64(),
        plots: Vec::new(),
    };
    if let Some(dir) = &args.plot {
        report.plots = plot::write_plots(&report, dir).map_err(|message| ConfirmError::Output {
            path: dir.clone(),
            message,
        })?;
    }
    if let Some(path) = &args.markdown {
        let text = doc::confirmation_doc(&report, path);
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| ConfirmError::Output {
                path: parent.to_path_buf(),
                message: e.to_string(),
            })?;
        }
        std::fs::write(path, text).map_err(|e| ConfirmError::Output {
            path: path.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: ConfirmArgs,
    }

    fn parse(argv: &[&str]) -> Result<ConfirmArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("confirm").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn arguments_parse_with_the_documented_defaults() {
        let a = parse(&["fs"]).unwrap();
        assert_eq!(a, ConfirmArgs::for_target("fs"));
        let a = parse(&[
            "--all",
            "--workers",
            "2",
            "--runs",
            "3",
            "--plot",
            "out",
            "--quick",
        ])
        .unwrap();
        assert!(a.all && a.quick);
        assert_eq!((a.workers, a.runs), (2, 3));
        assert_eq!(a.plot, Some(PathBuf::from("out")));
    }

    #[test]
    fn a_target_or_all_is_required_but_not_both() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["fs", "--all"]).is_err());
        assert!(parse(&["fs", "--workers", "0"]).is_err());
    }

    #[test]
    fn targets_resolve_by_category_rule_id_and_seed_name() {
        let names = |t: &str| -> Vec<&str> {
            resolve_targets(&ConfirmArgs::for_target(t))
                .unwrap()
                .iter()
                .map(Target::name)
                .collect()
        };
        assert_eq!(names("fs"), ["fs"]);
        assert_eq!(names("NB0402"), ["http-blocking"]);
        assert_eq!(names("nb1001"), ["ffi"]);
        assert_eq!(names("db_sync"), ["db-sync"]);
        assert_eq!(
            names("seeds"),
            [
                "demo_panic",
                "demo_load_ramp",
                "demo_per_request",
                "sched_overhead",
                "pool_starvation",
                "inject_queue",
                "cross_runtime"
            ]
        );
        assert_eq!(names("pool-starvation"), ["pool_starvation"]);
        assert_eq!(names("per_request"), ["demo_per_request"]);
        let err = resolve_targets(&ConfirmArgs::for_target("NB99")).unwrap_err();
        assert!(err.to_string().contains("unknown confirm target `NB99`"));
        let mut all = ConfirmArgs::for_target("x");
        all.target = None;
        all.all = true;
        assert_eq!(resolve_targets(&all).unwrap().len(), 7 + 11);
    }

    #[test]
    fn every_category_and_rule_id_has_a_confirmation_name() {
        for c in CATEGORIES.iter() {
            let by_name = confirmation_name(c.name).unwrap();
            let by_rule = confirmation_name(&format!("{}01", c.rule_prefix)).unwrap();
            assert_eq!(by_name, by_rule);
            assert!(by_name.contains(" vs "), "{by_name}");
        }
        assert_eq!(confirmation_name("runtime"), None);
        assert_eq!(confirmation_name("NB1201"), None);
    }
}

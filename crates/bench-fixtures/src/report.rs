//! Rendering results: the plain-text table `confirm` prints and the markdown of
//! `docs/confirmation.md`.

use std::fmt::{self, Write as _};
use std::path::PathBuf;

use crate::scenarios::category::{category, CATEGORIES};
use crate::scenarios::ScenarioResult;
use crate::scenarios::{cross_runtime, inject, pool};
use crate::verdict::{Verdict, FAILURE_STARVED, MEDIAN_STARVED_US, P50_FLOOR_US, RATIO_STARVED};

/// Everything one `confirm` invocation measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmReport {
    pub workers: usize,
    /// Runs requested per scenario (expensive seed points may have fewer; see each summary).
    pub runs: usize,
    pub quick: bool,
    pub results: Vec<ScenarioResult>,
    pub machine: Machine,
    /// Wall time of the whole invocation, seconds.
    pub elapsed_s: f64,
    /// SVG files written by `--plot`.
    pub plots: Vec<PathBuf>,
}

/// A category's pair of results and whether the confirmation held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CategoryPair<'a> {
    pub name: &'static str,
    pub blocking: &'a ScenarioResult,
    pub alternative: &'a ScenarioResult,
}

impl CategoryPair<'_> {
    /// Starved with the blocking API and healthy with the alternative (`None` if a side failed
    /// to run).
    pub fn confirmed(&self) -> Option<bool> {
        if self.blocking.error.is_some() || self.alternative.error.is_some() {
            return None;
        }
        Some(
            self.blocking.summary.verdict() == Verdict::Starved
                && self.alternative.summary.verdict() == Verdict::Healthy,
        )
    }
}

impl ConfirmReport {
    /// Results of one seed sweep (`demo_panic`, ...), in run order.
    pub fn group(&self, group: &str) -> Vec<&ScenarioResult> {
        self.results.iter().filter(|r| r.group == group).collect()
    }

    /// The category pairs present in the report, in rule-id order.
    pub fn category_pairs(&self) -> Vec<CategoryPair<'_>> {
        CATEGORIES
            .iter()
            .filter_map(|c| {
                let find = |v: &str| {
                    let id = format!("category/{}/{v}", c.name);
                    self.results.iter().find(|r| r.id == id)
                };
                Some(CategoryPair {
                    name: c.name,
                    blocking: find("blocking")?,
                    alternative: find("alternative")?,
                })
            })
            .collect()
    }

    /// True when every category ran and was confirmed, and every seed point with a published
    /// number got the published verdict. The CLI can use this for its exit code.
    pub fn all_as_expected(&self) -> bool {
        self.category_pairs()
            .iter()
            .all(|p| p.confirmed() == Some(true))
            && self
                .results
                .iter()
                .all(|r| r.error.is_none() && r.matches_published() != Some(false))
    }

    fn seed_groups(&self) -> Vec<&str> {
        let mut groups: Vec<&str> = Vec::new();
        for r in &self.results {
            if r.group != "category" && !groups.contains(&r.group.as_str()) {
                groups.push(&r.group);
            }
        }
        groups
    }

    /// Per seed group whose scenarios record figures ([`crate::verdict::RunOutcome::figures`]),
    /// a table of them: a column per figure present.
    fn figure_tables(&self) -> Vec<FigureTable<'_>> {
        let mut tables = Vec::new();
        for group in self.seed_groups() {
            let results: Vec<&ScenarioResult> = self
                .group(group)
                .into_iter()
                .filter(|r| r.error.is_none())
                .collect();
            let shown: Vec<&(&str, &str, usize)> = FIGURE_FORMATS
                .iter()
                .filter(|(name, _, _)| results.iter().any(|r| r.figure(name).n > 0))
                .collect();
            if shown.is_empty() {
                continue;
            }
            let mut header = vec!["scenario"];
            header.extend(shown.iter().map(|f| f.1));
            let rows = results
                .iter()
                .map(|r| {
                    let mut row = vec![r.label.clone()];
                    row.extend(
                        shown
                            .iter()
                            .map(|(name, _, decimals)| r.figure(name).show(*decimals)),
                    );
                    row
                })
                .collect();
            tables.push(FigureTable {
                group,
                header,
                rows,
            });
        }
        tables
    }

    /// The plain-text table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} worker(s) on {} CPU(s); verdict = starved runs / runs; spread = median [min–max] over runs",
            self.workers, self.machine.cpus
        );
        let seed_rows: Vec<Vec<String>> = self
            .seed_groups()
            .iter()
            .flat_map(|g| self.group(g))
            .map(seed_row)
            .collect();
        if !seed_rows.is_empty() {
            out.push('\n');
            out.push_str(&text_table(&SEED_HEADER, &seed_rows));
        }
        for t in self.figure_tables() {
            let _ = writeln!(out, "\n{} (median [min–max] over runs)", t.group);
            out.push_str(&text_table(&t.header, &t.rows));
        }
        let cat_rows: Vec<Vec<String>> = self
            .category_pairs()
            .iter()
            .flat_map(category_rows)
            .collect();
        let failed: Vec<&ScenarioResult> =
            self.results.iter().filter(|r| r.error.is_some()).collect();
        if !cat_rows.is_empty() {
            out.push('\n');
            out.push_str(&text_table(&CATEGORY_HEADER, &cat_rows));
        }
        if !seed_rows.is_empty() || !cat_rows.is_empty() {
            out.push('\n');
            out.push_str(&column_legend(!seed_rows.is_empty(), !cat_rows.is_empty()));
        }
        for r in failed {
            let _ = writeln!(
                out,
                "not run: {}: {}",
                r.id,
                r.error.as_deref().unwrap_or("")
            );
        }
        let _ = writeln!(out, "\n{:.0} s in total", self.elapsed_s);
        out
    }

    /// The measured-results part of `docs/confirmation.md` (tables, plots, mismatches), to be
    /// wrapped by [`crate::doc::confirmation_doc`].
    pub fn markdown_tables(&self) -> String {
        let mut out = String::new();
        let groups = self.seed_groups();
        if !groups.is_empty() {
            out.push_str("### Seed demos\n\n");
            let rows: Vec<Vec<String>> = groups
                .iter()
                .flat_map(|g| self.group(g))
                .map(seed_row)
                .collect();
            out.push_str(&markdown_table(&SEED_HEADER, &rows));
            out.push('\n');
        }
        for t in self.figure_tables() {
            let _ = writeln!(
                out,
                "#### {}: what seed {} measures (median [min–max] over runs)\n",
                t.group,
                crate::SeedSweep::from_name(t.group).map_or("?", |s| s.seed())
            );
            out.push_str(&markdown_table(&t.header, &t.rows));
            out.push('\n');
        }
        let pairs = self.category_pairs();
        if !pairs.is_empty() {
            out.push_str("### Rule categories\n\n");
            let rows: Vec<Vec<String>> = pairs.iter().flat_map(category_rows).collect();
            out.push_str(&markdown_table(&CATEGORY_HEADER, &rows));
            out.push('\n');
        }
        let failed: Vec<&ScenarioResult> =
            self.results.iter().filter(|r| r.error.is_some()).collect();
        if !failed.is_empty() {
            out.push_str("Scenarios that could not run:\n\n");
            for r in failed {
                let _ = writeln!(out, "- `{}`: {}", r.id, r.error.as_deref().unwrap_or(""));
            }
            out.push('\n');
        }
        let mismatches: Vec<&ScenarioResult> = self
            .results
            .iter()
            .filter(|r| r.matches_published() == Some(false))
            .collect();
        out.push_str("### Where the measured verdict differs from the seed\n\n");
        if mismatches.is_empty() {
            out.push_str(
                "None: every seed point with a published number got the published verdict.\n\n",
            );
        } else {
            for r in mismatches {
                let p = r.published.expect("mismatch implies a published number");
                let _ = writeln!(
                    out,
                    "- `{}`: published {} ({} by {}); measured {} by {} in {} of {} runs, failures {} %, p99 {} ms.",
                    r.id,
                    p.text,
                    p.expect,
                    p.signal,
                    r.summary.verdict_by(p.signal),
                    p.signal,
                    match p.signal {
                        crate::verdict::Signal::Failures => r.summary.starved_by_failures,
                        crate::verdict::Signal::Tail => r.summary.starved_by_tail,
                    },
                    r.summary.runs,
                    r.summary.failure_pct.show(1),
                    r.summary.p99_ms.show(1)
                );
            }
            out.push('\n');
        }
        out
    }
}

impl fmt::Display for ConfirmReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table())
    }
}

/// A table of one seed group's figures: its columns and a row per scenario.
struct FigureTable<'a> {
    group: &'a str,
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

/// How the later seeds' figures ([`crate::verdict::RunOutcome::figures`]) are shown: name,
/// column, decimals.
const FIGURE_FORMATS: [(&str, &str, usize); 8] = [
    (pool::figure::TOTAL_MS, "total ms", 0),
    (pool::figure::FS_READ_MS, "fs::read meanwhile ms", 2),
    (pool::figure::FS_READ_MAX_MS, "fs::read max ms", 1),
    (pool::figure::PROBE_P99_MS, "timer probe p99 ms", 1),
    (inject::figure::BURST_MS, "last task started ms", 2),
    (cross_runtime::figure::IO_P50_MS, "io request p50 ms", 1),
    (cross_runtime::figure::IO_MAX_MS, "slowest io request ms", 0),
    (
        cross_runtime::figure::VIA_CPU_PCT,
        "io requests on a cpu-runtime connection %",
        0,
    ),
];

const SEED_HEADER: [&str; 11] = [
    "demo",
    "scenario",
    "runs",
    "verdict",
    "starved by failures · delay",
    "failures %",
    "p50 ms",
    "p99 ms",
    "p99:p50",
    "max blocked (sat.)",
    "seed (match)",
];

const CATEGORY_HEADER: [&str; 9] = [
    "category",
    "variant",
    "runs",
    "verdict",
    "failures %",
    "p99 ms",
    "p99:p50",
    "max blocked (sat.)",
    "confirmed",
];

fn blocked(r: &ScenarioResult) -> String {
    if r.runs.is_empty() {
        return "–".into();
    }
    format!(
        "{}/{} ({}/{})",
        r.summary.peak_blocked.show(0),
        r.workers,
        r.summary.saturated_runs,
        r.summary.runs
    )
}

fn seed_row(r: &ScenarioResult) -> Vec<String> {
    let s = &r.summary;
    if let Some(e) = &r.error {
        return vec![
            r.group.clone(),
            r.label.clone(),
            "0".into(),
            format!("not run: {e}"),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
            "".into(),
        ];
    }
    let seed = match (r.published, r.matches_published()) {
        (Some(p), Some(true)) => format!("{} (yes)", p.text),
        (Some(p), Some(false)) => format!("{} (NO)", p.text),
        (Some(p), None) => p.text.to_string(),
        (None, _) => String::new(),
    };
    vec![
        r.group.clone(),
        r.label.clone(),
        s.runs.to_string(),
        s.verdict_text(),
        format!("{} · {}", s.starved_by_failures, s.starved_by_tail),
        s.failure_pct.show(1),
        s.p50_ms.show(2),
        s.p99_ms.show(1),
        format!("{:.1}", s.ratio.median),
        blocked(r),
        seed,
    ]
}

fn category_rows(p: &CategoryPair<'_>) -> Vec<Vec<String>> {
    let confirmed = match p.confirmed() {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "not run",
    };
    let prefix = category(p.name).map_or("", |c| c.rule_prefix);
    [p.blocking, p.alternative]
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let s = &r.summary;
            let name = if i == 0 {
                format!("{} ({prefix}xx)", p.name)
            } else {
                String::new()
            };
            let variant = r.label.split_once(": ").map_or(r.label.as_str(), |x| x.1);
            if let Some(e) = &r.error {
                return vec![
                    name,
                    variant.to_string(),
                    "0".into(),
                    format!("not run: {e}"),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    if i == 0 {
                        confirmed.into()
                    } else {
                        String::new()
                    },
                ];
            }
            vec![
                name,
                variant.to_string(),
                s.runs.to_string(),
                s.verdict_text(),
                s.failure_pct.show(1),
                s.p99_ms.show(1),
                format!("{:.1}", s.ratio.median),
                blocked(r),
                if i == 0 {
                    confirmed.into()
                } else {
                    String::new()
                },
            ]
        })
        .collect()
}

fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(cell);
            if i + 1 < widths.len() {
                s.push_str(&" ".repeat(w - cell.chars().count()));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
    out.push('\n');
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!("| {} |\n", header.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| esc(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// One run in one line, for the demo binaries: failures, overhead and where the blockers ran.
pub fn describe_run(o: &crate::verdict::RunOutcome, workers: usize) -> String {
    let mut line = format!(
        "{} ops, {} timed out ({:.1} %), overhead p50 {:.2} ms p99 {:.1} ms max {:.1} ms (p99:p50 {:.1}) -> {}",
        o.ops,
        o.failed,
        o.failure_fraction() * 100.0,
        o.p50_us as f64 / 1e3,
        o.p99_us as f64 / 1e3,
        o.max_us as f64 / 1e3,
        o.ratio(),
        o.verdict()
    );
    if let Some(p) = &o.placement {
        let first = p.first_workers();
        let shown = if first.chars().count() > 60 {
            first.chars().take(60).collect::<String>() + "…"
        } else {
            first
        };
        let _ = write!(
            line,
            "; blocking on [{shown}], max {}/{workers} blocked at once, all blocked for {:.0} ms",
            p.peak_blocked, p.saturated_ms
        );
    }
    line
}

/// What each column of the terminal tables means, printed under them so that a reader of
/// `cargo nonblock confirm` needs no document to read the numbers. Only the columns of the tables
/// shown are explained.
pub fn column_legend(seed_table: bool, category_table: bool) -> String {
    let long_poll_ms = crate::scenarios::seeds::LONG_POLL.as_millis();
    let mut rows: Vec<(&str, String)> = Vec::new();
    if seed_table {
        rows.push((
            "demo, scenario",
            "the seed article's demo and its load point".into(),
        ));
    }
    if category_table {
        rows.push((
            "category, variant",
            "the rule category; first row its blocking API, second row the async alternative"
                .into(),
        ));
    }
    rows.push(("runs", "fresh runtimes measured for this row".into()));
    rows.push((
        "verdict",
        "`starved k/n` or `healthy k/n`: k of the n runs were starved; the row is starved \
         when at least half of its runs are"
            .into(),
    ));
    if seed_table {
        rows.push((
            "starved by …",
            "how many runs were starved by failures · by scheduling delay".into(),
        ));
    }
    rows.push((
        "failures %",
        format!(
            "operations that exceeded their timeout; a run with ≥ {:.0} % is starved",
            FAILURE_STARVED * 100.0
        ),
    ));
    if seed_table {
        rows.push(("p50 ms", "median scheduling delay of the probe task".into()));
    }
    rows.push((
        "p99 ms",
        "99th-percentile scheduling delay of the probe task".into(),
    ));
    rows.push((
        "p99:p50",
        format!(
            "p99 : max(p50, {} ms); a run with ≥ {:.0} : 1 (or a median delay ≥ {} ms) is starved",
            P50_FLOOR_US / 1000,
            RATIO_STARVED,
            MEDIAN_STARVED_US / 1000
        ),
    ));
    rows.push((
        "max blocked (sat.)",
        format!(
            "most workers blocked at one instant (polls ≥ {long_poll_ms} ms) / workers, and in \
             parentheses the runs in which every worker was blocked at once"
        ),
    ));
    if seed_table {
        rows.push((
            "seed (match)",
            "the figure the article published, and whether this run agrees (yes/NO)".into(),
        ));
    }
    if category_table {
        rows.push((
            "confirmed",
            "yes: the blocking API starved the runtime and the alternative did not".into(),
        ));
    }
    let width = rows
        .iter()
        .map(|(c, _)| c.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("Columns:\n");
    for (column, meaning) in rows {
        let pad = width - column.chars().count();
        let _ = writeln!(out, "  {column}{:pad$}  {meaning}", "");
    }
    out
}

/// The verdict rule, spelled out for the document and `--help`.
pub fn verdict_rule() -> String {
    format!(
        "a run is *starved* when at least {:.0} % of its operations exceed their timeout \
         (*failures*), or when the probe's scheduling overhead has p99 : max(p50, {} ms) of at \
         least {:.0} : 1 or a median of at least {} ms (*delay*); a scenario is starved when at \
         least half of its runs are",
        FAILURE_STARVED * 100.0,
        P50_FLOOR_US / 1000,
        RATIO_STARVED,
        MEDIAN_STARVED_US / 1000
    )
}

/// The machine the numbers were measured on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub kernel: String,
    /// 1-minute load average at the start and end of the run (Linux), showing competing load.
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
    /// `release` or `debug` build of the fixtures.
    pub profile: &'static str,
    /// UTC date of the run, `YYYY-MM-DD`.
    pub date: String,
}

impl Machine {
    /// Reads what is cheaply available (`/proc` on Linux; placeholders elsewhere).
    pub fn detect() -> Machine {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpu_model = read("/proc/cpuinfo")
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map_or_else(
                || std::env::consts::ARCH.to_string(),
                |(_, v)| v.trim().to_string(),
            );
        let kernel = read("/proc/sys/kernel/osrelease").trim().to_string();
        Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            kernel: if kernel.is_empty() {
                std::env::consts::OS.to_string()
            } else {
                format!("{} {kernel}", std::env::consts::OS)
            },
            load_before: load_average(),
            load_after: None,
            profile: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            date: utc_date(std::time::SystemTime::now()),
        }
    }
}

/// The 1-minute load average (Linux).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `YYYY-MM-DD` (UTC) for a system time (civil-from-days, proleptic Gregorian).
pub fn utc_date(t: std::time::SystemTime) -> String {
    let days = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::Published;
    use crate::verdict::RunOutcome;

    fn result(
        id: &str,
        group: &str,
        starved: bool,
        published: Option<Published>,
    ) -> ScenarioResult {
        let run = RunOutcome {
            ops: 100,
            failed: if starved { 50 } else { 0 },
            p50_us: 1_000,
            p99_us: if starved { 80_000 } else { 1_500 },
            ..RunOutcome::default()
        };
        ScenarioResult::new(
            id.into(),
            group,
            format!("{group}: label"),
            1.0,
            vec![run.clone(), run],
            4,
            published,
        )
    }

    fn report(results: Vec<ScenarioResult>) -> ConfirmReport {
        ConfirmReport {
            workers: 4,
            runs: 2,
            quick: true,
            results,
            machine: Machine::default(),
            elapsed_s: 1.0,
            plots: Vec::new(),
        }
    }

    #[test]
    fn categories_pair_up_and_confirm() {
        let r = report(vec![
            result("category/fs/blocking", "category", true, None),
            result("category/fs/alternative", "category", false, None),
            result("category/cpu/blocking", "category", false, None),
            result("category/cpu/alternative", "category", false, None),
        ]);
        let pairs = r.category_pairs();
        assert_eq!(pairs.len(), 2);
        assert_eq!((pairs[0].name, pairs[0].confirmed()), ("fs", Some(true)));
        assert_eq!((pairs[1].name, pairs[1].confirmed()), ("cpu", Some(false)));
        assert!(!r.all_as_expected());
        let table = r.table();
        assert!(table.contains("fs (NB01xx)"), "{table}");
        assert!(table.contains("starved 2/2"), "{table}");
        assert!(table.contains("NO"), "{table}");
    }

    #[test]
    fn the_terminal_table_explains_its_columns_and_the_half_rule() {
        let categories_only = report(vec![
            result("category/fs/blocking", "category", true, None),
            result("category/fs/alternative", "category", false, None),
        ])
        .table();
        let legend = categories_only
            .split_once("Columns:\n")
            .map(|x| x.1)
            .unwrap_or_else(|| panic!("no legend in\n{categories_only}"));
        // Every header word of the category table is named at the start of a legend line.
        let named: Vec<&str> = legend
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .map(|l| l.split("  ").next().unwrap_or(""))
            .collect();
        for column in CATEGORY_HEADER {
            assert!(
                named.iter().any(|n| n.split(", ").any(|c| c == column)),
                "column {column:?} unexplained in\n{legend}"
            );
        }
        assert!(legend.contains("at least half of its runs"), "{legend}");
        // The seed table's own columns are not explained when no seed table is shown.
        assert!(!legend.contains("seed (match)"), "{legend}");
        let seeds = report(vec![result(
            "seed/demo_panic/500t/4b",
            "demo_panic",
            true,
            None,
        )])
        .table();
        assert!(seeds.contains("  seed (match)  "), "{seeds}");
        assert!(!seeds.contains("confirmed  "), "{seeds}");
    }

    #[test]
    fn seed_mismatches_are_listed_in_the_markdown() {
        let expect_starved = Some(Published {
            text: "34 % failures",
            signal: crate::verdict::Signal::Failures,
            expect: Verdict::Starved,
        });
        let r = report(vec![result(
            "seed/demo_panic/500t/4b",
            "demo_panic",
            false,
            expect_starved,
        )]);
        assert!(!r.all_as_expected());
        let md = r.markdown_tables();
        assert!(md.contains("| demo | scenario |"), "{md}");
        assert!(md.contains("34 % failures (NO)"), "{md}");
        assert!(
            md.contains("`seed/demo_panic/500t/4b`: published 34 % failures"),
            "{md}"
        );
        let ok = report(vec![result(
            "seed/demo_panic/500t/4b",
            "demo_panic",
            true,
            expect_starved,
        )]);
        assert!(ok.all_as_expected());
        assert!(ok.markdown_tables().contains("None: every seed point"));
    }

    #[test]
    fn failed_scenarios_are_reported_not_dropped() {
        let r = report(vec![
            ScenarioResult::failed(
                "category/fs/blocking".into(),
                "category",
                "fs: x".into(),
                "no fifo".into(),
            ),
            ScenarioResult::failed(
                "category/fs/alternative".into(),
                "category",
                "fs: y".into(),
                "no fifo".into(),
            ),
        ]);
        assert_eq!(r.category_pairs()[0].confirmed(), None);
        assert!(!r.all_as_expected());
        assert!(r.table().contains("not run: category/fs/blocking: no fifo"));
    }

    #[test]
    fn utc_dates() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29"
        );
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(1_767_225_599)),
            "2025-12-31"
        );
    }

    #[test]
    fn the_verdict_rule_names_the_thresholds() {
        let rule = verdict_rule();
        assert!(
            rule.contains("1 %")
                && rule.contains("20 : 1")
                && rule.contains("1 ms")
                && rule.contains("20 ms"),
            "{rule}"
        );
    }
}

//! SVG charts (plotters, SVG backend only: no font or image dependencies).
//!
//! * the seed cliffs: failure % against blockers, async load and concurrency; scheduling-overhead
//!   p99 (and p50) against blockers;
//! * the later seeds: pool starvation's total time and `tokio::fs::read` latency per way of
//!   waiting; the inject queue's start latency against blocked workers per spawn path and load;
//!   the cross-runtime I/O latency per isolation of the CPU work;
//! * the categories: probe p99 with the blocking API vs the alternative, all categories in one
//!   chart, and per category the whole delay profile (p50 … max).
//!
//! Every point is the median over runs; the bars span min–max, so the spread is visible.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::report::ConfirmReport;
use crate::scenarios::ScenarioResult;
use crate::verdict::{Spread, PROFILE_PCTS};

const SIZE: (u32, u32) = (900, 520);
const BLOCKING: RGBColor = RGBColor(200, 40, 40);
const ALTERNATIVE: RGBColor = RGBColor(30, 110, 200);
const PALETTE: [RGBColor; 4] = [
    RGBColor(30, 110, 200),
    RGBColor(200, 40, 40),
    RGBColor(40, 150, 60),
    RGBColor(150, 80, 180),
];

/// Writes every chart the report has data for into `dir`; returns the files written.
pub fn write_plots(report: &ConfirmReport, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let workers = report.workers;
    let seeds: [(&str, &str, &str, bool); 3] = [
        (
            "demo_panic",
            "demo_panic: failures against blocking tasks",
            "blocking tasks",
            false,
        ),
        (
            "demo_load_ramp",
            "demo_load_ramp: failures against async load (3 blockers)",
            "async tasks",
            true,
        ),
        (
            "demo_per_request",
            "demo_per_request: failures against concurrency (30 % block 50 ms)",
            "concurrent requests",
            true,
        ),
    ];
    for (group, title, x_desc, log_x) in seeds {
        let results = ok_results(report.group(group));
        if results.is_empty() {
            continue;
        }
        let path = dir.join(format!("seed_{group}.svg"));
        let title = format!("{title}, {workers} workers");
        failure_chart(&path, &title, x_desc, log_x, &results).map_err(|e| e.to_string())?;
        written.push(path);
    }
    let overhead = ok_results(report.group("sched_overhead"));
    if !overhead.is_empty() {
        let path = dir.join("seed_sched_overhead.svg");
        let axes = DelayAxes {
            title: format!(
                "Scheduling overhead of sleep(10 ms) against blockers, {workers} workers"
            ),
            x_desc: "blocking tasks (std::thread::sleep 50 ms)",
            y_desc: "overhead, ms (log; median, min–max)",
        };
        delay_chart(&path, &axes, &overhead).map_err(|e| e.to_string())?;
        written.push(path);
    }
    let pool = ok_results(report.group("pool_starvation"));
    if !pool.is_empty() {
        use crate::scenarios::pool::figure;
        let path = dir.join("seed_pool_starvation.svg");
        let title = format!(
            "pool_starvation: {} waits, {workers} workers",
            pool[0].series
        );
        let bars = Bars {
            title: &title,
            y_desc: "ms (log; median, min–max)",
            series: &[
                ("total time", figure::TOTAL_MS),
                ("tokio::fs::read meanwhile: median", figure::FS_READ_MS),
                ("tokio::fs::read meanwhile: slowest", figure::FS_READ_MAX_MS),
            ],
        };
        bar_chart(&path, &bars, &pool).map_err(|e| e.to_string())?;
        written.push(path);
    }
    let inject: Vec<&ScenarioResult> = ok_results(report.group("inject_queue"))
        .into_iter()
        .filter(|r| !r.series.ends_with("1000 tasks"))
        .collect();
    if !inject.is_empty() {
        let path = dir.join("seed_inject_queue.svg");
        let axes = DelayAxes {
            title: format!("inject_queue: start latency of a 200-task burst, {workers} workers"),
            x_desc: "workers blocked in std::thread::sleep(50 ms)",
            y_desc: "start latency, ms (log; median, min–max)",
        };
        delay_chart(&path, &axes, &inject).map_err(|e| e.to_string())?;
        written.push(path);
    }
    let cross = ok_results(report.group("cross_runtime"));
    if !cross.is_empty() {
        use crate::scenarios::cross_runtime::figure;
        let path = dir.join("seed_cross_runtime.svg");
        let bars = Bars {
            title: "cross_runtime: latency of 50 ms requests on the io runtime",
            y_desc: "request latency, ms (log; median, min–max)",
            series: &[
                ("median", figure::IO_P50_MS),
                ("slowest", figure::IO_MAX_MS),
            ],
        };
        bar_chart(&path, &bars, &cross).map_err(|e| e.to_string())?;
        written.push(path);
    }
    let pairs = report.category_pairs();
    let pairs: Vec<_> = pairs
        .iter()
        .filter(|p| p.blocking.error.is_none() && p.alternative.error.is_none())
        .collect();
    if !pairs.is_empty() {
        let path = dir.join("categories_p99.svg");
        let bars: Vec<(&str, Spread, Spread)> = pairs
            .iter()
            .map(|p| {
                (
                    p.name,
                    p.blocking.summary.p99_ms,
                    p.alternative.summary.p99_ms,
                )
            })
            .collect();
        categories_chart(&path, workers, &bars).map_err(|e| e.to_string())?;
        written.push(path);
        for p in pairs {
            let path = dir.join(format!("category_{}.svg", p.name));
            profile_chart(&path, p.name, p.blocking, p.alternative).map_err(|e| e.to_string())?;
            written.push(path);
        }
    }
    Ok(written)
}

fn ok_results(results: Vec<&ScenarioResult>) -> Vec<&ScenarioResult> {
    results
        .into_iter()
        .filter(|r| r.error.is_none() && !r.runs.is_empty())
        .collect()
}

type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// Groups results by series, keeping first-seen order.
fn by_series<'a>(results: &[&'a ScenarioResult]) -> Vec<(String, Vec<&'a ScenarioResult>)> {
    let mut out: Vec<(String, Vec<&ScenarioResult>)> = Vec::new();
    for r in results {
        match out.iter_mut().find(|(s, _)| *s == r.series) {
            Some((_, v)) => v.push(r),
            None => out.push((r.series.clone(), vec![r])),
        }
    }
    for (_, v) in &mut out {
        v.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    out
}

fn failure_chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    log_x: bool,
    results: &[&ScenarioResult],
) -> PlotResult {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let xs: Vec<f64> = results.iter().map(|r| r.x).collect();
    let (x_min, x_max) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let series = by_series(results);
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60);
    if log_x {
        let mut chart = builder.build_cartesian_2d(
            ((x_min / 1.5).max(0.5)..x_max * 1.5).log_scale(),
            0f64..105f64,
        )?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("operations timed out, % (median, min–max)")
            .draw()?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            draw_failure_series(&mut chart, name, pts, color)?;
        }
        legend(&mut chart)?;
    } else {
        let mut chart = builder.build_cartesian_2d((x_min - 0.5)..(x_max + 0.5), 0f64..105f64)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("operations timed out, % (median, min–max)")
            .x_labels((x_max - x_min) as usize + 2)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        for (i, (name, pts)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            draw_failure_series(&mut chart, name, pts, color)?;
        }
        legend(&mut chart)?;
    }
    root.present()?;
    Ok(())
}

fn draw_failure_series<'a, DB: DrawingBackend + 'a, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    name: &str,
    pts: &[&ScenarioResult],
    color: RGBColor,
) -> PlotResult
where
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let f = |r: &ScenarioResult| r.summary.failure_pct;
    let line: Vec<(f64, f64)> = pts.iter().map(|r| (r.x, f(r).median)).collect();
    chart
        .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
        .label(name.to_string())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    chart.draw_series(pts.iter().map(|r| {
        let s = f(r);
        ErrorBar::new_vertical(r.x, s.min, s.median, s.max, color.stroke_width(1), 8)
    }))?;
    Ok(())
}

fn legend<'a, DB: DrawingBackend + 'a, X: Ranged, Y: Ranged>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> PlotResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// A dashed line at 20 ms: the delay at which a run with a 1 ms median is starved.
fn threshold_line<
    'a,
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    x0: f64,
    x1: f64,
) -> PlotResult
where
    DB::ErrorType: 'static,
{
    let y = crate::verdict::RATIO_STARVED * crate::verdict::P50_FLOOR_US as f64 / 1e3;
    let grey = RGBColor(120, 120, 120);
    chart
        .draw_series(DashedLineSeries::new(
            vec![(x0, y), (x1, y)],
            6,
            4,
            grey.stroke_width(1),
        ))?
        .label(format!("starved above ({y:.0} ms at a 1 ms median)"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1)));
    Ok(())
}

/// Lower bound of the log-scale delay axes, ms.
const Y_FLOOR_MS: f64 = 0.05;

fn log_top(max_ms: f64) -> f64 {
    (max_ms * 2.0).max(10.0)
}

/// Titles of a [`delay_chart`].
struct DelayAxes {
    title: String,
    x_desc: &'static str,
    y_desc: &'static str,
}

/// p99 (and, fainter, p50) of the measured delay against the swept count, one line pair per
/// series: the overhead benchmark's chart, and the inject queue's start latencies.
fn delay_chart(path: &Path, axes: &DelayAxes, results: &[&ScenarioResult]) -> PlotResult {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let x_max = results.iter().map(|r| r.x).fold(0.0, f64::max);
    let y_max = results
        .iter()
        .map(|r| r.summary.p99_ms.max)
        .fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(&axes.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(
            -0.5..(x_max + 0.5),
            (Y_FLOOR_MS..log_top(y_max)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc(axes.x_desc)
        .y_desc(axes.y_desc)
        .x_labels(x_max as usize + 2)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    threshold_line(&mut chart, -0.5, x_max + 0.5)?;
    for (i, (name, pts)) in by_series(results).iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let p99: Vec<(f64, f64)> = pts
            .iter()
            .map(|r| (r.x, r.summary.p99_ms.median.max(Y_FLOOR_MS)))
            .collect();
        chart
            .draw_series(LineSeries::new(p99.clone(), color.stroke_width(2)))?
            .label(format!("p99, {name}"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(p99.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        chart.draw_series(pts.iter().map(|r| {
            let s = r.summary.p99_ms;
            ErrorBar::new_vertical(
                r.x,
                s.min.max(Y_FLOOR_MS),
                s.median.max(Y_FLOOR_MS),
                s.max.max(Y_FLOOR_MS),
                color.stroke_width(1),
                8,
            )
        }))?;
        let p50: Vec<(f64, f64)> = pts
            .iter()
            .map(|r| (r.x, r.summary.p50_ms.median.max(Y_FLOOR_MS)))
            .collect();
        let faint = color.mix(0.5);
        chart
            .draw_series(LineSeries::new(p50.clone(), faint.stroke_width(1)))?
            .label(format!("p50, {name}"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], faint.stroke_width(1))
            });
        chart.draw_series(
            p50.iter()
                .map(|&p| TriangleMarker::new(p, 4, faint.filled())),
        )?;
    }
    legend(&mut chart)?;
    root.present()?;
    Ok(())
}

/// A [`bar_chart`]: one group of bars per scenario, one bar per figure.
struct Bars<'a> {
    title: &'a str,
    y_desc: &'a str,
    /// Legend text and figure name ([`crate::verdict::RunOutcome::figures`]) of each bar.
    series: &'a [(&'a str, &'a str)],
}

/// Grouped bars of scenario figures (median, min–max over runs), log scale: the later seeds'
/// variants side by side.
fn bar_chart(path: &Path, bars: &Bars<'_>, results: &[&ScenarioResult]) -> PlotResult {
    let root = SVGBackend::new(path, (1000, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let spreads: Vec<Vec<Spread>> = results
        .iter()
        .map(|r| bars.series.iter().map(|(_, f)| r.figure(f)).collect())
        .collect();
    let y_max = spreads.iter().flatten().map(|s| s.max).fold(0.0, f64::max);
    let names: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    let n = results.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(bars.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n, (Y_FLOOR_MS..log_top(y_max)).log_scale())?;
    let label = |x: &f64| {
        let i = x.floor();
        if (x - i - 0.5).abs() < 1e-6 && i >= 0.0 {
            names
                .get(i as usize)
                .map_or(String::new(), |s| s.to_string())
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(results.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_desc(bars.y_desc)
        .draw()?;
    let width = 0.8 / bars.series.len().max(1) as f64;
    for (k, (legend, _)) in bars.series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let offset = 0.1 + k as f64 * width;
        chart
            .draw_series(spreads.iter().enumerate().map(|(i, s)| {
                let x = i as f64 + offset;
                Rectangle::new(
                    [
                        (x, Y_FLOOR_MS),
                        (x + width * 0.9, s[k].median.max(Y_FLOOR_MS)),
                    ],
                    color.mix(0.8).filled(),
                )
            }))?
            .label(*legend)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
        chart.draw_series(spreads.iter().enumerate().map(|(i, s)| {
            ErrorBar::new_vertical(
                i as f64 + offset + width * 0.45,
                s[k].min.max(Y_FLOOR_MS),
                s[k].median.max(Y_FLOOR_MS),
                s[k].max.max(Y_FLOOR_MS),
                BLACK.stroke_width(1),
                6,
            )
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn categories_chart(path: &Path, workers: usize, bars: &[(&str, Spread, Spread)]) -> PlotResult {
    let root = SVGBackend::new(path, (1100, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let y_max = bars
        .iter()
        .map(|(_, b, a)| b.max.max(a.max))
        .fold(0.0, f64::max);
    let n = bars.len() as f64;
    let names: Vec<&str> = bars.iter().map(|b| b.0).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Probe p99 scheduling delay: blocking API vs alternative, {workers} workers"),
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n, (Y_FLOOR_MS..log_top(y_max)).log_scale())?;
    // Category names sit under the middle of each pair of bars: ask for labels every half unit
    // and name only the half-way ones.
    let label = |x: &f64| {
        let i = x.floor();
        if (x - i - 0.5).abs() < 1e-6 && i >= 0.0 {
            names
                .get(i as usize)
                .map_or(String::new(), |s| s.to_string())
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(bars.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_desc("probe p99 overhead, ms (log; median, min–max)")
        .draw()?;
    threshold_line(&mut chart, 0.0, n)?;
    for (variant, color, offset) in [
        ("blocking API", BLOCKING, 0.1),
        ("alternative", ALTERNATIVE, 0.5),
    ] {
        let pick = |b: &(&str, Spread, Spread)| if offset < 0.3 { b.1 } else { b.2 };
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let x = i as f64 + offset;
                Rectangle::new(
                    [(x, Y_FLOOR_MS), (x + 0.38, pick(b).median.max(Y_FLOOR_MS))],
                    color.mix(0.8).filled(),
                )
            }))?
            .label(variant)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
        chart.draw_series(bars.iter().enumerate().map(|(i, b)| {
            let s = pick(b);
            ErrorBar::new_vertical(
                i as f64 + offset + 0.19,
                s.min.max(Y_FLOOR_MS),
                s.median.max(Y_FLOOR_MS),
                s.max.max(Y_FLOOR_MS),
                BLACK.stroke_width(1),
                6,
            )
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperMiddle)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn profile_chart(
    path: &Path,
    name: &str,
    blocking: &ScenarioResult,
    alternative: &ScenarioResult,
) -> PlotResult {
    let root = SVGBackend::new(path, (700, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let profile = |r: &ScenarioResult| -> Vec<Spread> {
        (0..PROFILE_PCTS.len())
            .map(|i| {
                Spread::of(
                    r.runs
                        .iter()
                        .filter_map(|o| o.profile_us.get(i))
                        .map(|&us| us as f64 / 1e3),
                )
            })
            .collect()
    };
    let (pb, pa) = (profile(blocking), profile(alternative));
    let y_max = pb.iter().chain(&pa).map(|s| s.max).fold(0.0, f64::max);
    let labels = ["p50", "p90", "p99", "p99.9", "max"];
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{name}: probe scheduling delay profile"),
            ("sans-serif", 18),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            -0.3f64..(labels.len() as f64 - 0.7),
            (Y_FLOOR_MS..log_top(y_max)).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_labels(labels.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.01 && i >= 0.0 {
                labels
                    .get(i as usize)
                    .map_or(String::new(), |s| s.to_string())
            } else {
                String::new()
            }
        })
        .y_desc("overhead, ms (log; median, min–max over runs)")
        .draw()?;
    for (variant, color, spreads, r) in [
        ("blocking", BLOCKING, &pb, blocking),
        ("alternative", ALTERNATIVE, &pa, alternative),
    ] {
        let label = r
            .label
            .split_once(": ")
            .map_or(variant, |x| x.1)
            .to_string();
        let line: Vec<(f64, f64)> = spreads
            .iter()
            .enumerate()
            .map(|(i, s)| (i as f64, s.median.max(Y_FLOOR_MS)))
            .collect();
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        chart.draw_series(spreads.iter().enumerate().map(|(i, s)| {
            ErrorBar::new_vertical(
                i as f64,
                s.min.max(Y_FLOOR_MS),
                s.median.max(Y_FLOOR_MS),
                s.max.max(Y_FLOOR_MS),
                color.stroke_width(1),
                8,
            )
        }))?;
    }
    legend(&mut chart)?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Machine;
    use crate::verdict::RunOutcome;

    fn result(
        id: &str,
        group: &str,
        x: f64,
        series: &str,
        p99_us: u64,
        failed: u64,
    ) -> ScenarioResult {
        let run = RunOutcome {
            ops: 100,
            failed,
            p50_us: 1_000,
            p99_us,
            profile_us: vec![1_000, 1_200, p99_us, p99_us, p99_us * 2],
            ..RunOutcome::default()
        };
        let mut r = ScenarioResult::new(
            id.into(),
            group,
            format!("{group}: label {x}"),
            x,
            vec![run.clone(), run],
            4,
            None,
        );
        r.series = series.into();
        r
    }

    #[test]
    fn every_chart_is_written_as_svg() {
        let mut results = Vec::new();
        for b in 0..=6 {
            results.push(result(
                &format!("seed/demo_panic/{b}"),
                "demo_panic",
                b as f64,
                "500 tasks",
                1_500,
                if b >= 4 { 40 } else { 0 },
            ));
            results.push(result(
                &format!("seed/sched_overhead/{b}"),
                "sched_overhead",
                b as f64,
                "500 tasks",
                if b >= 4 { 140_000 } else { 1_500 },
                0,
            ));
        }
        for n in [50.0, 5_000.0, 20_000.0] {
            results.push(result(
                &format!("seed/demo_load_ramp/{n}"),
                "demo_load_ramp",
                n,
                "3 blockers",
                1_500,
                (n / 250.0) as u64,
            ));
        }
        results.push(result(
            "category/fs/blocking",
            "category",
            0.0,
            "",
            90_000,
            50,
        ));
        results.push(result(
            "category/fs/alternative",
            "category",
            0.0,
            "",
            1_400,
            0,
        ));
        let report = ConfirmReport {
            workers: 4,
            runs: 2,
            quick: true,
            results,
            machine: Machine::default(),
            elapsed_s: 0.0,
            plots: Vec::new(),
        };
        let dir = crate::scenarios::category::TempDir::new("plots").unwrap();
        let written = write_plots(&report, dir.path()).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "seed_demo_panic.svg",
                "seed_demo_load_ramp.svg",
                "seed_sched_overhead.svg",
                "categories_p99.svg",
                "category_fs.svg"
            ]
        );
        for p in &written {
            let svg = std::fs::read_to_string(p).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
                "{}",
                p.display()
            );
        }
        let cats = std::fs::read_to_string(dir.path().join("categories_p99.svg")).unwrap();
        assert!(
            cats.lines().any(|l| l.trim() == "fs"),
            "category label drawn"
        );
    }
}

//! Micro-benchmark: whole-pipeline throughput against syn's own parse throughput on the same files
//! with the same number of threads (issue 8). Not a test; run it from `bench/run.sh` or by hand:
//!
//! ```sh
//! cargo run --release -p nonblock-analyzer --example throughput -- \
//!     --manifest-path bench/workspaces/large/Cargo.toml --threads 2 --iters 5
//! ```
//!
//! 1. Discovery (`cargo metadata`, cfg, configured `skip`) through the public API, then one
//!    `load::load_unit` per crate unit to learn the exact set of `.rs` files the pipeline parses
//!    (the files the loader follows from each crate root through `mod`, `#[path]` and cfg).
//! 2. **syn**: those files' text is read into memory once; each iteration parses all of them with
//!    `syn::parse_file` in a rayon pool of N threads (one task per file, the best case for syn) and
//!    drops the trees. Also reported: read + parse (file I/O included, page cache warm).
//! 3. **pipeline**: `nonblock_analyzer::analyze` with `no_cache`, `threads = N`: discovery (cargo
//!    metadata), read, parse, lower, index, resolve, graph, propagate, report.
//!
//! Throughput is the pipeline's `stats.bytes` (the same files) divided by time. The ratio is
//! pipeline / syn-parse-only (the stricter of the two syn figures). Medians of `--iters` rounds,
//! after one untimed warm-up of each; a round runs syn and the pipeline back to back, so each
//! round's ratio sees one machine load. Also printed: the median per-round ratio and the ratio of
//! CPU time (user + sys), which other load on a shared machine distorts less than wall time.
//!
//! `--list-units` instead prints one line per crate unit (`crate<TAB>package<TAB>member<TAB>bytes`),
//! which `bench/run.sh` uses to pick crates to skip for the 25 % / 50 % scaling runs.

use std::path::PathBuf;
use std::time::Instant;

use nonblock_analyzer::{discover, load, Options, RuleDb};
use rayon::prelude::*;

struct Args {
    manifest_path: Option<PathBuf>,
    threads: usize,
    iters: usize,
    list_units: bool,
    /// Also write the results as one JSON object to this file.
    json_out: Option<PathBuf>,
}

fn parse_args() -> Args {
    let mut args = Args {
        manifest_path: None,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        iters: 5,
        list_units: false,
        json_out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--manifest-path" => args.manifest_path = it.next().map(PathBuf::from),
            "--threads" => {
                args.threads = it.next().and_then(|v| v.parse().ok()).expect("--threads N")
            }
            "--iters" => args.iters = it.next().and_then(|v| v.parse().ok()).expect("--iters N"),
            "--list-units" => args.list_units = true,
            "--json-out" => args.json_out = it.next().map(PathBuf::from),
            "-h" | "--help" => {
                eprintln!(
                    "usage: throughput [--manifest-path P] [--threads N] [--iters K] [--list-units] [--json-out FILE]"
                );
                std::process::exit(0);
            }
            other => {
                eprintln!("throughput: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    args
}

/// The same pool shape as the analyzer's: N threads with a large stack (syn recurses per level).
fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(256 * 1024 * 1024)
        .build()
        .expect("thread pool")
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// User + system CPU time of this process so far (Linux: /proc/self/stat, in clock ticks of
/// 1/100 s); 0 elsewhere. Less sensitive than wall time to other work on a shared machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn mb_s(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn main() {
    let args = parse_args();
    let opts = Options {
        manifest_path: args.manifest_path.clone(),
        threads: Some(args.threads),
        no_cache: true,
        offline: true,
        ..Options::default()
    };
    let rules = RuleDb::builtin();
    let pool = pool(args.threads);

    // 1. Discovery and the exact file set, as the pipeline computes them.
    let mut ws = discover::discover(&opts).unwrap_or_else(|e| {
        eprintln!("throughput: discovery failed: {e}");
        std::process::exit(2);
    });
    let config = nonblock_analyzer::config::load(&ws.root, &rules).unwrap_or_else(|errs| {
        eprintln!("throughput: invalid configuration: {} problems", errs.len());
        std::process::exit(2);
    });
    ws.skip_crates(&config.skip);
    let loads: Vec<(usize, Vec<load::SourceFile>)> = pool.install(|| {
        (0..ws.units.len())
            .into_par_iter()
            .map(|u| (u, load::load_unit(&ws, u).files))
            .collect()
    });

    if args.list_units {
        for (u, files) in &loads {
            let unit = &ws.units[*u];
            let package = &ws.packages[unit.package];
            let bytes: u64 = files.iter().map(|f| f.bytes).sum();
            println!(
                "{}\t{}\t{}\t{}",
                unit.crate_name, package.name, package.is_member, bytes
            );
        }
        return;
    }

    let mut paths: Vec<PathBuf> = loads
        .iter()
        .flat_map(|(_, files)| files.iter().map(|f| f.path.clone()))
        .collect();
    // Files are already unique per unit; a file shared by two units (lib + bin) is parsed twice
    // by the pipeline too, so duplicates are kept.
    let texts: Vec<String> = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    let total_bytes: u64 = texts.iter().map(|t| t.len() as u64).sum();
    let parse_all = |texts: &[String]| -> usize {
        pool.install(|| {
            texts
                .par_iter()
                .map(|t| usize::from(syn::parse_file(t).is_err()))
                .sum()
        })
    };
    let read_and_parse_all = |paths: &[PathBuf]| -> usize {
        pool.install(|| {
            paths
                .par_iter()
                .map(|p| {
                    let t = std::fs::read_to_string(p).unwrap_or_default();
                    usize::from(syn::parse_file(&t).is_err())
                })
                .sum()
        })
    };

    // 2 + 3. One untimed warm-up of each, then `iters` rounds. Each round times syn (in memory),
    // syn (read + parse) and the whole pipeline (no cache, same thread count) back to back, so
    // the three see the same machine load (the benchmark machine is shared).
    let parse_errors = parse_all(&texts);
    read_and_parse_all(&paths);
    let warm = nonblock_analyzer::analyze(&opts, &rules).expect("pipeline run");
    let pipeline_bytes = warm.stats.bytes;
    let pipeline_files = warm.stats.files;
    drop(warm);
    let mut syn_parse = Vec::new();
    let mut syn_read_parse = Vec::new();
    let mut pipeline = Vec::new();
    let mut parse_phase = Vec::new();
    let mut syn_cpu = Vec::new();
    let mut pipeline_cpu = Vec::new();
    let mut round_ratios = Vec::new();
    for _ in 0..args.iters {
        let (t, c) = (Instant::now(), cpu_seconds());
        std::hint::black_box(parse_all(&texts));
        let s = t.elapsed().as_secs_f64();
        syn_parse.push(s);
        syn_cpu.push(cpu_seconds() - c);

        let t = Instant::now();
        std::hint::black_box(read_and_parse_all(&paths));
        syn_read_parse.push(t.elapsed().as_secs_f64());

        let (t, c) = (Instant::now(), cpu_seconds());
        let report = nonblock_analyzer::analyze(&opts, &rules).expect("pipeline run");
        let p = t.elapsed().as_secs_f64();
        pipeline.push(p);
        pipeline_cpu.push(cpu_seconds() - c);
        parse_phase.push(report.stats.phases.get("parse").copied().unwrap_or(0.0));
        round_ratios.push((pipeline_bytes as f64 / p) / (total_bytes as f64 / s));
        drop(report);
    }
    drop(texts);
    paths.clear();

    let range = |v: &[f64]| {
        (
            v.iter().cloned().fold(f64::INFINITY, f64::min),
            v.iter().cloned().fold(0.0, f64::max),
        )
    };
    let (sp_min, sp_max) = range(&syn_parse);
    let (sr_min, sr_max) = range(&syn_read_parse);
    let (pl_min, pl_max) = range(&pipeline);
    let (pp_min, pp_max) = range(&parse_phase);
    let sp = median(&mut syn_parse);
    let sr = median(&mut syn_read_parse);
    let pl = median(&mut pipeline);
    let pp = median(&mut parse_phase);
    let (rr_min, rr_max) = range(&round_ratios);
    let rr = median(&mut round_ratios);
    let sc = median(&mut syn_cpu);
    let pc = median(&mut pipeline_cpu);
    let cpu_ratio = mb_s(pipeline_bytes, pc) / mb_s(total_bytes, sc);
    let files = loads.iter().map(|(_, f)| f.len()).sum::<usize>();

    let syn_tp = mb_s(total_bytes, sp);
    let syn_rp_tp = mb_s(total_bytes, sr);
    let pipe_tp = mb_s(pipeline_bytes, pl);
    let phase_tp = mb_s(pipeline_bytes, pp);
    if let Some(json_out) = &args.json_out {
        let json = format!(
            "{{\"threads\":{},\"iters\":{},\"files\":{},\"bytes\":{},\"pipeline_files\":{},\"pipeline_bytes\":{},\"syn_parse_errors\":{},\
\"syn_parse_s\":[{sp},{sp_min},{sp_max}],\"syn_read_parse_s\":[{sr},{sr_min},{sr_max}],\
\"pipeline_s\":[{pl},{pl_min},{pl_max}],\"pipeline_parse_phase_s\":[{pp},{pp_min},{pp_max}],\
\"syn_mb_s\":{syn_tp},\"syn_read_mb_s\":{syn_rp_tp},\"pipeline_mb_s\":{pipe_tp},\"parse_phase_mb_s\":{phase_tp},\
\"ratio\":{},\"ratio_vs_read_parse\":{},\"parse_phase_ratio\":{},\
\"round_ratio\":[{rr},{rr_min},{rr_max}],\"syn_cpu_s\":{sc},\"pipeline_cpu_s\":{pc},\"cpu_ratio\":{cpu_ratio}}}",
            args.threads,
            args.iters,
            files,
            total_bytes,
            pipeline_files,
            pipeline_bytes,
            parse_errors,
            pipe_tp / syn_tp,
            pipe_tp / syn_rp_tp,
            phase_tp / syn_tp,
        );
        std::fs::write(json_out, json + "\n").expect("write --json-out");
    }
    println!(
        "files: {files} ({total_bytes} bytes); pipeline stats: {pipeline_files} files, {pipeline_bytes} bytes; \
         threads: {}; iterations: {}; syn parse errors: {parse_errors}",
        args.threads, args.iters
    );
    println!(
        "syn::parse_file (in memory)      {sp:7.3} s [{sp_min:.3}-{sp_max:.3}]  {syn_tp:7.1} MB/s"
    );
    println!("syn read + parse                 {sr:7.3} s [{sr_min:.3}-{sr_max:.3}]  {syn_rp_tp:7.1} MB/s");
    println!(
        "pipeline (analyze, no cache)     {pl:7.3} s [{pl_min:.3}-{pl_max:.3}]  {pipe_tp:7.1} MB/s"
    );
    println!("  of which phase `parse`         {pp:7.3} s [{pp_min:.3}-{pp_max:.3}]  {phase_tp:7.1} MB/s");
    println!(
        "ratio pipeline / syn parse: {:.1} %  (vs read+parse: {:.1} %; parse phase alone: {:.1} %)",
        100.0 * pipe_tp / syn_tp,
        100.0 * pipe_tp / syn_rp_tp,
        100.0 * phase_tp / syn_tp
    );
    println!(
        "per-round ratio: median {:.1} % [{:.1}-{:.1}]; CPU time (user+sys): syn {sc:.2} s, pipeline {pc:.2} s, \
         CPU-throughput ratio {:.1} %",
        100.0 * rr,
        100.0 * rr_min,
        100.0 * rr_max,
        100.0 * cpu_ratio
    );
}

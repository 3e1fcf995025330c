//! Analyse crates written to a directory without `cargo metadata`: the entry point of the fuzz
//! target (`fuzz/`), which must run thousands of analyses a second and cannot afford a cargo
//! process per input. Everything after discovery runs exactly as in a real scan: the file tree is
//! read from disk, `mod`/`#[path]` are followed, parsed, lowered, indexed, resolved, propagated
//! and reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cfg::CfgSet;
use crate::discover::{CrateUnit, DepTarget, PackageInfo, SourceKind, UnitKind, Workspace};
use crate::{Report, RuleDb};

/// One crate of a synthetic workspace: its files, relative to `<dir>/<name>/`; the crate root is
/// `src/lib.rs` (which need not exist: a missing root is a diagnostic like any other).
#[derive(Clone, Debug)]
pub struct SyntheticCrate {
    pub name: String,
    /// Workspace members are where roots are reported and suppressions read; the others play
    /// registry dependencies.
    pub member: bool,
    pub files: Vec<(String, Vec<u8>)>,
}

/// Writes `crates` under `dir` (emptied first) and analyses them, every crate depending on every
/// later one, on a Linux-like target with the `default` feature.
pub fn analyze_synthetic(dir: &Path, crates: &[SyntheticCrate]) -> std::io::Result<Report> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let mut packages = Vec::new();
    let mut units = Vec::new();
    for (i, c) in crates.iter().enumerate() {
        let root = dir.join(&c.name);
        std::fs::create_dir_all(root.join("src"))?;
        for (path, bytes) in &c.files {
            let p = root.join(path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&p, bytes)?;
        }
        packages.push(PackageInfo {
            name: c.name.clone(),
            version: "1.0.0".into(),
            id: format!("{} 1.0.0", c.name),
            manifest_dir: root.clone(),
            is_member: c.member,
            report_roots: c.member,
            test_support: false,
            nonblock_metadata: false,
            source: if c.member {
                SourceKind::Workspace
            } else {
                SourceKind::Registry
            },
            features: vec!["default".into()],
        });
        let deps: BTreeMap<String, DepTarget> = crates
            .iter()
            .enumerate()
            .skip(i + 1)
            .map(|(j, d)| (d.name.replace('-', "_"), DepTarget::Unit(j)))
            .collect();
        units.push(CrateUnit {
            package: i,
            crate_name: c.name.replace('-', "_"),
            kind: UnitKind::Lib,
            root: root.join("src/lib.rs"),
            deps,
            cfg: CfgSet::parse_rustc_output(
                "unix\ndebug_assertions\ntarget_os=\"linux\"\ntarget_family=\"unix\"\n\
                 target_pointer_width=\"64\"\n",
            )
            .with_features(["default"]),
            skip: false,
        });
    }
    let ws = Workspace {
        root: dir.to_path_buf(),
        packages,
        units,
        skipped: Vec::new(),
        cache_dir: None,
    };
    Ok(analyze_in_deep_pool(&ws))
}

/// Runs the analysis on the same deep-stack pool a real scan uses (one reused pool: building a
/// pool per input would dominate a fuzzing run).
fn analyze_in_deep_pool(ws: &Workspace) -> Report {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    let run = || {
        crate::analyze_workspace(
            ws,
            builtin_rules(),
            &crate::config::Config::default(),
            &crate::progress::Silent,
            Instant::now(),
            BTreeMap::new(),
            false,
        )
    };
    match POOL.get_or_init(|| crate::analysis_pool(Some(1)).ok()) {
        Some(pool) => pool.install(run),
        None => run(),
    }
}

/// The embedded rule database, parsed once per process (parsing it costs more than analysing a
/// small input).
pub fn builtin_rules() -> &'static RuleDb {
    static RULES: std::sync::OnceLock<RuleDb> = std::sync::OnceLock::new();
    RULES.get_or_init(RuleDb::builtin)
}

/// A fresh scratch directory name for this process and thread.
pub fn scratch_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "nonblock-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_are_diagnostics_not_failures() {
        let dir = scratch_dir("synthetic-missing");
        let crates = [
            SyntheticCrate {
                name: "app".into(),
                member: true,
                files: vec![(
                    "src/lib.rs".into(),
                    b"mod m;\npub async fn h() {}\n".to_vec(),
                )],
            },
            SyntheticCrate {
                name: "empty".into(),
                member: false,
                files: vec![],
            },
        ];
        let report = analyze_synthetic(&dir, &crates).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        // `m.rs` and the `empty` crate's root are missing: diagnostics, not a failure.
        assert!(
            report.errors.iter().any(|e| e.message.contains("m.rs")),
            "{:?}",
            report.errors
        );
        assert!(
            report
                .errors
                .iter()
                .any(|e| e.package.as_deref() == Some("empty")),
            "{:?}",
            report.errors
        );
        assert_eq!(report.stats.internal_errors, 0);
    }

    #[test]
    fn findings_cross_crates() {
        let dir = scratch_dir("synthetic-cross");
        let report = analyze_synthetic(
            &dir,
            &[
                SyntheticCrate {
                    name: "app".into(),
                    member: true,
                    files: vec![(
                        "src/lib.rs".into(),
                        b"pub async fn h() { dep::load(); }\n".to_vec(),
                    )],
                },
                SyntheticCrate {
                    name: "dep".into(),
                    member: false,
                    files: vec![(
                        "src/lib.rs".into(),
                        b"pub fn load() { std::fs::read(\"x\").ok(); }\n".to_vec(),
                    )],
                },
            ],
        )
        .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
        let path: Vec<&str> = report.findings[0]
            .path
            .iter()
            .map(|s| s.function.as_str())
            .collect();
        assert_eq!(path.first(), Some(&"app::h"), "{path:?}");
        assert!(path.contains(&"dep::load"), "{path:?}");
    }
}

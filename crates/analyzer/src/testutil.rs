//! Test support: analyse a crate written inline, without cargo, so each stage's behaviour can be
//! tested beside its code in milliseconds.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use crate::cfg::CfgSet;
use crate::discover::{CrateUnit, PackageInfo, SourceKind, UnitKind, Workspace};
use crate::{Report, RuleDb};

/// A scratch directory removed on drop.
pub struct Scratch(pub PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `files` (paths relative to the package root, the first being `src/lib.rs` or another
/// crate root) into a scratch package `app` and analyses it as a workspace member.
/// The file of cache directory `dir` whose name `wanted` accepts (a cache test's entry to
/// damage or inspect).
pub fn cache_file(dir: &std::path::Path, wanted: impl Fn(&str) -> bool) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .map(|e| e.unwrap().path())
        .find(|p| wanted(&p.file_name().unwrap().to_string_lossy()))
}

pub fn analyze_files(files: &[(&str, &str)]) -> Report {
    analyze_files_full(files, &crate::config::Config::default(), false)
}

/// [`analyze_files`] under a configuration.
pub fn analyze_files_with(files: &[(&str, &str)], config: &crate::config::Config) -> Report {
    analyze_files_full(files, config, false)
}

/// [`analyze_files`], mapping v1 fingerprints when `v1_fingerprints` is set.
pub fn analyze_files_v1(files: &[(&str, &str)], v1_fingerprints: bool) -> Report {
    analyze_files_full(files, &crate::config::Config::default(), v1_fingerprints)
}

fn analyze_files_full(
    files: &[(&str, &str)],
    config: &crate::config::Config,
    v1_fingerprints: bool,
) -> Report {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "nonblock-unit-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let scratch = Scratch(dir.clone());
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let cfg = CfgSet::parse_rustc_output("unix\ntarget_os=\"linux\"\ntarget_family=\"unix\"\n")
        .with_features(["default"]);
    let ws = Workspace {
        root: dir.clone(),
        packages: vec![PackageInfo {
            name: "app".into(),
            version: "0.1.0".into(),
            id: "app 0.1.0".into(),
            manifest_dir: dir.clone(),
            is_member: true,
            report_roots: true,
            test_support: false,
            nonblock_metadata: false,
            source: SourceKind::Workspace,
            features: vec!["default".into()],
        }],
        units: vec![CrateUnit {
            package: 0,
            crate_name: "app".into(),
            kind: UnitKind::Lib,
            root: dir.join(files[0].0),
            deps: BTreeMap::new(),
            cfg,
            skip: false,
        }],
        skipped: Vec::new(),
        cache_dir: None,
    };
    let pool = crate::analysis_pool(Some(2)).expect("analysis pool");
    let report = pool.install(|| {
        crate::analyze_workspace(
            &ws,
            &RuleDb::builtin(),
            config,
            &crate::progress::Silent,
            Instant::now(),
            BTreeMap::new(),
            v1_fingerprints,
        )
    });
    drop(scratch);
    report
}

/// `(line of path[0], rule id)` of every finding, sorted.
pub fn sites(report: &Report) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = report
        .findings
        .iter()
        .map(|f| (f.path[0].line, f.rule.clone()))
        .collect();
    v.sort();
    v
}

/// The entry lines of [`sites`], sorted.
pub fn site_lines(report: &Report) -> Vec<u32> {
    sites(report).into_iter().map(|(line, _)| line).collect()
}

/// [`sites`] of a one-file crate whose `src/lib.rs` is `src`.
pub fn lib_rs_sites(src: &str) -> Vec<(u32, String)> {
    sites(&analyze_files(&[("src/lib.rs", src)]))
}

/// A one-package workspace of the given source kind whose crate (named `dep`, not a member, but
/// reported so its findings are visible) is `lib`; with `cache`, a cache dir in the scratch dir.
pub fn scratch_workspace(
    name: &str,
    lib: &str,
    source: SourceKind,
    cache: bool,
) -> (Workspace, Scratch) {
    let dir = std::env::temp_dir().join(format!("nonblock-unit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let cfg = CfgSet::parse_rustc_output("unix\ntarget_os=\"linux\"\n");
    let ws = Workspace {
        root: dir.clone(),
        packages: vec![PackageInfo {
            name: "dep".into(),
            version: "1.0.0".into(),
            id: "registry+https://example.invalid#dep@1.0.0".into(),
            manifest_dir: dir.clone(),
            is_member: false,
            report_roots: true,
            test_support: false,
            nonblock_metadata: false,
            source,
            features: vec![],
        }],
        units: vec![CrateUnit {
            package: 0,
            crate_name: "dep".into(),
            kind: UnitKind::Lib,
            root: dir.join("src/lib.rs"),
            deps: BTreeMap::new(),
            cfg,
            skip: false,
        }],
        skipped: Vec::new(),
        cache_dir: cache.then(|| dir.join("target/nonblock/cache")),
    };
    (ws, Scratch(dir))
}

/// A member crate `app` whose `src/lib.rs` is `app` depending on a registry crate `dep_name`
/// whose `src/lib.rs` is `dep`, which reports no roots: a dependency as a real run meets it.
pub fn analyze_app_with_dependency(name: &str, app: &str, dep_name: &str, dep: &str) -> Report {
    analyze_app_with_dependency_with(name, app, dep_name, dep, &crate::config::Config::default())
}

/// [`analyze_app_with_dependency`] under a configuration.
pub fn analyze_app_with_dependency_with(
    name: &str,
    app: &str,
    dep_name: &str,
    dep: &str,
    config: &crate::config::Config,
) -> Report {
    let (ws, _scratch) = app_with_dependency(name, app, dep_name, dep, false);
    analyze_workspace_with(&ws, config)
}

/// The workspace of [`analyze_app_with_dependency`], with a cache directory when `cache`.
pub fn app_with_dependency(
    name: &str,
    app: &str,
    dep_name: &str,
    dep: &str,
    cache: bool,
) -> (Workspace, Scratch) {
    let (mut ws, scratch) = scratch_workspace(name, app, SourceKind::Workspace, cache);
    ws.packages[0].name = "app".into();
    ws.packages[0].is_member = true;
    ws.units[0].crate_name = "app".into();
    let dep_unit = add_crate(&mut ws, &scratch, dep_name, dep, SourceKind::Registry);
    ws.units[0]
        .deps
        .insert(dep_name.into(), crate::discover::DepTarget::Unit(dep_unit));
    (ws, scratch)
}

/// Adds crate `name` to `ws`, its `src/lib.rs` (`lib`) under `<scratch>/<name>/`, as a package
/// of its own: a registry dependency reporting no roots (`SourceKind::Registry`), or a member.
/// Returns its unit, depending on nothing yet.
pub fn add_crate(
    ws: &mut Workspace,
    scratch: &Scratch,
    name: &str,
    lib: &str,
    source: SourceKind,
) -> usize {
    let root = scratch.0.join(name).join("src/lib.rs");
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    std::fs::write(&root, lib).unwrap();
    let member = source == SourceKind::Workspace;
    let mut package = ws.packages[0].clone();
    package.name = name.into();
    package.id = if member {
        format!("path+file:///{name}#0.1.0")
    } else {
        format!("registry+https://example.invalid#{name}@1.0.0")
    };
    package.manifest_dir = scratch.0.join(name);
    package.is_member = member;
    package.report_roots = member;
    package.source = source;
    ws.packages.push(package);
    let mut unit = ws.units[0].clone();
    unit.package = ws.packages.len() - 1;
    unit.crate_name = name.into();
    unit.root = root;
    unit.deps = BTreeMap::new();
    ws.units.push(unit);
    ws.units.len() - 1
}

pub fn analyze_workspace_of(ws: &Workspace) -> Report {
    analyze_workspace_with(ws, &crate::config::Config::default())
}

fn analyze_workspace_with(ws: &Workspace, config: &crate::config::Config) -> Report {
    crate::analyze_workspace(
        ws,
        &RuleDb::builtin(),
        config,
        &crate::progress::Silent,
        Instant::now(),
        BTreeMap::new(),
        false,
    )
}

/// Like [`analyze_files`] with raw bytes (for encodings).
pub fn analyze_raw_files(files: &[(&str, &[u8])]) -> Report {
    let dir = std::env::temp_dir().join(format!(
        "nonblock-raw-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, bytes) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
    }
    let r = analyze_dir(&dir, std::str::from_utf8(files[0].1).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// Analyses `dir` as package `app` whose `src/lib.rs` is (over)written with `lib`.
pub fn analyze_dir(dir: &std::path::Path, lib: &str) -> Report {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let (mut ws, scratch) = scratch_workspace("dir", "", SourceKind::Workspace, false);
    drop(scratch);
    ws.root = dir.to_path_buf();
    ws.packages[0].manifest_dir = dir.to_path_buf();
    ws.packages[0].is_member = true;
    ws.units[0].root = dir.join("src/lib.rs");
    let pool = crate::analysis_pool(Some(2)).expect("analysis pool");
    pool.install(|| analyze_workspace_of(&ws))
}

/// The index of one crate written inline (`src` is its `src/lib.rs`).
pub fn index_of(name: &str, src: &str) -> crate::index::Index {
    let (ws, _scratch) = scratch_workspace(name, src, SourceKind::Workspace, false);
    let load = crate::load::load_unit(&ws, 0);
    crate::index::Index::build(&ws, vec![load.loaded])
}

/// The first module whose last path segment is `name`.
pub fn module_named(index: &crate::index::Index, name: &str) -> crate::index::ModId {
    index
        .modules
        .iter()
        .position(|m| m.path.last().map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no module named {name}"))
}

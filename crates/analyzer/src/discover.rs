//! Stage 1, *discover*: `cargo metadata` → the packages to analyse and their crate roots.
//!
//! The analysed set is every workspace member plus every crate in its *normal* dependency closure
//! (registry, git and path sources alike). Dev- and build-dependencies never run on the service's
//! runtime, and proc-macro crates run inside the compiler, so none of them is analysed; a path into
//! one of them resolves to an opaque external path. Nothing is built and no build script runs:
//! `cargo metadata` only resolves and downloads manifests and sources.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use cargo_metadata::{CargoOpt, DependencyKind, MetadataCommand, TargetKind};

use crate::cfg::CfgSet;
use crate::options::Options;

/// Where a package's source comes from; the cache and the JSON paths treat them differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SourceKind {
    Workspace,
    Path,
    Registry,
    Git,
}

impl SourceKind {
    /// Workspace members and path dependencies: their files change under us, so whatever is
    /// cached from them is checked against their contents (`crate::inputs`). Registry and git
    /// sources are immutable for a given package id.
    pub fn is_mutable(self) -> bool {
        matches!(self, SourceKind::Workspace | SourceKind::Path)
    }
}

#[derive(Clone, Debug)]
pub struct PackageInfo {
    pub name: String,
    pub version: String,
    pub id: String,
    pub manifest_dir: PathBuf,
    pub is_member: bool,
    /// Roots (async contexts) are reported from this package (`-p` / `--exclude` select them).
    pub report_roots: bool,
    /// A member library that other members use only as a dev-dependency (a test kit such as
    /// kanidm's `kanidmd_testkit`), with no binary of its own: its code runs only under tests,
    /// so its functions are not roots ([`crate::roots::is_test_support`]). Still analysed: a
    /// production caller would reach it as an ordinary callee.
    pub test_support: bool,
    /// The manifest has a `[package.metadata.nonblock]` table (from `cargo metadata`): never
    /// read as configuration, so a member's is reported (`config::ignored_config_notices`).
    pub nonblock_metadata: bool,
    pub source: SourceKind,
    pub features: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnitKind {
    Lib,
    Bin,
}

/// What an extern crate name in a unit refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DepTarget {
    /// An analysed library unit (index into [`Workspace::units`]).
    Unit(usize),
    /// A crate whose source is not analysed (proc-macro crates): paths into it stay textual.
    Opaque(String),
}

/// One compiled crate: a package's lib, or one of a member's bins.
#[derive(Clone, Debug)]
pub struct CrateUnit {
    pub package: usize,
    pub crate_name: String,
    pub kind: UnitKind,
    pub root: PathBuf,
    pub deps: BTreeMap<String, DepTarget>,
    pub cfg: CfgSet,
    /// Not analysed (config `skip`).
    pub skip: bool,
}

#[derive(Clone, Debug)]
pub struct Workspace {
    pub root: PathBuf,
    pub packages: Vec<PackageInfo>,
    pub units: Vec<CrateUnit>,
    /// Packages left out because they could not be analysed (e.g. no lib target), with why.
    pub skipped: Vec<(String, String)>,
    /// Where lowered dependency crates are cached (`<target dir>/nonblock/cache`); `None`
    /// disables the cache.
    pub cache_dir: Option<PathBuf>,
}

/// Runs `cargo metadata` with the user's selection flags and builds the analysed set.
pub fn discover(opts: &Options) -> Result<Workspace, String> {
    let mut cmd = MetadataCommand::new();
    // Absolute, because cargo runs in the workspace's directory below (a relative path would
    // then be read from there).
    let manifest_path = opts
        .manifest_path
        .as_deref()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    if let Some(p) = &manifest_path {
        cmd.manifest_path(p);
    }
    if opts.all_features {
        cmd.features(CargoOpt::AllFeatures);
    }
    if opts.no_default_features {
        cmd.features(CargoOpt::NoDefaultFeatures);
    }
    if !opts.features.is_empty() {
        let list: Vec<String> = opts
            .features
            .iter()
            .flat_map(|f| f.split([',', ' ']))
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        cmd.features(CargoOpt::SomeFeatures(list));
    }
    let mut other = Vec::new();
    for (flag, on) in [
        ("--offline", opts.offline),
        ("--locked", opts.locked),
        ("--frozen", opts.frozen),
    ] {
        if on {
            other.push(flag.to_string());
        }
    }
    // `rustc --print cfg` needs nothing from the other commands: it runs meanwhile (a few
    // hundredths of a second of every run, warm or cold).
    // Every toolchain command runs in the workspace's directory, as cargo would for a build
    // there: its `rust-toolchain.toml` picks the toolchain.
    let dir = manifest_path
        .as_deref()
        .and_then(|p| p.parent())
        // A missing directory is cargo's to report ("manifest path does not exist").
        .filter(|d| !d.as_os_str().is_empty() && d.is_dir())
        .map(Path::to_path_buf);
    if let Some(d) = &dir {
        cmd.current_dir(d);
    }
    let (metadata, target_cfg) = std::thread::scope(|s| {
        let target_cfg = s.spawn(|| CfgSet::for_target(opts.target.as_deref(), dir.as_deref()));
        let metadata = rustc_version_verbose(dir.as_deref()).and_then(|rustc_vv| {
            let triple = match &opts.target {
                Some(t) => t.clone(),
                None => host_triple(&rustc_vv)?,
            };
            let slot = crate::metadata_cache::Slot::new(opts, dir.as_deref(), &rustc_vv);
            if let Some(cached) = slot.as_ref().and_then(|s| s.read()) {
                return Ok(cached);
            }
            other.push("--filter-platform".to_string());
            other.push(triple);
            cmd.other_options(other);
            let (output, metadata) = run_metadata(&cmd)?;
            // Without a lockfile before, cargo has just written one: the slot exists now.
            let slot =
                slot.or_else(|| crate::metadata_cache::Slot::new(opts, dir.as_deref(), &rustc_vv));
            if let Some(slot) = &slot {
                slot.write(&output, &metadata);
            }
            Ok(metadata)
        });
        (metadata, target_cfg.join())
    });
    let metadata = metadata?;
    let target_cfg =
        target_cfg.map_err(|_| "internal error while running rustc --print cfg".to_string())??;
    build_workspace(&metadata, &target_cfg, opts)
}

/// Runs `cargo metadata` as `MetadataCommand::exec` does, keeping its stdout for the cache.
fn run_metadata(cmd: &MetadataCommand) -> Result<(String, cargo_metadata::Metadata), String> {
    let failed = |why: String| format!("cargo metadata failed: {why}");
    let out = cmd
        .cargo_command()
        .output()
        .map_err(|e| failed(format!("cannot run cargo: {e}")))?;
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    let stdout = String::from_utf8(out.stdout).map_err(|e| failed(e.to_string()))?;
    let json = stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| failed("it printed no JSON".into()))?;
    let metadata = MetadataCommand::parse(json).map_err(|e| failed(e.to_string()))?;
    Ok((json.to_string(), metadata))
}

/// `rustc -vV`: the toolchain's identity (a key of the metadata cache) and the host triple.
fn rustc_version_verbose(dir: Option<&Path>) -> Result<String, String> {
    let out = crate::cfg::rustc_in(dir)
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc -vV: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustc -vV failed: {}",
            crate::cfg::tool_failure_text(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn host_triple(rustc_vv: &str) -> Result<String, String> {
    rustc_vv
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV printed no host triple".to_string())
}

fn matches_spec(spec: &str, name: &str, version: &str) -> bool {
    match spec.split_once('@') {
        Some((n, v)) => n == name && version.starts_with(v),
        None => spec == name,
    }
}

/// Features of `pkg` that only a dev-dependency declaration asks for (`[dev-dependencies] app =
/// { path = ".", features = ["test-utils"] }`): `cargo metadata` resolves features for every
/// target, tests included, so they show up as enabled, but a production build (resolver 2) does
/// not enable them, and code under `#[cfg(feature = "test-utils")]` (test doubles) is not
/// production code. A feature also asked for by a normal dependency declaration, by another
/// enabled feature (`dep/feature`), by the command line or by `default` stays.
fn dev_only_features(
    pkg: &cargo_metadata::Package,
    closure: &[&cargo_metadata::Package],
    nodes: &BTreeMap<&cargo_metadata::PackageId, &cargo_metadata::Node>,
    members: &BTreeSet<&cargo_metadata::PackageId>,
    opts: &Options,
) -> BTreeSet<String> {
    let name = pkg.name.as_str();
    let mut dev: BTreeSet<String> = BTreeSet::new();
    let mut normal: BTreeSet<String> = BTreeSet::new();
    for q in closure {
        // Built only for a package that declares `pkg`: building it for every package of the
        // closure, for every package, was quadratic (0.15 s of a one-edit deno run, serial).
        let mut enabled: Option<BTreeSet<String>> = None;
        for d in &q.dependencies {
            if d.name != name {
                continue;
            }
            match d.kind {
                DependencyKind::Development => dev.extend(d.features.iter().cloned()),
                _ => {
                    normal.extend(d.features.iter().cloned());
                    if d.uses_default_features {
                        normal.insert("default".into());
                    }
                    // `q`'s enabled features naming this dependency: `dep/feature`.
                    let key = d.rename.as_deref().unwrap_or(&d.name);
                    let enabled = enabled.get_or_insert_with(|| {
                        nodes
                            .get(&q.id)
                            .map(|n| n.features.iter().map(|f| f.to_string()).collect())
                            .unwrap_or_default()
                    });
                    for f in enabled.iter() {
                        for entry in q.features.get(f).into_iter().flatten() {
                            if let Some((dep, feat)) = entry.split_once('/') {
                                if dep.trim_end_matches('?') == key {
                                    normal.insert(feat.to_string());
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if dev.is_empty() {
        return dev;
    }
    if members.contains(&pkg.id) {
        if !opts.no_default_features {
            normal.insert("default".into());
        }
        normal.extend(opts.features.iter().map(|f| {
            f.rsplit_once('/')
                .map_or(f.as_str(), |(_, feat)| feat)
                .to_string()
        }));
    }
    // What the normally requested features enable in turn, within the package.
    let mut stack: Vec<String> = normal.iter().cloned().collect();
    while let Some(f) = stack.pop() {
        for entry in pkg.features.get(&f).into_iter().flatten() {
            if !entry.contains('/') && !entry.starts_with("dep:") && normal.insert(entry.clone()) {
                stack.push(entry.clone());
            }
        }
    }
    dev.retain(|f| !normal.contains(f));
    dev
}

/// Whether `pkg` is a library that members depend on, each of them as a dev-dependency only, and
/// that has no binary target: code that only tests run. A library nobody in the workspace
/// depends on is not one (it may be the published API).
fn used_only_by_dev_dependents(
    pkg: &cargo_metadata::Package,
    members: &BTreeSet<&cargo_metadata::PackageId>,
    nodes: &BTreeMap<&cargo_metadata::PackageId, &cargo_metadata::Node>,
) -> bool {
    if pkg
        .targets
        .iter()
        .any(|t| t.kind.contains(&TargetKind::Bin))
    {
        return false;
    }
    let mut dependents = 0;
    for m in members {
        let Some(node) = nodes.get(m) else { continue };
        for dep in node.deps.iter().filter(|d| d.pkg == pkg.id) {
            dependents += 1;
            let dev_only = !dep.dep_kinds.is_empty()
                && dep
                    .dep_kinds
                    .iter()
                    .all(|k| k.kind == DependencyKind::Development);
            if !dev_only {
                return false;
            }
        }
    }
    dependents > 0
}

fn build_workspace(
    metadata: &cargo_metadata::Metadata,
    target_cfg: &CfgSet,
    opts: &Options,
) -> Result<Workspace, String> {
    let resolve = metadata
        .resolve
        .as_ref()
        .ok_or_else(|| "cargo metadata returned no dependency resolution".to_string())?;
    let members: BTreeSet<&cargo_metadata::PackageId> = metadata.workspace_members.iter().collect();
    let nodes: BTreeMap<&cargo_metadata::PackageId, &cargo_metadata::Node> =
        resolve.nodes.iter().map(|n| (&n.id, n)).collect();
    let pkg_by_id: BTreeMap<&cargo_metadata::PackageId, &cargo_metadata::Package> =
        metadata.packages.iter().map(|p| (&p.id, p)).collect();

    for spec in opts.packages.iter().chain(&opts.exclude) {
        let known = members
            .iter()
            .filter_map(|id| pkg_by_id.get(id))
            .any(|p| matches_spec(spec, &p.name, &p.version.to_string()));
        if !known {
            return Err(format!("package `{spec}` is not a member of the workspace"));
        }
    }

    // The normal-dependency closure of the members, breadth first. A proc-macro crate's own
    // dependencies (syn, quote, sqlx-macros-core, ...) run inside the compiler, never at run time:
    // the closure stops at it, or their code would be matched against calls it can never serve.
    let is_proc_macro = |id: &cargo_metadata::PackageId| {
        pkg_by_id.get(id).is_some_and(|p| {
            p.targets
                .iter()
                .any(|t| t.kind.contains(&TargetKind::ProcMacro))
        })
    };
    let mut closure: BTreeSet<&cargo_metadata::PackageId> = BTreeSet::new();
    let mut queue: VecDeque<&cargo_metadata::PackageId> = members.iter().copied().collect();
    while let Some(id) = queue.pop_front() {
        if !closure.insert(id) {
            continue;
        }
        if is_proc_macro(id) {
            continue;
        }
        if let Some(node) = nodes.get(id) {
            for dep in &node.deps {
                let normal = dep.dep_kinds.is_empty()
                    || dep
                        .dep_kinds
                        .iter()
                        .any(|k| k.kind == DependencyKind::Normal);
                if normal {
                    queue.push_back(&dep.pkg);
                }
            }
        }
    }

    // Deterministic order: members first by name, then dependencies by name and version.
    let mut ordered: Vec<&cargo_metadata::Package> = closure
        .iter()
        .filter_map(|id| pkg_by_id.get(id).copied())
        .collect();
    ordered.sort_by(|a, b| {
        (
            !members.contains(&a.id),
            a.name.as_str(),
            &a.version,
            &a.id.repr,
        )
            .cmp(&(
                !members.contains(&b.id),
                b.name.as_str(),
                &b.version,
                &b.id.repr,
            ))
    });

    let mut packages = Vec::new();
    let mut units = Vec::new();
    let mut lib_unit: BTreeMap<&cargo_metadata::PackageId, DepTarget> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut pending_bins = Vec::new();

    for pkg in &ordered {
        let is_member = members.contains(&pkg.id);
        let source = if is_member {
            SourceKind::Workspace
        } else {
            match &pkg.source {
                None => SourceKind::Path,
                Some(s) if s.repr.starts_with("git+") => SourceKind::Git,
                Some(_) => SourceKind::Registry,
            }
        };
        let report_roots = is_member
            && (opts.packages.is_empty()
                || opts
                    .packages
                    .iter()
                    .any(|s| matches_spec(s, &pkg.name, &pkg.version.to_string())))
            && !opts
                .exclude
                .iter()
                .any(|s| matches_spec(s, &pkg.name, &pkg.version.to_string()));
        let test_support = is_member && used_only_by_dev_dependents(pkg, &members, &nodes);
        let dev_only = if opts.all_features {
            BTreeSet::new()
        } else {
            dev_only_features(pkg, &ordered, &nodes, &members, opts)
        };
        let features: Vec<String> = nodes
            .get(&pkg.id)
            .map(|n| {
                n.features
                    .iter()
                    .map(|f| f.to_string())
                    .filter(|f| !dev_only.contains(f))
                    .collect()
            })
            .unwrap_or_default();
        let manifest_dir = pkg
            .manifest_path
            .parent()
            .map(|p| p.as_std_path().to_path_buf())
            .unwrap_or_default();
        let package_index = packages.len();
        packages.push(PackageInfo {
            name: pkg.name.to_string(),
            version: pkg.version.to_string(),
            id: pkg.id.repr.clone(),
            manifest_dir,
            is_member,
            report_roots,
            test_support,
            nonblock_metadata: !pkg.metadata["nonblock"].is_null(),
            source,
            features: features.clone(),
        });
        let cfg = target_cfg.with_features(features.iter().map(String::as_str));
        let lib = pkg.targets.iter().find(|t| {
            t.kind
                .iter()
                .any(|k| matches!(k, TargetKind::Lib | TargetKind::RLib | TargetKind::DyLib))
        });
        let proc_macro = pkg
            .targets
            .iter()
            .any(|t| t.kind.contains(&TargetKind::ProcMacro));
        if proc_macro {
            let name = pkg
                .targets
                .iter()
                .find(|t| t.kind.contains(&TargetKind::ProcMacro))
                .map(|t| t.name.replace('-', "_"))
                .unwrap_or_else(|| pkg.name.replace('-', "_"));
            lib_unit.insert(&pkg.id, DepTarget::Opaque(name));
            if is_member {
                skipped.push((
                    pkg.name.to_string(),
                    "proc-macro crates run in the compiler, not on a runtime".into(),
                ));
            }
        } else if let Some(lib) = lib {
            lib_unit.insert(&pkg.id, DepTarget::Unit(units.len()));
            units.push(CrateUnit {
                package: package_index,
                crate_name: lib.name.replace('-', "_"),
                kind: UnitKind::Lib,
                root: lib.src_path.as_std_path().to_path_buf(),
                deps: BTreeMap::new(),
                cfg: cfg.clone(),
                skip: false,
            });
        } else if !is_member {
            skipped.push((pkg.name.to_string(), "no library target".into()));
        }
        if is_member {
            for bin in pkg
                .targets
                .iter()
                .filter(|t| t.kind.contains(&TargetKind::Bin))
            {
                pending_bins.push((
                    pkg.id.clone(),
                    CrateUnit {
                        package: package_index,
                        crate_name: bin.name.replace('-', "_"),
                        kind: UnitKind::Bin,
                        root: bin.src_path.as_std_path().to_path_buf(),
                        deps: BTreeMap::new(),
                        cfg: cfg.clone(),
                        skip: false,
                    },
                ));
            }
        }
    }
    let mut unit_pkg_ids: Vec<cargo_metadata::PackageId> = Vec::new();
    for pkg in &ordered {
        if let Some(DepTarget::Unit(_)) = lib_unit.get(&pkg.id) {
            unit_pkg_ids.push(pkg.id.clone());
        }
    }
    for (id, bin) in pending_bins {
        unit_pkg_ids.push(id);
        units.push(bin);
    }

    // Extern crate names: the node's deps (renamed names already applied by cargo), and for bins
    // the package's own lib.
    for (unit_index, id) in unit_pkg_ids.iter().enumerate() {
        let mut deps = BTreeMap::new();
        if let Some(node) = nodes.get(id) {
            for dep in &node.deps {
                let normal = dep.dep_kinds.is_empty()
                    || dep
                        .dep_kinds
                        .iter()
                        .any(|k| k.kind == DependencyKind::Normal);
                if !normal || dep.name.is_empty() {
                    continue;
                }
                if let Some(target) = lib_unit.get(&dep.pkg) {
                    deps.insert(dep.name.replace('-', "_"), target.clone());
                }
            }
        }
        if units[unit_index].kind == UnitKind::Bin {
            if let Some(DepTarget::Unit(lib)) = lib_unit.get(id) {
                let name = units[*lib].crate_name.clone();
                deps.insert(name, DepTarget::Unit(*lib));
            }
        }
        units[unit_index].deps = deps;
    }

    Ok(Workspace {
        root: metadata.workspace_root.as_std_path().to_path_buf(),
        packages,
        units,
        skipped,
        cache_dir: (!opts.no_cache).then(|| {
            metadata
                .target_directory
                .as_std_path()
                .join("nonblock")
                .join("cache")
        }),
    })
}

impl Workspace {
    /// Leaves the named crates out of the analysis (config `skip`): their units load no files,
    /// so paths into them stay textual.
    pub fn skip_crates(&mut self, names: &[String]) {
        for unit in &mut self.units {
            let package = &self.packages[unit.package];
            if !package.is_member
                && (names.contains(&unit.crate_name)
                    || names.contains(&package.name.replace('-', "_")))
            {
                unit.skip = true;
            }
        }
    }

    /// A file's path as reported: relative to the workspace root inside it, absolute outside.
    pub fn display_path(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_specs_match_name_and_optional_version() {
        assert!(matches_spec("app", "app", "0.1.0"));
        assert!(matches_spec("app@0.1", "app", "0.1.0"));
        assert!(!matches_spec("app@0.2", "app", "0.1.0"));
        assert!(!matches_spec("ap", "app", "0.1.0"));
    }
}

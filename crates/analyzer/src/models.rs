//! Models shipped by libraries: facts a package declares about its own API in its own manifest.
//!
//! ```toml
//! [package.metadata.nonblock]
//! blocking = [
//!   { path = "fastdb::Connection::query", category = "db-sync", reason = "waits for the server" },
//! ]
//! offload = ["fastdb::pool::run_blocking"]                 # runs its closure off the runtime
//! nonblocking = [                                          # looks blocking, is not
//!   { path = "fastdb::Connection::cached", reason = "reads an in-memory cache" },
//! ]
//! ```
//!
//! A library knows what its functions do better than a rule database kept elsewhere, and its
//! users get the model with the dependency, at the version they use. Why the design is what it is:
//!
//! - **A package speaks for itself only.** Every path must start with one of the package's own
//!   crate names: a dependency cannot declare `std::fs::read` non-blocking for the whole graph.
//!   Entries outside the package are dropped with a warning naming the package.
//! - **Precedence: workspace configuration > library model > rule database.** The model is
//!   applied to the rule database first ([`apply`]), then the workspace's `nonblock.toml` on top
//!   of the result (`Config::apply`), so each layer overrides the one below on the same path.
//! - **Never a failure.** A malformed table or entry in a dependency is a warning (a
//!   [`Diagnostic`] of kind `metadata` naming the package and the manifest line); the rest of the
//!   model still applies where it can. A member's own table follows the same rules: a library
//!   author sees the warnings while testing the model in their own workspace.
//! - **Read only where cargo says there is a table**: `cargo metadata` reports each package's
//!   `metadata`, so only manifests with `[package.metadata.nonblock]` are opened
//!   ([`crate::discover::PackageInfo::nonblock_metadata`]).

use std::collections::BTreeSet;

use serde::Deserialize;
use toml::Spanned;

use crate::discover::Workspace;
use crate::report::Diagnostic;
use crate::rules::RuleDb;

/// The keys a package's `[package.metadata.nonblock]` may hold. Any other key (workspace
/// configuration such as `rules` or `roots`) is not read from a package: for a member it is an
/// `ignored-config` notice (`config::ignored_config_notices`), for a dependency a warning.
pub const MODEL_KEYS: &[&str] = &["blocking", "offload", "nonblocking"];

/// The [`Diagnostic::kind`] of a problem in a package's model.
pub const DIAGNOSTIC_KIND: &str = "metadata";

/// One package's declared model, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryModel {
    /// `name version`, as messages and `-v` show it.
    pub package: String,
    /// The manifest it was read from, as the report shows paths.
    pub manifest: String,
    pub blocking: Vec<DeclaredBlocking>,
    pub offload: Vec<Declared>,
    pub nonblocking: Vec<Declared>,
}

/// A function the package declares blocking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredBlocking {
    pub path: String,
    pub category: String,
    pub reason: String,
}

/// A function the package declares an offload wrapper or non-blocking, with why (optional).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    pub path: String,
    pub reason: Option<String>,
}

impl LibraryModel {
    fn is_empty(&self) -> bool {
        self.blocking.is_empty() && self.offload.is_empty() && self.nonblocking.is_empty()
    }

    /// One line per declaration, for `-v`.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for b in &self.blocking {
            lines.push(format!(
                "blocking {} ({}): {}",
                b.path, b.category, b.reason
            ));
        }
        for (what, list) in [
            ("offload", &self.offload),
            ("nonblocking", &self.nonblocking),
        ] {
            for d in list {
                match &d.reason {
                    Some(r) => lines.push(format!("{what} {}: {r}", d.path)),
                    None => lines.push(format!("{what} {}", d.path)),
                }
            }
        }
        lines
    }
}

// The manifest as far as this module reads it: every other key is ignored by serde.
#[derive(Deserialize)]
struct Manifest {
    package: Option<Package>,
}

#[derive(Deserialize)]
struct Package {
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct Metadata {
    nonblock: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlocking {
    path: String,
    category: String,
    reason: String,
}

/// `"a::b"` or `{ path = "a::b", reason = "…" }`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawDeclared {
    Path(String),
    Table {
        path: String,
        reason: Option<String>,
    },
}

/// Reads the models of every package that has a `[package.metadata.nonblock]` table. Returns
/// them in package order, and one warning per problem.
/// What [`load`] found: the models, and the problems with them (warnings).
pub type Loaded = (Vec<LibraryModel>, Vec<Diagnostic>);

pub fn load(ws: &Workspace, rules: &RuleDb) -> Loaded {
    let mut models = Vec::new();
    let mut warnings = Vec::new();
    for (pi, p) in ws.packages.iter().enumerate() {
        if !p.nonblock_metadata {
            continue;
        }
        let manifest_path = p.manifest_dir.join("Cargo.toml");
        let shown = ws.display_path(&manifest_path);
        let package = format!("{} {}", p.name, p.version);
        let crates: BTreeSet<&str> = ws
            .units
            .iter()
            .filter(|u| u.package == pi)
            .map(|u| u.crate_name.as_str())
            .collect();
        let mut warn = |line: usize, message: String| {
            warnings.push(Diagnostic {
                kind: DIAGNOSTIC_KIND.into(),
                file: Some(shown.clone()),
                package: Some(p.name.clone()),
                message: format!("[package.metadata.nonblock] of {package}: {message}"),
                line: Some(line as u32),
                column: Some(1),
                member: false,
            })
        };
        let text = match std::fs::read_to_string(&manifest_path) {
            Ok(t) => t,
            Err(e) => {
                warn(1, format!("cannot read the manifest: {e}"));
                continue;
            }
        };
        let parsed = parse(&text, &package, &shown, &crates, rules, p.is_member);
        for (line, message) in parsed.problems {
            warn(line, message);
        }
        if let Some(m) = parsed.model.filter(|m| !m.is_empty()) {
            models.push(m);
        }
    }
    (models, warnings)
}

/// What [`parse`] found: the model (if the table could be read at all) and the problems, each
/// with its manifest line.
struct Parsed {
    model: Option<LibraryModel>,
    problems: Vec<(usize, String)>,
}

fn parse(
    text: &str,
    package: &str,
    shown: &str,
    crates: &BTreeSet<&str>,
    rules: &RuleDb,
    member: bool,
) -> Parsed {
    let mut problems = Vec::new();
    let manifest: Manifest = match toml::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            let line = e
                .span()
                .map_or(1, |s| crate::config::line_of_offset(text, s.start));
            problems.push((line, format!("invalid TOML: {}", e.message())));
            return Parsed {
                model: None,
                problems,
            };
        }
    };
    let Some(table) = manifest
        .package
        .and_then(|p| p.metadata)
        .and_then(|m| m.nonblock)
    else {
        return Parsed {
            model: None,
            problems,
        };
    };
    let header = table_line(text);
    let mut model = LibraryModel {
        package: package.to_string(),
        manifest: shown.to_string(),
        blocking: Vec::new(),
        offload: Vec::new(),
        nonblocking: Vec::new(),
    };
    for key in table.keys() {
        if MODEL_KEYS.contains(&key.as_str()) {
            continue;
        }
        // A member's workspace-configuration keys get their own notice (ignored-config).
        if !member {
            problems.push((
                key_line(text, header, key),
                format!(
                    "unknown key `{key}` (a package declares {}; project settings belong in \
                     the workspace's nonblock.toml)",
                    MODEL_KEYS.join(", ")
                ),
            ));
        }
    }
    // Each key's entries, spanned so that every problem names its line. A key of the wrong
    // shape loses that key only.
    let mut spanned = SpannedModel::read(text);
    let mut entries =
        |key: &str, problems: &mut Vec<(usize, String)>| -> Vec<Spanned<toml::Value>> {
            match table.get(key) {
                None => Vec::new(),
                Some(toml::Value::Array(items)) => match spanned.as_mut() {
                    Some(s) => s.take(key),
                    None => items
                        .iter()
                        .map(|v| Spanned::new(0..0, v.clone()))
                        .collect(),
                },
                Some(_) => {
                    problems.push((
                        key_line(text, header, key),
                        format!("`{key}` must be an array"),
                    ));
                    Vec::new()
                }
            }
        };
    let categories: BTreeSet<&str> = rules.rules.iter().map(|r| r.category.as_str()).collect();
    let check_path = |path: &str, line: usize, problems: &mut Vec<(usize, String)>| -> bool {
        if !crate::config::is_path(path) {
            problems.push((line, format!("`{path}` is not a Rust path (`crate::item`)")));
            return false;
        }
        let first = path.split("::").next().unwrap_or_default();
        if !crates.contains(first) {
            problems.push((
                line,
                format!(
                    "`{path}` is outside the package (its paths start with {}): a package \
                     declares facts about its own API only",
                    crates
                        .iter()
                        .map(|c| format!("`{c}::`"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
            return false;
        }
        true
    };
    for item in entries("blocking", &mut problems) {
        let line = span_line(text, &item, header);
        match RawBlocking::deserialize(item.into_inner()) {
            Ok(b) => {
                if !categories.contains(b.category.as_str()) {
                    problems.push((
                        line,
                        format!(
                            "unknown category `{}` for `{}` (one of: {})",
                            b.category,
                            b.path,
                            categories.iter().copied().collect::<Vec<_>>().join(", ")
                        ),
                    ));
                } else if b.reason.trim().is_empty() {
                    problems.push((line, format!("`{}` needs a non-empty `reason`", b.path)));
                } else if check_path(&b.path, line, &mut problems) {
                    model.blocking.push(DeclaredBlocking {
                        path: b.path,
                        category: b.category,
                        reason: b.reason,
                    });
                }
            }
            Err(e) => problems.push((
                line,
                format!(
                    "a `blocking` entry needs `path`, `category` and `reason` (strings): {}",
                    e.message()
                ),
            )),
        }
    }
    for key in ["offload", "nonblocking"] {
        for item in entries(key, &mut problems) {
            let line = span_line(text, &item, header);
            let declared = match RawDeclared::deserialize(item.into_inner()) {
                Ok(RawDeclared::Path(path)) => Declared { path, reason: None },
                Ok(RawDeclared::Table { path, reason }) => Declared { path, reason },
                Err(_) => {
                    problems.push((
                        line,
                        format!(
                            "an `{key}` entry is a path string or `{{ path = \"…\", reason = \
                             \"…\" }}`"
                        ),
                    ));
                    continue;
                }
            };
            if check_path(&declared.path, line, &mut problems) {
                if key == "offload" {
                    model.offload.push(declared);
                } else {
                    model.nonblocking.push(declared);
                }
            }
        }
    }
    Parsed {
        model: Some(model),
        problems,
    }
}

/// Applies the models to a copy of the rule database: each declaration overrides the database's
/// own entry for the same path (the workspace configuration is applied on top, by the caller).
pub fn apply(models: &[LibraryModel], rules: &RuleDb) -> RuleDb {
    let mut db = rules.clone();
    for m in models {
        for b in &m.blocking {
            let origin = format!("declared by {}", m.package);
            db.declare_blocking(&b.category, &b.path, &b.reason, None, &origin);
        }
        for o in &m.offload {
            db.boundaries.push(o.path.clone());
        }
        for n in &m.nonblocking {
            db.declare_nonblocking(&n.path);
        }
    }
    db
}

/// The `[package.metadata.nonblock]` header's line (0-based), or 0.
fn table_line(text: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with("[package.metadata.nonblock]")
                || t.starts_with("[package.metadata.nonblock.")
        })
        .unwrap_or(0)
}

/// The 1-based line of `key = ` under the table (or of the table when not found).
fn key_line(text: &str, header: usize, key: &str) -> usize {
    text.lines()
        .enumerate()
        .skip(header)
        .find(|(_, l)| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(header + 1, |(i, _)| i + 1)
}

/// The 1-based line of an entry: its span when known, else the table's header.
fn span_line(text: &str, item: &Spanned<toml::Value>, header: usize) -> usize {
    let span = item.span();
    if span.start == 0 && span.end == 0 {
        header + 1
    } else {
        crate::config::line_of_offset(text, span.start)
    }
}

/// The three model keys' entries with their spans in the text. `toml::Table` keeps no spans, so
/// the document is read a second time with the arrays typed as spanned values; when that fails
/// (a key of the wrong shape, already reported), entries are located at the table's header.
#[derive(Deserialize)]
struct SpannedManifest {
    package: SpannedPackage,
}

#[derive(Deserialize)]
struct SpannedPackage {
    metadata: SpannedMetadata,
}

#[derive(Deserialize)]
struct SpannedMetadata {
    nonblock: SpannedModel,
}

#[derive(Deserialize)]
struct SpannedModel {
    #[serde(default)]
    blocking: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    offload: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    nonblocking: Vec<Spanned<toml::Value>>,
}

impl SpannedModel {
    fn read(text: &str) -> Option<SpannedModel> {
        toml::from_str::<SpannedManifest>(text)
            .ok()
            .map(|m| m.package.metadata.nonblock)
    }

    fn take(&mut self, key: &str) -> Vec<Spanned<toml::Value>> {
        match key {
            "blocking" => std::mem::take(&mut self.blocking),
            "offload" => std::mem::take(&mut self.offload),
            _ => std::mem::take(&mut self.nonblocking),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"[package]
name = "fastdb"
version = "0.3.1"

[package.metadata.nonblock]
blocking = [
  { path = "fastdb::Conn::query", category = "db-sync", reason = "waits for the server" },
  { path = "fastdb::Conn::bad", category = "disk", reason = "x" },
]
offload = ["fastdb::pool::run", { path = "fastdb::pool::run_with", reason = "own threads" }]
nonblocking = ["fastdb::Conn::is_alive", "std::fs::read", 7]
roots = ["fastdb::x"]
"#;

    fn parse_as(member: bool) -> Parsed {
        let crates = BTreeSet::from(["fastdb"]);
        parse(
            MANIFEST,
            "fastdb 0.3.1",
            "Cargo.toml",
            &crates,
            &RuleDb::builtin(),
            member,
        )
    }

    #[test]
    fn valid_entries_apply_and_each_problem_has_its_line() {
        let parsed = parse_as(false);
        let model = parsed.model.expect("a model");
        assert_eq!(
            model.blocking,
            [DeclaredBlocking {
                path: "fastdb::Conn::query".into(),
                category: "db-sync".into(),
                reason: "waits for the server".into(),
            }]
        );
        let offload: Vec<&str> = model.offload.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(offload, ["fastdb::pool::run", "fastdb::pool::run_with"]);
        assert_eq!(model.offload[1].reason.as_deref(), Some("own threads"));
        let nonblocking: Vec<&str> = model.nonblocking.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(nonblocking, ["fastdb::Conn::is_alive"]);
        let lines: Vec<usize> = parsed.problems.iter().map(|p| p.0).collect();
        assert_eq!(lines, [12, 8, 11, 11], "{:#?}", parsed.problems);
        let text: Vec<&str> = parsed.problems.iter().map(|p| p.1.as_str()).collect();
        assert!(text[0].starts_with("unknown key `roots`"), "{text:?}");
        assert!(text[1].starts_with("unknown category `disk`"), "{text:?}");
        assert!(
            text[2].contains("`std::fs::read` is outside the package"),
            "{text:?}"
        );
        assert!(
            text[3].starts_with("an `nonblocking` entry is a path string"),
            "{text:?}"
        );
    }

    #[test]
    fn a_members_project_keys_are_left_to_the_ignored_config_notice() {
        let parsed = parse_as(true);
        assert!(
            !parsed.problems.iter().any(|p| p.1.contains("`roots`")),
            "{:#?}",
            parsed.problems
        );
    }

    #[test]
    fn a_table_of_the_wrong_shape_loses_that_key_only() {
        let text = "[package]\nname = \"x\"\n[package.metadata.nonblock]\nblocking = \"x::a\"\noffload = [\"x::run\"]\n";
        let parsed = parse(
            text,
            "x 1.0.0",
            "Cargo.toml",
            &BTreeSet::from(["x"]),
            &RuleDb::builtin(),
            false,
        );
        assert_eq!(
            parsed.problems,
            [(4, "`blocking` must be an array".to_string())]
        );
        let model = parsed.model.expect("a model");
        assert_eq!(model.offload[0].path, "x::run");
        let broken = parse(
            "[package\n",
            "x 1.0.0",
            "Cargo.toml",
            &BTreeSet::from(["x"]),
            &RuleDb::builtin(),
            false,
        );
        assert!(broken.model.is_none());
        assert!(
            broken.problems[0].1.starts_with("invalid TOML"),
            "{:?}",
            broken.problems
        );
    }

    #[test]
    fn precedence_is_workspace_then_library_then_database() {
        let db = RuleDb::builtin();
        // The database reports rusqlite's `execute`; a model declaring it non-blocking wins.
        assert!(db.match_path("rusqlite::Connection::execute").is_some());
        let model = LibraryModel {
            package: "rusqlite 0.32.0".into(),
            manifest: "Cargo.toml".into(),
            blocking: vec![DeclaredBlocking {
                path: "rusqlite::Connection::busy_wait".into(),
                category: "db-sync".into(),
                reason: "spins until the lock is free".into(),
            }],
            offload: vec![],
            nonblocking: vec![Declared {
                path: "rusqlite::Connection::execute".into(),
                reason: None,
            }],
        };
        let with_model = apply(std::slice::from_ref(&model), &db);
        assert!(with_model
            .match_path("rusqlite::Connection::execute")
            .is_none());
        assert!(with_model.is_opaque("rusqlite::Connection::execute"));
        let m = with_model
            .match_path("rusqlite::Connection::busy_wait")
            .expect("declared blocking");
        assert_eq!(
            with_model.alternative(m),
            "(declared by rusqlite 0.32.0) spins until the lock is free"
        );
        // The workspace over the model: `allow` the declared-blocking path, declare the
        // non-blocking one blocking again.
        let config = crate::config::parse(
            "allow = [\"rusqlite::Connection::busy_wait\"]\n[[blocking]]\npath = \"rusqlite::Connection::execute\"\ncategory = \"db-sync\"\nreason = \"ours waits\"\n",
            "nonblock.toml",
            None,
            &db,
        )
        .expect("valid config");
        let configured = config.apply(&with_model);
        assert!(configured
            .match_path("rusqlite::Connection::busy_wait")
            .is_none());
        let m = configured
            .match_path("rusqlite::Connection::execute")
            .expect("the workspace's blocking wins");
        assert_eq!(configured.alternative(m), "(project rule) ours waits");
        assert!(!configured.is_opaque("rusqlite::Connection::execute"));
    }
}

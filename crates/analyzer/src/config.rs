//! Project configuration: `nonblock.toml` at the workspace root, or
//! `[workspace.metadata.nonblock]` in the root `Cargo.toml`.
//!
//! Parsed raw (a TOML table), then validated into [`Config`]; every problem — unknown keys,
//! values of the wrong type, unknown rules or categories, malformed paths — is collected with its
//! file and line, and all of them are reported at once (cargo-deny's `cfg.rs` habit).
//!
//! ```toml
//! [rules.NB0701]              # by id or by name
//! severity = "error"          # or "warning"
//! enabled = true
//!
//! [[blocking]]                # extra blocking APIs
//! path = "mycrate::legacy::load"
//! category = "fs"
//! reason = "reads the legacy config from disk"
//!
//! offload = ["mycrate::pool::run_blocking"]   # extra offload wrappers
//! roots = ["mycrate::worker::poll_jobs"]       # sync fns that run on a runtime worker
//! allow = ["vendored::fast_path"]              # treat as non-blocking: never followed
//! skip = ["huge_generated_crate"]              # crates not analysed
//!
//! [ffi]
//! trust = ["zstd_sys"]                         # FFI libraries never reported
//! report = ["my_codec_sys"]                    # FFI libraries reported on every call
//! unknown = "quiet"                            # libraries without a policy: "report" (default)
//! severity = { openssl_sys = "error" }         # per-library severity
//!
//! [report]
//! init = true                                  # report one-time initialisation (kind `init`)
//! [runtimes]
//! dedicated = ["mycrate::rt::cpu_runtime", "mycrate::rt::CPU"]  # runtimes for CPU/blocking work
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::rules::{RuleDb, Severity};

/// A validated configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    /// Where it was read from (for messages), if anywhere.
    pub source: Option<String>,
    pub rule_severity: BTreeMap<String, Severity>,
    pub disabled_rules: Vec<String>,
    /// Opt-in rules (`enabled = false` in the database) switched on.
    pub enabled_rules: Vec<String>,
    pub blocking: Vec<ExtraBlocking>,
    pub offload: Vec<String>,
    pub roots: Vec<String>,
    pub allow: Vec<String>,
    pub skip: Vec<String>,
    pub ffi_trust: Vec<String>,
    pub ffi_severity: BTreeMap<String, Severity>,
    /// FFI libraries reported on every call, whatever their default (`ffi.report`).
    pub ffi_report: Vec<String>,
    /// Libraries without an FFI policy are not reported (`ffi.unknown = "quiet"`).
    pub ffi_unknown_quiet: bool,
    /// Report blocking inside one-time initialisers as kind `init` (`report.init`).
    pub report_init: bool,
    /// Keep every async fn of an application a root, also those nothing calls
    /// (`report.uncalled`; `graph::uncalled_roots`).
    pub report_uncalled: bool,
    /// Functions, methods and statics that create or hand out a runtime dedicated to CPU-heavy
    /// or blocking work (`[runtimes] dedicated`): tasks spawned onto it are not roots.
    pub dedicated_runtimes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExtraBlocking {
    pub path: String,
    pub category: String,
    pub reason: String,
    pub severity: Option<Severity>,
}

/// One configuration problem, located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

const TOP_KEYS: &[&str] = &[
    "rules", "blocking", "offload", "roots", "allow", "skip", "ffi", "report", "runtimes",
];

/// Finds and loads the configuration of the workspace at `root`. `nonblock.toml` wins over
/// `[workspace.metadata.nonblock]`; having neither is an empty configuration.
pub fn load(root: &Path, rules: &RuleDb) -> Result<Config, Vec<ConfigError>> {
    let file = root.join("nonblock.toml");
    if file.is_file() {
        let text = std::fs::read_to_string(&file).map_err(|e| {
            vec![ConfigError {
                file: "nonblock.toml".into(),
                line: 1,
                message: format!("cannot read: {e}"),
            }]
        })?;
        return parse(&text, "nonblock.toml", None, rules);
    }
    let manifest: PathBuf = root.join("Cargo.toml");
    let Ok(text) = std::fs::read_to_string(&manifest) else {
        return Ok(Config::default());
    };
    parse(
        &text,
        "Cargo.toml",
        Some(&["workspace", "metadata", "nonblock"]),
        rules,
    )
}

/// Configuration written where it is not read, as notices (they count toward `--fail-on
/// warning` like an unused suppression: settings the user believes apply do not):
/// `[workspace.metadata.nonblock]` in the root `Cargo.toml` beside a `nonblock.toml`, which wins;
/// `[package.metadata.nonblock]` in a member's manifest (`members`: display path and manifest
/// path of the members `cargo metadata` shows such a table for; each is read here only for the
/// table's line), since configuration is read from the workspace root only.
pub fn ignored_config_notices(
    root: &Path,
    members: &[(String, PathBuf)],
) -> Vec<crate::suppress::Notice> {
    // The line of a table header, or of the first dotted key under it, for the notice.
    fn table_line(text: &str, keys: &[&str]) -> Option<u32> {
        let doc: toml::Table = toml::from_str(text).ok()?;
        let mut t = &doc;
        for k in keys {
            t = t.get(*k)?.as_table()?;
        }
        let header = format!("[{}", keys.join("."));
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with(&header))
            .unwrap_or(0);
        Some(line as u32 + 1)
    }
    let mut out = Vec::new();
    let root_manifest = root.join("Cargo.toml");
    if root.join("nonblock.toml").is_file() {
        if let Ok(text) = std::fs::read_to_string(&root_manifest) {
            if let Some(line) = table_line(&text, &["workspace", "metadata", "nonblock"]) {
                out.push(crate::suppress::Notice {
                    kind: "ignored-config".into(),
                    file: "Cargo.toml".into(),
                    line,
                    message: "`[workspace.metadata.nonblock]` is ignored: `nonblock.toml` is read \
                              instead (one configuration per workspace); move these settings there"
                        .into(),
                });
            }
        }
    }
    for (shown, manifest) in members {
        let Ok(text) = std::fs::read_to_string(manifest) else {
            continue;
        };
        // A package's own model (`crate::models`) is read from it; anything else there is
        // project configuration, which is read from the workspace root only.
        let foreign: Vec<String> = toml::from_str::<toml::Table>(&text)
            .ok()
            .and_then(|doc| {
                let t = doc.get("package")?.get("metadata")?.get("nonblock")?;
                Some(
                    t.as_table()?
                        .keys()
                        .filter(|k| !crate::models::MODEL_KEYS.contains(&k.as_str()))
                        .map(|k| format!("`{k}`"))
                        .collect(),
                )
            })
            .unwrap_or_default();
        if foreign.is_empty() {
            continue;
        }
        if let Some(line) = table_line(&text, &["package", "metadata", "nonblock"]) {
            out.push(crate::suppress::Notice {
                kind: "ignored-config".into(),
                file: shown.clone(),
                line,
                message: format!(
                    "{} in `[package.metadata.nonblock]` of a workspace member {} ignored: \
                     project configuration is read from the workspace root (`nonblock.toml` \
                     or `[workspace.metadata.nonblock]` in its `Cargo.toml`); a package's own \
                     table declares only {}",
                    foreign.join(", "),
                    if foreign.len() == 1 { "is" } else { "are" },
                    crate::models::MODEL_KEYS.join(", ")
                ),
            });
        }
    }
    out
}

/// Parses `text`; with `within`, only the table at that key path (absent: empty config).
pub fn parse(
    text: &str,
    file: &str,
    within: Option<&[&str]>,
    rules: &RuleDb,
) -> Result<Config, Vec<ConfigError>> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of_offset(text, s.start)).unwrap_or(1);
        vec![ConfigError {
            file: file.into(),
            line,
            message: format!("invalid TOML: {}", e.message()),
        }]
    })?;
    let mut table = &doc;
    let mut header = String::new();
    if let Some(keys) = within {
        for k in keys {
            match table.get(*k) {
                Some(toml::Value::Table(t)) => table = t,
                _ => return Ok(Config::default()),
            }
        }
        header = keys.join(".");
    }
    let mut v = Validator {
        text,
        file,
        header,
        errors: Vec::new(),
    };
    let config = v.config(table, rules);
    if v.errors.is_empty() {
        Ok(Config {
            source: Some(file.to_string()),
            ..config
        })
    } else {
        Err(v.errors)
    }
}

struct Validator<'a> {
    text: &'a str,
    file: &'a str,
    /// The table the config lives in (`workspace.metadata.nonblock` in Cargo.toml).
    header: String,
    errors: Vec<ConfigError>,
}

impl Validator<'_> {
    fn error(&mut self, key_path: &[&str], message: String) {
        let line = self.locate(key_path);
        self.errors.push(ConfigError {
            file: self.file.to_string(),
            line,
            message,
        });
    }

    /// The line of `key_path` in the text: the last key's `key =` line or `[..key]` header after
    /// the preceding keys' headers. An approximation that is exact for ordinary layouts.
    fn locate(&self, key_path: &[&str]) -> usize {
        let lines: Vec<&str> = self.text.lines().collect();
        let mut from = 0;
        if !self.header.is_empty() {
            if let Some(i) = lines.iter().position(|l| is_header(l, &self.header)) {
                from = i;
            }
        }
        for key in key_path {
            let found = lines.iter().enumerate().skip(from).find(|(_, l)| {
                let t = l.trim_start();
                let bare = key.trim_matches('"');
                t.starts_with(&format!("{bare} "))
                    || t.starts_with(&format!("{bare}="))
                    || t.starts_with(&format!("\"{bare}\""))
                    || (t.starts_with('[') && t.trim_end().trim_end_matches(']').ends_with(bare))
            });
            if let Some((i, _)) = found {
                from = i;
            }
        }
        from + 1
    }

    fn config(&mut self, t: &toml::Table, rules: &RuleDb) -> Config {
        let mut c = Config::default();
        for key in t.keys() {
            if !TOP_KEYS.contains(&key.as_str()) {
                self.error(
                    &[key],
                    format!(
                        "unknown key `{key}` (expected one of: {})",
                        TOP_KEYS.join(", ")
                    ),
                );
            }
        }
        if let Some(v) = t.get("rules") {
            self.rules(v, rules, &mut c);
        }
        if let Some(v) = t.get("blocking") {
            self.blocking(v, rules, &mut c);
        }
        c.offload = self.paths(t, "offload");
        c.roots = self.paths(t, "roots");
        c.allow = self.paths(t, "allow");
        c.skip = self.names(t, "skip");
        if let Some(v) = t.get("ffi") {
            self.ffi(v, &mut c);
        }
        if let Some(v) = t.get("report") {
            self.report(v, &mut c);
        }
        if let Some(v) = t.get("runtimes") {
            self.runtimes(v, &mut c);
        }
        c
    }

    fn report(&mut self, v: &toml::Value, c: &mut Config) {
        let Some(t) = v.as_table() else {
            return self.error(
                &["report"],
                "`report` must be a table with `init` and `uncalled`".into(),
            );
        };
        for (k, val) in t {
            match (k.as_str(), val) {
                ("init", toml::Value::Boolean(on)) => c.report_init = *on,
                ("init", _) => {
                    self.error(&["report", k], "`report.init` must be true or false".into())
                }
                ("uncalled", toml::Value::Boolean(on)) => c.report_uncalled = *on,
                ("uncalled", _) => self.error(
                    &["report", k],
                    "`report.uncalled` must be true or false".into(),
                ),
                _ => self.error(
                    &["report", k],
                    format!("unknown key `{k}` in `report` (expected init, uncalled)"),
                ),
            }
        }
    }

    fn runtimes(&mut self, v: &toml::Value, c: &mut Config) {
        let Some(t) = v.as_table() else {
            return self.error(
                &["runtimes"],
                "`runtimes` must be a table with `dedicated`".into(),
            );
        };
        for k in t.keys() {
            if k != "dedicated" {
                self.error(
                    &["runtimes", k],
                    format!("unknown key `{k}` in `runtimes` (expected dedicated)"),
                );
            }
        }
        c.dedicated_runtimes = self.paths(t, "dedicated");
    }

    fn rules(&mut self, v: &toml::Value, rules: &RuleDb, c: &mut Config) {
        let Some(t) = v.as_table() else {
            return self.error(&["rules"], "`rules` must be a table of rule ids".into());
        };
        for (id, settings) in t {
            let Some(rule) = rules.find(id) else {
                self.error(
                    &["rules", id],
                    format!("unknown rule `{id}` (`cargo nonblock rules` lists them)"),
                );
                continue;
            };
            let Some(s) = settings.as_table() else {
                self.error(
                    &["rules", id],
                    format!("`rules.{id}` must be a table with `severity` and/or `enabled`"),
                );
                continue;
            };
            for (k, val) in s {
                match (k.as_str(), val) {
                    ("severity", toml::Value::String(sev)) => match parse_severity(sev) {
                        Some(sev) => {
                            c.rule_severity.insert(rule.id.clone(), sev);
                        }
                        None => self.error(
                            &["rules", id, k],
                            format!("severity must be \"error\" or \"warning\", not \"{sev}\""),
                        ),
                    },
                    ("enabled", toml::Value::Boolean(on)) => {
                        if *on {
                            c.enabled_rules.push(rule.id.clone());
                        } else {
                            c.disabled_rules.push(rule.id.clone());
                        }
                    }
                    ("severity" | "enabled", _) => {
                        self.error(&["rules", id, k], format!("`{k}` has the wrong type"))
                    }
                    _ => self.error(
                        &["rules", id, k],
                        format!("unknown key `{k}` in `rules.{id}` (expected severity, enabled)"),
                    ),
                }
            }
        }
    }

    fn blocking(&mut self, v: &toml::Value, rules: &RuleDb, c: &mut Config) {
        let Some(entries) = v.as_array() else {
            return self.error(
                &["blocking"],
                "`blocking` must be an array of tables (`[[blocking]]`)".into(),
            );
        };
        let categories: Vec<&str> = rules.rules.iter().map(|r| r.category.as_str()).collect();
        for e in entries {
            let Some(t) = e.as_table() else {
                self.error(
                    &["blocking"],
                    "each `[[blocking]]` entry must be a table".into(),
                );
                continue;
            };
            for k in t.keys() {
                if !matches!(k.as_str(), "path" | "category" | "reason" | "severity") {
                    self.error(&["blocking", k], format!("unknown key `{k}` in `[[blocking]]` (expected path, category, reason, severity)"));
                }
            }
            let path = t
                .get("path")
                .and_then(|p| p.as_str())
                .unwrap_or_default()
                .to_string();
            let category = t
                .get("category")
                .and_then(|p| p.as_str())
                .unwrap_or_default()
                .to_string();
            let reason = t
                .get("reason")
                .and_then(|p| p.as_str())
                .unwrap_or_default()
                .to_string();
            if !is_path(&path) {
                self.error(
                    &["blocking", "path"],
                    format!(
                        "`path` must be a Rust path like `mycrate::module::function`, not `{path}`"
                    ),
                );
            }
            if !categories.contains(&category.as_str()) {
                let mut known: Vec<&str> = categories.clone();
                known.dedup();
                self.error(
                    &["blocking", "category"],
                    format!(
                        "unknown category `{category}` (one of: {})",
                        known.join(", ")
                    ),
                );
            }
            if reason.trim().is_empty() {
                self.error(
                    &["blocking", "path"],
                    format!("`[[blocking]]` entry `{path}` needs a `reason`"),
                );
            }
            let severity = match t.get("severity") {
                None => None,
                Some(toml::Value::String(s)) => {
                    let parsed = parse_severity(s);
                    if parsed.is_none() {
                        self.error(
                            &["blocking", "severity"],
                            format!("severity must be \"error\" or \"warning\", not \"{s}\""),
                        );
                    }
                    parsed
                }
                Some(_) => {
                    self.error(
                        &["blocking", "severity"],
                        "`severity` must be a string".into(),
                    );
                    None
                }
            };
            c.blocking.push(ExtraBlocking {
                path,
                category,
                reason,
                severity,
            });
        }
    }

    fn strings(&mut self, t: &toml::Table, key: &str) -> Vec<String> {
        match t.get(key) {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => {
                let mut out = Vec::new();
                for i in items {
                    match i.as_str() {
                        Some(s) => out.push(s.to_string()),
                        None => self.error(&[key], format!("`{key}` must be an array of strings")),
                    }
                }
                out
            }
            Some(_) => {
                self.error(&[key], format!("`{key}` must be an array of strings"));
                Vec::new()
            }
        }
    }

    fn paths(&mut self, t: &toml::Table, key: &str) -> Vec<String> {
        let list = self.strings(t, key);
        for p in &list {
            if !is_path(p) {
                self.error(
                    &[key],
                    format!("`{p}` in `{key}` is not a Rust path like `mycrate::module::function`"),
                );
            }
        }
        list
    }

    fn names(&mut self, t: &toml::Table, key: &str) -> Vec<String> {
        let list = self.strings(t, key);
        for n in &list {
            if n.is_empty()
                || !n
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '-')
            {
                self.error(&[key], format!("`{n}` in `{key}` is not a crate name"));
            }
        }
        list.into_iter().map(|n| n.replace('-', "_")).collect()
    }

    fn ffi(&mut self, v: &toml::Value, c: &mut Config) {
        let Some(t) = v.as_table() else {
            return self.error(
                &["ffi"],
                "`ffi` must be a table with `trust`, `report`, `unknown` and/or `severity`".into(),
            );
        };
        for k in t.keys() {
            if !matches!(k.as_str(), "trust" | "report" | "unknown" | "severity") {
                self.error(
                    &["ffi", k],
                    format!(
                        "unknown key `{k}` in `ffi` (expected trust, report, unknown, severity)"
                    ),
                );
            }
        }
        c.ffi_trust = self.names(t, "trust");
        c.ffi_report = self.names(t, "report");
        match t.get("unknown") {
            None => {}
            Some(toml::Value::String(s)) if s == "report" => c.ffi_unknown_quiet = false,
            Some(toml::Value::String(s)) if s == "quiet" => c.ffi_unknown_quiet = true,
            Some(_) => self.error(
                &["ffi", "unknown"],
                "`ffi.unknown` must be \"report\" or \"quiet\"".into(),
            ),
        }
        if let Some(sev) = t.get("severity") {
            match sev.as_table() {
                Some(m) => {
                    for (lib, s) in m {
                        match s.as_str().and_then(parse_severity) {
                            Some(s) => {
                                c.ffi_severity.insert(lib.replace('-', "_"), s);
                            }
                            None => self.error(
                                &["ffi", "severity", lib],
                                format!("severity for `{lib}` must be \"error\" or \"warning\""),
                            ),
                        }
                    }
                }
                None => self.error(
                    &["ffi", "severity"],
                    "`ffi.severity` must be a table of library = severity".into(),
                ),
            }
        }
    }
}

fn is_header(line: &str, header: &str) -> bool {
    let t = line.trim();
    t.starts_with('[') && t.trim_matches(|c| c == '[' || c == ']').trim() == header
}

pub(crate) fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn parse_severity(s: &str) -> Option<Severity> {
    match s {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        _ => None,
    }
}

/// `a::b::c`: at least two segments of identifiers.
pub(crate) fn is_path(p: &str) -> bool {
    let segs: Vec<&str> = p.split("::").collect();
    segs.len() >= 2
        && segs.iter().all(|s| {
            let s = s.strip_prefix("r#").unwrap_or(s);
            !s.is_empty()
                && s.chars().all(|c| c.is_alphanumeric() || c == '_')
                && !s.starts_with(|c: char| c.is_ascii_digit())
        })
}

impl Config {
    /// Applies the rule-level settings to a copy of the database.
    pub fn apply(&self, rules: &RuleDb) -> RuleDb {
        let mut db = rules.clone();
        for (id, sev) in &self.rule_severity {
            if let Some(r) = db.rules.iter_mut().find(|r| &r.id == id) {
                r.severity = *sev;
            }
        }
        // Applied over the rule database and the libraries' models: the workspace has the last
        // word on a path (`allow` also beats a pattern of the database).
        for b in &self.blocking {
            db.add_user_api(&b.category, &b.path, &b.reason, b.severity);
        }
        db.boundaries.extend(self.offload.iter().cloned());
        db.dedicated_runtimes
            .extend(self.dedicated_runtimes.iter().cloned());
        for path in &self.allow {
            db.declare_nonblocking(path);
        }
        db.trusted_ffi.extend(self.ffi_trust.iter().cloned());
        db.ffi_report.extend(self.ffi_report.iter().cloned());
        db.ffi_unknown_quiet |= self.ffi_unknown_quiet;
        db.report_init |= self.report_init;
        db.report_uncalled |= self.report_uncalled;
        db.ffi_severity
            .extend(self.ffi_severity.iter().map(|(k, v)| (k.clone(), *v)));
        for id in &self.enabled_rules {
            db.disabled.remove(id);
        }
        db.disabled.extend(self.disabled_rules.iter().cloned());
        db
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> RuleDb {
        RuleDb::builtin()
    }

    #[test]
    fn a_full_config_validates_and_applies() {
        let text = r#"
offload = ["app::pool::run_blocking"]
roots = ["app::worker::poll"]
allow = ["vendored::fast_path"]
skip = ["huge-crate"]

[rules.NB0701]
severity = "error"

[rules.thread-sleep]
enabled = false

[[blocking]]
path = "app::legacy::load"
category = "fs"
reason = "reads the legacy config"

[ffi]
trust = ["zstd-sys"]
severity = { openssl_sys = "error" }

[runtimes]
dedicated = ["app::rt::cpu_runtime", "app::rt::CPU"]
"#;
        let c = parse(text, "nonblock.toml", None, &db()).unwrap();
        assert_eq!(
            c.dedicated_runtimes,
            ["app::rt::cpu_runtime", "app::rt::CPU"]
        );
        assert_eq!(c.rule_severity.get("NB0701"), Some(&Severity::Error));
        assert_eq!(c.disabled_rules, ["NB0201"]);
        assert_eq!(c.skip, ["huge_crate"]);
        assert_eq!(c.ffi_trust, ["zstd_sys"]);
        let applied = c.apply(&db());
        assert!(applied.is_boundary("app::pool::run_blocking"));
        assert!(applied.is_opaque("vendored::fast_path"));
        let m = applied.match_path("app::legacy::load").unwrap();
        assert_eq!(applied.rules[m.rule].category, "fs");
        assert!(applied.disabled.contains("NB0201"));
        assert_eq!(applied.dedicated_runtimes, c.dedicated_runtimes);
    }

    #[test]
    fn dedicated_runtimes_must_be_paths_in_a_runtimes_table() {
        let text = "[runtimes]\ndedicated = [\"cpu_runtime\"]\nshared = []\n";
        let errs = parse(text, "nonblock.toml", None, &db()).unwrap_err();
        let shown: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(shown.len(), 2, "{shown:#?}");
        assert!(shown
            .iter()
            .any(|e| e
                .starts_with("nonblock.toml:2: `cpu_runtime` in `dedicated` is not a Rust path")));
        assert!(shown
            .iter()
            .any(|e| e.starts_with("nonblock.toml:3: unknown key `shared` in `runtimes`")));
        let errs = parse("runtimes = 1\n", "nonblock.toml", None, &db()).unwrap_err();
        assert!(errs[0].message.contains("`runtimes` must be a table"));
    }

    #[test]
    fn every_problem_is_reported_at_once_with_its_line() {
        let text = "colour = 1\n\n[rules.NB9999]\nseverity = \"error\"\n\n[rules.NB0101]\nseverity = \"fatal\"\nloud = true\n\n[[blocking]]\npath = \"not a path\"\ncategory = \"teleport\"\n";
        let errs = parse(text, "nonblock.toml", None, &db()).unwrap_err();
        let shown: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(errs.len(), 7, "{shown:#?}");
        assert!(
            shown.iter().any(|e| e.contains("needs a `reason`")),
            "{shown:#?}"
        );
        assert!(
            shown
                .iter()
                .any(|e| e.starts_with("nonblock.toml:1: unknown key `colour`")),
            "{shown:#?}"
        );
        assert!(
            shown
                .iter()
                .any(|e| e.starts_with("nonblock.toml:3: unknown rule `NB9999`")),
            "{shown:#?}"
        );
        assert!(
            shown
                .iter()
                .any(|e| e.starts_with("nonblock.toml:7: severity must be")),
            "{shown:#?}"
        );
        assert!(
            shown
                .iter()
                .any(|e| e.starts_with("nonblock.toml:8: unknown key `loud`")),
            "{shown:#?}"
        );
        assert!(
            shown
                .iter()
                .any(|e| e.starts_with("nonblock.toml:11: `path` must be a Rust path")),
            "{shown:#?}"
        );
        assert!(
            shown
                .iter()
                .any(|e| e.starts_with("nonblock.toml:12: unknown category `teleport`")),
            "{shown:#?}"
        );
    }

    #[test]
    fn workspace_metadata_table_is_read_from_cargo_toml() {
        let text = "[workspace]\nmembers = []\n\n[workspace.metadata.nonblock]\nallow = [\"x::y\"]\nbogus = 1\n";
        let errs = parse(
            text,
            "Cargo.toml",
            Some(&["workspace", "metadata", "nonblock"]),
            &db(),
        )
        .unwrap_err();
        assert_eq!(errs[0].to_string(), "Cargo.toml:6: unknown key `bogus` (expected one of: rules, blocking, offload, roots, allow, skip, ffi, report, runtimes)");
        let none = parse(
            "[workspace]\n",
            "Cargo.toml",
            Some(&["workspace", "metadata", "nonblock"]),
            &db(),
        )
        .unwrap();
        assert_eq!(none, Config::default());
    }

    #[test]
    fn invalid_toml_is_one_located_error() {
        let errs = parse("a = [\n", "nonblock.toml", None, &db()).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.starts_with("invalid TOML"));
    }

    /// Settings written where they are not read are notices: the root `Cargo.toml`'s table
    /// beside a `nonblock.toml` (which wins), and a member's `[package.metadata.nonblock]`.
    #[test]
    fn configuration_that_is_not_read_is_a_notice_at_its_table() {
        let dir = std::env::temp_dir().join(format!("nonblock-ignored-cfg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("crates/a")).unwrap();
        std::fs::create_dir_all(dir.join("crates/b")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.metadata.nonblock]\nroots = []\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("crates/a/Cargo.toml"),
            "[package]\nname = \"a\"\n\n[package.metadata.nonblock.rules.NB0101]\nenabled = false\n",
        )
        .unwrap();
        std::fs::write(dir.join("crates/b/Cargo.toml"), "[package]\nname = \"b\"\n").unwrap();
        // A library's own model (crate::models) is read, not ignored.
        std::fs::create_dir_all(dir.join("crates/c")).unwrap();
        std::fs::write(
            dir.join("crates/c/Cargo.toml"),
            "[package]\nname = \"c\"\n\n[package.metadata.nonblock]\noffload = [\"c::run\"]\n",
        )
        .unwrap();
        let members = vec![
            (
                "crates/c/Cargo.toml".to_string(),
                dir.join("crates/c/Cargo.toml"),
            ),
            (
                "crates/a/Cargo.toml".to_string(),
                dir.join("crates/a/Cargo.toml"),
            ),
            (
                "crates/b/Cargo.toml".to_string(),
                dir.join("crates/b/Cargo.toml"),
            ),
        ];
        let at = |notices: Vec<crate::suppress::Notice>| -> Vec<(String, u32)> {
            notices.into_iter().map(|n| (n.file, n.line)).collect()
        };
        // Without nonblock.toml the root table is what is read: only the member's is ignored.
        assert_eq!(
            at(super::ignored_config_notices(&dir, &members)),
            [("crates/a/Cargo.toml".to_string(), 4)]
        );
        std::fs::write(dir.join("nonblock.toml"), "roots = []\n").unwrap();
        assert_eq!(
            at(super::ignored_config_notices(&dir, &members)),
            [
                ("Cargo.toml".to_string(), 4),
                ("crates/a/Cargo.toml".to_string(), 4)
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

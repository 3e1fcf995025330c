//! The rule database: blocking APIs as data (`rules/*.toml`, embedded at compile time so the
//! binary needs nothing at run time), plus the runtime facts the graph needs — offload
//! boundaries and opaque runtime entry points (`rules/runtime.toml`).
//!
//! One rule = one `[[rule]]` entry: id, name, category, severity, the APIs it matches with their
//! async alternatives, and clippy-style docs. API patterns are canonical paths (`core::`/`alloc::`
//! spelled `std::`); a final `*` segment matches any one segment; `Type::method` matches a method
//! call whose receiver resolved to `Type`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Every rule file, embedded. `every_rule_file_is_embedded` keeps this list and `rules/` in step.
pub const RULE_FILES: &[(&str, &str)] = &[
    ("fs.toml", include_str!("../../../rules/fs.toml")),
    ("sleep.toml", include_str!("../../../rules/sleep.toml")),
    ("net.toml", include_str!("../../../rules/net.toml")),
    (
        "http-blocking.toml",
        include_str!("../../../rules/http-blocking.toml"),
    ),
    ("db-sync.toml", include_str!("../../../rules/db-sync.toml")),
    ("process.toml", include_str!("../../../rules/process.toml")),
    (
        "sync-prims.toml",
        include_str!("../../../rules/sync-prims.toml"),
    ),
    (
        "block-on.toml",
        include_str!("../../../rules/block-on.toml"),
    ),
    ("stdio.toml", include_str!("../../../rules/stdio.toml")),
    ("ffi.toml", include_str!("../../../rules/ffi.toml")),
    ("cpu.toml", include_str!("../../../rules/cpu.toml")),
];

pub const RUNTIME_FILE: &str = include_str!("../../../rules/runtime.toml");

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Where a rule's API may be called for the finding to count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Any analysed crate, including dependency internals.
    #[default]
    Any,
    /// Only calls written in workspace members: for APIs that async libraries use correctly
    /// by design (short critical sections under a std `Mutex`), where a dependency's internal
    /// use is not a defect of the user's code.
    Workspace,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDoc {
    pub what: String,
    pub why: String,
    #[serde(default)]
    pub known_problems: String,
    pub example: String,
    pub use_instead: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    name: String,
    category: String,
    severity: Severity,
    summary: String,
    help: String,
    alternative: String,
    #[serde(default)]
    scope: Scope,
    #[serde(default)]
    ffi: bool,
    /// `false`: opt-in (clippy's pedantic habit), for rules whose findings depend on what the
    /// analysis cannot see, such as a document's size.
    #[serde(default = "enabled_by_default")]
    enabled: bool,
    /// `"path"` or `"path => alternative"`.
    #[serde(default)]
    apis: Vec<String>,
    /// Method names matched on receivers of unknown type (low confidence).
    #[serde(default)]
    name_fallback: Vec<String>,
    /// APIs of `apis` that take a lock and return its guard: reported only when the guard can
    /// be held over an `.await` or a loop, or escapes ([`crate::critical`]).
    #[serde(default)]
    guard_apis: Vec<String>,
    /// APIs of `apis` that wait only to resolve a host name: not reported when their address is
    /// already an IP address (`UdpSocket::bind("0.0.0.0:0")`, `TcpListener::bind(addr)` with
    /// `addr: SocketAddr`).
    #[serde(default)]
    dns_only_apis: Vec<String>,
    /// A call whose first argument is a string literal of at most this many bytes, containing
    /// none of `small_literal_unless`, is not reported: a short fixed argument makes the call
    /// cheap (a regex pattern compiled in microseconds). At most [`crate::ir::STR_TEXT_MAX`].
    #[serde(default)]
    small_literal_bytes: Option<usize>,
    /// Substrings that make even a short literal expensive (`\w`: a Unicode class compiles to a
    /// large automaton).
    #[serde(default)]
    small_literal_unless: Vec<String>,
    doc: RuleDoc,
}

fn enabled_by_default() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuleFile {
    rule: Vec<RawRule>,
    /// Per-library FFI defaults (`rules/ffi.toml`).
    #[serde(default)]
    library: Vec<RawLibrary>,
}

/// The FFI default of one binding crate: which of its foreign functions wait or work.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLibrary {
    /// The binding crate, `-` spelled `_` (`libsqlite3_sys`).
    #[serde(rename = "crate")]
    pub krate: String,
    /// The foreign functions reported, by name; absent: every one; empty: none (an
    /// accessor-style binding).
    #[serde(default)]
    pub functions: Option<Vec<String>>,
    /// Why: what the library's calls do.
    pub why: String,
}

/// What an FFI call into a library is, by the rule data and the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FfiPolicy {
    /// A library (or function) known to wait or work: reported per call.
    Report,
    /// Known not to wait (an accessor-style binding), or trusted by the configuration.
    Quiet,
    /// No policy: reported once per root and library, at low confidence.
    Unknown,
}

#[derive(Clone, Debug, Serialize)]
pub struct Api {
    pub pattern: String,
    pub alternative: Option<String>,
    /// Takes a lock and returns its guard: a short critical section is not reported.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guard: bool,
    /// Waits only to resolve a host name: a call given an IP address is not reported.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dns_only: bool,
    /// Declared by the project's configuration or a library's own model rather than the rule
    /// database: `alternative` is then the declaration's reason, shown as the finding's help.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub declared: bool,
    /// The rule's `small_literal_bytes` / `small_literal_unless`: a call given a short fixed
    /// string literal is cheap and not reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub small_literal: Option<SmallLiteral>,
}

/// A rule's threshold for cheap fixed arguments (`small_literal_bytes`, `small_literal_unless`).
#[derive(Clone, Debug, Serialize)]
pub struct SmallLiteral {
    pub bytes: usize,
    pub unless: Vec<String>,
}

impl Api {
    /// Whether a call given the string literal `text` as its first argument is exempt: the
    /// literal is short and names nothing that makes it expensive.
    pub fn exempts_literal(&self, text: &str) -> bool {
        self.small_literal.as_ref().is_some_and(|s| {
            text.len() <= s.bytes && !s.unless.iter().any(|u| text.contains(u.as_str()))
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Rule {
    pub id: String,
    pub name: String,
    pub category: String,
    pub severity: Severity,
    pub summary: String,
    pub help: String,
    pub alternative: String,
    pub scope: Scope,
    pub ffi: bool,
    /// Whether the rule runs without being enabled in the configuration.
    pub enabled_by_default: bool,
    pub apis: Vec<Api>,
    pub name_fallback: Vec<String>,
    pub doc: RuleDoc,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuntime {
    boundaries: Vec<String>,
    opaque: Vec<String>,
    system_ffi: Vec<String>,
    #[serde(default)]
    fast_ffi: Vec<String>,
    #[serde(default)]
    spawners: Vec<String>,
    #[serde(default)]
    opaque_macros: Vec<String>,
    #[serde(default)]
    init: Vec<String>,
    #[serde(default)]
    cold: Vec<String>,
}

/// A matched API: which rule, which entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiMatch {
    pub rule: usize,
    pub api: usize,
}

#[derive(Clone, Debug)]
pub struct RuleDb {
    pub rules: Vec<Rule>,
    exact: BTreeMap<String, ApiMatch>,
    /// Patterns ending in `*`, by their prefix (without the `*`) and segment count.
    globs: Vec<(String, usize, ApiMatch)>,
    /// Method name → the API it guesses, and the argument count it needs (`name()`: none).
    fallback: BTreeMap<String, (ApiMatch, Option<usize>)>,
    /// Severities of project-declared APIs.
    user_severity: BTreeMap<String, Severity>,
    pub boundaries: Vec<String>,
    pub opaque: Vec<String>,
    /// Paths declared non-blocking (a library's `nonblocking`, the project's `allow`): never
    /// matched as a blocking API, whatever pattern of the database covers them. Same syntax as
    /// `opaque` (exact, or `prefix::*`).
    pub exempt: Vec<String>,
    /// Crates whose `extern` fns are system bindings (see `rules/runtime.toml`).
    pub system_ffi: Vec<String>,
    /// Foreign functions that return without waiting: never reported (`rules/runtime.toml`).
    pub fast_ffi: Vec<String>,
    /// Task spawners (also `opaque`): a function that hands its parameter to one is a spawner
    /// too (`graph::spawners`).
    pub spawners: Vec<String>,
    /// Crates whose `macro_rules!` are not expanded (`rules/runtime.toml`: logging).
    pub opaque_macros: Vec<String>,
    /// Functions and statics that create or hand out a dedicated runtime for CPU-heavy or
    /// blocking work (config `runtimes.dedicated`): tasks spawned onto it are not roots
    /// (`dedicated.rs`).
    pub dedicated_runtimes: Vec<String>,
    /// FFI libraries the project trusts (config `ffi.trust`): never reported.
    pub trusted_ffi: Vec<String>,
    /// Per-library severity of FFI findings (config `ffi.severity`).
    pub ffi_severity: BTreeMap<String, Severity>,
    /// Rule ids switched off by configuration.
    pub disabled: std::collections::BTreeSet<String>,
    /// One-time initialisers (`rules/runtime.toml`: `init`): what they run is kind `init`.
    pub init: Vec<String>,
    /// Functions of dependencies that run only on a rare path their own code guards
    /// (`rules/runtime.toml`: `cold`): what a call of one reaches is kind `init`.
    pub cold: Vec<String>,
    /// Report kind-`init` findings (config `[report] init = true`); off by default.
    pub report_init: bool,
    /// Keep async fns nothing calls as roots (config `[report] uncalled = true`); off by
    /// default (`graph::uncalled_roots`).
    pub report_uncalled: bool,
    /// Per-library FFI defaults (`rules/ffi.toml`: `[[library]]`), by crate name.
    pub ffi_libraries: BTreeMap<String, RawLibrary>,
    /// FFI libraries the project wants reported per call (config `ffi.report`).
    pub ffi_report: Vec<String>,
    /// Libraries without a policy are not reported (config `ffi.unknown = "quiet"`).
    pub ffi_unknown_quiet: bool,
}

/// Whether `path` is one of `list`'s paths or under one of its `prefix::*` entries.
fn covered(list: &[String], path: &str) -> bool {
    list.iter()
        .any(|b| b == path || (b.ends_with("::*") && path.starts_with(&b[..b.len() - 1])))
}

impl RuleDb {
    /// The embedded database. Panics only if the embedded data is malformed, which the test
    /// suite rules out.
    pub fn builtin() -> RuleDb {
        let files: Vec<(&str, &str)> = RULE_FILES.to_vec();
        RuleDb::from_sources(&files, RUNTIME_FILE).expect("embedded rule database is valid")
    }

    pub fn from_sources(files: &[(&str, &str)], runtime: &str) -> Result<RuleDb, String> {
        let mut raw = Vec::new();
        let mut libraries = Vec::new();
        for (name, text) in files {
            let parsed: RawRuleFile =
                toml::from_str(text).map_err(|e| format!("rules/{name}: {e}"))?;
            raw.extend(parsed.rule);
            libraries.extend(parsed.library);
        }
        raw.sort_by(|a, b| a.id.cmp(&b.id));
        let runtime: RawRuntime =
            toml::from_str(runtime).map_err(|e| format!("rules/runtime.toml: {e}"))?;
        let mut db = RuleDb {
            rules: Vec::new(),
            exact: BTreeMap::new(),
            globs: Vec::new(),
            fallback: BTreeMap::new(),
            user_severity: BTreeMap::new(),
            boundaries: runtime.boundaries,
            opaque: runtime.opaque,
            exempt: Vec::new(),
            system_ffi: runtime.system_ffi,
            fast_ffi: runtime.fast_ffi,
            spawners: runtime.spawners,
            opaque_macros: runtime.opaque_macros,
            dedicated_runtimes: Vec::new(),
            trusted_ffi: Vec::new(),
            ffi_severity: BTreeMap::new(),
            disabled: Default::default(),
            init: runtime.init,
            cold: runtime.cold,
            report_init: false,
            report_uncalled: false,
            ffi_libraries: BTreeMap::new(),
            ffi_report: Vec::new(),
            ffi_unknown_quiet: false,
        };
        for lib in libraries {
            if db.ffi_libraries.insert(lib.krate.clone(), lib).is_some() {
                return Err("an FFI library is listed twice".into());
            }
        }
        for r in raw {
            if db.rules.iter().any(|x| x.id == r.id || x.name == r.name) {
                return Err(format!("duplicate rule id or name: {} {}", r.id, r.name));
            }
            let rule_index = db.rules.len();
            let mut apis = Vec::new();
            for (api_index, spec) in r.apis.iter().enumerate() {
                let (pattern, alternative) = match spec.split_once("=>") {
                    Some((p, a)) => (p.trim().to_string(), Some(a.trim().to_string())),
                    None => (spec.trim().to_string(), None),
                };
                let m = ApiMatch {
                    rule: rule_index,
                    api: api_index,
                };
                if let Some(prefix) = pattern.strip_suffix('*') {
                    db.globs
                        .push((prefix.to_string(), pattern.split("::").count(), m));
                } else if db.exact.insert(pattern.clone(), m).is_some() {
                    return Err(format!("API `{pattern}` is listed twice"));
                }
                let guard = r.guard_apis.contains(&pattern);
                let dns_only = r.dns_only_apis.contains(&pattern);
                let small_literal = r.small_literal_bytes.map(|bytes| SmallLiteral {
                    bytes,
                    unless: r.small_literal_unless.clone(),
                });
                apis.push(Api {
                    pattern,
                    alternative,
                    guard,
                    dns_only,
                    declared: false,
                    small_literal,
                });
            }
            match r.small_literal_bytes {
                Some(n) if n > crate::ir::STR_TEXT_MAX => {
                    return Err(format!(
                        "{}: small_literal_bytes {n} is over the {} bytes the IR keeps",
                        r.id,
                        crate::ir::STR_TEXT_MAX
                    ))
                }
                None if !r.small_literal_unless.is_empty() => {
                    return Err(format!(
                        "{}: small_literal_unless without small_literal_bytes",
                        r.id
                    ))
                }
                _ => {}
            }
            for (field, list) in [
                ("guard_apis", &r.guard_apis),
                ("dns_only_apis", &r.dns_only_apis),
            ] {
                if let Some(stray) = list.iter().find(|g| !apis.iter().any(|a| &a.pattern == *g)) {
                    return Err(format!(
                        "{}: {field} entry `{stray}` is not in its `apis`",
                        r.id
                    ));
                }
            }
            for entry in &r.name_fallback {
                // `to_socket_addrs()` matches only calls without arguments: a same-named method
                // of another trait (tokio's sealed `to_socket_addrs(&self, Internal)`) is not it.
                let (name, args) = match entry.strip_suffix("()") {
                    Some(n) => (n.to_string(), Some(0)),
                    None => (entry.clone(), None),
                };
                let api = apis
                    .iter()
                    .position(|a| a.pattern.rsplit("::").next() == Some(name.as_str()))
                    .ok_or_else(|| {
                        format!("{}: fallback `{name}` names no API of the rule", r.id)
                    })?;
                db.fallback.insert(
                    name,
                    (
                        ApiMatch {
                            rule: rule_index,
                            api,
                        },
                        args,
                    ),
                );
            }
            if !r.enabled {
                db.disabled.insert(r.id.clone());
            }
            db.rules.push(Rule {
                id: r.id,
                name: r.name,
                category: r.category,
                severity: r.severity,
                summary: r.summary,
                help: r.help,
                alternative: r.alternative,
                scope: r.scope,
                ffi: r.ffi,
                enabled_by_default: r.enabled,
                apis,
                name_fallback: r.name_fallback,
                doc: r.doc,
            });
        }
        Ok(db)
    }

    /// The rule matching a canonical path, if any.
    pub fn match_path(&self, path: &str) -> Option<ApiMatch> {
        if self.is_exempt(path) {
            return None;
        }
        if let Some(m) = self.exact.get(path) {
            return Some(*m);
        }
        let segments = path.split("::").count();
        self.globs
            .iter()
            .find(|(prefix, n, _)| *n == segments && path.starts_with(prefix.as_str()))
            .map(|(_, _, m)| *m)
    }

    /// The rule matching a method name on a receiver of unknown type (low confidence).
    pub fn match_fallback(&self, method: &str, args: usize) -> Option<ApiMatch> {
        let (m, wanted) = self.fallback.get(method)?;
        wanted.is_none_or(|n| n == args).then_some(*m)
    }

    /// Adds a project-declared blocking API (config `[[blocking]]`) to the first rule of its
    /// category; the reason becomes its alternative text.
    pub fn add_user_api(
        &mut self,
        category: &str,
        path: &str,
        reason: &str,
        severity: Option<Severity>,
    ) {
        self.declare_blocking(category, path, reason, severity, "project rule");
    }

    /// Declares `path` blocking, as the first rule of `category`, with `reason` (and `origin`:
    /// who said so) as its alternative text. Overrides an earlier `nonblocking`/`allow` of the
    /// same path: declarations are applied lowest precedence first (rule database, library
    /// models, workspace configuration).
    pub fn declare_blocking(
        &mut self,
        category: &str,
        path: &str,
        reason: &str,
        severity: Option<Severity>,
        origin: &str,
    ) {
        let Some(rule) = self.rules.iter().position(|r| r.category == category) else {
            return;
        };
        self.exempt.retain(|p| p != path);
        self.opaque.retain(|p| p != path);
        let api = self.rules[rule].apis.len();
        self.rules[rule].apis.push(Api {
            pattern: path.to_string(),
            alternative: Some(format!("({origin}) {reason}")),
            guard: false,
            dns_only: false,
            declared: true,
            small_literal: None,
        });
        self.exact.insert(path.to_string(), ApiMatch { rule, api });
        if let Some(sev) = severity {
            self.user_severity.insert(path.to_string(), sev);
        }
    }

    /// Declares `path` (or `prefix::*`) non-blocking: never followed, never matched as an API.
    /// Overrides an earlier declaration or database entry for the same path.
    pub fn declare_nonblocking(&mut self, path: &str) {
        if self.exact.remove(path).is_some() {
            self.user_severity.remove(path);
        }
        self.opaque.push(path.to_string());
        self.exempt.push(path.to_string());
    }

    /// Whether `path` was declared non-blocking ([`RuleDb::declare_nonblocking`]).
    pub fn is_exempt(&self, path: &str) -> bool {
        !self.exempt.is_empty() && covered(&self.exempt, path)
    }

    /// The severity of a finding of rule `rule` on API `api`: project overrides first.
    pub fn severity_of(&self, rule: usize, api: &str, ffi_library: Option<&str>) -> Severity {
        if let Some(s) = self.user_severity.get(api) {
            return *s;
        }
        if let Some(s) = ffi_library.and_then(|l| self.ffi_severity.get(l)) {
            return *s;
        }
        self.rules[rule].severity
    }

    /// What a call of foreign fn `function` of crate `library` is: the configuration first
    /// (`ffi.trust` is checked by the caller, `ffi.report`), then the library's default in
    /// `rules/ffi.toml`; a workspace member's own `extern` block is reported, any other library
    /// without a policy is [`FfiPolicy::Unknown`].
    pub fn ffi_policy(&self, library: &str, function: &str, in_member: bool) -> FfiPolicy {
        if self.ffi_report.iter().any(|l| l == library) {
            return FfiPolicy::Report;
        }
        if let Some(lib) = self.ffi_library(library) {
            return match &lib.functions {
                Some(fs) if !fs.iter().any(|f| f == function) => FfiPolicy::Quiet,
                _ => FfiPolicy::Report,
            };
        }
        if in_member {
            FfiPolicy::Report
        } else if self.ffi_unknown_quiet {
            FfiPolicy::Quiet
        } else {
            FfiPolicy::Unknown
        }
    }

    /// The library's entry: by its crate name, else the longest `prefix*` entry it starts with
    /// (`tree_sitter_*`: every grammar crate).
    fn ffi_library(&self, library: &str) -> Option<&RawLibrary> {
        self.ffi_libraries.get(library).or_else(|| {
            self.ffi_libraries
                .iter()
                .filter_map(|(k, lib)| Some((k.strip_suffix('*')?, lib)))
                .filter(|(prefix, _)| library.starts_with(prefix))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|(_, lib)| lib)
        })
    }

    pub fn ffi_rule(&self) -> Option<usize> {
        self.rules.iter().position(|r| r.ffi)
    }

    pub fn is_boundary(&self, path: &str) -> bool {
        self.boundaries.iter().any(|b| b == path)
    }

    pub fn is_opaque(&self, path: &str) -> bool {
        covered(&self.opaque, path)
    }

    pub fn find(&self, id_or_name: &str) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|r| r.id.eq_ignore_ascii_case(id_or_name) || r.name == id_or_name)
    }

    /// The alternative to suggest for a match: the API's own, else the rule's.
    pub fn alternative(&self, m: ApiMatch) -> &str {
        let rule = &self.rules[m.rule];
        rule.apis
            .get(m.api)
            .and_then(|a| a.alternative.as_deref())
            .unwrap_or(&rule.alternative)
    }

    /// A short hash of the database, for cache keys and the SARIF driver.
    pub fn content_hash(&self) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        for (name, text) in RULE_FILES {
            h.update(name.as_bytes());
            h.update(text.as_bytes());
        }
        h.update(RUNTIME_FILE.as_bytes());
        hex(&h.finalize()[..8])
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_file_is_embedded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../rules");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".toml") && n != "runtime.toml" && n != "std-types.toml")
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = RULE_FILES.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
    }

    #[test]
    fn builtin_rules_are_valid_and_documented() {
        let db = RuleDb::builtin();
        assert!(db.rules.len() >= 10);
        for r in &db.rules {
            assert!(r.id.starts_with("NB") && r.id.len() == 6, "{}", r.id);
            assert!(
                !r.doc.what.is_empty() && !r.doc.why.is_empty() && !r.doc.example.is_empty(),
                "{}",
                r.id
            );
            assert!(!r.alternative.is_empty(), "{}", r.id);
            assert!(r.ffi || !r.apis.is_empty(), "{} matches nothing", r.id);
            let cat_code = &r.id[2..4];
            let same_cat = db.rules.iter().filter(|o| &o.id[2..4] == cat_code);
            assert!(
                same_cat.clone().all(|o| o.category == r.category),
                "{}: category code mixes categories",
                r.id
            );
        }
    }

    #[test]
    fn exact_and_glob_patterns_match_by_segment_count() {
        let db = RuleDb::builtin();
        let read = db.match_path("std::fs::read").unwrap();
        assert_eq!(db.rules[read.rule].id, "NB0101");
        assert_eq!(db.alternative(read), "tokio::fs::read");
        assert!(db.match_path("tokio::fs::read").is_none());
        assert!(db.match_path("std::fs::File::unknown_method").is_none());
        assert!(db.match_fallback("to_socket_addrs", 0).is_some());
        assert!(db.match_fallback("to_socket_addrs", 1).is_none());
        assert!(db.match_fallback("read", 0).is_none());
    }

    /// NB1109's `small_literal_bytes`: a short fixed pattern is exempt unless it names a
    /// Unicode-wide class or repeats `.`/a group; other rules exempt nothing.
    #[test]
    fn a_short_fixed_regex_literal_is_exempt_by_the_rule_data() {
        let db = RuleDb::builtin();
        let m = db.match_path("regex::Regex::new").unwrap();
        let api = &db.rules[m.rule].apis[m.api];
        assert!(api.exempts_literal(r"^#\$ (.*)$"));
        assert!(api.exempts_literal(r"/volumes/[a-z0-9]{64}/_data /"));
        assert!(
            !api.exempts_literal(r"\w{20}"),
            "a Unicode class is expensive"
        );
        assert!(!api.exempts_literal(r"\d{4}"));
        assert!(!api.exempts_literal(r".{64}"));
        assert!(!api.exempts_literal(&"a".repeat(65)), "over the threshold");
        let read = db.match_path("std::fs::read").unwrap();
        assert!(!db.rules[read.rule].apis[read.api].exempts_literal("a"));
    }

    #[test]
    fn small_literal_fields_are_validated() {
        let rule = |extra: &str| {
            format!(
                "[[rule]]\nid = \"NB9901\"\nname = \"x\"\ncategory = \"cpu\"\nseverity = \"warning\"\n\
                 summary = \"s\"\nhelp = \"h\"\nalternative = \"a\"\napis = [\"x::y\"]\n{extra}\n\
                 [rule.doc]\nwhat = \"w\"\nwhy = \"w\"\nexample = \"e\"\nuse_instead = \"u\"\n"
            )
        };
        let runtime = "boundaries = []\nopaque = []\nsystem_ffi = []\n";
        let load = |extra: &str| RuleDb::from_sources(&[("x.toml", &rule(extra))], runtime);
        assert!(load("small_literal_bytes = 64").is_ok());
        let over = load("small_literal_bytes = 129").unwrap_err();
        assert!(over.contains("over the 128 bytes"), "{over}");
        let stray = load("small_literal_unless = ['x']").unwrap_err();
        assert!(stray.contains("without small_literal_bytes"), "{stray}");
    }
}

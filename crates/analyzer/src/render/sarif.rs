//! SARIF 2.1.0 (`--format sarif`), built with the serde-sarif types, for GitHub code scanning and
//! other SARIF viewers.
//!
//! One run; `tool.driver.rules` holds every rule of the database. Each finding (an entry and the
//! API it reaches) is one result whose primary location is `path[0]` (the entry call written in
//! the async context), whose `codeFlows[0]` walks the whole path one call per step, and whose
//! `relatedLocations` hold the async context (id 1) and the async callers that reach it
//! (`reached_from`, ids 2 and up, each at its call), linked from the message.
//! Workspace files are given relative to `%SRCROOT%` (the repository root, see [`Roots`]);
//! dependency sources relative to `CARGO_HOME`, so the log never carries an absolute path of the
//! machine it was made on. Files that could not be analysed become `toolExecutionNotifications`.
//!
//! [`render`] is a pure function of its inputs; [`Roots::detect`] is the one place that reads
//! the environment, and the CLI calls it.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::json;
use serde_sarif::sarif::{
    ArtifactLocation, CodeFlow, Invocation, Location, LogicalLocation, Message,
    MultiformatMessageString, Notification, PhysicalLocation, PropertyBag, Region,
    ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif,
    ThreadFlow, ThreadFlowLocation, Tool, ToolComponent,
};

use super::SourceProvider;
use crate::report::{Diagnostic, Finding, Report};
use crate::rules::{Rule, RuleDb};
use crate::suppress::Notice;

/// The `$schema` written into the log (the schema GitHub's documentation points to).
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// `tool.driver.informationUri`: the package's repository when its manifest names one. This
/// project has no public address yet, and a placeholder URI would send readers of the SARIF
/// nowhere, so the field is left out until it has (SARIF makes it optional).
pub const INFORMATION_URI: Option<&str> = match env!("CARGO_PKG_REPOSITORY").as_bytes() {
    [] => None,
    _ => Some(env!("CARGO_PKG_REPOSITORY")),
};
/// The base id of workspace and repository files (the one GitHub code scanning understands).
pub const SRCROOT: &str = "%SRCROOT%";
/// The base id of dependency sources: cargo's home directory (`registry/src/…`, `git/checkouts/…`).
pub const CARGO_HOME: &str = "CARGO_HOME";
/// The `partialFingerprints` key of the finding's stable fingerprint (rule, API and the entry:
/// the async context's package and name and the callee; no line numbers). Versioned with the
/// scheme: a v1 value (`nonblockPath/v1`, one per async caller) is not comparable.
pub const FINGERPRINT_KEY: &str = "nonblockEntry/v2";

/// Where the files of a report live: what turns its paths into SARIF uris.
#[derive(Clone, Debug)]
pub struct Roots {
    /// The workspace root: the report's relative paths are relative to it.
    pub workspace: PathBuf,
    /// What `%SRCROOT%` stands for: the repository root (the workspace root or an ancestor), so
    /// that uris are repository-relative as GitHub code scanning expects.
    pub srcroot: PathBuf,
    /// `$CARGO_HOME`, where dependency sources are unpacked.
    pub cargo_home: Option<PathBuf>,
}

impl Roots {
    /// `%SRCROOT%` = the nearest ancestor of the workspace root (itself included) that holds a
    /// `.git` entry, else the workspace root; `CARGO_HOME` = `$CARGO_HOME`, else `~/.cargo`.
    pub fn detect(workspace_root: &Path) -> Roots {
        let workspace = std::path::absolute(workspace_root).unwrap_or(workspace_root.into());
        let srcroot = workspace
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&workspace)
            .to_path_buf();
        Roots {
            workspace,
            srcroot,
            cargo_home: default_cargo_home(),
        }
    }

    /// The absolute path of a file as the report gives it (workspace-relative or absolute).
    fn absolute(&self, file: &str) -> PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.workspace.join(p)
        }
    }

    /// A report file as `(uriBaseId, relative uri path)`, never an absolute path. Workspace
    /// files (relative in the report) are relative to `%SRCROOT%`; a dependency file under
    /// cargo's home is relative to `CARGO_HOME`, and so is one outside the repository that is
    /// laid out like a cargo home (`…/registry/src/…`, `…/git/checkouts/…`: `CARGO_HOME` was
    /// another directory); any other file is relative to `%SRCROOT%`, with `..` segments when it
    /// lies outside (a path dependency next to the repository). `None` when no relative path
    /// exists (another drive).
    pub fn locate(&self, file: &str) -> Option<(&'static str, String)> {
        let abs = normalize(&self.absolute(file));
        let srcroot = normalize(&self.srcroot);
        if Path::new(file).is_absolute() {
            if let Some(home) = &self.cargo_home {
                if let Ok(rel) = abs.strip_prefix(normalize(home)) {
                    return Some((CARGO_HOME, slash_path(rel)));
                }
            }
            if !abs.starts_with(&srcroot) {
                if let Some(rel) = cargo_layout_suffix(&abs) {
                    return Some((CARGO_HOME, rel));
                }
            }
        }
        relative_to(&abs, &srcroot).map(|rel| (SRCROOT, rel))
    }

    /// A report file for people: repository-relative for repository files,
    /// `dotenvy-0.15.7/src/lib.rs` for registry sources, `$CARGO_HOME/…` for other cargo files.
    pub fn display(&self, file: &str) -> String {
        match self.locate(file) {
            Some((CARGO_HOME, rel)) => match rel.strip_prefix("registry/src/") {
                Some(rest) => rest
                    .split_once('/')
                    .map_or(rel.clone(), |(_, r)| r.to_string()),
                None => format!("$CARGO_HOME/{rel}"),
            },
            Some((_, rel)) => rel,
            None => file.to_string(),
        }
    }
}

/// `$CARGO_HOME` if set (made absolute), else `$HOME/.cargo`, as cargo itself decides.
pub fn default_cargo_home() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CARGO_HOME").filter(|h| !h.is_empty()) {
        return std::path::absolute(PathBuf::from(h)).ok();
    }
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".cargo"))
}

/// Renders the report as a SARIF 2.1.0 log (pretty JSON, newline-terminated). `sources` is read
/// for the end column of each call (the callee path or method name written there).
pub fn render(
    report: &Report,
    rules: &RuleDb,
    roots: &Roots,
    sources: &dyn SourceProvider,
) -> String {
    let mut lines = LineCache::new(sources);
    let results: Vec<SarifResult> = report
        .findings
        .iter()
        .map(|f| result(f, rules, roots, &mut lines))
        .collect();
    let mut notifications: Vec<Notification> = Vec::new();
    for d in &report.errors {
        let n = notification(d, roots);
        // The schema wants the array's items unique.
        if !notifications.contains(&n) {
            notifications.push(n);
        }
    }
    let mut config_notifications: Vec<Notification> = Vec::new();
    for n in &report.notices {
        let n = config_notification(n, roots);
        if !config_notifications.contains(&n) {
            config_notifications.push(n);
        }
    }
    let invocation = Invocation::builder()
        .execution_successful(report.stats.internal_errors == 0)
        .tool_execution_notifications(notifications)
        .tool_configuration_notifications(config_notifications)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver(rules)).build())
        .original_uri_base_ids(base_ids())
        .column_kind(json!("unicodeCodePoints"))
        .invocations(vec![invocation])
        .results(results)
        .build();
    let log = Sarif::builder()
        .schema(SCHEMA_URI)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s = serde_json::to_string_pretty(&log).expect("SARIF serialises");
    s.push('\n');
    s
}

fn driver(rules: &RuleDb) -> ToolComponent {
    let mut driver = ToolComponent::builder()
        .name("cargo-nonblock")
        .full_name(format!("cargo-nonblock {}", env!("CARGO_PKG_VERSION")))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules.rules.iter().map(descriptor).collect::<Vec<_>>())
        .build();
    driver.information_uri = INFORMATION_URI.map(str::to_string);
    driver
}

fn descriptor(rule: &Rule) -> ReportingDescriptor {
    // Rules that may match a method by name on a receiver of unknown type are less precise.
    let precision = if rule.name_fallback.is_empty() {
        "high"
    } else {
        "medium"
    };
    let mut props = BTreeMap::new();
    props.insert("precision".to_string(), json!(precision));
    // GitHub's own severity property for non-security results: `error`, `warning`.
    props.insert(
        "problem.severity".to_string(),
        json!(rule.severity.as_str()),
    );
    ReportingDescriptor::builder()
        .id(rule.id.as_str())
        .name(rule.name.as_str())
        .short_description(plain(&rule.summary))
        .full_description(plain(rule.doc.what.trim()))
        .help(
            MultiformatMessageString::builder()
                .text(help_text(rule))
                .markdown(help_markdown(rule))
                .build(),
        )
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(rule.severity.as_str()))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(tags(rule))
                .additional_properties(props)
                .build(),
        )
        .build()
}

fn tags(rule: &Rule) -> Vec<String> {
    let mut tags = vec!["async".to_string(), "blocking".to_string()];
    if !tags.contains(&rule.category) {
        tags.push(rule.category.clone());
    }
    tags
}

fn help_text(rule: &Rule) -> String {
    let d = &rule.doc;
    let mut s = format!("{}\n\nWhy is this bad: {}\n", d.what.trim(), d.why.trim());
    if !d.known_problems.trim().is_empty() {
        s.push_str(&format!("\nKnown problems: {}\n", d.known_problems.trim()));
    }
    s.push_str(&format!(
        "\nExample:\n{}\n\nUse instead:\n{}\n\nFix: {}\n",
        d.example.trim(),
        d.use_instead.trim(),
        rule.help
    ));
    s
}

fn help_markdown(rule: &Rule) -> String {
    let d = &rule.doc;
    let mut s = format!(
        "**{}** ({}): {}\n\n## What it does\n{}\n\n## Why is this bad\n{}\n",
        rule.id,
        rule.name,
        rule.summary,
        d.what.trim(),
        d.why.trim()
    );
    if !d.known_problems.trim().is_empty() {
        s.push_str(&format!(
            "\n## Known problems\n{}\n",
            d.known_problems.trim()
        ));
    }
    s.push_str(&format!(
        "\n## Example\n```rust\n{}\n```\n\n## Use instead\n```rust\n{}\n```\n\n\
         Async alternative: {}. Fix: {}.\n",
        d.example.trim(),
        d.use_instead.trim(),
        rule.alternative,
        rule.help
    ));
    s
}

fn result(f: &Finding, rules: &RuleDb, roots: &Roots, lines: &mut LineCache) -> SarifResult {
    let first = &f.path[0];
    let primary = Location::builder()
        .physical_location(physical(
            roots,
            &first.file,
            first.line,
            first.column,
            lines,
        ))
        .logical_locations(vec![function(&f.root.function)])
        .build();
    let root = Location::builder()
        .id(1)
        .physical_location(physical(
            roots,
            &f.root.file,
            f.root.line,
            f.root.column,
            &mut LineCache::none(),
        ))
        .logical_locations(vec![function(&f.root.function)])
        .message(text(format!("{} `{}`", f.root.kind, f.root.function)))
        .build();
    let mut related = vec![root];
    for (i, r) in f.reached_from.iter().enumerate() {
        related.push(
            Location::builder()
                .id(i as i64 + 2)
                .physical_location(physical(roots, &r.file, r.line, r.column, lines))
                .logical_locations(vec![function(&r.function)])
                .message(text(format!("reached from {} `{}`", r.kind, r.function)))
                .build(),
        );
    }
    let last = f.path.len() - 1;
    let steps: Vec<ThreadFlowLocation> = f
        .path
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut msg = format!("`{}` calls `{}`", s.function, s.callee);
            if i == last {
                msg.push_str(&format!(" ({} {})", f.rule, f.name));
            }
            let location = Location::builder()
                .physical_location(physical(roots, &s.file, s.line, s.column, lines))
                .logical_locations(vec![function(&s.function)])
                .message(text(msg))
                .build();
            ThreadFlowLocation::builder()
                .location(location)
                .module(s.package.as_str())
                .nesting_level(i as i64)
                .execution_order(i as i64 + 1)
                .kinds(vec!["call".to_string()])
                .importance(json!(if i == 0 || i == last {
                    "essential"
                } else {
                    "important"
                }))
                .build()
        })
        .collect();
    let chain: Vec<String> = f
        .path
        .iter()
        .map(|s| format!("`{}`", s.function))
        .chain(std::iter::once(format!("`{}`", f.api)))
        .collect();
    let flow = CodeFlow::builder()
        .message(text(format!(
            "`{}` reaches `{}` in {} step{}",
            f.root.function,
            f.api,
            f.path.len(),
            if f.path.len() == 1 { "" } else { "s" }
        )))
        .thread_flows(vec![ThreadFlow::builder().locations(steps).build()])
        .build();
    let mut props = BTreeMap::new();
    props.insert("confidence".to_string(), json!(f.confidence));
    props.insert("api".to_string(), json!(f.api));
    props.insert("category".to_string(), json!(f.category));
    props.insert("rootKind".to_string(), json!(f.root.kind));
    props.insert("reachedFromCount".to_string(), json!(f.reached_from_count));
    let mut message = format!(
        "{}\nPath: {}\n",
        link_root(&f.message, &f.root.function),
        escape_message(&chain.join(" → ")),
    );
    if f.reached_from_count > 0 {
        message.push_str(&reached_from_line(f));
        message.push('\n');
    }
    message.push_str(&escape_message(&format!("Fix: {}", f.help)));
    let builder = SarifResult::builder()
        .rule_id(f.rule.as_str())
        .level(match f.severity.as_str() {
            "error" => ResultLevel::Error,
            "warning" => ResultLevel::Warning,
            _ => ResultLevel::Note,
        })
        .message(text(message))
        .locations(vec![primary])
        .related_locations(related)
        .code_flows(vec![flow])
        .partial_fingerprints(BTreeMap::from([(
            FINGERPRINT_KEY.to_string(),
            f.fingerprint.clone(),
        )]))
        .properties(PropertyBag::builder().additional_properties(props).build());
    // `ruleIndex` only when the rule is in the driver's `rules` (it always is for builtin rules).
    let index = rules.rules.iter().position(|r| r.id == f.rule);
    let mut r = builder.build();
    if let Some(i) = index {
        r.rule_index = Some(i as i64);
    }
    r
}

fn notification(d: &Diagnostic, roots: &Roots) -> Notification {
    let mut props = BTreeMap::new();
    props.insert("kind".to_string(), json!(d.kind));
    if let Some(p) = &d.package {
        props.insert("package".to_string(), json!(p));
    }
    let subject = match (&d.file, &d.package) {
        (Some(file), _) => format!("{}: ", roots.display(file)),
        (None, Some(p)) => format!("package {p}: "),
        _ => String::new(),
    };
    let mut n = Notification::builder()
        .message(text(format!(
            "analysis incomplete ({}): {subject}{}",
            d.kind, d.message
        )))
        .level(json!(if d.kind == "internal" {
            "error"
        } else {
            "warning"
        }))
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build();
    if let Some(file) = &d.file {
        let (line, column) = d.position().unwrap_or((0, 0));
        n.locations = Some(vec![Location::builder()
            .physical_location(physical(roots, file, line, column, &mut LineCache::none()))
            .build()]);
    }
    n
}

/// A problem with a suppression or a baseline entry (unused, stale, without a reason): a
/// configuration notification, at the directive's line.
fn config_notification(n: &Notice, roots: &Roots) -> Notification {
    let mut props = BTreeMap::new();
    props.insert("kind".to_string(), json!(n.kind));
    Notification::builder()
        .message(text(format!("{}: {}", n.kind, n.message)))
        .level(json!("warning"))
        .locations(vec![Location::builder()
            .physical_location(physical(roots, &n.file, n.line, 0, &mut LineCache::none()))
            .build()])
        .properties(PropertyBag::builder().additional_properties(props).build())
        .build()
}

/// A physical location; `line == 0` means the line is unknown (no region). The end column is
/// the end of the callee written at `column` when the source line can be read.
fn physical(
    roots: &Roots,
    file: &str,
    line: u32,
    column: u32,
    lines: &mut LineCache,
) -> PhysicalLocation {
    let artifact = match roots.locate(file) {
        Some((base, rel)) => ArtifactLocation::builder()
            .uri(percent_encode(&rel))
            .uri_base_id(base)
            .build(),
        // No relative form: name the file without a uri rather than leak an absolute path.
        None => ArtifactLocation::builder()
            .description(text(file_name(file)))
            .build(),
    };
    let mut loc = PhysicalLocation::builder()
        .artifact_location(artifact)
        .build();
    if line > 0 {
        let column = column.max(1);
        let mut region = Region::builder()
            .start_line(line as i64)
            .start_column(column as i64)
            .build();
        if let Some(end) = lines
            .line(file, line)
            .and_then(|text| callee_end_column(&text, column))
        {
            region.end_line = Some(line as i64);
            region.end_column = Some(end as i64);
        }
        loc.region = Some(region);
    }
    loc
}

fn function(name: &str) -> LogicalLocation {
    LogicalLocation::builder()
        .fully_qualified_name(name)
        .kind("function")
        .build()
}

fn text(s: impl Into<String>) -> Message {
    Message::builder().text(s.into()).build()
}

fn plain(s: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s).build()
}

fn base_ids() -> BTreeMap<String, ArtifactLocation> {
    // No `uri`: where the bases were on the producing machine is deliberately not recorded
    // (SARIF §3.14.14 lets a producer leave a base undefined); consumers resolve them.
    BTreeMap::from([
        (
            SRCROOT.to_string(),
            ArtifactLocation::builder()
                .description(text(
                    "The root of the repository (or workspace) that was analysed.",
                ))
                .build(),
        ),
        (
            CARGO_HOME.to_string(),
            ArtifactLocation::builder()
                .description(text(
                    "Cargo's home directory ($CARGO_HOME, by default ~/.cargo), where dependency \
                     sources are unpacked (under registry and git).",
                ))
                .build(),
        ),
    ])
}

/// The report's message with its first mention of the async root turned into an embedded link
/// to related location 1 (SARIF §3.11.6); every other `[`, `]` and `\` is escaped.
fn link_root(message: &str, root: &str) -> String {
    let needle = format!("`{root}`");
    match message.find(&needle) {
        Some(at) => format!(
            "{}[{}](1){}",
            escape_message(&message[..at]),
            escape_message(&needle),
            escape_message(&message[at + needle.len()..])
        ),
        None => escape_message(message),
    }
}

/// `Reached from 2 async callers: [`a::main`](2), [`a::job`](3)`: each caller linked to its
/// related location, `, and N more` past the listed ones.
fn reached_from_line(f: &Finding) -> String {
    let links: Vec<String> = f
        .reached_from
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "[{}]({})",
                escape_message(&format!("`{}`", r.function)),
                i + 2
            )
        })
        .collect();
    let mut line = format!(
        "Reached from {}: {}",
        super::async_callers(f.reached_from_count),
        links.join(", ")
    );
    if f.reached_from_count > links.len() {
        line.push_str(&format!(
            ", and {} more",
            f.reached_from_count - links.len()
        ));
    }
    line
}

/// Escapes the characters that plain-text SARIF messages give a meaning (embedded links).
pub fn escape_message(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The column (1-based, in characters) just past the callee written at `column`: a path such as
/// `std::fs::read` or a method name; `None` when nothing identifier-like starts there.
pub fn callee_end_column(line: &str, column: u32) -> Option<u32> {
    let rest: Vec<char> = line
        .chars()
        .skip(column.saturating_sub(1) as usize)
        .collect();
    let mut end = 0;
    while end < rest.len() {
        if rest[end].is_alphanumeric() || rest[end] == '_' {
            end += 1;
        } else if rest[end] == ':' && rest.get(end + 1) == Some(&':') {
            end += 2;
        } else {
            break;
        }
    }
    while end >= 2 && rest[end - 1] == ':' {
        end -= 2;
    }
    (end > 0).then(|| column + end as u32)
}

/// Reads source lines once per file.
struct LineCache<'a> {
    sources: Option<&'a dyn SourceProvider>,
    files: BTreeMap<String, Option<Vec<String>>>,
}

impl<'a> LineCache<'a> {
    fn new(sources: &'a dyn SourceProvider) -> Self {
        LineCache {
            sources: Some(sources),
            files: BTreeMap::new(),
        }
    }

    fn none() -> Self {
        LineCache {
            sources: None,
            files: BTreeMap::new(),
        }
    }

    fn line(&mut self, file: &str, line: u32) -> Option<String> {
        let sources = self.sources?;
        let lines = self.files.entry(file.to_string()).or_insert_with(|| {
            sources
                .source(file)
                .map(|t| t.lines().map(str::to_string).collect())
        });
        lines.as_ref()?.get(line.checked_sub(1)? as usize).cloned()
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn slash_path(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// `…/registry/src/<index>/<crate>/…` or `…/git/checkouts/<repo>/<rev>/…` → the part from
/// `registry/` or `git/`, i.e. the path relative to the cargo home it was unpacked in.
fn cargo_layout_suffix(p: &Path) -> Option<String> {
    let parts: Vec<String> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let at = parts.windows(2).rposition(|w| {
        (w[0] == "registry" && w[1] == "src") || (w[0] == "git" && w[1] == "checkouts")
    })?;
    Some(parts[at..].join("/"))
}

/// `abs` relative to `base` (both absolute, normalised), with `..` segments where needed.
fn relative_to(abs: &Path, base: &Path) -> Option<String> {
    let a: Vec<Component> = abs.components().collect();
    let b: Vec<Component> = base.components().collect();
    if a.first() != b.first() {
        return None;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); b.len() - common];
    parts.extend(
        a[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn file_name(file: &str) -> String {
    Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Percent-encodes a relative path for a URI reference (RFC 3986): unreserved characters, `/`
/// and the sub-delimiters that are safe in a path stay; everything else, UTF-8 bytes included,
/// is encoded.
pub fn percent_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'/'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'@'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    // A first segment containing ':' would read as a scheme; none survives encoding above.
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::render::DiskSources;
    use crate::report::{ReachedFrom, Root, Stats, Step};
    use serde_json::Value;

    struct NoSources;
    impl SourceProvider for NoSources {
        fn source(&self, _: &str) -> Option<String> {
            None
        }
    }

    struct OneFile(&'static str, &'static str);
    impl SourceProvider for OneFile {
        fn source(&self, file: &str) -> Option<String> {
            (file == self.0).then(|| self.1.to_string())
        }
    }

    fn roots() -> Roots {
        Roots {
            workspace: PathBuf::from("/repo/service"),
            srcroot: PathBuf::from("/repo"),
            cargo_home: Some(PathBuf::from("/home/u/.cargo")),
        }
    }

    pub(crate) fn step(function: &str, file: &str, line: u32, callee: &str, package: &str) -> Step {
        Step {
            function: function.into(),
            file: file.into(),
            line,
            column: 5,
            callee: callee.into(),
            package: package.into(),
        }
    }

    pub(super) fn finding() -> Finding {
        Finding {
            rule: "NB0101".into(),
            name: "std-fs".into(),
            category: "fs".into(),
            severity: "error".into(),
            confidence: "high".into(),
            kind: "worker".into(),
            api: "std::fs::File::open".into(),
            message: "synchronous filesystem call: `std::fs::File::open` reached from async fn \
                      `app::main` via `app::load`"
                .into(),
            help: "use tokio::fs::File::open or move the call into tokio::task::spawn_blocking"
                .into(),
            root: Root {
                function: "app::main".into(),
                kind: "async fn".into(),
                file: "src/main.rs".into(),
                line: 2,
                column: 1,
            },
            path: vec![
                step("app::main", "src/main.rs", 3, "app::load", "app"),
                step(
                    "dep::open",
                    "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/dep-1.0.0/src/lib.rs",
                    9,
                    "std::fs::File::open",
                    "dep",
                ),
            ],
            reached_from: vec![ReachedFrom {
                function: "app::serve".into(),
                kind: "async fn".into(),
                file: "src/main.rs".into(),
                line: 9,
                column: 5,
            }],
            reached_from_count: 2,
            fingerprint: "0123456789abcdef".into(),
        }
    }

    /// A report with these findings and errors, made from a real (empty) analysis so that it
    /// stays complete whatever fields `Report` grows.
    pub(crate) fn report(findings: Vec<Finding>, errors: Vec<Diagnostic>) -> Report {
        static EMPTY: std::sync::OnceLock<Report> = std::sync::OnceLock::new();
        let mut r = EMPTY
            .get_or_init(|| analyze("tests/fixtures-sarif/clean").0)
            .clone();
        r.findings = findings;
        r.errors = errors;
        r.stats = Stats::default();
        r
    }

    fn parse(report: &Report, sources: &dyn SourceProvider) -> Value {
        serde_json::from_str(&render(report, &RuleDb::builtin(), &roots(), sources)).unwrap()
    }

    #[test]
    fn files_become_base_relative_uris_never_absolute_paths() {
        let r = roots();
        assert_eq!(
            r.locate("src/main.rs"),
            Some((SRCROOT, "service/src/main.rs".to_string()))
        );
        assert_eq!(
            r.locate("/home/u/.cargo/registry/src/idx/dep-1.0.0/src/lib.rs"),
            Some((
                CARGO_HOME,
                "registry/src/idx/dep-1.0.0/src/lib.rs".to_string()
            ))
        );
        // A cargo layout under another home (CARGO_HOME changed between runs) still is.
        assert_eq!(
            r.locate("/opt/cargo/git/checkouts/dep-ab12/f00/src/lib.rs"),
            Some((
                CARGO_HOME,
                "git/checkouts/dep-ab12/f00/src/lib.rs".to_string()
            ))
        );
        // A workspace crate that happens to be called `registry` stays a repository file.
        assert_eq!(
            r.locate("registry/src/lib.rs"),
            Some((SRCROOT, "service/registry/src/lib.rs".to_string()))
        );
        assert_eq!(
            r.locate("/repo/../shared/src/lib.rs"),
            Some((SRCROOT, "../shared/src/lib.rs".to_string()))
        );
        assert_eq!(
            r.display("/home/u/.cargo/registry/src/idx/dep-1.0.0/src/lib.rs"),
            "dep-1.0.0/src/lib.rs"
        );
        assert_eq!(r.display("src/main.rs"), "service/src/main.rs");
        assert_eq!(percent_encode("a b/é%#.rs"), "a%20b/%C3%A9%25%23.rs");
    }

    #[test]
    fn end_column_covers_the_callee() {
        let line = "    let x = std::fs::read(p)?;";
        assert_eq!(callee_end_column(line, 13), Some(26));
        assert_eq!(callee_end_column("    é.lock()", 7), Some(11));
        assert_eq!(callee_end_column("    (", 5), None);
    }

    #[test]
    fn a_result_has_location_region_code_flow_root_and_fingerprint() {
        let report = report(vec![finding()], vec![]);
        let json = parse(
            &report,
            &OneFile("src/main.rs", "async fn main() {\n\n    app::load();\n}\n"),
        );
        let run = &json["runs"][0];
        let r = &run["results"][0];
        assert_eq!(r["ruleId"], "NB0101");
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(run["tool"]["driver"]["rules"][idx]["id"], "NB0101");
        assert_eq!(r["level"], "error");
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "service/src/main.rs");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(
            loc["region"],
            json!({"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 14})
        );
        let steps = r["codeFlows"][0]["threadFlows"][0]["locations"]
            .as_array()
            .unwrap();
        assert_eq!(steps.len(), 2);
        let dep = &steps[1]["location"]["physicalLocation"]["artifactLocation"];
        assert_eq!(dep["uriBaseId"], "CARGO_HOME");
        assert_eq!(
            dep["uri"],
            "registry/src/index.crates.io-1949cf8c6b5b557f/dep-1.0.0/src/lib.rs"
        );
        assert_eq!(steps[1]["module"], "dep");
        assert_eq!(r["relatedLocations"][0]["id"], 1);
        let caller = &r["relatedLocations"][1];
        assert_eq!(caller["id"], 2);
        assert_eq!(caller["physicalLocation"]["region"]["startLine"], 9);
        assert_eq!(
            caller["message"]["text"],
            "reached from async fn `app::serve`"
        );
        let message = r["message"]["text"].as_str().unwrap();
        assert!(message.contains("[`app::main`](1)"), "{message}");
        assert!(
            message.contains("Reached from 2 async callers: [`app::serve`](2), and 1 more"),
            "{message}"
        );
        assert_eq!(r["properties"]["reachedFromCount"], 2);
        assert_eq!(
            r["partialFingerprints"][FINGERPRINT_KEY],
            "0123456789abcdef"
        );
        assert_eq!(r["properties"]["confidence"], "high");
        assert!(!render(&report, &RuleDb::builtin(), &roots(), &NoSources).contains("/home/"));
    }

    #[test]
    fn parse_errors_are_tool_execution_notifications() {
        let report = report(
            vec![],
            vec![Diagnostic {
                kind: "parse".into(),
                file: Some("src/bad.rs".into()),
                package: Some("app".into()),
                message: "4:9: expected `;`".into(),
                ..Default::default()
            }],
        );
        let json = parse(&report, &NoSources);
        let inv = &json["runs"][0]["invocations"][0];
        assert_eq!(inv["executionSuccessful"], true);
        let n = &inv["toolExecutionNotifications"][0];
        assert_eq!(n["level"], "warning");
        assert_eq!(
            n["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 4, "startColumn": 9})
        );
        assert_eq!(json["runs"][0]["results"], json!([]));
    }

    #[test]
    fn suppression_and_baseline_notices_are_configuration_notifications() {
        let mut report = report(vec![], vec![]);
        report.notices = vec![notice()];
        let json = parse(&report, &NoSources);
        let n = &json["runs"][0]["invocations"][0]["toolConfigurationNotifications"][0];
        assert_eq!(n["level"], "warning");
        assert_eq!(n["properties"]["kind"], "unused-suppression");
        let loc = &n["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "service/src/main.rs");
        assert_eq!(loc["region"], json!({"startLine": 7, "startColumn": 1}));
    }

    pub(crate) fn notice() -> Notice {
        Notice {
            kind: "unused-suppression".into(),
            file: "src/main.rs".into(),
            line: 7,
            message: "`nonblock:allow(NB0101)` matches no finding".into(),
        }
    }

    #[test]
    fn messages_escape_link_syntax() {
        assert_eq!(
            link_root("x `<[u8]>::f` from `a`", "a"),
            "x `<\\[u8\\]>::f` from [`a`](1)"
        );
    }

    /// The official SARIF 2.1.0 schema, from the serde-sarif crate's source (located through
    /// cargo metadata, not copied into this repository).
    pub(super) fn official_schema() -> Value {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let meta = cargo_metadata::MetadataCommand::new()
            .manifest_path(&manifest)
            .exec()
            .expect("cargo metadata");
        let pkg = meta
            .packages
            .iter()
            .find(|p| p.name.as_str() == "serde-sarif")
            .expect("serde-sarif is a dependency");
        let path = pkg
            .manifest_path
            .parent()
            .expect("manifest dir")
            .join("src/schema.json");
        let text = std::fs::read_to_string(&path).expect("serde-sarif ships src/schema.json");
        let mut schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        // The schema's two `language` patterns end in an unbalanced `]`: a literal `]` in an
        // ECMA-262 regex without the `u` flag, a syntax error with it, and jsonschema checks a
        // schema's patterns strictly before compiling it. Escaping it (`\]`) keeps the meaning
        // and lets the schema compile; nothing else is touched, and we never emit `language`.
        let patched = patch_patterns(
            &mut schema,
            r"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$",
            r"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\]?$",
        );
        assert!(patched <= 2, "unexpected schema shape");
        schema
    }

    fn patch_patterns(v: &mut Value, from: &str, to: &str) -> usize {
        match v {
            Value::Object(map) => {
                let mut n = 0;
                for (k, child) in map.iter_mut() {
                    if k == "pattern" && child == from {
                        *child = json!(to);
                        n += 1;
                    } else {
                        n += patch_patterns(child, from, to);
                    }
                }
                n
            }
            Value::Array(items) => items.iter_mut().map(|c| patch_patterns(c, from, to)).sum(),
            _ => 0,
        }
    }

    pub(super) fn assert_valid(sarif: &str) {
        let schema = official_schema();
        assert_eq!(
            schema["$id"],
            "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
        );
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let instance: Value = serde_json::from_str(sarif).expect("SARIF is JSON");
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "schema violations:\n{}",
            errors.join("\n")
        );
    }

    #[test]
    fn the_validator_rejects_what_the_schema_forbids() {
        let schema = official_schema();
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let good: Value = serde_json::from_str(&render(
            &report(vec![finding()], vec![]),
            &RuleDb::builtin(),
            &roots(),
            &NoSources,
        ))
        .unwrap();
        assert!(validator.is_valid(&good));
        let mut bad = good.clone();
        bad["runs"][0]["results"][0]["level"] = json!("fatal");
        assert!(!validator.is_valid(&bad), "enum checked");
        let mut bad = good.clone();
        bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
            json!(0);
        assert!(!validator.is_valid(&bad), "minimum checked");
        let mut bad = good.clone();
        bad["runs"][0]["tool"]["driver"]["informationUri"] = json!("not a uri");
        assert!(!validator.is_valid(&bad), "format checked");
        let mut bad = good;
        bad["runs"][0]["results"][0]["extra"] = json!(1);
        assert!(!validator.is_valid(&bad), "additionalProperties checked");
    }

    fn analyze(dir: &str) -> (Report, Roots, DiskSources) {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let ws = normalize(&std::path::absolute(repo.join(dir)).unwrap());
        let opts = crate::Options {
            manifest_path: Some(ws.join("Cargo.toml")),
            ..Default::default()
        };
        let report = crate::analyze(&opts, &RuleDb::builtin()).expect("analysis runs");
        let roots = Roots {
            workspace: ws.clone(),
            srcroot: ws.clone(),
            cargo_home: default_cargo_home(),
        };
        (report, roots, DiskSources { workspace_root: ws })
    }

    #[test]
    fn schema_valid_for_hand_built_reports() {
        let rules = RuleDb::builtin();
        let empty = report(vec![], vec![]);
        assert_valid(&render(&empty, &rules, &roots(), &NoSources));
        let with_errors = report(
            vec![finding()],
            vec![
                Diagnostic {
                    kind: "parse".into(),
                    file: Some("src/bad.rs".into()),
                    package: Some("app".into()),
                    message: "4:9: expected `;`".into(),
                    ..Default::default()
                },
                Diagnostic {
                    kind: "skipped".into(),
                    file: None,
                    package: Some("ghost".into()),
                    message: "no source".into(),
                    ..Default::default()
                },
            ],
        );
        let mut with_errors = with_errors;
        with_errors.notices = vec![notice()];
        assert_valid(&render(&with_errors, &rules, &roots(), &NoSources));
    }

    #[test]
    fn schema_valid_for_the_demo_service() {
        let (report, roots, sources) = analyze("examples/demo-service");
        assert!(!report.findings.is_empty());
        assert_valid(&render(&report, &RuleDb::builtin(), &roots, &sources));
    }

    #[test]
    fn schema_valid_for_a_run_with_parse_errors() {
        let (report, roots, sources) = analyze("tests/fixtures-sarif/parse-error");
        assert!(
            report.errors.iter().any(|e| e.kind == "parse"),
            "{:?}",
            report.errors
        );
        let sarif = render(&report, &RuleDb::builtin(), &roots, &sources);
        assert_valid(&sarif);
        let json: Value = serde_json::from_str(&sarif).unwrap();
        let n = &json["runs"][0]["invocations"][0]["toolExecutionNotifications"];
        assert!(!n.as_array().unwrap().is_empty());
    }

    #[test]
    fn schema_valid_for_a_run_with_zero_findings() {
        let (report, roots, sources) = analyze("tests/fixtures-sarif/clean");
        assert!(report.findings.is_empty(), "{:?}", report.findings);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        let sarif = render(&report, &RuleDb::builtin(), &roots, &sources);
        assert_valid(&sarif);
        let json: Value = serde_json::from_str(&sarif).unwrap();
        assert_eq!(json["runs"][0]["results"], json!([]));
    }
}

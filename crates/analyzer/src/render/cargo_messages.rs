//! cargo's machine messages (`--message-format json`, `json-diagnostic-short`,
//! `json-diagnostic-rendered-ansi`, `short`), so that whatever reads `cargo check`'s output —
//! rust-analyzer's `check.overrideCommand` first — shows every finding where its entry call is.
//!
//! Each finding is one `compiler-message` line whose `message` is a rustc diagnostic: the primary
//! span on the entry call written in the async context, one `note` child per step of the path
//! (each with the span of that step's call, so an editor can list them as related locations), a
//! note naming the async callers, and a `help` child with the fix. `code.code` is the rule id and
//! `code.explanation` the rule's documentation (what `cargo nonblock explain` prints, as rustc puts
//! `rustc --explain`'s text there). Unused suppressions, stale baseline entries, and files of
//! workspace members that could not be analysed follow as warnings (an internal error as an
//! error); problems inside dependencies are left to `--format json` and the summary line. A
//! `build-finished` line ends the stream. `short` prints rustc's short form of the same
//! diagnostics, one line each.
//!
//! The structures are written out here rather than taken from `cargo_metadata`, whose message
//! types are `#[non_exhaustive]` and cannot be built outside that crate; the tests parse the output
//! with `cargo_metadata::Message`, the parser rust-analyzer uses.
//!
//! Files are named as cargo names them: workspace files relative to the workspace root (the
//! report already gives them so), others absolute. `package_id`, `manifest_path` and `target` are
//! those of the workspace member that owns the diagnostic ([`Members`], read with `cargo metadata
//! --no-deps`: the report names packages, and cargo's messages need their ids).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cargo_metadata::camino::Utf8PathBuf;
use cargo_metadata::{CrateType, Edition, TargetKind};
use serde::Serialize;

use super::sarif::callee_end_column;
use super::{human, SourceProvider};
use crate::report::{Diagnostic, Finding, Report};
use crate::rules::{Rule, RuleDb};
use crate::suppress::Notice;

/// Which of cargo's message formats to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageFormat {
    /// rustc's short form, one line per diagnostic: `src/a.rs:3:5: warning[NB0101]: …`, with
    /// ANSI colours when `styled`.
    Short { styled: bool },
    /// One JSON object per line; `rendered` holds the short form when `short`, else the human
    /// block, with ANSI colours when `ansi`.
    Json { short: bool, ansi: bool },
}

/// The workspace members, as cargo's messages name them.
#[derive(Clone, Debug)]
pub struct Members {
    /// The workspace root: the report's relative paths are relative to it.
    root: PathBuf,
    /// Sorted by name; workspace members have distinct names (cargo refuses two).
    members: Vec<Member>,
    /// The member a diagnostic no member owns is attributed to: the root package, else the first.
    fallback: usize,
}

#[derive(Clone, Debug)]
struct Member {
    name: String,
    id: String,
    manifest_path: Utf8PathBuf,
    targets: Vec<Target>,
}

/// A target as cargo's messages spell it (the fields of `cargo metadata`'s, without
/// `required-features`, which cargo leaves out of messages).
#[derive(Clone, Debug, Serialize)]
struct Target {
    kind: Vec<TargetKind>,
    crate_types: Vec<CrateType>,
    name: String,
    src_path: Utf8PathBuf,
    edition: Edition,
    doc: bool,
    doctest: bool,
    test: bool,
}

impl Members {
    /// Runs `cargo metadata --no-deps --format-version 1` for the workspace of `manifest_path`
    /// (the current directory's when `None`), in the manifest's directory so that its
    /// `rust-toolchain.toml` picks cargo as for the analysis. This is the one place that runs a
    /// command; [`render`] is a pure function of its inputs.
    pub fn load(manifest_path: Option<&Path>) -> Result<Members, String> {
        let mut cmd = cargo_metadata::MetadataCommand::new();
        cmd.no_deps();
        if let Some(p) = manifest_path {
            let p = std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))?;
            if let Some(dir) = p.parent() {
                cmd.current_dir(dir);
            }
            cmd.manifest_path(p);
        }
        let metadata = cmd
            .exec()
            .map_err(|e| format!("cargo metadata --no-deps failed: {e}"))?;
        Members::from_metadata(&metadata)
    }

    /// The members of a workspace from its metadata (with or without dependencies).
    pub fn from_metadata(metadata: &cargo_metadata::Metadata) -> Result<Members, String> {
        let mut members: Vec<Member> = metadata
            .workspace_packages()
            .into_iter()
            .map(|p| Member {
                name: p.name.to_string(),
                id: p.id.repr.clone(),
                manifest_path: p.manifest_path.clone(),
                targets: p
                    .targets
                    .iter()
                    .map(|t| Target {
                        kind: t.kind.clone(),
                        crate_types: t.crate_types.clone(),
                        name: t.name.clone(),
                        src_path: t.src_path.clone(),
                        edition: t.edition,
                        doc: t.doc,
                        doctest: t.doctest,
                        test: t.test,
                    })
                    .collect(),
            })
            .collect();
        if members.is_empty() {
            return Err("the workspace has no members".to_string());
        }
        members.sort_by(|a, b| a.name.cmp(&b.name));
        let root_id = metadata.root_package().map(|p| p.id.repr.as_str());
        let fallback = members
            .iter()
            .position(|m| Some(m.id.as_str()) == root_id)
            .unwrap_or(0);
        Ok(Members {
            root: metadata.workspace_root.clone().into_std_path_buf(),
            members,
            fallback,
        })
    }

    /// The workspace root (where the report's relative paths start).
    pub fn workspace_root(&self) -> &Path {
        &self.root
    }

    fn absolute(&self, file: &str) -> PathBuf {
        let p = Path::new(file);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        }
    }

    /// The member named `package`, else the member whose directory holds `file` (the deepest),
    /// else the fallback member.
    fn member(&self, package: Option<&str>, file: Option<&str>) -> &Member {
        if let Some(m) = package.and_then(|name| self.named(name)) {
            return m;
        }
        let by_dir = file.and_then(|file| {
            let abs = self.absolute(file);
            self.members
                .iter()
                .filter_map(|m| {
                    let dir = m.manifest_path.parent()?.as_std_path();
                    abs.starts_with(dir).then(|| (dir.components().count(), m))
                })
                .max_by_key(|(depth, _)| *depth)
                .map(|(_, m)| m)
        });
        by_dir.unwrap_or(&self.members[self.fallback])
    }

    fn named(&self, name: &str) -> Option<&Member> {
        self.members
            .binary_search_by(|m| m.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.members[i])
    }

    /// The target of `member` that `file` belongs to: the target whose root file it is, else the
    /// one whose root's directory holds it (the deepest; a library before binaries before other
    /// kinds, as `src/lib.rs` and `src/main.rs` share `src/`), else the library or first target.
    /// The analysis reads libraries and binaries only, so a module file is given to the library
    /// when both could hold it.
    fn target<'m>(&self, member: &'m Member, file: Option<&str>) -> &'m Target {
        let rank = |t: &Target| -> u8 {
            if t.kind.iter().any(|k| {
                matches!(
                    k,
                    TargetKind::Lib
                        | TargetKind::RLib
                        | TargetKind::DyLib
                        | TargetKind::CDyLib
                        | TargetKind::StaticLib
                        | TargetKind::ProcMacro
                )
            }) {
                0
            } else if t.kind.contains(&TargetKind::Bin) {
                1
            } else if t.kind.contains(&TargetKind::CustomBuild) {
                3
            } else {
                2
            }
        };
        let candidates = || member.targets.iter().filter(|t| rank(t) < 3);
        if let Some(file) = file {
            let abs = self.absolute(file);
            if let Some(t) = candidates().find(|t| t.src_path.as_std_path() == abs) {
                return t;
            }
            let holding = candidates()
                .filter_map(|t| {
                    let dir = t.src_path.parent()?.as_std_path();
                    abs.starts_with(dir)
                        .then(|| (dir.components().count(), std::cmp::Reverse(rank(t)), t))
                })
                .max_by_key(|(depth, rank, _)| (*depth, *rank));
            if let Some((_, _, t)) = holding {
                return t;
            }
        }
        candidates()
            .min_by_key(|t| rank(t))
            .unwrap_or(&member.targets[0])
    }
}

/// `cargo nonblock explain`'s text without the list of matched APIs: the rule's documentation
/// and fix, as rustc gives `rustc --explain`'s text in a diagnostic's `code.explanation`.
pub fn explanation(r: &Rule) -> String {
    let enabled = if r.enabled_by_default {
        String::new()
    } else {
        format!(
            ", off by default (enable with `[rules.{}] enabled = true` in nonblock.toml)",
            r.id
        )
    };
    let mut s = format!(
        "{} ({}) — {}\ncategory: {}, default severity: {}{enabled}\n\n",
        r.id,
        r.name,
        r.summary,
        r.category,
        r.severity.as_str()
    );
    s.push_str(&format!(
        "## What it does\n{}\n\n## Why is this bad\n{}\n\n",
        r.doc.what.trim(),
        r.doc.why.trim()
    ));
    if !r.doc.known_problems.is_empty() {
        s.push_str(&format!(
            "## Known problems\n{}\n\n",
            r.doc.known_problems.trim()
        ));
    }
    s.push_str(&format!(
        "## Example\n```rust\n{}\n```\n\n## Use instead\n```rust\n{}\n```\n\n",
        r.doc.example.trim(),
        r.doc.use_instead.trim()
    ));
    s.push_str(&format!(
        "Async alternative: {}\nFix: {}\n",
        r.alternative, r.help
    ));
    s
}

/// Renders every finding, then every notice, then every problem with a member's files, in
/// `format`; JSON ends with `build-finished` carrying `success` (the CLI's exit status is 0).
pub fn render(
    report: &Report,
    rules: &RuleDb,
    members: &Members,
    sources: &dyn SourceProvider,
    format: MessageFormat,
    success: bool,
) -> String {
    let human = match format {
        MessageFormat::Json { short: false, ansi } => Some(Alone::new(report, sources, ansi)),
        _ => None,
    };
    let mut build = Build {
        members,
        sources: SourceCache::new(sources),
        human,
        rules,
    };
    let mut messages: Vec<Message> = Vec::new();
    for f in &report.findings {
        messages.push(build.finding(f));
    }
    for n in &report.notices {
        messages.push(build.notice(n));
    }
    for d in &report.errors {
        if let Some(m) = build.error(d) {
            messages.push(m);
        }
    }
    let mut out = String::new();
    match format {
        MessageFormat::Short { styled } => {
            for m in &messages {
                out.push_str(&short_line(&m.diagnostic, styled));
                out.push('\n');
            }
        }
        MessageFormat::Json { short, ansi } => {
            for mut m in messages {
                m.diagnostic.rendered = Some(if short {
                    let mut line = short_line(&m.diagnostic, ansi);
                    line.push('\n');
                    line
                } else {
                    m.human
                });
                let target = members.target(m.member, m.file.as_deref());
                let line = CargoMessage::CompilerMessage {
                    package_id: &m.member.id,
                    manifest_path: &m.member.manifest_path,
                    target,
                    message: &m.diagnostic,
                };
                out.push_str(&serde_json::to_string(&line).expect("messages serialise"));
                out.push('\n');
            }
            let done = CargoMessage::BuildFinished { success };
            out.push_str(&serde_json::to_string(&done).expect("messages serialise"));
            out.push('\n');
        }
    }
    out
}

/// A line of cargo's `--message-format json` output.
#[derive(Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
enum CargoMessage<'a> {
    CompilerMessage {
        package_id: &'a str,
        manifest_path: &'a Utf8PathBuf,
        target: &'a Target,
        message: &'a RustcDiagnostic,
    },
    BuildFinished {
        success: bool,
    },
}

/// rustc's JSON diagnostic (`rustc --error-format json`), field for field.
#[derive(Clone, Debug, Serialize)]
struct RustcDiagnostic {
    /// Set on the top-level diagnostic only, to the format's choice of rendering.
    rendered: Option<String>,
    #[serde(rename = "$message_type", skip_serializing_if = "Option::is_none")]
    message_type: Option<&'static str>,
    children: Vec<RustcDiagnostic>,
    code: Option<Code>,
    level: &'static str,
    message: String,
    spans: Vec<Span>,
}

impl RustcDiagnostic {
    fn child(level: &'static str, message: String, span: Option<Span>) -> RustcDiagnostic {
        RustcDiagnostic {
            rendered: None,
            message_type: None,
            children: Vec::new(),
            code: None,
            level,
            message,
            spans: span.into_iter().collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
struct Code {
    code: String,
    explanation: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
struct Span {
    file_name: String,
    byte_start: u32,
    byte_end: u32,
    line_start: u32,
    line_end: u32,
    column_start: u32,
    column_end: u32,
    is_primary: bool,
    text: Vec<SpanLine>,
    label: Option<String>,
    suggested_replacement: Option<String>,
    suggestion_applicability: Option<String>,
    expansion: Option<()>,
}

impl Span {
    fn labelled(mut self, label: String) -> Span {
        self.label = Some(label);
        self
    }
}

#[derive(Clone, Debug, Serialize)]
struct SpanLine {
    text: String,
    highlight_start: u32,
    highlight_end: u32,
}

/// One diagnostic before it is printed: whom it belongs to, its JSON form, and its human
/// rendering.
struct Message<'m> {
    member: &'m Member,
    /// The file that picks the member's target.
    file: Option<String>,
    diagnostic: RustcDiagnostic,
    /// The human rendering, when the format puts it in `rendered`.
    human: String,
}

struct Build<'a> {
    members: &'a Members,
    sources: SourceCache<'a>,
    /// Renders the human text of one diagnostic, when the format needs it.
    human: Option<Alone<'a>>,
    rules: &'a RuleDb,
}

impl<'a> Build<'a> {
    fn finding(&mut self, f: &Finding) -> Message<'a> {
        let first = &f.path[0];
        let label = if f.path.len() == 1 {
            "blocking call".to_string()
        } else {
            format!("reaches `{}` in {} steps", f.api, f.path.len())
        };
        let primary = self
            .sources
            .call_span(&first.file, first.line, first.column);
        let mut children = Vec::new();
        let last = f.path.len() - 1;
        for (i, s) in f.path.iter().enumerate() {
            let mut message = format!(
                "path step {}/{}: `{}` calls `{}`",
                i + 1,
                f.path.len(),
                s.function,
                s.callee
            );
            if i == last {
                message.push_str(&format!(" ({} {})", f.rule, f.name));
            }
            let span = self.sources.call_span(&s.file, s.line, s.column);
            children.push(RustcDiagnostic::child("note", message, span));
        }
        if f.reached_from_count > 0 {
            children.push(RustcDiagnostic::child(
                "note",
                super::reached_from_note(f),
                None,
            ));
        }
        if f.confidence != "high" {
            children.push(RustcDiagnostic::child(
                "note",
                format!("confidence: {}", f.confidence),
                None,
            ));
        }
        children.push(RustcDiagnostic::child("help", f.help.clone(), None));
        let diagnostic = RustcDiagnostic {
            rendered: None,
            message_type: Some("diagnostic"),
            children,
            code: Some(Code {
                code: f.rule.clone(),
                explanation: self.rules.find(&f.rule).map(explanation),
            }),
            level: if f.severity == "error" {
                "error"
            } else {
                "warning"
            },
            message: f.message.clone(),
            spans: primary.map(|s| s.labelled(label)).into_iter().collect(),
        };
        Message {
            member: self.members.member(Some(&first.package), Some(&first.file)),
            file: Some(first.file.clone()),
            diagnostic,
            human: self
                .human
                .as_mut()
                .map(|h| h.finding(f))
                .unwrap_or_default(),
        }
    }

    fn notice(&mut self, n: &Notice) -> Message<'a> {
        let span = self.sources.line_span(&n.file, n.line);
        Message {
            member: self.members.member(None, Some(&n.file)),
            file: Some(n.file.clone()),
            diagnostic: RustcDiagnostic {
                rendered: None,
                message_type: Some("diagnostic"),
                children: Vec::new(),
                code: Some(Code {
                    code: n.kind.clone(),
                    explanation: None,
                }),
                level: "warning",
                message: n.message.clone(),
                spans: span.into_iter().collect(),
            },
            human: self.human.as_mut().map(|h| h.notice(n)).unwrap_or_default(),
        }
    }

    /// A problem in a member's files (or an internal error, wherever it is) as a diagnostic;
    /// `None` for one inside a dependency, which no editor shows against the workspace.
    fn error(&mut self, d: &Diagnostic) -> Option<Message<'a>> {
        let internal = d.kind == "internal";
        let owner = d.package.as_deref().and_then(|p| self.members.named(p));
        if owner.is_none() && !internal {
            return None;
        }
        let member = owner.unwrap_or(&self.members.members[self.members.fallback]);
        let span = match (&d.file, d.position()) {
            (Some(file), Some((line, column))) => self.sources.call_span(file, line, column),
            (Some(file), None) => self.sources.line_span(file, 1),
            _ => None,
        };
        let location = match (&d.file, &span) {
            (Some(file), None) => format!("{file}: "),
            (None, _) if owner.is_none() => d
                .package
                .as_ref()
                .map(|p| format!("package {p}: "))
                .unwrap_or_default(),
            _ => String::new(),
        };
        Some(Message {
            member,
            file: d.file.clone(),
            diagnostic: RustcDiagnostic {
                rendered: None,
                message_type: Some("diagnostic"),
                children: Vec::new(),
                code: Some(Code {
                    code: d.kind.clone(),
                    explanation: None,
                }),
                level: if internal { "error" } else { "warning" },
                message: format!("analysis incomplete ({}): {location}{}", d.kind, d.message),
                spans: span.into_iter().collect(),
            },
            human: self.human.as_mut().map(|h| h.error(d)).unwrap_or_default(),
        })
    }
}

/// rustc's short form: `src/a.rs:3:5: warning[NB0101]: message`; `file: …` without a line,
/// `warning[..]: …` without a file. With `styled`, the level and code in rustc's colours.
fn short_line(d: &RustcDiagnostic, styled: bool) -> String {
    let location = match d.spans.iter().find(|s| s.is_primary) {
        Some(s) => format!("{}:{}:{}: ", s.file_name, s.line_start, s.column_start),
        None => String::new(),
    };
    let code = d
        .code
        .as_ref()
        .map(|c| format!("[{}]", c.code))
        .unwrap_or_default();
    if styled {
        // rustc's: bold bright red errors, bold bright yellow warnings, a bold message.
        let colour = if d.level == "error" { "91" } else { "93" };
        format!(
            "{location}\x1b[1m\x1b[{colour}m{}{code}\x1b[0m\x1b[1m: {}\x1b[0m",
            d.level, d.message
        )
    } else {
        format!("{location}{}{code}: {}", d.level, d.message)
    }
}

/// Renders one finding, notice or error with the human renderer, as rustc's `rendered` holds the
/// human text of one diagnostic: a report holding that item alone, its summary line cut.
struct Alone<'a> {
    blank: Report,
    sources: &'a dyn SourceProvider,
    ansi: bool,
}

impl<'a> Alone<'a> {
    fn new(report: &Report, sources: &'a dyn SourceProvider, ansi: bool) -> Alone<'a> {
        Alone {
            blank: Report {
                findings: Vec::new(),
                errors: Vec::new(),
                notices: Vec::new(),
                stats: Default::default(),
                v1_fingerprints: BTreeMap::new(),
                ..report.clone()
            },
            sources,
            ansi,
        }
    }

    fn finding(&mut self, f: &Finding) -> String {
        self.blank.findings.push(f.clone());
        let text = self.render();
        self.blank.findings.clear();
        text
    }

    fn notice(&mut self, n: &Notice) -> String {
        self.blank.notices.push(n.clone());
        let text = self.render();
        self.blank.notices.clear();
        text
    }

    fn error(&mut self, d: &Diagnostic) -> String {
        self.blank.errors.push(d.clone());
        let text = self.render();
        self.blank.errors.clear();
        text
    }

    /// The blank report's one item, ending in a blank line as rustc's rendering does.
    fn render(&self) -> String {
        let out = human::render(&self.blank, self.sources, self.ansi);
        let summary = format!("{}\n", human::summary_line(&self.blank));
        let block = out.strip_suffix(&summary).unwrap_or(&out);
        format!("{}\n\n", block.trim_end_matches('\n'))
    }
}

/// Source text read once per file, with line offsets, for spans' bytes, columns and text.
struct SourceCache<'a> {
    sources: &'a dyn SourceProvider,
    files: BTreeMap<String, Option<SourceText>>,
}

struct SourceText {
    text: String,
    /// Byte offset of each line's start.
    line_starts: Vec<usize>,
}

impl SourceText {
    fn new(text: String) -> SourceText {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1)
                // A final newline ends the last line; it does not start another.
                .filter(|&start| start < text.len()),
        );
        SourceText { text, line_starts }
    }

    /// Line `line` (1-based) without its line ending, and the byte offset where it starts.
    fn line(&self, line: u32) -> Option<(usize, &str)> {
        let i = (line as usize).checked_sub(1)?;
        let start = *self.line_starts.get(i)?;
        if start >= self.text.len() {
            return None;
        }
        let end = self
            .line_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.text.len());
        let s = &self.text[start..end];
        let s = s.strip_suffix('\n').unwrap_or(s);
        Some((start, s.strip_suffix('\r').unwrap_or(s)))
    }
}

impl<'a> SourceCache<'a> {
    fn new(sources: &'a dyn SourceProvider) -> SourceCache<'a> {
        SourceCache {
            sources,
            files: BTreeMap::new(),
        }
    }

    fn text(&mut self, file: &str) -> Option<&SourceText> {
        let sources = self.sources;
        self.files
            .entry(file.to_string())
            .or_insert_with(|| sources.source(file).map(SourceText::new))
            .as_ref()
    }

    /// The span of the call written at `line`:`column` (1-based, in characters): the callee's
    /// path or method name. `None` for an unknown position (line 0: a call a macro spliced in
    /// without a span). A file that cannot be read gets an empty span at the position, with no
    /// text and byte offsets 0.
    fn call_span(&mut self, file: &str, line: u32, column: u32) -> Option<Span> {
        if line == 0 {
            return None;
        }
        let column = column.max(1);
        let Some((line_start, text)) = self.text(file).and_then(|t| t.line(line)) else {
            return Some(span(file, 0, 0, line, column, column, None));
        };
        let chars = text.chars().count() as u32;
        let start = column.min(chars + 1);
        let end = callee_end_column(text, start).unwrap_or((start + 1).min(chars + 1));
        Some(text_span(file, line_start, text, line, start, end))
    }

    /// The span of line `line`'s text, from its first non-blank character to its end.
    fn line_span(&mut self, file: &str, line: u32) -> Option<Span> {
        if line == 0 {
            return None;
        }
        let Some((line_start, text)) = self.text(file).and_then(|t| t.line(line)) else {
            return Some(span(file, 0, 0, line, 1, 1, None));
        };
        let trimmed = text.trim_end();
        let indent = trimmed.chars().take_while(|c| c.is_whitespace()).count() as u32;
        let start = indent + 1;
        let end = trimmed.chars().count() as u32 + 1;
        Some(text_span(file, line_start, text, line, start, end))
    }
}

/// The byte offset of 1-based character column `column` in `line` (its length past the end).
fn byte_of(line: &str, column: u32) -> usize {
    line.char_indices()
        .nth(column.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i)
}

/// The span of character columns `start..end` of line `line`, whose `text` starts at byte
/// `line_start` of the file.
fn text_span(file: &str, line_start: usize, text: &str, line: u32, start: u32, end: u32) -> Span {
    span(
        file,
        line_start + byte_of(text, start),
        line_start + byte_of(text, end),
        line,
        start,
        end,
        Some(text),
    )
}

fn span(
    file: &str,
    byte_start: usize,
    byte_end: usize,
    line: u32,
    column_start: u32,
    column_end: u32,
    text: Option<&str>,
) -> Span {
    Span {
        file_name: file.to_string(),
        byte_start: byte_start as u32,
        byte_end: byte_end as u32,
        line_start: line,
        line_end: line,
        column_start,
        column_end,
        // Spans of children are primary in their child, as rustc marks them: editors read a
        // child's location from its primary span.
        is_primary: true,
        text: text
            .map(|t| SpanLine {
                text: t.to_string(),
                highlight_start: column_start,
                highlight_end: column_end,
            })
            .into_iter()
            .collect(),
        label: None,
        suggested_replacement: None,
        suggestion_applicability: None,
        expansion: None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const LIB: &str =
        "fn load() {\n    std::fs::read(\"x\");\n}\r\npub async fn h() {\n    load();\n}\n";

    /// The sources of the synthetic crate, whatever temporary directory it was analysed in.
    struct Texts(Vec<(&'static str, &'static str)>);
    impl SourceProvider for Texts {
        fn source(&self, file: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(f, _)| *f == file)
                .map(|(_, t)| t.to_string())
        }
    }

    fn target(name: &str, kind: TargetKind, src_path: &str) -> Target {
        Target {
            kind: vec![kind],
            crate_types: vec![CrateType::Lib],
            name: name.into(),
            src_path: src_path.into(),
            edition: Edition::E2021,
            doc: true,
            doctest: true,
            test: true,
        }
    }

    fn members() -> Members {
        Members {
            root: PathBuf::from("/ws"),
            members: vec![Member {
                name: "app".into(),
                id: "path+file:///ws#app@0.1.0".into(),
                manifest_path: "/ws/Cargo.toml".into(),
                targets: vec![
                    target(
                        "build-script-build",
                        TargetKind::CustomBuild,
                        "/ws/build.rs",
                    ),
                    target("app", TargetKind::Bin, "/ws/src/main.rs"),
                    target("app", TargetKind::Lib, "/ws/src/lib.rs"),
                    target("tool", TargetKind::Bin, "/ws/src/bin/tool/main.rs"),
                ],
            }],
            fallback: 0,
        }
    }

    /// [`render`] with the builtin rules and [`members`].
    fn render_as(report: &Report, sources: &Texts, format: MessageFormat, success: bool) -> String {
        render(
            report,
            &RuleDb::builtin(),
            &members(),
            sources,
            format,
            success,
        )
    }

    fn lines(out: &str) -> Vec<Value> {
        out.lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect()
    }

    #[test]
    fn a_finding_is_one_compiler_message_with_a_note_per_path_step_then_build_finished() {
        let report = crate::testutil::analyze_files(&[("src/lib.rs", LIB)]);
        assert_eq!(report.findings.len(), 1);
        let sources = Texts(vec![("src/lib.rs", LIB)]);
        let format = MessageFormat::Json {
            short: false,
            ansi: false,
        };
        let out = render_as(&report, &sources, format, false);
        let lines = lines(&out);
        assert_eq!(lines.len(), 2, "{out}");
        let m = &lines[0];
        assert_eq!(m["reason"], "compiler-message");
        assert_eq!(m["package_id"], "path+file:///ws#app@0.1.0");
        assert_eq!(m["manifest_path"], "/ws/Cargo.toml");
        assert_eq!(m["target"]["kind"], serde_json::json!(["lib"]));
        let d = &m["message"];
        assert_eq!(d["$message_type"], "diagnostic");
        assert_eq!(d["level"], "error");
        assert_eq!(d["code"]["code"], "NB0101");
        assert!(d["code"]["explanation"]
            .as_str()
            .unwrap()
            .starts_with("NB0101 (std-fs)"));
        let primary = &d["spans"][0];
        assert_eq!(primary["is_primary"], true);
        assert_eq!(primary["file_name"], "src/lib.rs");
        assert_eq!(
            (&primary["line_start"], &primary["column_start"]),
            (&Value::from(5), &Value::from(5))
        );
        assert_eq!(primary["label"], "reaches `std::fs::read` in 2 steps");
        let bytes = |s: &Value| {
            &LIB[s["byte_start"].as_u64().unwrap() as usize
                ..s["byte_end"].as_u64().unwrap() as usize]
        };
        assert_eq!(bytes(primary), "load");
        let children = d["children"].as_array().unwrap();
        let steps: Vec<(&str, &str)> = children
            .iter()
            .filter(|c| c["level"] == "note" && !c["spans"].as_array().unwrap().is_empty())
            .map(|c| (c["message"].as_str().unwrap(), bytes(&c["spans"][0])))
            .collect();
        assert_eq!(
            steps,
            [
                ("path step 1/2: `app::h` calls `app::load`", "load"),
                (
                    "path step 2/2: `app::load` calls `std::fs::read` (NB0101 std-fs)",
                    "std::fs::read"
                ),
            ]
        );
        // The CRLF before line 4 counts in byte offsets but never in a line's text.
        assert_eq!(
            children[1]["spans"][0]["text"][0]["text"],
            "    std::fs::read(\"x\");"
        );
        let help = children.last().unwrap();
        assert_eq!(help["level"], "help");
        assert_eq!(help["message"], report.findings[0].help.as_str());
        assert!(d["rendered"].as_str().unwrap().starts_with(
            "error[NB0101]: std-fs: `std::fs::read` reached from async fn `app::h`\n"
        ));
        assert_eq!(
            lines[1],
            serde_json::json!({"reason": "build-finished", "success": false})
        );
    }

    #[test]
    fn rendered_is_the_finding_s_block_of_the_human_report() {
        let report = crate::testutil::analyze_files(&[("src/lib.rs", LIB)]);
        let sources = Texts(vec![("src/lib.rs", LIB)]);
        for ansi in [false, true] {
            let out = render_as(
                &report,
                &sources,
                MessageFormat::Json { short: false, ansi },
                true,
            );
            let rendered = lines(&out)[0]["message"]["rendered"]
                .as_str()
                .unwrap()
                .to_string();
            let human = human::render(&report, &sources, ansi);
            assert!(rendered.ends_with("\n\n"), "{rendered:?}");
            assert!(human.starts_with(&rendered), "{human:?}\n{rendered:?}");
            assert_eq!(rendered.contains('\x1b'), ansi);
        }
    }

    #[test]
    fn short_lines_name_file_line_column_level_and_rule() {
        let report = crate::testutil::analyze_files(&[("src/lib.rs", LIB)]);
        let sources = Texts(vec![("src/lib.rs", LIB)]);
        let render = |format| render_as(&report, &sources, format, true);
        let expected = format!(
            "src/lib.rs:5:5: error[NB0101]: {}\n",
            report.findings[0].message
        );
        assert_eq!(render(MessageFormat::Short { styled: false }), expected);
        let styled = render(MessageFormat::Short { styled: true });
        assert!(styled.starts_with("src/lib.rs:5:5: \x1b[1m\x1b[91merror[NB0101]\x1b[0m"));
        let json = render(MessageFormat::Json {
            short: true,
            ansi: false,
        });
        assert_eq!(lines(&json)[0]["message"]["rendered"], expected.as_str());
    }

    #[test]
    fn a_notice_is_a_warning_on_its_line_and_a_dependency_s_problem_is_left_out() {
        let mut report = crate::testutil::analyze_files(&[("src/lib.rs", LIB)]);
        report.findings.clear();
        report.notices.push(Notice {
            kind: "unused-suppression".into(),
            file: "src/lib.rs".into(),
            line: 5,
            message: "`nonblock:allow(NB0101)` matches no finding".into(),
        });
        report.errors = vec![
            Diagnostic {
                kind: "parse".into(),
                file: Some("/home/u/.cargo/registry/src/idx/dep-1.0.0/src/lib.rs".into()),
                package: Some("dep".into()),
                message: "3:1: expected item".into(),
                ..Default::default()
            },
            Diagnostic {
                kind: "parse".into(),
                file: Some("src/lib.rs".into()),
                package: Some("app".into()),
                message: "2:5: expected `;`".into(),
                ..Default::default()
            },
        ];
        let sources = Texts(vec![("src/lib.rs", LIB)]);
        let format = MessageFormat::Json {
            short: false,
            ansi: false,
        };
        let out = render_as(&report, &sources, format, true);
        let lines = lines(&out);
        assert_eq!(lines.len(), 3, "{out}");
        let notice = &lines[0]["message"];
        assert_eq!(notice["level"], "warning");
        assert_eq!(notice["code"]["code"], "unused-suppression");
        let span = &notice["spans"][0];
        assert_eq!(
            (
                &span["line_start"],
                &span["column_start"],
                &span["column_end"]
            ),
            (&Value::from(5), &Value::from(5), &Value::from(12))
        );
        let parse = &lines[1]["message"];
        assert_eq!(parse["code"]["code"], "parse");
        assert_eq!(parse["spans"][0]["line_start"], 2);
        assert_eq!(parse["spans"][0]["column_start"], 5);
        assert_eq!(lines[2]["reason"], "build-finished");
        assert_eq!(lines[2]["success"], true);
    }

    #[test]
    fn a_file_s_target_is_the_one_it_is_the_root_of_else_the_deepest_holding_it() {
        let m = members();
        let member = &m.members[0];
        let target = |file| {
            let t = m.target(member, Some(file));
            (t.name.as_str(), t.kind[0].to_string())
        };
        assert_eq!(target("src/main.rs"), ("app", "bin".to_string()));
        assert_eq!(target("src/lib.rs"), ("app", "lib".to_string()));
        // A module of either: the library, as the analysis reads both and cannot tell.
        assert_eq!(target("src/config.rs"), ("app", "lib".to_string()));
        assert_eq!(target("src/bin/tool/args.rs"), ("tool", "bin".to_string()));
        assert_eq!(target("/elsewhere/x.rs"), ("app", "lib".to_string()));
    }

    #[test]
    fn source_lines_exclude_their_endings_and_a_final_newline_adds_no_line() {
        let t = SourceText::new("a\r\nbé\n\nc\n".to_string());
        assert_eq!(t.line(1), Some((0, "a")));
        assert_eq!(t.line(2), Some((3, "bé")));
        assert_eq!(t.line(3), Some((7, "")));
        assert_eq!(t.line(4), Some((8, "c")));
        assert_eq!(t.line(5), None);
        assert_eq!(t.line(0), None);
        assert_eq!(byte_of("bé!", 3), 3);
        assert_eq!(byte_of("bé!", 9), 4);
    }
}

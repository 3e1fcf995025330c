//! Stages 1b–2, *load and parse*: follow `mod` items from each crate root to its files, parse each
//! file once with syn, and lower it to IR on the same thread (syn trees are `!Send`).
//!
//! Module files are found as rustc finds them: `x.rs` or `x/mod.rs` next to a `mod.rs`-like
//! file, under `dir/stem/` next to any other file, and `#[path]` relative to the declaring file's
//! directory. A file that cannot be read or parsed, a `mod` cycle, and a `#[path]` leading out of
//! the package become diagnostics; the rest of the crate is still analysed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::discover::{CrateUnit, Workspace};
use crate::index::LoadedUnit;
use crate::inputs::Input;
use crate::ir::IrModule;
use crate::lower::{ItemMacros, Lowerer, ModDecl};
use crate::report::Diagnostic;

/// Files larger than this are reported and skipped: generated tables of this size hold no
/// hand-written blocking calls, and parsing them would dominate the run's memory.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
const MAX_MODULE_DEPTH: usize = 64;

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub unit: usize,
    pub bytes: u64,
}

pub struct UnitLoad {
    pub loaded: LoadedUnit,
    pub files: Vec<SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
    /// For a workspace member or path dependency, the files read and looked for
    /// ([`crate::inputs`]); `None` for immutable sources, and for a load that met something the
    /// records cannot describe (then the unit is never cached).
    pub inputs: Option<Vec<Input>>,
    /// For a member whose inputs were recorded, read from or written to the cache: what
    /// [`crate::member_changes`] compares ([`crate::cache::load_unit`] sets it).
    pub(crate) shape: Option<crate::member_changes::MemberShape>,
}

struct Loader<'a> {
    ws: &'a Workspace,
    unit_index: usize,
    unit: &'a CrateUnit,
    package_dir: PathBuf,
    /// Files on the current `mod` chain: loading one again is a cycle.
    stack: Vec<PathBuf>,
    /// Module paths already loaded: a second declaration (both arms of an over-approximated
    /// cfg macro) is skipped silently.
    loaded_paths: BTreeSet<Vec<String>>,
    /// `macro_rules!` seen so far in this crate, for expanding item macros (textual order).
    item_macros: ItemMacros,
    modules: Vec<IrModule>,
    files: Vec<SourceFile>,
    diagnostics: Vec<Diagnostic>,
    /// Recorded for mutable sources only; `None` once something unrecordable was met.
    inputs: Option<Vec<Input>>,
}

/// Loads one crate unit. File ids in the result are local (0..files.len()); the caller rebases.
impl UnitLoad {
    /// A unit whose loading panicked: no modules (like a skipped unit), one diagnostic.
    pub fn failed(unit: usize, diagnostic: Diagnostic) -> UnitLoad {
        UnitLoad {
            loaded: LoadedUnit {
                unit,
                modules: Vec::new(),
            },
            files: Vec::new(),
            diagnostics: vec![diagnostic],
            inputs: None,
            shape: None,
        }
    }
}

/// What [`parse_and_lower`] read: the items (cfg'd out or not), the unparsable ones skipped, and
/// the first one's error.
struct Parsed {
    items: usize,
    skipped: usize,
    first_error: Option<syn::Error>,
}

/// Parses a file item by item and hands each item to `lower` as soon as it is parsed, unless a
/// `#![cfg(..)]` at the top of the file is off (then its items do not exist, as with an outer
/// `#[cfg]` on its `mod` item). Why: `syn::parse_file` holds every item's syntax tree until the
/// whole file is read, and generated files are large: `psl`'s 2.4 MB `list.rs` of `fn lookup_*`
/// items (in mas' graph) peaked at 234 MB of live heap that way, 93 MB lowered one at a time (a
/// file then holds its tokens and one item's tree). The loop is `syn::File`'s (after stripping a
/// BOM and a shebang line, as `syn::parse_file` does) with the smallest error recovery: an item
/// that does not parse is skipped up to the next top-level `;` or `{ .. }` group and counted, an
/// edition-2015 bare trait object alias is read by [`bare_trait_object_alias`]. `Err`: the text
/// is not a token stream.
fn parse_and_lower(
    text: &str,
    cfg: &crate::cfg::CfgSet,
    lower: &mut dyn FnMut(syn::Item),
) -> syn::Result<Parsed> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // syn::parse_file's shebang rule: `#!` not followed by `[` starts a line to ignore; the
    // newline stays, so lines keep their numbers.
    let text = match text.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            &text[text.find('\n').unwrap_or(text.len())..]
        }
        _ => text,
    };
    let parse = |input: syn::parse::ParseStream| {
        use syn::parse::discouraged::Speculative;
        let mut parsed = Parsed {
            items: 0,
            skipped: 0,
            first_error: None,
        };
        let attrs = match input.call(syn::Attribute::parse_inner) {
            Ok(attrs) => attrs,
            Err(e) => {
                parsed.first_error = Some(e);
                Vec::new()
            }
        };
        let enabled = cfg.enabled(&attrs);
        while !input.is_empty() {
            let fork = input.fork();
            let item = match fork.parse::<syn::Item>() {
                Ok(item) => {
                    input.advance_to(&fork);
                    item
                }
                Err(e) => {
                    let fork = input.fork();
                    if let Ok(item) = fork.call(bare_trait_object_alias) {
                        input.advance_to(&fork);
                        item
                    } else {
                        parsed.first_error.get_or_insert(e);
                        parsed.skipped += 1;
                        skip_item(input)?;
                        continue;
                    }
                }
            };
            parsed.items += 1;
            if enabled {
                lower(item);
            }
        }
        Ok(parsed)
    };
    syn::parse::Parser::parse_str(parse, text)
}

/// Skips the tokens of an item that does not parse, up to the next top-level `;` or `{ .. }`.
fn skip_item(input: syn::parse::ParseStream) -> syn::Result<()> {
    while !input.is_empty() {
        match input.parse::<proc_macro2::TokenTree>()? {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == ';' => break,
            proc_macro2::TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                break
            }
            _ => {}
        }
    }
    Ok(())
}

/// The item-level `include!(..)`s of an item, kept for the loader (followed, or reported as not
/// expanded): the item itself at the top of a file, those inside its inline modules.
fn collect_includes(item: &syn::Item, top: &mut Vec<syn::Item>, nested: &mut Vec<syn::Item>) {
    fn inner(item: &syn::Item, out: &mut Vec<syn::Item>) {
        match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("include") => out.push(item.clone()),
            syn::Item::Mod(syn::ItemMod {
                content: Some((_, items)),
                ..
            }) => items.iter().for_each(|i| inner(i, out)),
            _ => {}
        }
    }
    match item {
        syn::Item::Macro(m) if m.mac.path.is_ident("include") => top.push(item.clone()),
        _ => inner(item, nested),
    }
}

/// syn's message in rustc's words where syn's own says little: for a file the lexer rejects
/// (proc-macro2's "cannot parse string into token stream"), the character at the error's
/// position says why: a closing delimiter that matches nothing (rustc: "mismatched closing
/// delimiter: `}`"), an opening one never closed ("this file contains an unclosed delimiter"), a
/// string or block comment never ended. Written by hand: the lexer error carries only its
/// position, which is all this needs.
fn rustc_wording(e: &syn::Error, text: &str, at: proc_macro2::LineColumn) -> String {
    let message = e.to_string();
    if message != "cannot parse string into token stream" {
        return message;
    }
    let offending = text
        .lines()
        .nth(at.line.saturating_sub(1))
        .and_then(|l| l.chars().nth(at.column));
    // proc-macro2 points at the token it could not close or match, as rustc's label does.
    match offending {
        Some(c @ (')' | ']' | '}')) => format!("mismatched closing delimiter: `{c}`"),
        Some('(' | '[' | '{') => "this file contains an unclosed delimiter".to_string(),
        Some('"') => "unterminated double quote string".to_string(),
        Some('/') => "unterminated block comment".to_string(),
        _ => "this file cannot be split into tokens (an unterminated literal, or a character \
              Rust does not allow)"
            .to_string(),
    }
}

/// An edition-2015 type alias to a bare trait object, `pub type Action = Fn(&siginfo_t) + Send
/// + Sync;` (signal-hook-registry, in every tokio application's graph): `syn::Item` rejects the
/// `+` after a path type, while `syn::TypeTraitObject` reads the bounds with or without `dyn`.
fn bare_trait_object_alias(input: syn::parse::ParseStream) -> syn::Result<syn::Item> {
    let attrs = input.call(syn::Attribute::parse_outer)?;
    let vis: syn::Visibility = input.parse()?;
    let type_token: syn::Token![type] = input.parse()?;
    let ident: syn::Ident = input.parse()?;
    let mut generics: syn::Generics = input.parse()?;
    generics.where_clause = input.parse()?;
    let eq_token: syn::Token![=] = input.parse()?;
    let object: syn::TypeTraitObject = input.parse()?;
    let semi_token: syn::Token![;] = input.parse()?;
    Ok(syn::Item::Type(syn::ItemType {
        attrs,
        vis,
        type_token,
        ident,
        generics,
        eq_token,
        ty: Box::new(syn::Type::TraitObject(object)),
        semi_token,
    }))
}

pub fn load_unit(ws: &Workspace, unit_index: usize) -> UnitLoad {
    load_unit_with(ws, unit_index, Default::default())
}

/// [`load_unit`] able to expand the `#[macro_export]` macros of the unit's direct dependencies.
pub fn load_unit_with(
    ws: &Workspace,
    unit_index: usize,
    externs: std::sync::Arc<crate::macro_rules::ExternMacros>,
) -> UnitLoad {
    let load = load_unit_on_this_thread(ws, unit_index, externs);
    // proc-macro2 keeps the text and line table of every file parsed on a thread, for span
    // locations, until told otherwise: over a dependency graph that is all its source again
    // (deno: 158 MB of text, kept once per thread). Every syntax tree and token stream of the unit
    // is dropped by now (the IR holds positions, not spans), and a unit is loaded on one thread
    // without yielding to another rayon job, so no live span points into the freed text.
    proc_macro2::extra::invalidate_current_thread_spans();
    load
}

fn load_unit_on_this_thread(
    ws: &Workspace,
    unit_index: usize,
    externs: std::sync::Arc<crate::macro_rules::ExternMacros>,
) -> UnitLoad {
    let unit = &ws.units[unit_index];
    let package_dir = ws.packages[unit.package].manifest_dir.clone();
    let package_dir = package_dir.canonicalize().unwrap_or(package_dir);
    let mutable = ws.packages[unit.package].source.is_mutable();
    let mut loader = Loader {
        ws,
        unit_index,
        unit,
        package_dir,
        stack: Vec::new(),
        loaded_paths: BTreeSet::new(),
        item_macros: ItemMacros::with_externs(externs),
        modules: Vec::new(),
        files: Vec::new(),
        diagnostics: Vec::new(),
        inputs: mutable.then(Vec::new),
    };
    if unit.skip {
        return UnitLoad {
            loaded: LoadedUnit {
                unit: unit_index,
                modules: Vec::new(),
            },
            files: Vec::new(),
            diagnostics: Vec::new(),
            inputs: loader.inputs,
            shape: None,
        };
    }
    let root = unit.root.clone();
    let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
    loader.load_file(&root, Vec::new(), dir.clone(), 0);
    if loader.item_macros.forward_exports() {
        // A `#[macro_export]` macro was invoked in a module lowered before its definition
        // (path-scoped, so legal in any order): load again, knowing the exports from the start.
        // Only such crates pay for the second parse.
        let item_macros = loader.item_macros.with_exports();
        loader = Loader {
            stack: Vec::new(),
            loaded_paths: BTreeSet::new(),
            item_macros,
            modules: Vec::new(),
            files: Vec::new(),
            diagnostics: Vec::new(),
            inputs: mutable.then(Vec::new),
            ..loader
        };
        loader.load_file(&root, Vec::new(), dir, 0);
    }
    UnitLoad {
        loaded: LoadedUnit {
            unit: unit_index,
            modules: loader.modules,
        },
        files: loader.files,
        diagnostics: loader.diagnostics,
        inputs: loader.inputs,
        shape: None,
    }
}

impl Loader<'_> {
    fn package_name(&self) -> &str {
        &self.ws.packages[self.unit.package].name
    }

    fn record(&mut self, input: impl FnOnce() -> Input) {
        if let Some(inputs) = &mut self.inputs {
            inputs.push(input());
        }
    }

    /// What was met cannot be recorded as an [`Input`]: the unit is not cached.
    fn unrecordable(&mut self) {
        self.inputs = None;
    }

    fn diag(&mut self, kind: &str, file: &Path, message: String) {
        let member = self.ws.packages[self.unit.package].is_member;
        self.diagnostics.push(Diagnostic::new(
            kind,
            Some(self.ws.display_path(file)),
            Some(self.package_name().to_string()),
            message,
            member,
        ));
    }

    /// Loads `path` as module `module_path`; `child_dir` is where its `mod x;` files live.
    fn load_file(
        &mut self,
        path: &Path,
        module_path: Vec<String>,
        child_dir: PathBuf,
        depth: usize,
    ) {
        if depth > MAX_MODULE_DEPTH {
            self.diag(
                "module",
                path,
                "module nesting deeper than 64 levels; not followed".into(),
            );
            return;
        }
        let canonical = match path.canonicalize() {
            Ok(c) => c,
            Err(e) => {
                let what = if module_path.is_empty() {
                    "crate root"
                } else {
                    "module file"
                };
                self.diag("io", path, format!("cannot read {what}: {e}"));
                self.unrecordable();
                return;
            }
        };
        if !canonical.starts_with(&self.package_dir) {
            self.diag(
                "module",
                path,
                format!(
                    "module `{}` points outside its package; not followed",
                    module_path.join("::")
                ),
            );
            self.unrecordable();
            return;
        }
        if self.stack.contains(&canonical) {
            self.diag(
                "module",
                path,
                format!(
                    "module `{}` includes its own ancestor (a `mod` cycle); not followed",
                    module_path.join("::")
                ),
            );
            return;
        }
        if !self.loaded_paths.insert(module_path.clone()) {
            return;
        }
        let bytes = match std::fs::metadata(&canonical) {
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                self.diag(
                    "size",
                    path,
                    format!(
                        "file is {} bytes, over the {} byte limit; skipped",
                        m.len(),
                        MAX_FILE_BYTES
                    ),
                );
                self.unrecordable();
                return;
            }
            Ok(m) => m.len(),
            Err(e) => {
                self.diag("io", path, format!("cannot read file: {e}"));
                self.unrecordable();
                return;
            }
        };
        let bytes_read = match std::fs::read(&canonical) {
            Ok(b) => b,
            Err(e) => {
                self.diag("io", path, format!("cannot read file: {e}"));
                self.unrecordable();
                return;
            }
        };
        self.record(|| Input::read(path, &bytes_read));
        let text = match String::from_utf8(bytes_read) {
            Ok(t) => t,
            Err(e) => {
                self.diag(
                    "encoding",
                    path,
                    format!(
                        "file is not valid UTF-8 (at byte {})",
                        e.utf8_error().valid_up_to()
                    ),
                );
                return;
            }
        };
        // Items are lowered as they are parsed ([`parse_and_lower`]), data tables of a large
        // file blanked first (positions kept).
        let text = crate::data_literals::blank_data_arrays(&text);
        let file_id = self.files.len() as u32;
        let cfg = self.unit.cfg.clone();
        let crate_name = self.unit.crate_name.clone();
        let mut module = IrModule {
            path: module_path.clone(),
            file: file_id,
            ..Default::default()
        };
        let mut decls = Vec::new();
        let mut top_includes = Vec::new();
        let mut nested_includes = Vec::new();
        let parsed = {
            let mut lowerer = Lowerer::new(&cfg, &crate_name, &mut self.item_macros);
            let parsed = parse_and_lower(&text, &cfg, &mut |item| {
                collect_includes(&item, &mut top_includes, &mut nested_includes);
                lowerer.lower_item(item, &mut module, &mut decls);
            });
            lowerer.finish(&mut module);
            parsed
        };
        match parsed {
            Err(e) => {
                let lc = e.span().start();
                let e = rustc_wording(&e, &text, lc);
                self.diag("parse", path, format!("{}:{}: {e}", lc.line, lc.column + 1));
                return;
            }
            Ok(Parsed {
                items,
                skipped,
                first_error: Some(e),
            }) if skipped > 0 => {
                let lc = e.span().start();
                let e = rustc_wording(&e, &text, lc);
                if items == 0 {
                    self.diag("parse", path, format!("{}:{}: {e}", lc.line, lc.column + 1));
                    return;
                }
                // One construct syn cannot read (syntax newer than syn) costs that item, not the
                // file.
                self.diag(
                    "parse",
                    path,
                    format!(
                        "{}:{}: {e} ({skipped} unparsable item(s) skipped; the other {items} \
                         items of the file were analysed)",
                        lc.line,
                        lc.column + 1,
                    ),
                );
            }
            Ok(_) => {}
        }
        let includes = self.literal_includes(&top_includes, path);
        self.report_includes_in(&top_includes, path, true);
        self.report_includes_in(&nested_includes, path, false);
        self.files.push(SourceFile {
            path: path.to_path_buf(),
            unit: self.unit_index,
            bytes,
        });
        let file_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.stack.push(canonical);
        let index = self.modules.len();
        self.push_module(module, decls, &child_dir, &file_dir, depth);
        for (i, included) in includes.iter().enumerate() {
            self.load_include(index, &module_path, i, included, depth);
        }
        self.stack.pop();
    }

    /// The live item-level `include!("file.rs")`s of a file (a string literal, relative to the
    /// file's directory as rustc reads it): bindings crates keep their `extern` blocks in one
    /// (tree-sitter's `include!("./bindings.rs")`). Others (`concat!(env!("OUT_DIR"), ..)`, inside
    /// an inline module) are reported by [`Loader::report_includes_in`].
    fn literal_includes(&mut self, items: &[syn::Item], path: &Path) -> Vec<PathBuf> {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut found = Vec::new();
        for item in items {
            let Some(file) = literal_include(item, &dir) else {
                continue;
            };
            if let syn::Item::Macro(m) = item {
                if !self.unit.cfg.enabled(&m.attrs) {
                    continue;
                }
            }
            if file.is_file() {
                found.push(file);
            } else {
                self.record(|| Input::absent(&file));
            }
        }
        found
    }

    /// Loads an included file's items as a hidden child module of the including module (its own
    /// file, so positions stay right) glob-imported both ways: the including module names the
    /// included items (`ffi::ts_parser_parse`) and the included items name the including
    /// module's. The hidden name (`include#0`) is no Rust identifier, so it shadows nothing.
    fn load_include(
        &mut self,
        parent_index: usize,
        parent_path: &[String],
        i: usize,
        file: &Path,
        depth: usize,
    ) {
        let hidden = format!("include#{i}");
        let mut module_path = parent_path.to_vec();
        module_path.push(hidden.clone());
        if let Some(parent) = self.modules.get_mut(parent_index) {
            parent.uses.push(crate::ir::IrUse {
                path: vec!["self".into(), hidden],
                leading_colon: false,
                alias: None,
                glob: true,
                public: true,
            });
        }
        let first = self.modules.len();
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        self.load_file(file, module_path.clone(), dir, depth + 1);
        if let Some(child) = self.modules[first..]
            .iter_mut()
            .find(|m| m.path == module_path)
        {
            child.uses.push(crate::ir::IrUse {
                path: vec!["super".into()],
                leading_colon: false,
                alias: None,
                glob: true,
                public: false,
            });
        }
    }

    /// An item-level `include!(..)` that is not followed (not a string literal, or inside an
    /// inline module); say so, rather than lose the included items silently. `include!` of
    /// build-script output (`OUT_DIR`) could not be read anyway: the tool never runs build
    /// scripts.
    fn report_includes_in(&mut self, items: &[syn::Item], path: &Path, top: bool) {
        for item in items {
            match item {
                syn::Item::Macro(m) if m.mac.path.is_ident("include") => {
                    if !self.unit.cfg.enabled(&m.attrs) {
                        // cfg'd out: no items to lose.
                        continue;
                    }
                    let dir = path.parent().unwrap_or(Path::new(""));
                    if top && literal_include(item, dir).is_some_and(|f| f.is_file()) {
                        // Followed by `load_include`.
                        continue;
                    }
                    let tokens = m.mac.tokens.to_string();
                    let lc = m.mac.path.segments[0].ident.span().start();
                    let what = if tokens.contains("OUT_DIR") {
                        "build-script output is never generated by this tool, so its items are \
                         not analysed"
                            .to_string()
                    } else {
                        format!(
                            "`include!({tokens})` is not expanded: the included items are not \
                             analysed"
                        )
                    };
                    self.diag(
                        "include",
                        path,
                        format!("{}:{}: {what}", lc.line, lc.column + 1),
                    );
                }
                syn::Item::Mod(syn::ItemMod {
                    content: Some((_, inner)),
                    ..
                }) => self.report_includes_in(inner, path, false),
                _ => {}
            }
        }
    }

    fn lower_module(
        &mut self,
        items: Vec<syn::Item>,
        module_path: Vec<String>,
        file_id: u32,
        child_dir: PathBuf,
        file_dir: PathBuf,
        depth: usize,
    ) {
        let crate_name = self.unit.crate_name.clone();
        let cfg = self.unit.cfg.clone();
        let mut module = IrModule {
            path: module_path.clone(),
            file: file_id,
            ..Default::default()
        };
        let decls =
            Lowerer::new(&cfg, &crate_name, &mut self.item_macros).lower_items(items, &mut module);
        self.push_module(module, decls, &child_dir, &file_dir, depth);
    }

    /// Adds a lowered module (its path and file are the module's own), then loads the modules it
    /// declares.
    fn push_module(
        &mut self,
        module: IrModule,
        decls: Vec<ModDecl>,
        child_dir: &Path,
        file_dir: &Path,
        depth: usize,
    ) {
        let (module_path, file_id) = (module.path.clone(), module.file);
        for (name, at) in self.item_macros.take_oversized() {
            let path = self.files[file_id as usize].path.clone();
            self.diag(
                "size",
                &path,
                format!(
                    "{}:{}: `macro_rules! {name}` has over {} tokens: its invocations are not \
                     expanded (a definition that large is generated data)",
                    at.line,
                    at.column,
                    crate::lower::MACRO_DEFINITION_TOKENS
                ),
            );
        }
        self.modules.push(module);
        for decl in decls {
            self.load_decl(decl, &module_path, file_id, child_dir, file_dir, depth + 1);
        }
    }

    fn load_decl(
        &mut self,
        decl: ModDecl,
        parent: &[String],
        file_id: u32,
        child_dir: &Path,
        file_dir: &Path,
        depth: usize,
    ) {
        let mut module_path = parent.to_vec();
        module_path.push(decl.name.clone());
        if depth > MAX_MODULE_DEPTH {
            return;
        }
        match decl.inline {
            Some(items) => {
                if !self.loaded_paths.insert(module_path.clone()) {
                    return;
                }
                // rustc (`rustc_expand::module::mod_dir_path`): an inline module's `#[path]` names
                // its directory relative to the directory of the file it is written in, without
                // a non-mod-rs file's own directory (`src/proto.rs`: `#[path = "proto/tonic"] mod
                // tonic {..}` is `src/proto/tonic`, opentelemetry-proto's layout); without one,
                // the directory is where the file's child modules live, plus the name.
                let dir = match &decl.path_attr {
                    Some(p) => file_dir.join(p),
                    None => child_dir.join(&decl.name),
                };
                // `#[path]` inside an inline module is relative to the inline module's directory.
                self.lower_module(items, module_path, file_id, dir.clone(), dir, depth);
            }
            None => {
                let (file, dir) = match &decl.path_attr {
                    Some(p) => {
                        let f = file_dir.join(p);
                        let d = f.parent().map(Path::to_path_buf).unwrap_or_default();
                        (f, d)
                    }
                    None => {
                        // `mod r#ref;` lives in `ref.rs`.
                        let stem = decl.name.strip_prefix("r#").unwrap_or(&decl.name);
                        let flat = child_dir.join(format!("{stem}.rs"));
                        let nested = child_dir.join(stem).join("mod.rs");
                        if flat.is_file() {
                            (flat, child_dir.join(stem))
                        } else if nested.is_file() {
                            self.record(|| Input::absent(&flat));
                            (nested, child_dir.join(stem))
                        } else if flat.symlink_metadata().is_ok() {
                            // A name that exists but does not resolve to a file (a symlink loop,
                            // a dangling link): unreadable, not missing; `load_file` says why.
                            (flat, child_dir.join(stem))
                        } else if nested.symlink_metadata().is_ok() {
                            (nested, child_dir.join(stem))
                        } else {
                            self.record(|| Input::absent(&flat));
                            self.record(|| Input::absent(&nested));
                            let shown = self.ws.display_path(&flat);
                            let parent_file = self
                                .files
                                .get(file_id as usize)
                                .map(|f| f.path.clone())
                                .unwrap_or_default();
                            self.diag(
                                "module",
                                &parent_file,
                                format!(
                                    "module `{}` has no file (looked for {shown} and {}/mod.rs); it may be generated at build time, or chosen by a `#[cfg_attr(.., path = ..)]` whose cfg a build script sets (build scripts never run)",
                                    module_path.join("::"),
                                    self.ws.display_path(&child_dir.join(&decl.name))
                                ),
                            );
                            return;
                        }
                    }
                };
                self.load_file(&file, module_path, dir, depth);
            }
        }
    }
}

/// The file an item-level `include!("file.rs")` names, relative to `dir` (the including file's
/// directory, as rustc resolves it); `None` for other items and non-literal arguments.
fn literal_include(item: &syn::Item, dir: &Path) -> Option<PathBuf> {
    match item {
        syn::Item::Macro(m) if m.mac.path.is_ident("include") => {
            let lit = syn::parse2::<syn::LitStr>(m.mac.tokens.clone()).ok()?;
            let file = dir.join(lit.value());
            // `include!("./bindings.rs")`: shown as `src/bindings.rs`.
            Some(
                file.components()
                    .filter(|c| !matches!(c, std::path::Component::CurDir))
                    .collect(),
            )
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{analyze_files, sites};

    /// opentelemetry-proto 0.32's layout (deno's graph): in the non-mod-rs file `src/proto.rs`,
    /// `#[path = "proto/tonic"] mod tonic { #[path = ""] mod common { #[path = "x.rs"] mod v1; } }`
    /// reads `src/proto/tonic/x.rs`, as rustc does; an inline module without `#[path]` in the
    /// same file lives under `src/proto/`.
    #[test]
    fn path_attributes_on_inline_modules_of_a_non_mod_rs_file_are_relative_to_its_directory() {
        let r = analyze_files(&[
            ("src/lib.rs", "mod proto;\n"),
            (
                "src/proto.rs",
                "#[path = \"proto/tonic\"]\npub mod tonic {\n#[path = \"\"]\npub mod common {\n\
                 #[path = \"opentelemetry.proto.common.v1.rs\"]\npub mod v1;\n}\n}\n\
                 pub mod plain {\npub mod leaf;\n}\n",
            ),
            (
                "src/proto/tonic/opentelemetry.proto.common.v1.rs",
                "pub async fn a() {\n std::fs::read(\"x\");\n}\n",
            ),
            (
                "src/proto/plain/leaf.rs",
                "pub async fn b() {\n std::fs::read(\"y\");\n}\n",
            ),
        ]);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let files: Vec<&str> = r.findings.iter().map(|f| f.path[0].file.as_str()).collect();
        assert_eq!(
            files,
            [
                "src/proto/plain/leaf.rs",
                "src/proto/tonic/opentelemetry.proto.common.v1.rs"
            ]
        );
    }

    #[test]
    fn raw_identifier_modules_load_their_plain_file() {
        let r = analyze_files(&[
            ("src/lib.rs", "mod r#ref;\n"),
            ("src/ref.rs", "async fn a() {\n std::fs::read(\"x\");\n}\n"),
        ]);
        assert_eq!(sites(&r), [(2, "NB0101".into())]);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
    }

    #[test]
    fn missing_module_files_and_parse_errors_are_diagnostics_and_the_rest_is_analysed() {
        let r = analyze_files(&[
            (
                "src/lib.rs",
                "mod gone;\nmod broken;\nasync fn a() {\n std::fs::read(\"x\");\n}\n",
            ),
            ("src/broken.rs", "fn (\n"),
        ]);
        assert_eq!(sites(&r), [(4, "NB0101".into())]);
        let kinds: Vec<&str> = r.errors.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["module", "parse"]);
    }

    fn kinds(r: &crate::Report) -> Vec<&str> {
        r.errors.iter().map(|e| e.kind.as_str()).collect()
    }

    #[test]
    fn ten_thousand_nested_parentheses_and_blocks_do_not_overflow() {
        let parens = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let blocks = format!(
            "{}std::fs::read(\"x\"){}",
            "{ ".repeat(10_000),
            " }".repeat(10_000)
        );
        let src = format!(
            "pub fn a() -> i32 {{ {parens} }}\npub async fn b() {{\n let _ = {blocks};\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        // Either analysed (the blocking call below the nesting guard is found or not) or a
        // diagnostic; never a crash.
        assert!(r.errors.iter().all(|e| e.kind == "parse"), "{:?}", r.errors);
    }

    #[test]
    fn oversized_files_and_missing_module_files_are_reported_and_skipped() {
        // The issue's hostile case: a 50 MB generated file (bindings-style functions). It is
        // refused from its metadata before any read, with a `size` diagnostic naming it.
        let mut big = String::with_capacity(50 * 1024 * 1024 + 64);
        let mut i = 0;
        while big.len() < 50 * 1024 * 1024 {
            big.push_str(&format!(
                "pub fn generated_{i}() {{ std::fs::read(\"x\"); }}\n"
            ));
            i += 1;
        }
        assert!(big.len() as u64 > super::MAX_FILE_BYTES);
        let r = analyze_files(&[
            (
                "src/lib.rs",
                "mod big;\nmod absent;\nasync fn a() {\n std::fs::read(\"x\");\n}\n",
            ),
            ("src/big.rs", &big),
        ]);
        assert_eq!(kinds(&r), ["module", "size"]);
        assert_eq!(sites(&r), [(4, "NB0101".into())]);
    }

    /// tree-sitter's shape: `mod ffi;` whose file is `include!("./bindings.rs")` (the `extern`
    /// block of the C library) beside wrappers in `ffi.rs`; `Parser::parse` calls
    /// `ffi::ts_parser_parse`. The included items are the including module's: a path through the
    /// module reaches them, they name the module's own items, and their calls are found at their
    /// own file's lines. A cfg'd-out include and one of build-script output are not followed.
    #[test]
    fn item_level_literal_includes_are_loaded_as_the_including_modules_items() {
        let r = analyze_files(&[
            (
                "src/lib.rs",
                "pub mod ffi;\n\
                 pub async fn a() {\n unsafe { ffi::ts_parse(1) };\n}\n\
                 pub async fn b() {\n ffi::helper();\n}\n\
                 pub async fn c() {\n ffi::gone();\n}\n",
            ),
            (
                "src/ffi.rs",
                "#[cfg(feature = \"bindgen\")]\ninclude!(concat!(env!(\"OUT_DIR\"), \"/b.rs\"));\n\
                 #[cfg(not(feature = \"bindgen\"))]\ninclude!(\"./bindings.rs\");\n\
                 #[cfg(feature = \"never\")]\ninclude!(\"./off.rs\");\n\
                 pub fn local() -> u32 {\n 1\n}\n",
            ),
            (
                "src/bindings.rs",
                "extern \"C\" {\n pub fn ts_parse(x: u32) -> u32;\n}\n\
                 pub fn helper() {\n let _ = local();\n std::thread::sleep(std::time::Duration::from_secs(1));\n}\n",
            ),
            (
                "src/off.rs",
                "pub fn gone() {\n std::thread::sleep(std::time::Duration::from_secs(1));\n}\n",
            ),
        ]);
        assert!(kinds(&r).is_empty(), "{:?}", r.errors);
        // The foreign fn declared in the included file is called through `ffi::`.
        let ffi: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.rule == "NB1001")
            .map(|f| (f.root.function.clone(), f.api.clone()))
            .collect();
        assert_eq!(ffi.len(), 1, "{ffi:?}");
        assert!(ffi[0].0.ends_with("::a"), "{ffi:?}");
        // The hidden module is not part of the name.
        assert_eq!(ffi[0].1, "app::ffi::ts_parse", "{ffi:?}");
        // `helper` (included) sleeps at line 6 of bindings.rs, reached from `b`; `gone` is only
        // in the cfg'd-out include.
        let sleeps: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.rule == "NB0201")
            .map(|f| {
                (
                    f.root.function.clone(),
                    f.path.last().map(|s| (s.file.clone(), s.line)),
                )
            })
            .collect();
        assert_eq!(sleeps.len(), 1, "{sleeps:?}");
        assert!(sleeps[0].0.ends_with("::b"), "{sleeps:?}");
        assert_eq!(
            sleeps[0].1,
            Some(("src/bindings.rs".to_string(), 6)),
            "{sleeps:?}"
        );
    }

    #[test]
    fn item_level_include_is_reported_not_lost_silently() {
        let r = analyze_files(&[(
            "src/lib.rs",
            "include!(\"gen.rs\");\nmod inner {\n include!(concat!(env!(\"OUT_DIR\"), \"/b.rs\"));\n}\n\
             pub async fn a() {\n std::fs::read(\"x\");\n}\n",
        )]);
        assert_eq!(kinds(&r), ["include", "include"]);
        let messages: Vec<&str> = r.errors.iter().map(|e| e.message.as_str()).collect();
        assert!(
            messages[0].starts_with("1:1: `include!(\"gen.rs\")` is not expanded"),
            "{messages:?}"
        );
        assert!(
            messages[1].starts_with("3:2: build-script output"),
            "{messages:?}"
        );
        assert_eq!(sites(&r), [(6, "NB0101".into())]);
    }

    #[test]
    fn a_module_files_inner_cfg_gates_the_module() {
        let r = analyze_files(&[
            ("src/lib.rs", "pub mod on;\npub mod off;\n"),
            (
                "src/on.rs",
                "#![cfg(unix)]\npub async fn a() {\n std::fs::read(\"x\");\n}\n",
            ),
            (
                "src/off.rs",
                "#![cfg(feature = \"http3\")]\npub async fn b() {\n std::fs::read(\"x\");\n}\n",
            ),
        ]);
        assert_eq!(
            r.findings
                .iter()
                .map(|f| f.root.function.as_str())
                .collect::<Vec<_>>(),
            ["app::on::a"]
        );
    }

    /// The report has exactly one problem, of `kind`, whose message contains `text`.
    fn assert_one_error(r: &crate::Report, kind: &str, text: &str) {
        assert_eq!(kinds(r), [kind]);
        assert!(
            r.errors[0].message.contains(text),
            "{}",
            r.errors[0].message
        );
    }

    #[test]
    fn an_unparsable_item_costs_that_item_not_the_file() {
        // `impl {}` is no Rust at all; the async fn after it must still be analysed, and the
        // 2015 bare trait object before it is read (not counted as skipped).
        let r = analyze_files(&[(
            "src/lib.rs",
            "type A = Fn() + Send;\nimpl {\n}\nasync fn a() {\n std::fs::read(\"x\");\n}\n",
        )]);
        assert_one_error(
            &r,
            "parse",
            "1 unparsable item(s) skipped; the other 2 items",
        );
        assert_eq!(sites(&r), [(5, "NB0101".into())]);
    }

    /// A file is lowered item by item as it is parsed: a script's shebang line and a BOM are
    /// skipped as `syn::parse_file` does, lines keep their numbers.
    #[test]
    fn shebang_lines_and_byte_order_marks_are_skipped_as_syn_does() {
        let shebang = analyze_files(&[(
            "src/lib.rs",
            "#!/usr/bin/env rust-script\nasync fn a() {\n std::fs::read(\"x\");\n}\n",
        )]);
        assert!(shebang.errors.is_empty(), "{:?}", shebang.errors);
        assert_eq!(sites(&shebang), [(3, "NB0101".into())]);
        // `#![..]` is an inner attribute, not a shebang.
        let inner = analyze_files(&[(
            "src/lib.rs",
            "\u{feff}#![allow(dead_code)]\nasync fn a() {\n std::fs::read(\"x\");\n}\n",
        )]);
        assert!(inner.errors.is_empty(), "{:?}", inner.errors);
        assert_eq!(sites(&inner), [(3, "NB0101".into())]);
    }

    /// ICU4X's baked data crates: a `macro_rules!` whose body is data (here 120 000 tokens) is
    /// reported and not kept; a small one still expands.
    #[test]
    fn an_oversized_macro_rules_definition_is_reported_and_not_expanded() {
        let data = "0, ".repeat(60_000);
        let src = format!(
            "macro_rules! big {{ () => {{ fn from_big() {{ std::fs::read(\"x\"); }} \
             const DATA: [u8; 60000] = [{data}]; }} }}\n\
             macro_rules! small {{ () => {{ fn from_small() {{ std::fs::read(\"y\"); }} }} }}\n\
             big!();\nsmall!();\n\
             async fn a() {{\n from_big();\n from_small();\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_one_error(
            &r,
            "size",
            "1:14: `macro_rules! big` has over 100000 tokens",
        );
        assert_eq!(sites(&r), [(7, "NB0101".into())]);
    }

    /// Edition-2015 bare trait objects in type aliases (signal-hook-registry 1.4.8's
    /// `pub type Action = Fn(&siginfo_t) + Send + Sync;`, present in every tokio app) are read
    /// without a diagnostic, generics and attributes included, and the file is analysed whole.
    #[test]
    fn edition_2015_bare_trait_object_aliases_parse_without_a_warning() {
        let r = analyze_files(&[(
            "src/lib.rs",
            "#[doc(hidden)]\npub type Action = Fn(&u8) + Send + Sync;\n\
             type Cb<'a, T> where T: 'a = FnMut(&'a T) -> bool + 'a;\n\
             async fn a() {\n std::fs::read(\"x\");\n}\n",
        )]);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(sites(&r), [(5, "NB0101".into())]);
        let mut items = Vec::new();
        syn::parse::Parser::parse_str(super::bare_trait_object_alias, "pub type A = Fn() + Send;")
            .map(|i| items.push(i))
            .unwrap();
        assert!(matches!(&items[0], syn::Item::Type(t)
            if t.ident == "A" && matches!(&*t.ty, syn::Type::TraitObject(o) if o.bounds.len() == 2)));
    }

    #[test]
    fn non_utf8_source_is_an_encoding_diagnostic() {
        let r = crate::testutil::analyze_raw_files(&[
            (
                "src/lib.rs",
                b"mod latin1;\nasync fn a() {\n std::fs::read(\"x\");\n}\n".as_slice(),
            ),
            ("src/latin1.rs", b"// caf\xe9\n".as_slice()),
        ]);
        assert_eq!(kinds(&r), ["encoding"]);
        assert_eq!(sites(&r), [(3, "NB0101".into())]);
    }

    #[test]
    fn path_cycles_and_paths_out_of_the_package_are_not_followed() {
        let r = analyze_files(&[
            (
                "src/lib.rs",
                "#[path = \"a.rs\"]\nmod a;\n#[path = \"../../outside.rs\"]\nmod outside;\n",
            ),
            (
                "src/a.rs",
                "#[path = \"b.rs\"]\nmod b;\npub async fn fa() {\n std::fs::read(\"x\");\n}\n",
            ),
            ("src/b.rs", "#[path = \"a.rs\"]\nmod a_again;\n"),
        ]);
        let msgs: Vec<&str> = r.errors.iter().map(|e| e.message.as_str()).collect();
        assert!(msgs.iter().any(|m| m.contains("a `mod` cycle")), "{msgs:?}");
        assert!(
            msgs.iter()
                .any(|m| m.contains("cannot read") || m.contains("outside its package")),
            "{msgs:?}"
        );
        assert_eq!(sites(&r), [(4, "NB0101".into())]);
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_vanishes_after_discovery_is_a_diagnostic() {
        use crate::discover::SourceKind;
        // Discovery saw the crate root (and a module's declaring file); then both are deleted
        // before the loader reads them, as when a checkout changes under a running scan.
        let (ws, _scratch) = crate::testutil::scratch_workspace(
            "vanish",
            "mod later;\npub async fn a() {}\n",
            SourceKind::Workspace,
            false,
        );
        std::fs::remove_file(&ws.units[0].root).unwrap();
        let r = crate::testutil::analyze_workspace_of(&ws);
        assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
        assert_eq!(r.errors[0].kind, "io");
        assert_eq!(r.errors[0].file.as_deref(), Some("src/lib.rs"));
        assert!(
            r.errors[0].message.starts_with("cannot read crate root"),
            "{:?}",
            r.errors[0]
        );
        assert_eq!(r.stats.internal_errors, 0);
    }

    #[test]
    fn symlink_loops_are_reported() {
        let dir = std::env::temp_dir().join(format!("nonblock-symloop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::os::unix::fs::symlink(dir.join("src/looped.rs"), dir.join("src/looped.rs")).unwrap();
        let r = crate::testutil::analyze_dir(
            &dir,
            "mod looped;\nasync fn a() {\n std::thread::sleep(todo!());\n}\n",
        );
        let _ = std::fs::remove_dir_all(&dir);
        // Unreadable (the OS's reason, ELOOP), not "has no file".
        assert_eq!(kinds(&r), ["io"], "{:?}", r.errors);
        assert!(
            r.errors[0].message.contains("cannot read module file")
                && r.errors[0].message.contains("symbolic links"),
            "{}",
            r.errors[0].message
        );
        assert_eq!(sites(&r), [(3, "NB0201".into())]);
    }

    #[test]
    fn ten_thousand_functions_and_five_thousand_externs_in_one_file() {
        let mut src = String::from("extern \"C\" {\n");
        for i in 0..5_000 {
            src.push_str(&format!("    fn ext{i}(x: i32) -> i32;\n"));
        }
        src.push_str("}\n");
        for i in 0..10_000 {
            src.push_str(&format!("pub fn f{i}() {{ f{}(); }}\n", (i + 1) % 10_000));
        }
        src.push_str("pub fn leaf() { std::fs::read(\"x\"); }\npub fn f10000() { leaf() }\n");
        src.push_str("pub async fn root() {\n    f0();\n    unsafe { ext4999(1) };\n}\n");
        let r = analyze_files(&[("src/lib.rs", &src)]);
        // Lines: 1 + 5 000 externs + 1, then 10 000 ring fns, leaf, f10000, root: the extern call
        // is root's second line.
        let extern_call_line = 1 + 5_000 + 1 + 10_000 + 2 + 3;
        assert_eq!(r.stats.functions, 5_000 + 10_000 + 3);
        assert_eq!(
            sites(&r),
            [(extern_call_line as u32, "NB1001".into())],
            "the f-ring never reaches leaf"
        );
    }
}

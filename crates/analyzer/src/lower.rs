//! syn → IR lowering, run on the thread that parsed the file (see [`crate::ir`] for why).
//!
//! Lowering also applies `#[cfg]`/`#[cfg_attr]` to items, statements and fields, expands
//! `cfg_if!` and item macros whose tokens are plain items (the `cfg_xxx! { pub mod fs; }` idiom of
//! tokio and others), and parses the tokens of expression macros leniently so that calls inside
//! `format!`, `vec!`, `assert!`, `tokio::select!` and `join!` are seen.

use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Token, Visibility};

use std::collections::BTreeSet;

use quote::ToTokens;

use crate::cfg::CfgSet;
use crate::fields::{FieldWrite, WriteValue};
use crate::ir::*;
use crate::macro_rules::MacroRules;

/// Deeper nesting than this is not lowered further; the parser has already accepted the file, so
/// this only guards our own recursion on pathological input.
const MAX_DEPTH: usize = 3000;

pub fn pos(span: Span) -> Pos {
    let lc = span.start();
    Pos {
        line: lc.line as u32,
        column: lc.column as u32 + 1,
    }
}

/// Attributes that a crate's item-wrapping macros (`macro_rules! cfg_rt { ($($item:item)*) =>
/// { $( #[cfg(feature = "rt")] $item )* } }`) put on each item, by macro name.
#[derive(Default)]
pub struct ItemMacros {
    wrappers: std::collections::BTreeMap<String, Vec<syn::Attribute>>,
    /// The crate's `macro_rules!` seen so far, by name (a later definition shadows an earlier
    /// one, as textual scope does in a file), expanded at their invocations.
    rules: std::collections::HashMap<String, std::rc::Rc<MacroRules>>,
    /// `#[macro_export]` definitions of the crate, known before lowering starts (a second pass,
    /// see [`ItemMacros::forward_exports`]): an exported macro is path-scoped, nameable from
    /// anywhere in the crate (`crate::lock!`, or `lock!` through `use crate::lock` or a prelude
    /// glob) whatever the textual order of modules. Consulted only when no textual definition of
    /// the name is in scope.
    exported_ahead: std::collections::HashMap<String, std::rc::Rc<MacroRules>>,
    /// The crate's `#[macro_export]` definitions met while lowering.
    exported: std::collections::HashMap<String, std::rc::Rc<MacroRules>>,
    /// The direct dependencies' exported macros.
    externs: std::sync::Arc<crate::macro_rules::ExternMacros>,
    /// Those parsed so far in this crate, by (dependency, name); `None`: the text did not parse.
    extern_rules: std::collections::HashMap<(String, String), Option<std::rc::Rc<MacroRules>>>,
    /// Names invoked (`name!`, `crate::name!`) where no definition was known.
    unknown: std::collections::HashSet<String>,
    /// Definitions over [`MACRO_DEFINITION_TOKENS`] met since the loader last took them
    /// ([`ItemMacros::take_oversized`]): name, position of the name.
    oversized: Vec<(String, Pos)>,
}

impl ItemMacros {
    /// The `macro_rules!` definitions left out for their size since the last call, for the
    /// loader to report.
    pub fn take_oversized(&mut self) -> Vec<(String, Pos)> {
        std::mem::take(&mut self.oversized)
    }

    /// Macros exported by the crate that were invoked before their definition was lowered
    /// (`mod js;` declared before `mod util;` where `lock!` is defined): a load that returns
    /// some must be redone with [`ItemMacros::with_exports`], so those invocations expand too.
    pub fn forward_exports(&self) -> bool {
        self.unknown.iter().any(|n| self.exported.contains_key(n))
    }

    /// A fresh state for a second pass that knows the crate's exported macros from the start.
    pub fn with_exports(&self) -> ItemMacros {
        ItemMacros {
            exported_ahead: self.exported.clone(),
            externs: self.externs.clone(),
            ..ItemMacros::default()
        }
    }

    /// A fresh state that can expand the dependencies' exported macros.
    pub fn with_externs(externs: std::sync::Arc<crate::macro_rules::ExternMacros>) -> ItemMacros {
        ItemMacros {
            externs,
            ..ItemMacros::default()
        }
    }

    /// The rules of a dependency's macro, parsed on first use.
    fn extern_rules(
        &mut self,
        krate: Option<&str>,
        name: &str,
    ) -> Option<(String, std::rc::Rc<MacroRules>)> {
        let (krate, body) = self.externs.lookup(krate, name)?;
        let rules = self
            .extern_rules
            .entry((krate.clone(), name.to_string()))
            .or_insert_with(|| crate::macro_rules::parse_definition(&body).map(std::rc::Rc::new))
            .clone()?;
        Some((krate, rules))
    }
}

pub struct Lowerer<'a> {
    pub cfg: &'a CfgSet,
    item_macros: &'a mut ItemMacros,
    /// The crate being lowered: `$crate` in its macros becomes `::crate_name`.
    pub crate_name: &'a str,
    depth: usize,
    /// Fns declared inside bodies; they are indexed as items of the enclosing module.
    nested_fns: Vec<IrFn>,
    /// `use` declarations inside bodies; they are treated as imports of the enclosing module
    /// (an over-approximation of their block scope).
    nested_uses: Vec<IrUse>,
    /// Statics and consts declared inside bodies (`static ONCE: Once = Once::new();`, num_cpus'
    /// `cgroups_num_cpus`): typed as values of the enclosing module, so that `ONCE.call_once(..)`
    /// resolves to the one-time initialiser it is.
    nested_values: Vec<(String, IrType)>,
    /// How many `macro_rules!` expansions enclose the code being lowered.
    expansion_depth: usize,
    /// How many of those are of a dependency's macro.
    dependency_expansions: usize,
    /// A macro invoked inside a dependency's macro's expansion could not be expanded (no arm
    /// matched, a proc macro, a budget): the tt-muncher's intermediate syntax (tokio's
    /// `select!(@{ .. })`) would be lowered as code, so the enclosing dependency macro falls
    /// back to its invocation as written ([`Lowerer::lower_macro`]).
    dependency_expansion_failed: bool,
    /// The `macro_rules!` definition whose arms are being walked ([`Lowerer::lower_item_macro`]):
    /// its own invocations there are not expanded ([`Lowerer::expand`]).
    arm_walk: Option<std::rc::Rc<MacroRules>>,
    /// Expansions left for the outermost invocation being expanded ([`MACRO_EXPANSIONS`]).
    expansions_left: usize,
    /// Invocation tokens the outermost invocation's expansions may still match
    /// ([`MACRO_EXPANSION_TOKENS`]).
    expansion_tokens_left: usize,
    /// Writes to fields ([`crate::fields`]) of the function being lowered, or of the module
    /// outside functions.
    writes: BTreeSet<FieldWrite>,
    /// The name `self`'s type goes by in the function being lowered (`Walk` in `impl<T>
    /// Walk<T>`): the owner of `self.f`.
    self_owner: Option<Name>,
    /// The names the module's code mentions ([`IrModule::mentions`]).
    mentions: ustr::UstrSet,
    /// The method names its method calls mention ([`IrModule::method_mentions`]).
    method_mentions: ustr::UstrSet,
}

/// Macros of std (and core/alloc) a dependency's macro may expand to, by name: not expanded
/// here, but their arguments are walked as written, so an expansion invoking them loses nothing.
const STD_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "cfg",
    "column",
    "compile_error",
    "concat",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "include",
    "include_bytes",
    "include_str",
    "line",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
    "addr_of",
    "addr_of_mut",
    "const_format_args",
    "format_args_nl",
    "try",
];

/// A bool literal (or a `cfg!` of known value): a value fact (`crate::values`), kept as the path
/// `true`/`false`, which names nothing (a keyword); resolution types it `bool`.
fn bool_literal(value: bool, at: Pos) -> IrExpr {
    IrExpr::Path(
        IrPath {
            leading_colon: false,
            segments: thin_vec![IrSegment {
                name: crate::values::bool_name(value),
                generics: ThinVec::new(),
            }],
            qself: None,
            qself_position: 0,
        },
        at,
    )
}

/// The path of the macro invoked by the `!` at `bang`, read back over `ident (:: ident)*`, with
/// a leading `::` when no identifier precedes it (`::dep::name!`, what `$crate::name!` becomes).
fn macro_path_before(tts: &[TokenTree], bang: usize) -> IrPath {
    let colon = |t: &TokenTree| matches!(t, TokenTree::Punct(p) if p.as_char() == ':');
    let mut segments = ThinVec::new();
    let mut leading_colon = false;
    let mut j = bang;
    while let Some(TokenTree::Ident(id)) = j.checked_sub(1).map(|k| &tts[k]) {
        segments.insert(
            0,
            IrSegment {
                name: ident_name(id),
                generics: ThinVec::new(),
            },
        );
        j -= 1;
        if j < 2 || !(colon(&tts[j - 2]) && colon(&tts[j - 1])) {
            break;
        }
        j -= 2;
        if j == 0 || !matches!(tts[j - 1], TokenTree::Ident(_)) {
            leading_colon = true;
            break;
        }
    }
    IrPath {
        leading_colon,
        segments,
        qself: None,
        qself_position: 0,
    }
}

/// Expansions one outermost macro invocation may cause, nested ones included: a tt-muncher
/// expands once per step, and a runaway recursion must end long before the IR grows large.
const MACRO_EXPANSIONS: usize = 128;

/// Invocation tokens one outermost invocation's expansions may match in all: a tt-muncher that
/// re-invokes itself with a growing token list (typenum's `__op_internal__`, 5 000 tokens at step
/// 190) costs the sum of its steps' inputs, which this bounds.
const MACRO_EXPANSION_TOKENS: usize = 50_000;

/// Tokens a `macro_rules!` definition may have to be kept. Larger ones are data, not code: ICU4X's
/// baked data crates define one `#[macro_export] macro_rules! __impl_*` per data key whose body
/// is the data (icu_experimental_data: 54 MB in 68 such files, held as token trees and lowered
/// arms, was 500 MB of a cold run on mas). Such a definition is reported (kind `size`), and its
/// invocations stay unexpanded, as those of a macro from outside the graph.
pub(crate) const MACRO_DEFINITION_TOKENS: usize = 100_000;

/// A `mod x;` declaration found while lowering a module, for the loader to resolve to a file.
pub struct ModDecl {
    pub name: String,
    /// `#[path = ".."]` if present.
    pub path_attr: Option<String>,
    /// Inline module contents (`mod x { .. }`), already cfg-filtered.
    pub inline: Option<Vec<syn::Item>>,
}

impl<'a> Lowerer<'a> {
    pub fn new(cfg: &'a CfgSet, crate_name: &'a str, item_macros: &'a mut ItemMacros) -> Self {
        Lowerer {
            cfg,
            item_macros,
            crate_name,
            depth: 0,
            nested_fns: Vec::new(),
            nested_uses: Vec::new(),
            nested_values: Vec::new(),
            expansion_depth: 0,
            dependency_expansions: 0,
            dependency_expansion_failed: false,
            arm_walk: None,
            expansions_left: MACRO_EXPANSIONS,
            expansion_tokens_left: MACRO_EXPANSION_TOKENS,
            writes: BTreeSet::new(),
            self_owner: None,
            mentions: ustr::UstrSet::default(),
            method_mentions: ustr::UstrSet::default(),
        }
    }

    /// Lowers a module's items into `module`; returns the `mod` declarations to load.
    pub fn lower_items(&mut self, items: Vec<syn::Item>, module: &mut IrModule) -> Vec<ModDecl> {
        let mut mods = Vec::new();
        for item in items {
            self.lower_item(item, module, &mut mods);
        }
        self.finish(module);
        mods
    }

    /// Adds what the bodies of the lowered items declared (nested fns, `use`s, statics) to
    /// `module`: the end of [`Lowerer::lower_items`], for a caller lowering items one at a time.
    pub fn finish(&mut self, module: &mut IrModule) {
        module.fns.append(&mut self.nested_fns);
        module.uses.append(&mut self.nested_uses);
        module.values.append(&mut self.nested_values);
        module.field_writes.extend(std::mem::take(&mut self.writes));
        module.mentions.extend(self.mentions.drain());
        module.mentions.sort();
        module.mentions.dedup();
        module.method_mentions.extend(self.method_mentions.drain());
        module.method_mentions.sort();
        module.method_mentions.dedup();
    }

    /// A const or static initialiser's writes and mentions ([`InitScan`]).
    /// Returns whether the initialiser drives futures: it holds a closure and an async body or
    /// a `block_on` ([`Lowerer::lower_static_initialiser`] lowers those).
    fn scan_initialiser(&mut self, e: &syn::Expr) -> bool {
        let mut scan = InitScan {
            lowerer: self,
            closure: false,
            runs_futures: false,
        };
        syn::visit::Visit::visit_expr(&mut scan, e);
        scan.closure && scan.runs_futures
    }

    /// A `static`'s initialiser that drives futures (`LazyLock::new(|| thread::spawn(|| rt.
    /// block_on(Config::load())).join())`, vaultwarden's `CONFIG`), lowered as a sync function
    /// of its own named `{static NAME}` (no source path can name it). Why: the async fns it
    /// polls have no other caller, and without this body they looked uncalled and stayed worker
    /// roots; with it, the graph sees that their only callers run once or off the workers
    /// (`graph::off_worker_only`). Only initialisers holding a closure and an async body or a
    /// `block_on` are lowered (`scan_initialiser` says which): data tables and `Regex` statics
    /// stay scanned only, as the memory figures of issue 17 need.
    fn lower_static_initialiser(&mut self, ident: &syn::Ident, e: &syn::Expr) -> IrFn {
        // The initialiser's writes were recorded for the module by `scan_initialiser`.
        let outer_writes = std::mem::take(&mut self.writes);
        let outer_owner = self.self_owner.take();
        let block = IrBlock {
            stmts: thin_vec![IrStmt::Expr(self.lower_expr(e))],
        };
        self.writes = outer_writes;
        self.self_owner = outer_owner;
        let (names_block_on, builds_current_thread) = crate::threads::runtime_mentions(&block);
        let struct_literal = writes_struct_literal(&block);
        let at = pos(ident.span());
        IrFn {
            name: format!("{{static {ident}}}"),
            sig: IrSig {
                is_async: false,
                has_self: false,
                params: ThinVec::new(),
                self_ty: None,
                ret: None,
                generics: ThinVec::new(),
            },
            body: Some(FnBody::pack(&block)),
            pos: at,
            attrs: FnAttrs {
                runtime_entry: false,
                block_on_entry: false,
                item_line: at.line,
                memoised: Vec::new(),
                names_block_on,
                builds_current_thread,
                tail_names_param: false,
                field_writes: ThinVec::new(),
                struct_literal,
                exported: false,
            },
        }
    }

    /// Records a name the code mentions ([`IrModule::mentions`]).
    fn mention(&mut self, name: Name) {
        self.mentions.insert(name);
    }

    /// Records a method name a method call mentions ([`IrModule::method_mentions`]).
    fn mention_method(&mut self, name: Name) {
        self.method_mentions.insert(name);
    }

    /// Mentions every identifier and string of `attrs` (`#[serde(default = "default_skip")]`,
    /// `#[arg(value_parser = parse_level)]`): a derive may call the function it names.
    fn mention_attrs(&mut self, attrs: &[syn::Attribute]) {
        fn walk(tokens: TokenStream, out: &mut ustr::UstrSet) {
            for tt in tokens {
                match tt {
                    TokenTree::Ident(i) => {
                        out.insert(crate::ir::name(&i.to_string()));
                    }
                    TokenTree::Literal(l) => {
                        if let Ok(syn::Lit::Str(s)) = syn::parse2::<syn::Lit>(l.into_token_stream())
                        {
                            let v = s.value();
                            let last = v.rsplit("::").next().unwrap_or(&v);
                            out.insert(crate::ir::name(last));
                        }
                    }
                    TokenTree::Group(g) => walk(g.stream(), out),
                    TokenTree::Punct(_) => {}
                }
            }
        }
        for a in attrs {
            if let syn::Meta::List(l) = &a.meta {
                walk(l.tokens.clone(), &mut self.mentions);
            } else if let syn::Meta::NameValue(nv) = &a.meta {
                walk(nv.value.to_token_stream(), &mut self.mentions);
            }
        }
    }

    /// The owner a field access on `recv` names: `self`'s type, else unknown.
    fn owner_of(&self, recv: &syn::Expr) -> Option<Name> {
        match recv {
            syn::Expr::Path(p) if p.path.is_ident("self") => self.self_owner,
            syn::Expr::Paren(p) => self.owner_of(&p.expr),
            syn::Expr::Reference(r) => self.owner_of(&r.expr),
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.owner_of(&u.expr),
            _ => None,
        }
    }

    /// The field a place expression writes: `x.f`, `*x.f` (a pin projection), or `*f` (a
    /// `&mut` binding that destructured a field, named after it). Tuple fields are not tracked.
    fn written_field(&self, place: &syn::Expr) -> Option<(Option<Name>, Name)> {
        match place {
            syn::Expr::Field(f) => match &f.member {
                syn::Member::Named(i) => Some((self.owner_of(&f.base), ident_name(i))),
                syn::Member::Unnamed(_) => None,
            },
            syn::Expr::Paren(p) => self.written_field(&p.expr),
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => match &*u.expr {
                syn::Expr::Path(p) => p.path.get_ident().map(|i| (None, ident_name(i))),
                inner => self.written_field(inner),
            },
            _ => None,
        }
    }

    /// What a write stores: a constant variant, another field, or something unknown.
    fn write_value(&self, e: &syn::Expr) -> WriteValue {
        use syn::Expr as E;
        let variant = |p: &syn::Path| {
            let last = p.segments.last()?.ident.to_string();
            crate::values::is_variant_name(&last).then(|| crate::ir::name(&last))
        };
        let found = match e {
            E::Paren(p) => return self.write_value(&p.expr),
            E::Group(g) => return self.write_value(&g.expr),
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => Some(crate::values::bool_name(b.value)),
            E::Path(p) if p.qself.is_none() => variant(&p.path),
            E::Call(c) => match &*c.func {
                E::Path(p) if p.qself.is_none() => variant(&p.path),
                _ => None,
            },
            E::Struct(s) if s.qself.is_none() => variant(&s.path),
            E::Reference(r) => return self.write_value(&r.expr),
            E::Field(_) => {
                return match self.written_field(e) {
                    Some((owner, field)) => WriteValue::Field(owner, field),
                    None => WriteValue::Unknown,
                };
            }
            // `self.skip.clone()`: the same variant.
            E::MethodCall(m)
                if m.args.is_empty()
                    && matches!(
                        m.method.to_string().as_str(),
                        "clone" | "to_owned" | "cloned" | "copied" | "as_ref" | "as_deref"
                    ) =>
            {
                return match &*m.receiver {
                    E::Field(_) => self.write_value(&m.receiver),
                    _ => WriteValue::Unknown,
                };
            }
            _ => None,
        };
        found.map_or(WriteValue::Unknown, WriteValue::Variant)
    }

    fn record_write(&mut self, owner: Option<Name>, field: Name, value: WriteValue) {
        self.writes.insert(FieldWrite {
            owner,
            field,
            value,
        });
    }

    /// The writes of an expression `lower_expr_inner` is about to lower ([`crate::fields`]).
    fn record_writes(&mut self, e: &syn::Expr) {
        use syn::Expr as E;
        match e {
            E::Struct(s) => {
                let owner = s.path.segments.last().map(|seg| {
                    if seg.ident == "Self" {
                        self.self_owner
                    } else {
                        Some(ident_name(&seg.ident))
                    }
                });
                let owner = owner.flatten();
                for f in &s.fields {
                    if let syn::Member::Named(i) = &f.member {
                        let value = self.write_value(&f.expr);
                        // A literal whose path names no type this code knows (`$name { .. }`)
                        // writes every field of that name.
                        self.record_write(owner, ident_name(i), value);
                    }
                }
            }
            E::Assign(a) => {
                if let Some((owner, field)) = self.written_field(&a.left) {
                    let value = self.write_value(&a.right);
                    self.record_write(owner, field, value);
                }
            }
            E::Binary(b) if is_compound_assign(&b.op) => {
                if let Some((owner, field)) = self.written_field(&b.left) {
                    self.record_write(owner, field, WriteValue::Unknown);
                }
            }
            E::Reference(r) if r.mutability.is_some() => {
                if let Some((owner, field)) = self.written_field(&r.expr) {
                    self.record_write(owner, field, WriteValue::Unknown);
                }
            }
            E::MethodCall(m) => {
                if let Some(value) = crate::fields::option_setter(&m.method.to_string()) {
                    let place = match &*m.receiver {
                        // `skip.insert(h)` on a `&mut` binding named after the field.
                        E::Path(p) => p.path.get_ident().map(|i| (None, ident_name(i))),
                        other => self.written_field(other),
                    };
                    if let Some((owner, field)) = place {
                        self.record_write(owner, field, value);
                    }
                }
            }
            _ => {}
        }
    }

    /// Lowers one item of `module`; a `mod` declaration is added to `mods`.
    pub fn lower_item(
        &mut self,
        mut item: syn::Item,
        module: &mut IrModule,
        mods: &mut Vec<ModDecl>,
    ) {
        if let Some(attrs) = item_attrs_mut(&mut item) {
            if !self.cfg.keep(attrs) {
                return;
            }
        }
        match item {
            syn::Item::Fn(f) => {
                if is_test_fn(&f.attrs) {
                    return;
                }
                let lowered = self.lower_fn(&f.attrs, &f.sig, Some(&f.block), None);
                module.fns.push(lowered);
            }
            syn::Item::Struct(s) => {
                self.mention_attrs(&s.attrs);
                let fields = self.lower_fields(s.fields);
                module.types.push(IrTypeItem {
                    name: s.ident.to_string(),
                    kind: IrItemKind::Struct {
                        fields,
                        generics: self.lower_generics(&s.generics),
                    },
                    pos: pos(s.ident.span()),
                    derives: derived_traits(&s.attrs),
                });
            }
            syn::Item::Enum(e) => {
                self.mention_attrs(&e.attrs);
                let mut variants = Vec::new();
                for mut v in e.variants {
                    if self.cfg.keep(&mut v.attrs) {
                        variants.push((v.ident.to_string(), self.lower_fields(v.fields)));
                    }
                }
                module.types.push(IrTypeItem {
                    name: e.ident.to_string(),
                    kind: IrItemKind::Enum {
                        variants,
                        generics: self.lower_generics(&e.generics),
                    },
                    pos: pos(e.ident.span()),
                    derives: derived_traits(&e.attrs),
                })
            }
            syn::Item::Union(u) => module.types.push(IrTypeItem {
                name: u.ident.to_string(),
                kind: IrItemKind::Union,
                pos: pos(u.ident.span()),
                derives: ThinVec::new(),
            }),
            syn::Item::Type(t) => module.types.push(IrTypeItem {
                name: t.ident.to_string(),
                kind: IrItemKind::TypeAlias {
                    target: lower_type(&t.ty),
                    params: t
                        .generics
                        .type_params()
                        .map(|tp| (tp.ident.to_string(), tp.default.as_ref().map(lower_type)))
                        .collect(),
                },
                pos: pos(t.ident.span()),
                derives: ThinVec::new(),
            }),
            syn::Item::Trait(t) => {
                let mut methods = Vec::new();
                let mut assoc_bounds = Vec::new();
                for mut ti in t.items {
                    match &mut ti {
                        syn::TraitItem::Fn(f) => {
                            if !self.cfg.keep(&mut f.attrs) {
                                continue;
                            }
                            methods.push(self.lower_fn(&f.attrs, &f.sig, f.default.as_ref(), None));
                        }
                        syn::TraitItem::Type(ty) => {
                            if !self.cfg.keep(&mut ty.attrs) {
                                continue;
                            }
                            let bounds: ThinVec<IrPath> =
                                ty.bounds.iter().filter_map(bound_path).collect();
                            if !bounds.is_empty() {
                                assoc_bounds.push((ty.ident.to_string(), bounds));
                            }
                        }
                        _ => {}
                    }
                }
                let supertraits = t
                    .supertraits
                    .iter()
                    .filter_map(|b| match b {
                        syn::TypeParamBound::Trait(tb) => Some(lower_path(&tb.path, None)),
                        _ => None,
                    })
                    .collect();
                module.types.push(IrTypeItem {
                    name: t.ident.to_string(),
                    kind: IrItemKind::Trait {
                        methods,
                        supertraits,
                        generics: self.lower_generics(&t.generics),
                        assoc_bounds,
                    },
                    pos: pos(t.ident.span()),
                    derives: ThinVec::new(),
                });
            }
            syn::Item::Impl(imp) => {
                let self_ty = lower_type(&imp.self_ty);
                let mut fns = Vec::new();
                let mut assoc_types = Vec::new();
                let mut assoc_consts = Vec::new();
                for mut ii in imp.items {
                    match &mut ii {
                        syn::ImplItem::Fn(f) => {
                            if !self.cfg.keep(&mut f.attrs) || is_test_fn(&f.attrs) {
                                continue;
                            }
                            fns.push(self.lower_fn(
                                &f.attrs,
                                &f.sig,
                                Some(&f.block),
                                Some(&self_ty),
                            ));
                        }
                        syn::ImplItem::Type(t) => {
                            if !self.cfg.keep(&mut t.attrs) {
                                continue;
                            }
                            assoc_types.push((t.ident.to_string(), lower_type(&t.ty)));
                        }
                        // Only the type: `StateID::MAX.as_u64()`, `Method::GET.as_str()`.
                        syn::ImplItem::Const(c) => {
                            if !self.cfg.keep(&mut c.attrs) {
                                continue;
                            }
                            assoc_consts.push((c.ident.to_string(), lower_type(&c.ty)));
                        }
                        _ => {}
                    }
                }
                module.impls.push(IrImpl {
                    self_ty,
                    trait_: imp.trait_.as_ref().map(|(_, p, _)| lower_path(p, None)),
                    generics: self.lower_generics(&imp.generics),
                    fns,
                    assoc_types,
                    assoc_consts,
                });
            }
            syn::Item::Use(u) => flatten_use(
                &u.tree,
                &mut Vec::new(),
                u.leading_colon.is_some(),
                !matches!(u.vis, syn::Visibility::Inherited),
                &mut module.uses,
            ),
            syn::Item::ExternCrate(e) => {
                let name = e.ident.to_string();
                let alias = e.rename.as_ref().map(|(_, i)| i.to_string());
                module.extern_crates.push((name, alias));
            }
            // `#[wasm_bindgen] extern "C" { .. }` declares JavaScript imports: the attribute macro
            // replaces the block with JS glue (stubs off wasm), so they are not native FFI.
            syn::Item::ForeignMod(fm) if is_js_import_block(&fm.attrs) => {}
            syn::Item::ForeignMod(fm) => {
                for mut fi in fm.items {
                    if let syn::ForeignItem::Fn(f) = &mut fi {
                        if !self.cfg.keep(&mut f.attrs) {
                            continue;
                        }
                        module
                            .foreign_fns
                            .push(self.lower_fn(&f.attrs, &f.sig, None, None));
                    }
                }
            }
            syn::Item::Mod(m) => {
                let name = m.ident.to_string();
                let path_attr = m
                    .attrs
                    .iter()
                    .find(|a| a.path().is_ident("path"))
                    .and_then(|a| match &a.meta {
                        syn::Meta::NameValue(nv) => match &nv.value {
                            syn::Expr::Lit(syn::ExprLit {
                                lit: syn::Lit::Str(s),
                                ..
                            }) => Some(s.value()),
                            _ => None,
                        },
                        _ => None,
                    });
                module.children.push(name.clone());
                mods.push(ModDecl {
                    name,
                    path_attr,
                    inline: m.content.map(|(_, items)| items),
                });
            }
            // The initialiser is lowered for its writes and mentions only ([`crate::fields`]).
            syn::Item::Const(c) => {
                // A const's initialiser is evaluated at compile time: nothing to lower.
                let _ = self.scan_initialiser(&c.expr);
                module.values.push((c.ident.to_string(), lower_type(&c.ty)))
            }
            syn::Item::Static(s) => {
                if self.scan_initialiser(&s.expr) {
                    let init = self.lower_static_initialiser(&s.ident, &s.expr);
                    module.fns.push(init);
                }
                module.values.push((s.ident.to_string(), lower_type(&s.ty)))
            }
            syn::Item::Macro(m) => self.lower_item_macro(m, module, mods),
            _ => {}
        }
    }

    fn lower_item_macro(
        &mut self,
        m: syn::ItemMacro,
        module: &mut IrModule,
        mods: &mut Vec<ModDecl>,
    ) {
        if m.mac.path.is_ident("macro_rules") {
            if let Some(ident) = &m.ident {
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if !self.define_macro(ident, &m.mac.tokens) {
                    return;
                }
                let name = ident.to_string();
                let rules = self.item_macros.rules.get(&name).cloned();
                if exported {
                    if let Some(rules) = &rules {
                        self.item_macros
                            .exported
                            .insert(name.clone(), rules.clone());
                    }
                }
                let transcribers = macro_rules_transcribers(m.mac.tokens.clone());
                if let [only] = transcribers.as_slice() {
                    if let Some(attrs) = item_wrapper_attrs(only.clone()) {
                        self.item_macros.wrappers.insert(name.clone(), attrs);
                    }
                }
                // An opaque crate's arms are never walked: not lowered.
                let arms = if self.item_macros.externs.opaque {
                    Vec::new()
                } else {
                    let outer = std::mem::replace(&mut self.arm_walk, rules);
                    let arms = transcribers
                        .into_iter()
                        .map(|t| self.lenient_exprs(substitute_metavars(t, self.crate_name)))
                        .collect::<Vec<_>>();
                    self.arm_walk = outer;
                    arms
                };
                module.macros.push(IrMacro {
                    name,
                    exported,
                    arms,
                });
            }
            return;
        }
        let last = m
            .mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let path = lower_path(&m.mac.path, None);
        let items = if last == "cfg_if" {
            self.cfg_if_items(m.mac.tokens.clone())
        } else if last == "thread_local" && !self.item_macros.rules.contains_key(&last) {
            thread_local_items(m.mac.tokens.clone())
        } else if let Some((expansion, _)) = self.expand(&path, &m.mac.tokens, m.mac.path.span()) {
            // Items a crate-local macro generates (fns, impls): lowered like written ones.
            self.expansion_depth += 1;
            let items = parse_items(expansion);
            self.expansion_depth -= 1;
            items
        } else {
            // The `cfg_rt! { pub mod x; }` idiom: a macro whose body is plain items. A wrapper
            // defined earlier in this crate lends its attributes (its `#[cfg]`) to each item; for
            // other macros the items are included as written (an over-approximation).
            let mut items = parse_items(m.mac.tokens.clone());
            if let Some(attrs) = self.item_macros.wrappers.get(&last) {
                for item in &mut items {
                    if let Some(item_attrs) = item_attrs_mut(item) {
                        let mut all = attrs.clone();
                        all.append(item_attrs);
                        *item_attrs = all;
                    }
                }
            }
            items
        };
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        for item in items {
            self.lower_item(item, module, mods);
        }
        self.depth -= 1;
    }

    /// `cfg_if! { if #[cfg(a)] { .. } else if #[cfg(b)] { .. } else { .. } }`: the items of the
    /// first branch whose predicate holds.
    fn cfg_if_items(&self, tokens: TokenStream) -> Vec<syn::Item> {
        self.cfg_if_branch(tokens)
            .map(parse_items)
            .unwrap_or_default()
    }

    /// The tokens of the first `cfg_if!` branch whose predicate holds.
    fn cfg_if_branch(&self, tokens: TokenStream) -> Option<TokenStream> {
        let tts: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tts.len() {
            let is_if = matches!(&tts[i], TokenTree::Ident(id) if id == "if");
            if is_if {
                // if # [cfg(..)] { .. }
                let cond = match (tts.get(i + 1), tts.get(i + 2)) {
                    (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g)))
                        if p.as_char() == '#' =>
                    {
                        let attr_tokens = g.stream();
                        syn::Attribute::parse_outer
                            .parse2(quote::quote!(# [ #attr_tokens ]))
                            .map(|attrs| self.cfg.enabled(&attrs))
                            .unwrap_or(false)
                    }
                    _ => return None,
                };
                let Some(TokenTree::Group(body)) = tts.get(i + 3) else {
                    return None;
                };
                if cond {
                    return Some(body.stream());
                }
                i += 4;
            } else if matches!(&tts[i], TokenTree::Ident(id) if id == "else") {
                match tts.get(i + 1) {
                    Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => {
                        return Some(body.stream());
                    }
                    _ => i += 1,
                }
            } else {
                i += 1;
            }
        }
        None
    }

    fn lower_fields(&mut self, fields: syn::Fields) -> Vec<(String, IrType)> {
        let mut out = Vec::new();
        for (i, mut f) in fields.into_iter().enumerate() {
            if !self.cfg.keep(&mut f.attrs) {
                continue;
            }
            self.mention_attrs(&f.attrs);
            let name = f
                .ident
                .as_ref()
                .map(|i| i.to_string())
                .unwrap_or_else(|| i.to_string());
            out.push((name, lower_type(&f.ty)));
        }
        out
    }

    fn lower_generics(&self, g: &syn::Generics) -> ThinVec<IrGeneric> {
        let mut out: ThinVec<IrGeneric> = g
            .type_params()
            .map(|tp| IrGeneric {
                name: tp.ident.to_string(),
                bounds: tp.bounds.iter().filter_map(bound_path).collect(),
            })
            .collect();
        if let Some(wc) = &g.where_clause {
            for pred in &wc.predicates {
                if let syn::WherePredicate::Type(pt) = pred {
                    if let syn::Type::Path(tp) = &pt.bounded_ty {
                        if let Some(id) = tp.path.get_ident() {
                            let name = id.to_string();
                            let bounds: ThinVec<IrPath> =
                                pt.bounds.iter().filter_map(bound_path).collect();
                            match out.iter_mut().find(|g| g.name == name) {
                                Some(g) => g.bounds.extend(bounds),
                                None => out.push(IrGeneric { name, bounds }),
                            }
                        }
                    }
                }
            }
        }
        out
    }

    fn lower_fn(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        body: Option<&syn::Block>,
        self_ty: Option<&IrType>,
    ) -> IrFn {
        let mut params = ThinVec::new();
        let mut has_self = false;
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(_) => has_self = true,
                syn::FnArg::Typed(pt) => match extractor_binding(&pt.pat, &pt.ty) {
                    Some((name, inner)) => params.push((Some(name), inner)),
                    None => {
                        let name = match &*pt.pat {
                            syn::Pat::Ident(pi) => Some(ident_name(&pi.ident)),
                            _ => None,
                        };
                        params.push((name, lower_type(&pt.ty)));
                    }
                },
            }
        }
        let mut generics = self.lower_generics(&sig.generics);
        // `impl Trait` in argument position is an anonymous generic with those bounds.
        for (i, (_, ty)) in params.iter_mut().enumerate() {
            if let IrType::ImplTrait(bounds) = ty {
                let name = format!("impl#{i}");
                generics.push(IrGeneric {
                    name: name.clone(),
                    bounds: std::mem::take(bounds),
                });
                *ty = IrType::Path(IrPath {
                    leading_colon: false,
                    segments: thin_vec![IrSegment {
                        name: crate::ir::name(&name),
                        generics: ThinVec::new(),
                    }],
                    qself: None,
                    qself_position: 0,
                });
            }
        }
        let ret = match &sig.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, t) => Some(lower_type(t)),
        };
        let runtime_entry = attrs.iter().any(|a| {
            let segs = attr_path(a);
            segs.len() == 2
                && matches!(
                    segs[0].as_str(),
                    "tokio" | "actix_web" | "actix_rt" | "async_std" | "ntex" | "rocket"
                )
                && matches!(segs[1].as_str(), "main" | "test")
        });
        // `#[tokio::main]` (multi-thread flavor by default), `#[rocket::main]` (tokio's
        // multi-thread runtime) and `#[async_std::main]` run the body
        // with `block_on` on the main thread, beside the worker pool; `flavor = "current_thread"`,
        // `#[tokio::test]` (current-thread by default) and actix's single-threaded system make
        // that thread the only worker.
        let block_on_entry = attrs.iter().any(|a| {
            let segs = attr_path(a);
            let args = match &a.meta {
                syn::Meta::List(l) => l.tokens.to_string(),
                _ => String::new(),
            };
            segs.len() == 2
                && segs[1] == "main"
                && (segs[0] == "async_std"
                    || segs[0] == "rocket"
                    || (segs[0] == "tokio" && !args.contains("current_thread")))
        });
        let memoised = body.map(crate::memo::memoised_calls).unwrap_or_default();
        self.mention_attrs(attrs);
        let outer_writes = std::mem::take(&mut self.writes);
        let outer_owner = self.self_owner;
        if let Some(t) = self_ty {
            self.self_owner = crate::fields::owner_of_self_type(t);
        }
        let block = body.map(|b| self.lower_block(b));
        self.self_owner = outer_owner;
        let field_writes = std::mem::replace(&mut self.writes, outer_writes)
            .into_iter()
            .collect();
        let (names_block_on, builds_current_thread) = block
            .as_ref()
            .map_or((false, false), crate::threads::runtime_mentions);
        let tail_names_param = block
            .as_ref()
            .is_some_and(|b| crate::stored::tail_names_param(b, &params));
        let struct_literal = block.as_ref().is_some_and(writes_struct_literal);
        let body = block.as_ref().map(FnBody::pack);
        IrFn {
            name: sig.ident.to_string(),
            sig: IrSig {
                is_async: sig.asyncness.is_some(),
                has_self,
                params,
                self_ty: self_ty.cloned(),
                ret,
                generics,
            },
            body,
            pos: pos(sig.ident.span()),
            attrs: FnAttrs {
                runtime_entry,
                block_on_entry,
                item_line: pos(sig.fn_token.span).line,
                memoised,
                names_block_on,
                builds_current_thread,
                tail_names_param,
                field_writes,
                struct_literal,
                exported: attrs.iter().any(|a| !is_inert_attribute(a)),
            },
        }
    }

    pub fn lower_block(&mut self, block: &syn::Block) -> IrBlock {
        let mut stmts = ThinVec::with_capacity(block.stmts.len());
        for stmt in &block.stmts {
            if let Some(s) = self.lower_stmt(stmt) {
                stmts.push(s);
            }
        }
        IrBlock { stmts }
    }

    fn lower_stmt(&mut self, stmt: &syn::Stmt) -> Option<IrStmt> {
        match stmt {
            syn::Stmt::Local(local) => {
                let mut attrs = local.attrs.clone();
                if !self.cfg.keep(&mut attrs) {
                    return None;
                }
                let (pat, ty) = match &local.pat {
                    syn::Pat::Type(pt) => (lower_pat(&pt.pat), Some(lower_type(&pt.ty))),
                    p => (lower_pat(p), None),
                };
                let init = local.init.as_ref().map(|i| self.lower_expr(&i.expr));
                let diverge = local
                    .init
                    .as_ref()
                    .and_then(|i| i.diverge.as_ref())
                    .map(|(_, e)| IrBlock {
                        stmts: thin_vec![IrStmt::Expr(self.lower_expr(e))],
                    });
                Some(IrStmt::Let {
                    pat: Box::new(pat),
                    ty: ty.map(Box::new),
                    init,
                    diverge,
                })
            }
            syn::Stmt::Item(item) => {
                match item {
                    syn::Item::Fn(f) => {
                        let mut attrs = f.attrs.clone();
                        if self.cfg.keep(&mut attrs) && !is_test_fn(&attrs) {
                            let lowered = self.lower_fn(&attrs, &f.sig, Some(&f.block), None);
                            self.nested_fns.push(lowered);
                        }
                    }
                    syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                        if let Some(ident) = &m.ident {
                            self.define_macro(ident, &m.mac.tokens);
                        }
                    }
                    syn::Item::Static(st) => {
                        let mut attrs = st.attrs.clone();
                        if self.cfg.keep(&mut attrs) {
                            if self.scan_initialiser(&st.expr) {
                                let init = self.lower_static_initialiser(&st.ident, &st.expr);
                                self.nested_fns.push(init);
                            }
                            self.nested_values
                                .push((st.ident.to_string(), lower_type(&st.ty)));
                        }
                    }
                    // A const's initialiser runs at compile time: only its type matters
                    // (`const SHUTDOWN_TIMEOUT: Duration = ..; SHUTDOWN_TIMEOUT.as_secs()`).
                    syn::Item::Const(c) => {
                        let mut attrs = c.attrs.clone();
                        if self.cfg.keep(&mut attrs) {
                            self.nested_values
                                .push((c.ident.to_string(), lower_type(&c.ty)));
                        }
                    }
                    syn::Item::Use(u) => {
                        let mut attrs = u.attrs.clone();
                        if self.cfg.keep(&mut attrs) {
                            flatten_use(
                                &u.tree,
                                &mut Vec::new(),
                                u.leading_colon.is_some(),
                                false,
                                &mut self.nested_uses,
                            );
                        }
                    }
                    _ => {}
                }
                Some(IrStmt::Item)
            }
            syn::Stmt::Expr(e, _) => {
                if !self.expr_enabled(e) {
                    return None;
                }
                Some(IrStmt::Expr(self.lower_expr(e)))
            }
            syn::Stmt::Macro(m) => {
                let mut attrs = m.attrs.clone();
                if !self.cfg.keep(&mut attrs) {
                    return None;
                }
                Some(IrStmt::Expr(self.lower_macro(&m.mac)))
            }
        }
    }

    /// Records a `macro_rules!` definition for expansion at later invocations in this crate.
    /// Records a `macro_rules!` definition; `false` when it is over [`MACRO_DEFINITION_TOKENS`]
    /// (then any earlier definition of the name is forgotten too, as the new one shadows it).
    fn define_macro(&mut self, name: &proc_macro2::Ident, body: &TokenStream) -> bool {
        let size = crate::macro_rules::token_count(body, MACRO_DEFINITION_TOKENS + 1);
        if size > MACRO_DEFINITION_TOKENS {
            self.item_macros.rules.remove(&name.to_string());
            self.item_macros
                .oversized
                .push((name.to_string(), pos(name.span())));
            return false;
        }
        match MacroRules::parse(body.clone()) {
            Some(rules) => {
                self.item_macros
                    .rules
                    .insert(name.to_string(), std::rc::Rc::new(rules));
            }
            None => {
                self.item_macros.rules.remove(&name.to_string());
            }
        }
        true
    }

    /// Expands an invocation of a `macro_rules!` defined earlier in this crate, by name
    /// (`name!`, `crate::name!`, `$crate::name!`), or exported by a direct dependency (`dep::name!`,
    /// `::dep::name!`, or `name!` when no local definition is in scope and one dependency exports
    /// the name). `None` when the macro is not known, no arm matches, or the expansion budget of
    /// the outermost invocation is spent.
    fn expand(
        &mut self,
        path: &IrPath,
        tokens: &TokenStream,
        at: proc_macro2::Span,
    ) -> Option<(TokenStream, bool)> {
        let Some((rules, dependency)) = self.find_rules(path) else {
            // Maybe the crate's own exported macro, defined in a module lowered later.
            if let Some((None, name)) = self.macro_name(path) {
                self.item_macros.unknown.insert(name.to_string());
            }
            return None;
        };
        // A tt-muncher's arms invoke the macro itself (tokio's `select!`: `$crate::select!(@{
        // .. })`). In the walk of those arms, the invocation's tokens are placeholders that
        // never reach the terminal arm: each expansion led to the next until the budget ran out
        // (128 expansions per self-invocation, a third of the CPU of parsing tokio). The walk
        // lowers every arm anyway, so the invocation is lowered as written.
        if self
            .arm_walk
            .as_ref()
            .is_some_and(|walked| std::rc::Rc::ptr_eq(walked, &rules))
        {
            return None;
        }
        let expansion = self.expand_with(&rules, dependency, tokens, at);
        if expansion.is_none() && self.dependency_expansions > 0 {
            self.dependency_expansion_failed = true;
        }
        expansion
    }

    /// [`Self::expand`] with the rules found; `true` with the tokens: a dependency's macro.
    fn expand_with(
        &mut self,
        rules: &MacroRules,
        dependency: Option<String>,
        tokens: &TokenStream,
        at: proc_macro2::Span,
    ) -> Option<(TokenStream, bool)> {
        if self.expansion_depth == 0 {
            self.expansions_left = MACRO_EXPANSIONS;
            self.expansion_tokens_left = MACRO_EXPANSION_TOKENS;
        }
        // One count for both budgets, this one and the macro's own (`MAX_INPUT_TOKENS`): exact
        // up to the larger limit, so each comparison below decides as its own count would.
        let limit = self
            .expansion_tokens_left
            .max(crate::macro_rules::MAX_INPUT_TOKENS);
        let size = crate::macro_rules::token_count(tokens, limit);
        if self.expansions_left == 0 || size > self.expansion_tokens_left {
            return None;
        }
        self.expansions_left -= 1;
        self.expansion_tokens_left -= size;
        let Some(dep) = dependency else {
            return rules
                .expand_counted(tokens, size, self.crate_name)
                .map(|t| (t, false));
        };
        let expansion = rules.expand_counted(tokens, size, &dep)?;
        // A dependency's macro whose expansion hands tokens to a macro that cannot be expanded
        // here (a proc macro: async-stream's `try_stream!` → `try_stream_inner!(($crate) ..)`,
        // tokio's `select!` → `select_priv_declare_output_enum!`) would hide its input inside
        // that invocation: the input walked as written (the arm walk, lenient lowering, the
        // resolver's `select!`/`join!` rules) sees more.
        if self.invokes_unexpandable(&expansion) {
            return None;
        }
        Some((crate::macro_rules::respan_definition(expansion, at), true))
    }

    /// Whether `tokens` invoke a macro (`path!(..)`, `path! {..}`) that is neither std's (by
    /// its last segment, as re-exports name it: `$crate::__private::format_args!`) nor one
    /// [`Self::find_rules`] finds.
    fn invokes_unexpandable(&mut self, tokens: &TokenStream) -> bool {
        let tts: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, tt) in tts.iter().enumerate() {
            match tt {
                TokenTree::Group(g) if self.invokes_unexpandable(&g.stream()) => return true,
                TokenTree::Punct(p) if p.as_char() == '!' && i > 0 => {
                    if !matches!(
                        (&tts[i - 1], tts.get(i + 1)),
                        (TokenTree::Ident(_), Some(TokenTree::Group(_)))
                    ) {
                        continue;
                    }
                    let path = macro_path_before(&tts, i);
                    let last = path.segments.last().map_or("", |s| s.name.as_str());
                    if STD_MACROS.contains(&last) {
                        continue;
                    }
                    if self.find_rules(&path).is_none() {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// How a macro path names its macro: (`None`, name) for the crate's own (`name!`,
    /// `crate::name!`, `$crate::name!` as `::this_crate::name!`), (`Some(dep)`, name) for
    /// `dep::name!` and `::dep::name!`; `None` for anything longer or relative.
    fn macro_name<'p>(&self, path: &'p IrPath) -> Option<(Option<&'p str>, &'p str)> {
        match path.segments.as_slice() {
            [only] if !path.leading_colon => Some((None, &only.name)),
            [krate, name] if krate.name == "crate" || krate.name == self.crate_name => {
                Some((None, &name.name))
            }
            [krate, name] if krate.name != "self" && krate.name != "super" => {
                Some((Some(&krate.name), &name.name))
            }
            _ => None,
        }
    }

    /// The rules a macro path names: the crate's own (`name!`, `crate::name!`, `$crate::name!`,
    /// textual scope first, then exported ones), else a direct dependency's exported one
    /// (`dep::name!`, `::dep::name!`, or a bare `name!` one dependency exports), with that
    /// dependency's name.
    fn find_rules(&mut self, path: &IrPath) -> Option<(std::rc::Rc<MacroRules>, Option<String>)> {
        let (krate, name) = self.macro_name(path)?;
        if krate.is_none() {
            let known = self.item_macros.rules.get(name);
            if let Some(rules) = known.or_else(|| self.item_macros.exported_ahead.get(name)) {
                return Some((rules.clone(), None));
            }
        }
        let (dep, rules) = self.item_macros.extern_rules(krate, name)?;
        Some((rules, Some(dep)))
    }

    fn lower_macro(&mut self, mac: &syn::Macro) -> IrExpr {
        let path = lower_path(&mac.path, None);
        // `debug_assert!` checks compile to nothing in a release build (deno's VFS builder
        // canonicalises paths only inside `debug_assert_eq!`).
        if path.segments.last().is_some_and(|s| {
            matches!(
                s.name.as_str(),
                "debug_assert" | "debug_assert_eq" | "debug_assert_ne"
            )
        }) && !self.cfg.names.contains("debug_assertions")
        {
            return IrExpr::Other(ThinVec::new());
        }
        // `cfg!(pred)` is a constant of the build, not code: its value for the analysed target
        // (its predicate's `not(..)`, `target_os = ".."` were unresolved calls and paths).
        if path.segments.last().is_some_and(|s| s.name == "cfg") && path.segments.len() == 1 {
            if let Ok(meta) = syn::parse2::<syn::Meta>(mac.tokens.clone()) {
                return bool_literal(self.cfg.eval(&meta), pos(mac.path.span()));
            }
        }
        if let Some((expansion, from_dependency)) = self.expand(&path, &mac.tokens, mac.path.span())
        {
            let outer_failed = std::mem::replace(&mut self.dependency_expansion_failed, false);
            self.expansion_depth += 1;
            self.dependency_expansions += from_dependency as usize;
            let exprs = self.lenient_exprs(expansion);
            self.dependency_expansions -= from_dependency as usize;
            self.expansion_depth -= 1;
            let failed = std::mem::replace(&mut self.dependency_expansion_failed, outer_failed);
            if !(from_dependency && failed) {
                self.dependency_expansion_failed |= failed;
                return IrExpr::Macro {
                    path: Box::new(path),
                    exprs,
                    pos: pos(mac.path.span()),
                    first_ident: None,
                    expanded: true,
                };
            }
            // Lowered as written below; an enclosing dependency macro's expansion holds this
            // one's intermediate syntax too, so it falls back as well.
            self.dependency_expansion_failed |= self.dependency_expansions > 0;
        }
        // In a function body too, only the live `cfg_if!` branch counts: its `use`s join the
        // module's imports, and a dead branch's (`use std::os::unix::net::UnixStream` beside a
        // live `use tokio::net::UnixStream`) would shadow the live one.
        let exprs = if path.segments.last().is_some_and(|s| s.name == "cfg_if") {
            match self.cfg_if_branch(mac.tokens.clone()) {
                Some(branch) => self.lenient_exprs(branch),
                None => ThinVec::new(),
            }
        } else {
            self.lenient_exprs(mac.tokens.clone())
        };
        let mut tokens = mac.tokens.clone().into_iter();
        let first_ident = match (tokens.next(), tokens.next()) {
            (Some(TokenTree::Ident(id)), Some(TokenTree::Punct(p)))
                if matches!(p.as_char(), ':' | ',' | '=') && p.spacing() == Spacing::Alone
                    || p.as_char() == '=' =>
            {
                Some(ident_name(&id))
            }
            _ => None,
        };
        IrExpr::Macro {
            path: Box::new(path),
            exprs,
            pos: pos(mac.path.span()),
            first_ident,
            expanded: false,
        }
    }

    fn lower_boxed(&mut self, e: &syn::Expr) -> Box<IrExpr> {
        Box::new(self.lower_expr(e))
    }

    pub fn lower_expr(&mut self, e: &syn::Expr) -> IrExpr {
        if self.depth > MAX_DEPTH {
            return IrExpr::Other(ThinVec::new());
        }
        self.depth += 1;
        let out = self.lower_expr_inner(e);
        self.depth -= 1;
        out
    }

    fn lower_expr_inner(&mut self, e: &syn::Expr) -> IrExpr {
        use syn::Expr as E;
        self.record_writes(e);
        match e {
            E::Call(c) => IrExpr::Call {
                pos: pos(c.func.span()),
                func: self.lower_boxed(&c.func),
                args: c.args.iter().map(|a| self.lower_expr(a)).collect(),
            },
            E::MethodCall(m) => {
                let call = IrExpr::MethodCall {
                    receiver: self.lower_boxed(&m.receiver),
                    method: {
                        let method = ident_name(&m.method);
                        self.mention_method(method);
                        method
                    },
                    args: m.args.iter().map(|a| self.lower_expr(a)).collect(),
                    pos: pos(m.method.span()),
                };
                match turbofish_result(m) {
                    Some(t) => IrExpr::Cast(Box::new(call), Box::new(t)),
                    None => call,
                }
            }
            E::Path(p) => {
                if let Some(last) = p.path.segments.last() {
                    self.mention(ident_name(&last.ident));
                }
                IrExpr::Path(lower_path(&p.path, p.qself.as_ref()), pos(p.span()))
            }
            E::Field(f) => {
                let name = match &f.member {
                    syn::Member::Named(i) => ident_name(i),
                    syn::Member::Unnamed(idx) => crate::ir::name(&idx.index.to_string()),
                };
                IrExpr::Field(self.lower_boxed(&f.base), name)
            }
            E::Reference(r) => IrExpr::Ref(self.lower_boxed(&r.expr)),
            E::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                IrExpr::Deref(self.lower_boxed(&u.expr))
            }
            E::Try(t) => IrExpr::Try(self.lower_boxed(&t.expr)),
            E::Await(a) => IrExpr::Await(self.lower_boxed(&a.base)),
            E::Paren(p) => self.lower_expr(&p.expr),
            E::Group(g) => self.lower_expr(&g.expr),
            E::Closure(c) => IrExpr::Closure {
                is_async: c.asyncness.is_some(),
                params: c
                    .inputs
                    .iter()
                    .map(|p| match p {
                        syn::Pat::Type(pt) => (lower_pat(&pt.pat), Some(lower_type(&pt.ty))),
                        other => (lower_pat(other), None),
                    })
                    .collect(),
                body: self.lower_boxed(&c.body),
                pos: pos(c.or1_token.span),
            },
            E::Async(a) => IrExpr::Async {
                body: self.lower_block(&a.block),
                pos: pos(a.async_token.span),
            },
            E::Block(b) => IrExpr::Block(self.lower_block(&b.block)),
            E::Unsafe(u) => IrExpr::Block(self.lower_block(&u.block)),
            E::TryBlock(t) => IrExpr::Block(self.lower_block(&t.block)),
            E::Const(c) => IrExpr::Block(self.lower_block(&c.block)),
            E::If(i) => IrExpr::If {
                cond: self.lower_boxed(&i.cond),
                then: self.lower_block(&i.then_branch),
                otherwise: i.else_branch.as_ref().map(|(_, e)| self.lower_boxed(e)),
            },
            E::Let(l) => IrExpr::Let(Box::new(lower_pat(&l.pat)), self.lower_boxed(&l.expr)),
            E::Match(m) => IrExpr::Match {
                scrutinee: self.lower_boxed(&m.expr),
                arms: m
                    .arms
                    .iter()
                    .map(|arm| {
                        let mut body = ThinVec::new();
                        if let Some((_, g)) = &arm.guard {
                            body.push(self.lower_expr(g));
                        }
                        body.push(self.lower_expr(&arm.body));
                        let body = if body.len() == 1 {
                            body.pop().unwrap()
                        } else {
                            IrExpr::Other(body)
                        };
                        (lower_pat(&arm.pat), body)
                    })
                    .collect(),
            },
            E::ForLoop(f) => IrExpr::For {
                pat: Box::new(lower_pat(&f.pat)),
                iter: self.lower_boxed(&f.expr),
                body: self.lower_block(&f.body),
                pos: pos(f.expr.span()),
            },
            E::While(w) => IrExpr::Loop(thin_vec![
                self.lower_expr(&w.cond),
                IrExpr::Block(self.lower_block(&w.body)),
            ]),
            E::Loop(l) => IrExpr::Loop(thin_vec![IrExpr::Block(self.lower_block(&l.body))]),
            E::Struct(s) => {
                let mut fields: ThinVec<(Name, IrExpr)> = s
                    .fields
                    .iter()
                    .map(|f| {
                        let name = match &f.member {
                            syn::Member::Named(i) => crate::ir::name(&i.to_string()),
                            syn::Member::Unnamed(i) => crate::ir::name(&i.index.to_string()),
                        };
                        (name, self.lower_expr(&f.expr))
                    })
                    .collect();
                if let Some(r) = &s.rest {
                    fields.push((crate::ir::name(".."), self.lower_expr(r)));
                }
                IrExpr::StructLit(lower_path(&s.path, s.qself.as_ref()), fields)
            }
            E::Cast(c) => IrExpr::Cast(self.lower_boxed(&c.expr), Box::new(lower_type(&c.ty))),
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => IrExpr::Lit(crate::ir::name(match i.suffix() {
                "" => crate::ir::UNSUFFIXED_INTEGER,
                suffix => suffix,
            })),
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Float(f),
                ..
            }) => IrExpr::Lit(crate::ir::name(match f.suffix() {
                "" => crate::ir::UNSUFFIXED_FLOAT,
                suffix => suffix,
            })),
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Char(_),
                ..
            }) => IrExpr::Lit(crate::ir::name("char")),
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Byte(_),
                ..
            }) => IrExpr::Lit(crate::ir::name("u8")),
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => {
                let value = s.value();
                if value.parse::<std::net::SocketAddr>().is_ok() {
                    IrExpr::SocketAddrStr
                } else {
                    IrExpr::Str(
                        (value.len() <= crate::ir::STR_TEXT_MAX).then(|| crate::ir::name(&value)),
                    )
                }
            }
            E::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => bool_literal(b.value, pos(b.span)),
            E::Macro(m) => self.lower_macro(&m.mac),
            E::Tuple(t) => IrExpr::Tuple(t.elems.iter().map(|x| self.lower_expr(x)).collect()),
            E::Array(a) => IrExpr::Array(a.elems.iter().map(|x| self.lower_expr(x)).collect()),
            // The length is a constant expression, evaluated at compile time.
            E::Repeat(r) => IrExpr::Array(thin_vec![self.lower_expr(&r.expr)]),
            E::Binary(b) if is_arithmetic(&b.op) => IrExpr::Arith(thin_vec![
                self.lower_expr(&b.left),
                self.lower_expr(&b.right)
            ]),
            E::Index(i) => IrExpr::Index {
                exprs: thin_vec![self.lower_expr(&i.expr), self.lower_expr(&i.index)],
                range: matches!(&*i.index, E::Range(_)),
            },
            other => {
                let mut collector = ChildCollector {
                    lowerer: self,
                    out: ThinVec::new(),
                };
                syn::visit::visit_expr(&mut collector, other);
                IrExpr::Other(collector.out)
            }
        }
    }

    /// Parses macro tokens as expressions as far as they go: a comma list, then statements, then
    /// chunks split at `,`, `;` and `=>`, recursing into groups that do not parse.
    /// Whether an expression's own `#[cfg]` attributes (a statement's, or one an expansion
    /// wrote) hold.
    fn expr_enabled(&self, e: &syn::Expr) -> bool {
        expr_attrs(e).is_none_or(|attrs| self.cfg.keep(&mut attrs.to_vec()))
    }

    pub fn lenient_exprs(&mut self, tokens: TokenStream) -> ThinVec<IrExpr> {
        if self.depth > MAX_DEPTH {
            return ThinVec::new();
        }
        self.depth += 1;
        let out = self.lenient_inner(tokens);
        self.depth -= 1;
        out
    }

    fn lenient_inner(&mut self, tokens: TokenStream) -> ThinVec<IrExpr> {
        if tokens.is_empty() {
            return ThinVec::new();
        }
        // Expressions separated by commas, else statements: both tried on one token buffer
        // (a fork), which syn builds by walking every token (a tenth of a cold run's samples were
        // `TokenBuffer::new2`, a buffer per attempt).
        let parsed = (|input: ParseStream| -> syn::Result<Lenient> {
            let fork = input.fork();
            if let Ok(list) = Punctuated::<syn::Expr, Token![,]>::parse_terminated(&fork) {
                input.advance_to(&fork);
                return Ok(Lenient::Exprs(list));
            }
            syn::Block::parse_within(input).map(Lenient::Stmts)
        })
        .parse2(tokens.clone());
        match parsed {
            Ok(Lenient::Exprs(list)) => {
                // An expansion's `#[cfg(feature = "..")] { .. }` (regex-automata's `log!` and
                // `instrument!`) parses as one expression carrying the attribute.
                let enabled: Vec<&syn::Expr> =
                    list.iter().filter(|e| self.expr_enabled(e)).collect();
                return enabled.into_iter().map(|e| self.lower_expr(e)).collect();
            }
            Ok(Lenient::Stmts(stmts)) => {
                let block = syn::Block {
                    brace_token: Default::default(),
                    stmts,
                };
                return thin_vec![IrExpr::Block(self.lower_block(&block))];
            }
            Err(_) => {}
        }
        let mut out = ThinVec::new();
        for chunk in split_top_level(tokens) {
            if let Ok(e) = syn::parse2::<syn::Expr>(chunk.clone()) {
                out.push(self.lower_expr(&e));
                continue;
            }
            for tt in chunk {
                if let TokenTree::Group(g) = tt {
                    out.extend(self.lenient_exprs(g.stream()));
                }
            }
        }
        out
    }
}

/// What [`Lowerer::lenient_exprs`] parsed tokens as.
enum Lenient {
    Exprs(Punctuated<syn::Expr, Token![,]>),
    Stmts(Vec<syn::Stmt>),
}

/// Lowers the direct sub-expressions of an expression kind we do not model.
struct ChildCollector<'l, 'a> {
    lowerer: &'l mut Lowerer<'a>,
    out: ThinVec<IrExpr>,
}

impl<'ast> syn::visit::Visit<'ast> for ChildCollector<'_, '_> {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        let lowered = self.lowerer.lower_expr(e);
        self.out.push(lowered);
    }
    fn visit_block(&mut self, b: &'ast syn::Block) {
        let lowered = self.lowerer.lower_block(b);
        self.out.push(IrExpr::Block(lowered));
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let lowered = self.lowerer.lower_macro(m);
        self.out.push(lowered);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Scans a const or static initialiser for its writes to fields and the names it mentions
/// ([`crate::fields`]) without lowering it: data tables (chrono-tz's time zones, ICU's baked
/// data) would otherwise intern every short string they hold. A macro invocation inside is
/// lowered (and dropped) as in a body.
struct InitScan<'l, 'a> {
    lowerer: &'l mut Lowerer<'a>,
    /// A closure is written in it.
    closure: bool,
    /// An async body or a `block_on` is written in it.
    runs_futures: bool,
}

impl<'ast> syn::visit::Visit<'ast> for InitScan<'_, '_> {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        self.lowerer.record_writes(e);
        match e {
            syn::Expr::Path(p) => {
                if let Some(last) = p.path.segments.last() {
                    self.runs_futures |= last.ident == "block_on";
                    self.lowerer.mention(ident_name(&last.ident));
                }
            }
            syn::Expr::MethodCall(m) => {
                self.runs_futures |= m.method == "block_on";
                self.lowerer.mention_method(ident_name(&m.method));
            }
            syn::Expr::Closure(c) => {
                self.closure = true;
                self.runs_futures |= c.asyncness.is_some();
            }
            syn::Expr::Async(_) => self.runs_futures = true,
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.lowerer.lower_macro(m);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn split_top_level(tokens: TokenStream) -> Vec<TokenStream> {
    let mut chunks = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut tts = tokens.into_iter().peekable();
    while let Some(tt) = tts.next() {
        let split = match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' || p.as_char() == ';' => true,
            TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Joint => {
                if matches!(tts.peek(), Some(TokenTree::Punct(n)) if n.as_char() == '>') {
                    tts.next();
                    true
                } else {
                    false
                }
            }
            _ => false,
        };
        // `{ .. } next = expr` (select! arms without commas): a brace group ends a chunk.
        let ends_chunk = matches!(&tt, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
        if split {
            if !current.is_empty() {
                chunks.push(current.drain(..).collect());
            }
        } else {
            current.push(tt);
            if ends_chunk {
                chunks.push(current.drain(..).collect());
            }
        }
    }
    if !current.is_empty() {
        chunks.push(current.into_iter().collect());
    }
    chunks
}

/// For a transcriber of the form `$( #[attr]... $item )*`, the attributes it adds to each item.
fn item_wrapper_attrs(transcriber: TokenStream) -> Option<Vec<syn::Attribute>> {
    let tts: Vec<TokenTree> = transcriber.into_iter().collect();
    let (TokenTree::Punct(dollar), TokenTree::Group(group)) = (tts.first()?, tts.get(1)?) else {
        return None;
    };
    if dollar.as_char() != '$' || group.delimiter() != Delimiter::Parenthesis {
        return None;
    }
    let inner: Vec<TokenTree> = group.stream().into_iter().collect();
    let n = inner.len();
    if n < 2 {
        return None;
    }
    let is_item_var = matches!((&inner[n - 2], &inner[n - 1]), (TokenTree::Punct(p), TokenTree::Ident(_)) if p.as_char() == '$');
    if !is_item_var {
        return None;
    }
    let attr_tokens: TokenStream = inner[..n - 2].iter().cloned().collect();
    syn::Attribute::parse_outer.parse2(attr_tokens).ok()
}

/// The statics of std's `thread_local! { static NAME: T = init; .. }`, typed as what the macro
/// declares: a `std::thread::LocalKey<T>`, whose `with(|v: &T| ..)` the resolver types
/// (tokio's runtime `CONTEXT.with(|c| c.scheduler.with(..))`). The last declaration may omit
/// its `;`, which `syn::File` would not parse.
fn thread_local_items(tokens: TokenStream) -> Vec<syn::Item> {
    let mut items = parse_items(tokens.clone());
    if items.is_empty() {
        items = parse_items(quote::quote!(#tokens ;));
    }
    for item in &mut items {
        if let syn::Item::Static(s) = item {
            let ty = s.ty.clone();
            *s.ty = syn::parse_quote!(::std::thread::LocalKey<#ty>);
        }
    }
    items
}

fn parse_items(tokens: TokenStream) -> Vec<syn::Item> {
    syn::parse2::<syn::File>(tokens)
        .map(|f| f.items)
        .unwrap_or_default()
}

/// The transcriber token streams of a `macro_rules!` body: `(matcher) => { transcriber };`.
fn macro_rules_transcribers(tokens: TokenStream) -> Vec<TokenStream> {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 3 < tts.len() + 1 {
        match (tts.get(i), tts.get(i + 1), tts.get(i + 2), tts.get(i + 3)) {
            (
                Some(TokenTree::Group(_)),
                Some(TokenTree::Punct(a)),
                Some(TokenTree::Punct(b)),
                Some(TokenTree::Group(t)),
            ) if a.as_char() == '=' && b.as_char() == '>' => {
                out.push(t.stream());
                i += 4;
            }
            _ => i += 1,
        }
    }
    out
}

/// Replaces `$name` with a placeholder identifier, `$crate` with `::crate_name`, and unwraps
/// `$( .. ) sep? *` repetitions, so a transcriber parses as ordinary Rust.
fn substitute_metavars(tokens: TokenStream, crate_name: &str) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let mut tts = tokens.into_iter().peekable();
    while let Some(tt) = tts.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' => match tts.next() {
                Some(TokenTree::Ident(id)) if id == "crate" => {
                    let krate = proc_macro2::Ident::new(crate_name, id.span());
                    out.extend(quote::quote!(::#krate));
                }
                Some(TokenTree::Ident(id)) => {
                    out.push(TokenTree::Ident(proc_macro2::Ident::new(
                        METAVAR_PLACEHOLDER,
                        id.span(),
                    )));
                }
                Some(TokenTree::Group(g)) => {
                    out.extend(substitute_metavars(g.stream(), crate_name));
                    // An optional separator, then the repetition operator.
                    if let Some(TokenTree::Punct(op)) = tts.peek() {
                        if matches!(op.as_char(), '*' | '+' | '?') {
                            tts.next();
                        } else {
                            let sep = tts.next();
                            if let Some(TokenTree::Punct(op2)) = tts.peek() {
                                if matches!(op2.as_char(), '*' | '+' | '?') {
                                    tts.next();
                                }
                            } else if let Some(s) = sep {
                                out.push(s);
                            }
                        }
                    }
                }
                Some(other) => out.push(other),
                None => {}
            },
            TokenTree::Group(g) => {
                let mut ng = proc_macro2::Group::new(
                    g.delimiter(),
                    substitute_metavars(g.stream(), crate_name),
                );
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Whether `block` writes a struct literal ([`FnAttrs::struct_literal`]).
fn writes_struct_literal(block: &IrBlock) -> bool {
    block.any(&mut |e| matches!(e, IrExpr::StructLit(..)))
}

/// The type a turbofish gives the result of std's methods generic over it: `.collect::<C>()`,
/// `.sum::<T>()`, `.product::<T>()` yield `C`/`T`, `.parse::<T>()` yields `Result<T, _>`,
/// `.cast::<T>()` a pointer to `T`. The
/// call is lowered as if cast to it (`IrExpr::Cast`: the type of a cast is the written one), which
/// costs the IR nothing: a field for the turbofish would grow every expression.
fn turbofish_result(m: &syn::ExprMethodCall) -> Option<IrType> {
    let args = &m.turbofish.as_ref()?.args;
    let [syn::GenericArgument::Type(t)] = args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let written = lower_type(t);
    match m.method.to_string().as_str() {
        "collect" | "sum" | "product" => Some(written),
        // A raw pointer's `p.cast::<u16>()` (aho-corasick's `x.cast::<u16>().read_unaligned()`).
        "cast" => Some(IrType::Ptr(Box::new(written))),
        "parse" => Some(std_type(
            "result",
            "Result",
            thin_vec![written, IrType::Infer],
            false,
        )),
        _ => None,
    }
}

fn bound_path(b: &syn::TypeParamBound) -> Option<IrPath> {
    match b {
        syn::TypeParamBound::Trait(tb) => Some(lower_path(&tb.path, None)),
        _ => None,
    }
}

/// An identifier as an interned [`Name`]; raw identifiers keep their `r#`, as `to_string` does.
fn ident_name(i: &proc_macro2::Ident) -> Name {
    crate::ir::name(&i.to_string())
}

pub fn lower_path(p: &syn::Path, qself: Option<&syn::QSelf>) -> IrPath {
    IrPath {
        leading_colon: p.leading_colon.is_some(),
        segments: p
            .segments
            .iter()
            .map(|s| IrSegment {
                name: ident_name(&s.ident),
                generics: match &s.arguments {
                    syn::PathArguments::AngleBracketed(ab) => ab
                        .args
                        .iter()
                        .filter_map(|a| match a {
                            syn::GenericArgument::Type(t) => Some(lower_type(t)),
                            _ => None,
                        })
                        .collect(),
                    // `FnOnce(&mut Slot) -> T`: the inputs as one tuple argument, as rustc spells
                    // the trait (`FnOnce<(&mut Slot,)>`), so a closure argument's parameters can
                    // be typed from the callee's bound (`resolve::Walker::closure_param_types`).
                    syn::PathArguments::Parenthesized(pa) => {
                        let inputs = pa.inputs.iter().map(lower_type).collect();
                        thin_vec![IrType::Tuple(inputs)]
                    }
                    syn::PathArguments::None => ThinVec::new(),
                },
            })
            .collect(),
        qself: qself.map(|q| Box::new(lower_type(&q.ty))),
        qself_position: qself.map(|q| q.position as u32).unwrap_or(0),
    }
}

pub fn lower_type(t: &syn::Type) -> IrType {
    match t {
        syn::Type::Path(tp) => IrType::Path(lower_path(&tp.path, tp.qself.as_ref())),
        syn::Type::Reference(r) => IrType::Ref(Box::new(lower_type(&r.elem))),
        syn::Type::Ptr(p) => IrType::Ptr(Box::new(lower_type(&p.elem))),
        syn::Type::Slice(s) => IrType::Slice(Box::new(lower_type(&s.elem))),
        syn::Type::Array(a) => IrType::Array(Box::new(lower_type(&a.elem))),
        syn::Type::Tuple(t) => IrType::Tuple(t.elems.iter().map(lower_type).collect()),
        syn::Type::Paren(p) => lower_type(&p.elem),
        syn::Type::Group(g) => lower_type(&g.elem),
        syn::Type::ImplTrait(it) => future_of(&it.bounds).unwrap_or_else(|| {
            IrType::ImplTrait(it.bounds.iter().filter_map(bound_path).collect())
        }),
        syn::Type::TraitObject(to) => future_of(&to.bounds)
            .unwrap_or_else(|| IrType::DynTrait(to.bounds.iter().filter_map(bound_path).collect())),
        syn::Type::BareFn(_) => IrType::FnPtr,
        syn::Type::Never(_) => IrType::Never,
        syn::Type::Infer(_) => IrType::Infer,
        _ => IrType::Other,
    }
}

/// The paths a type's `#[derive(..)]` attributes name (`Parser`, `clap::Parser`, `Debug`).
fn derived_traits(attrs: &[syn::Attribute]) -> ThinVec<IrPath> {
    let mut out = ThinVec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        if let Ok(paths) = a.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated) {
            out.extend(paths.iter().map(|p| lower_path(p, None)));
        }
    }
    out
}

/// An attribute's path as its segments' names (`#[tokio::main]` → `["tokio", "main"]`).
fn attr_path(a: &syn::Attribute) -> Vec<String> {
    a.path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect()
}

/// `impl Future<Output = T>` / `dyn Future<Output = T> + Send`: lowered as the path
/// `::std::future::Future<T>`, so `.await` can yield `T` (the resolver knows that path); the
/// other bounds (`Send`, lifetimes) say nothing a call needs.
fn future_of(
    bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>,
) -> Option<IrType> {
    bounds.iter().find_map(|b| {
        let syn::TypeParamBound::Trait(tb) = b else {
            return None;
        };
        let last = tb.path.segments.last()?;
        if last.ident != "Future" {
            return None;
        }
        let syn::PathArguments::AngleBracketed(ab) = &last.arguments else {
            return None;
        };
        let output = ab.args.iter().find_map(|a| match a {
            syn::GenericArgument::AssocType(at) if at.ident == "Output" => Some(lower_type(&at.ty)),
            _ => None,
        })?;
        Some(std_type("future", "Future", thin_vec![output], true))
    })
}

/// The written type `std::module::name<args>` (`::std::…` with `leading_colon`), for types the
/// lowering itself gives an expression or a bound.
fn std_type(module: &str, name: &str, args: ThinVec<IrType>, leading_colon: bool) -> IrType {
    let segment = |name: &str, generics: ThinVec<IrType>| IrSegment {
        name: crate::ir::name(name),
        generics,
    };
    IrType::Path(IrPath {
        leading_colon,
        segments: thin_vec![
            segment("std", ThinVec::new()),
            segment(module, ThinVec::new()),
            segment(name, args),
        ],
        qself: None,
        qself_position: 0,
    })
}

/// `State(state): State<AppState>`: a one-field wrapper destructured in the parameter list (web
/// framework extractors: axum's `State`, `Json`, `Path`, `Extension`; actix's `Data`) binds its
/// name to the wrapper's single type argument. Without it every handler's `state.db.query(..)`
/// would have an unknown receiver. Applies only when the pattern names the type's own last
/// segment and the type has exactly one type argument, which is how such wrappers are written.
fn extractor_binding(pat: &syn::Pat, ty: &syn::Type) -> Option<(Name, IrType)> {
    let syn::Pat::TupleStruct(ts) = pat else {
        return None;
    };
    let (1, Some(syn::Pat::Ident(binding))) = (ts.elems.len(), ts.elems.first()) else {
        return None;
    };
    let syn::Type::Path(tp) = ty else {
        return None;
    };
    let ty_last = tp.path.segments.last()?;
    if ts.path.segments.last()?.ident != ty_last.ident {
        return None;
    }
    let syn::PathArguments::AngleBracketed(ab) = &ty_last.arguments else {
        return None;
    };
    let mut types = ab.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let (Some(arg), None) = (types.next(), types.next()) else {
        return None;
    };
    Some((ident_name(&binding.ident), lower_type(arg)))
}

pub fn lower_pat(p: &syn::Pat) -> IrPat {
    let mut pat = lower_pat_shape(p);
    pat.variants = pat_variants(p);
    pat
}

/// The variants a pattern matches ([`IrPat::variants`]); empty when it may match anything.
fn pat_variants(p: &syn::Pat) -> ThinVec<Name> {
    let named = |path: &syn::Path| -> ThinVec<Name> {
        match path.segments.last() {
            Some(s) if crate::values::is_variant_name(&s.ident.to_string()) => {
                thin_vec![ident_name(&s.ident)]
            }
            _ => ThinVec::new(),
        }
    };
    match p {
        // `None` parses as an identifier pattern; an UpperCamel binding would be a lint error.
        syn::Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
            let text = pi.ident.to_string();
            if crate::values::is_variant_name(&text) {
                thin_vec![ident_name(&pi.ident)]
            } else {
                ThinVec::new()
            }
        }
        syn::Pat::Path(pp) if pp.qself.is_none() => named(&pp.path),
        syn::Pat::TupleStruct(ts) if ts.qself.is_none() => named(&ts.path),
        syn::Pat::Struct(ps) if ps.qself.is_none() => named(&ps.path),
        syn::Pat::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => thin_vec![crate::values::bool_name(b.value)],
        syn::Pat::Reference(r) => pat_variants(&r.pat),
        syn::Pat::Paren(pp) => pat_variants(&pp.pat),
        syn::Pat::Type(pt) => pat_variants(&pt.pat),
        syn::Pat::Or(or) => {
            let mut all = ThinVec::new();
            for case in &or.cases {
                let vs = pat_variants(case);
                if vs.is_empty() {
                    return ThinVec::new();
                }
                all.extend(vs);
            }
            all
        }
        _ => ThinVec::new(),
    }
}

fn lower_pat_shape(p: &syn::Pat) -> IrPat {
    let mut pat = IrPat::default();
    match p {
        syn::Pat::Ident(pi) if pi.subpat.is_none() => pat.ident = Some(ident_name(&pi.ident)),
        syn::Pat::Type(pt) => return lower_pat(&pt.pat),
        syn::Pat::Reference(r) => return lower_pat(&r.pat),
        syn::Pat::Paren(pp) => return lower_pat(&pp.pat),
        syn::Pat::Tuple(t) => {
            pat.tuple = t.elems.iter().map(lower_pat).collect();
        }
        // `let [mut a, mut b, ..] = *state;` (sha2's compression rounds on `[u64; 8]`).
        syn::Pat::Slice(s) => {
            for elem in &s.elems {
                match elem {
                    syn::Pat::Rest(_) => {}
                    syn::Pat::Ident(pi)
                        if pi
                            .subpat
                            .as_ref()
                            .is_some_and(|(_, sub)| matches!(**sub, syn::Pat::Rest(_))) =>
                    {
                        pat.others.push(ident_name(&pi.ident))
                    }
                    other => pat.elements.push(lower_pat(other)),
                }
            }
        }
        syn::Pat::TupleStruct(ts)
            if ts.elems.len() == 1
                && ts
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| matches!(s.ident.to_string().as_str(), "Ok" | "Some")) =>
        {
            let inner = lower_pat(&ts.elems[0]);
            if inner.ident.is_some() {
                pat.unwrap_ident = inner.ident;
            } else {
                pat.unwrap_pat = Some(Box::new(inner));
            }
        }
        syn::Pat::TupleStruct(ts) => {
            pat.variant = Some(Box::new((
                lower_path(&ts.path, ts.qself.as_ref()),
                ts.elems.iter().map(lower_pat).collect(),
            )));
        }
        syn::Pat::Struct(ps) => {
            let fields = ps
                .fields
                .iter()
                .map(|f| {
                    let name = match &f.member {
                        syn::Member::Named(i) => ident_name(i),
                        syn::Member::Unnamed(idx) => crate::ir::name(&idx.index.to_string()),
                    };
                    (name, lower_pat(&f.pat))
                })
                .collect();
            pat.fields = Some(Box::new((lower_path(&ps.path, ps.qself.as_ref()), fields)));
        }
        // `Argument::Raw(ref s) | Argument::UnknownFlag(ref s)`: every alternative binds the same
        // names at the same types (rustc's E0408/E0308), so the first one types them.
        syn::Pat::Or(or) if !or.cases.is_empty() => return lower_pat_shape(&or.cases[0]),
        other => collect_bindings(other, &mut pat.others),
    }
    pat
}

fn collect_bindings(p: &syn::Pat, out: &mut ThinVec<Name>) {
    struct Names<'o>(&'o mut ThinVec<Name>);
    impl<'ast> syn::visit::Visit<'ast> for Names<'_> {
        fn visit_pat_ident(&mut self, pi: &'ast syn::PatIdent) {
            self.0.push(ident_name(&pi.ident));
            syn::visit::visit_pat_ident(self, pi);
        }
    }
    syn::visit::Visit::visit_pat(&mut Names(out), p);
}

fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    leading: bool,
    public: bool,
    out: &mut Vec<IrUse>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, leading, public, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push(IrUse {
                path,
                leading_colon: leading,
                alias: None,
                glob: false,
                public,
            });
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push(IrUse {
                path,
                leading_colon: leading,
                alias: Some(r.rename.to_string()),
                glob: false,
                public,
            });
        }
        syn::UseTree::Glob(_) => {
            out.push(IrUse {
                path: prefix.clone(),
                leading_colon: leading,
                alias: None,
                glob: true,
                public,
            });
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix, leading, public, out);
            }
        }
    }
}

/// Attributes that neither call nor export the fn they are on: documentation, lints, codegen
/// hints, `#[instrument]`, `#[async_recursion]`, `#[deprecated]`, `cfg`s. Any other attribute
/// (a proc macro: `#[wasm_bindgen]`, `#[tauri::command]`, `#[napi]`; `#[no_mangle]`) may make
/// the fn callable without its name being written in Rust ([`FnAttrs::exported`]).
fn is_inert_attribute(a: &syn::Attribute) -> bool {
    let p = a.path();
    let last = p
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    let first = p
        .segments
        .first()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    matches!(first.as_str(), "clippy" | "rustfmt")
        || matches!(
            last.as_str(),
            "doc"
                | "allow"
                | "warn"
                | "deny"
                | "forbid"
                | "expect"
                | "inline"
                | "cold"
                | "must_use"
                | "track_caller"
                | "deprecated"
                | "instrument"
                | "async_recursion"
                | "cfg"
                | "cfg_attr"
                | "allow_internal_unstable"
        )
}

fn is_test_fn(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let p = a.path();
        p.is_ident("test")
            || p.is_ident("bench")
            || (p.segments.len() == 2
                && p.segments[1].ident == "test"
                && p.segments[0].ident != "core")
    })
}

fn item_attrs_mut(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    use syn::Item as I;
    Some(match item {
        I::Const(i) => &mut i.attrs,
        I::Enum(i) => &mut i.attrs,
        I::ExternCrate(i) => &mut i.attrs,
        I::Fn(i) => &mut i.attrs,
        I::ForeignMod(i) => &mut i.attrs,
        I::Impl(i) => &mut i.attrs,
        I::Macro(i) => &mut i.attrs,
        I::Mod(i) => &mut i.attrs,
        I::Static(i) => &mut i.attrs,
        I::Struct(i) => &mut i.attrs,
        I::Trait(i) => &mut i.attrs,
        I::TraitAlias(i) => &mut i.attrs,
        I::Type(i) => &mut i.attrs,
        I::Union(i) => &mut i.attrs,
        I::Use(i) => &mut i.attrs,
        _ => return None,
    })
}

fn expr_attrs(e: &syn::Expr) -> Option<&[syn::Attribute]> {
    use syn::Expr as E;
    Some(match e {
        E::Call(x) => &x.attrs,
        E::MethodCall(x) => &x.attrs,
        E::Block(x) => &x.attrs,
        E::If(x) => &x.attrs,
        E::Match(x) => &x.attrs,
        E::Macro(x) => &x.attrs,
        E::Unsafe(x) => &x.attrs,
        E::ForLoop(x) => &x.attrs,
        E::Assign(x) => &x.attrs,
        _ => return None,
    })
}

/// Visibility is not used for resolution (a private path the code could not write never appears),
/// but `pub use` chains are followed regardless; kept here for future lints.
#[allow(dead_code)]
fn is_public(v: &Visibility) -> bool {
    !matches!(v, Visibility::Inherited)
}

/// An `extern` block of JavaScript imports: `#[wasm_bindgen]` (any path ending so, such as
/// `wasm_bindgen_macro::wasm_bindgen`) or `#[link(wasm_import_module = ..)]`.
fn is_js_import_block(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path
            .segments
            .last()
            .is_some_and(|s| s.ident == "wasm_bindgen")
        {
            return true;
        }
        path.is_ident("link")
            && a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|metas| {
                metas
                    .iter()
                    .any(|m| m.path().is_ident("wasm_import_module"))
            })
    })
}

/// The binary operators whose value, on primitive numbers, is of the operands' type.
fn is_arithmetic(op: &syn::BinOp) -> bool {
    use syn::BinOp as B;
    matches!(
        op,
        B::Add(_)
            | B::Sub(_)
            | B::Mul(_)
            | B::Div(_)
            | B::Rem(_)
            | B::BitAnd(_)
            | B::BitOr(_)
            | B::BitXor(_)
            | B::Shl(_)
            | B::Shr(_)
    )
}

/// `a += b`, `flags |= x`, ...: the place's new value is not a constant.
fn is_compound_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp as B;
    matches!(
        op,
        B::AddAssign(_)
            | B::SubAssign(_)
            | B::MulAssign(_)
            | B::DivAssign(_)
            | B::RemAssign(_)
            | B::BitXorAssign(_)
            | B::BitAndAssign(_)
            | B::BitOrAssign(_)
            | B::ShlAssign(_)
            | B::ShrAssign(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(src: &str) -> IrModule {
        let cfg = CfgSet::parse_rustc_output("unix\ntarget_os=\"linux\"\n");
        let file = syn::parse_file(src).unwrap();
        let mut m = IrModule::default();
        let mut macros = ItemMacros::default();
        Lowerer::new(&cfg, "demo", &mut macros).lower_items(file.items, &mut m);
        m
    }

    /// The questions later stages ask of every body are answered at lowering, so that they need
    /// not decode it.
    #[test]
    fn body_facts_are_recorded_at_lowering() {
        let m = lower(
            "fn main() { let rt = tokio::runtime::Builder::new_current_thread().build().unwrap(); \
             rt.block_on(run()); }\n\
             fn wrap<F>(f: F, n: u8) -> Wrapped<F> { Wrapped { f } }\n\
             fn plain(n: u8) -> u8 { 1 }\n",
        );
        let attrs: Vec<(bool, bool, bool)> = m
            .fns
            .iter()
            .map(|f| {
                let a = &f.attrs;
                (
                    a.names_block_on,
                    a.builds_current_thread,
                    a.tail_names_param,
                )
            })
            .collect();
        assert_eq!(
            attrs,
            [
                (true, true, false),
                (false, false, true),
                (false, false, false)
            ]
        );
    }

    #[test]
    fn a_packed_body_decodes_to_what_was_lowered_also_after_the_cache_round_trip() {
        let m = lower(
            "async fn f(p: Kind) { match p { Kind::A => std::fs::read(\"x\"), _ => g().await } }\n\
             fn h() -> u8 { 1 }",
        );
        let packed = m.fns[0].body.as_ref().unwrap();
        let block = packed.block();
        let text = format!("{block:?}");
        assert!(text.contains("read") && text.contains("Await"), "{text}");
        // Packing again gives the same bytes: the encoding is deterministic.
        assert_eq!(FnBody::pack(&block).encoded_len(), packed.encoded_len());
        // The cache stores the module with postcard: the body's bytes come back as they were.
        let bytes = postcard::to_allocvec(&m).unwrap();
        let back: IrModule = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(
            format!("{:?}", back.fns[0].body.as_ref().unwrap().block()),
            text
        );
        assert_ne!(
            format!("{:?}", back.fns[1].body.as_ref().unwrap().block()),
            text
        );
    }

    fn count_calls(e: &IrExpr) -> usize {
        match e {
            IrExpr::Call { args, func, .. } => {
                1 + count_calls(func) + args.iter().map(count_calls).sum::<usize>()
            }
            IrExpr::MethodCall { receiver, args, .. } => {
                1 + count_calls(receiver) + args.iter().map(count_calls).sum::<usize>()
            }
            IrExpr::Macro { exprs, .. }
            | IrExpr::Other(exprs)
            | IrExpr::Index { exprs, .. }
            | IrExpr::Arith(exprs)
            | IrExpr::Tuple(exprs)
            | IrExpr::Array(exprs)
            | IrExpr::Loop(exprs) => exprs.iter().map(count_calls).sum(),
            IrExpr::Block(b) | IrExpr::Async { body: b, .. } => b
                .stmts
                .iter()
                .map(|s| match s {
                    IrStmt::Expr(e) => count_calls(e),
                    IrStmt::Let { init: Some(e), .. } => count_calls(e),
                    _ => 0,
                })
                .sum(),
            IrExpr::Closure { body, .. } => count_calls(body),
            IrExpr::Await(e) | IrExpr::Try(e) | IrExpr::Ref(e) => count_calls(e),
            _ => 0,
        }
    }

    #[test]
    fn javascript_import_blocks_are_not_foreign_functions() {
        let m = lower(
            "#[wasm_bindgen] extern \"C\" { fn alert(s: &str); }\n\
             #[wasm_bindgen_macro::wasm_bindgen(wasm_bindgen = crate)] extern \"C\" { fn log(s: &str); }\n\
             #[link(wasm_import_module = \"env\")] extern \"C\" { fn host(); }\n\
             #[link(name = \"z\")] extern \"C\" { fn inflate(); }\n\
             extern \"C\" { fn verify(); }",
        );
        let names: Vec<_> = m.foreign_fns.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["inflate", "verify"]);
    }

    #[test]
    fn cfg_disabled_items_and_test_fns_are_dropped() {
        let m = lower(
            "#[cfg(windows)] fn a() {} fn b() {} #[test] fn c() {} #[cfg(test)] mod tests {}",
        );
        let names: Vec<_> = m.fns.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert!(m.children.is_empty());
    }

    #[test]
    fn calls_inside_select_and_format_macros_are_lowered() {
        let m = lower(
            "async fn f() { tokio::select! { r = a() => { b(std::fs::read(\"x\")) } } \
             println!(\"{}\", c()); }",
        );
        let body = m.fns[0].body.as_ref().unwrap().block();
        let calls: usize = body
            .stmts
            .iter()
            .map(|s| {
                if let IrStmt::Expr(e) = s {
                    count_calls(e)
                } else {
                    0
                }
            })
            .sum();
        assert_eq!(calls, 4, "a(), b(..), std::fs::read(..), c()");
    }

    #[test]
    fn cfg_if_in_a_function_body_lowers_only_the_live_branch() {
        let m = lower(
            "fn f() { cfg_if::cfg_if! { if #[cfg(windows)] { use std::net::TcpStream as S; S::connect(\"w\"); } else { use tokio::net::TcpStream as S; S::connect(\"u\"); } } }",
        );
        let uses: Vec<String> = m.uses.iter().map(|u| u.path.join("::")).collect();
        assert_eq!(uses, ["tokio::net::TcpStream"]);
    }

    #[test]
    fn cfg_if_picks_the_first_true_branch() {
        let m = lower("cfg_if::cfg_if! { if #[cfg(windows)] { fn w() {} } else if #[cfg(unix)] { fn u() {} } else { fn o() {} } }");
        let names: Vec<_> = m.fns.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["u"]);
    }

    /// An opaque crate's (tracing's) macros are never expanded nor walked by the resolver: their
    /// arms are not lowered; any other crate's are.
    #[test]
    fn an_opaque_crates_macro_arms_are_not_lowered() {
        let src = "macro_rules! event { ($e:expr) => { std::fs::read($e) } }";
        let lower_with = |externs: crate::macro_rules::ExternMacros| {
            let cfg = CfgSet::parse_rustc_output("unix\n");
            let file = syn::parse_file(src).unwrap();
            let mut m = IrModule::default();
            let mut macros = ItemMacros::with_externs(std::sync::Arc::new(externs));
            Lowerer::new(&cfg, "demo", &mut macros).lower_items(file.items, &mut m);
            m
        };
        let plain = lower_with(crate::macro_rules::ExternMacros::new(Vec::new()));
        assert_eq!(plain.macros[0].arms.len(), 1);
        let opaque =
            lower_with(crate::macro_rules::ExternMacros::new(Vec::new()).for_opaque_crate());
        assert_eq!(opaque.macros[0].name, "event");
        assert!(opaque.macros[0].arms.is_empty());
    }

    /// A tt-muncher invokes itself from its arms; in the walk of those arms the invocation is
    /// lowered as written, not expanded (its placeholders expanded arm after arm until the
    /// budget ran out: tokio's `select!`, 128 expansions per self-invocation).
    #[test]
    fn a_macros_own_invocations_in_its_arm_walk_are_not_expanded() {
        let m = lower(
            "macro_rules! munch { (@step $($t:tt)*) => { munch!(@step $($t)* x) }; \
             ($($t:tt)*) => { munch!(@step $($t)*) } }\n\
             macro_rules! other { ($e:expr) => { std::fs::read($e) } }\n\
             macro_rules! user { ($p:expr) => { other!($p); user!(@done) }; (@done) => {} }",
        );
        let mut macros: Vec<(String, bool)> = Vec::new();
        for e in m.macros.iter().flat_map(|def| &def.arms).flatten() {
            e.any(&mut |x| {
                if let IrExpr::Macro { path, expanded, .. } = x {
                    let name = path.segments.last().map(|s| s.name.to_string());
                    macros.push((name.unwrap_or_default(), *expanded));
                }
                false
            });
        }
        // munch's two arms and user's `user!(@done)`: as written; user's `other!(..)`: expanded.
        let named = |n: &str, expanded: bool| (n.to_string(), expanded);
        assert_eq!(
            macros,
            vec![
                named("munch", false),
                named("munch", false),
                named("other", true),
                named("user", false)
            ]
        );
    }

    #[test]
    fn macro_rules_transcribers_parse_with_metavariables() {
        let m = lower("macro_rules! load { ($p:expr) => { $crate::cfg::read($p) }; () => { std::thread::sleep(d()) } }");
        assert_eq!(m.macros.len(), 1);
        assert_eq!(m.macros[0].arms.len(), 2);
        let IrExpr::Call { func, .. } = &m.macros[0].arms[0][0] else {
            panic!("{:?}", m.macros[0].arms[0])
        };
        let IrExpr::Path(p, _) = &**func else {
            panic!()
        };
        assert_eq!(p.display(), "::demo::cfg::read");
    }

    #[test]
    fn item_wrapper_macros_lend_their_cfg_to_each_item() {
        let m = lower(
            "macro_rules! cfg_net { ($($item:item)*) => { $( #[cfg(feature = \"net\")] $item )* } } \
             macro_rules! cfg_unix { ($($item:item)*) => { $( #[cfg(unix)] $item )* } } \
             cfg_net! { fn n() {} } cfg_unix! { fn u() {} } other! { fn o() {} }",
        );
        let names: Vec<_> = m.fns.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["u", "o"]);
    }

    #[test]
    fn use_trees_flatten_with_aliases_and_globs() {
        let m = lower("use std::{fs::{self, read as r}, io::*};");
        let flat: Vec<_> = m
            .uses
            .iter()
            .map(|u| (u.path.join("::"), u.alias.clone(), u.glob))
            .collect();
        assert_eq!(
            flat,
            [
                ("std::fs::self".to_string(), None, false),
                ("std::fs::read".to_string(), Some("r".to_string()), false),
                ("std::io".to_string(), None, true)
            ]
        );
    }
}

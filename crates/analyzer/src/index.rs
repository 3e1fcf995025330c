//! Stage 3a, *index*: every analysed crate's modules, functions, types, impls and macros in one
//! table, `use` imports resolved to a fixpoint, and path and type resolution over it.
//!
//! Invariants: ids are assigned in the deterministic order of units, modules and items (never hash
//! order); resolution never panics on a missing or cyclic import — it yields no candidates and the
//! call is counted as unresolved.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rayon::prelude::*;

use crate::discover::{DepTarget, Workspace};
use crate::ir::*;
use crate::ty::{canonical_external, prelude_path, TraitRef, Ty, TyCon};

/// A table keyed by item or method names, only ever looked up by name (never iterated where
/// order could reach the output: `scope.rs` collects what it iterates into ordered sets). Hashed
/// with foldhash at a fixed seed rather than ordered: a `BTreeMap<String, _>` lookup compares
/// keys byte by byte down the tree, and method lookup, trait methods and glob walks were a
/// tenth of a one-edit deno run's CPU in `memcmp` that way.
pub type NameMap<V> = std::collections::HashMap<String, V, foldhash::fast::FixedState>;

pub type ModId = usize;
pub type FnId = usize;
pub type TypeId = usize;
pub type ImplId = usize;
pub type UnitId = usize;
pub type FileId = usize;

/// How deep in a type's resolution a generic parameter's bounds still get their arguments
/// resolved (see `Ty::Param::bound_args`); the whole resolution stops at depth 8.
const MAX_BOUND_ARG_DEPTH: usize = 3;

/// What a name or path resolves to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Res {
    Module(ModId),
    Fn(FnId),
    Type(TypeId),
    /// A path into a crate whose source is not analysed (std, proc-macro crates): canonical text.
    External(Vec<String>),
    /// A constant or static, with its declared type (resolved lazily in its module).
    Value(ModId, IrType),
    /// An unanalysed crate root or module; further segments extend the path.
    ExternalRoot(Vec<String>),
}

#[derive(Debug)]
pub struct Module {
    pub unit: UnitId,
    pub path: Vec<String>,
    pub parent: Option<ModId>,
    pub file: FileId,
    pub items: NameMap<Vec<Res>>,
    pub uses: Vec<IrUse>,
    pub imports: NameMap<Vec<Res>>,
    pub globs: Vec<Res>,
    /// Named imports that were resolved, in part, through a guess: a name looked up in a glob
    /// import of an unanalysed module (`use std::io::prelude::*; use versions_error::*;`).
    pub guessed_imports: BTreeSet<String>,
    /// Glob imports of unanalysed modules whose own path rests on a guess. They are kept for
    /// lookups but never extended into further guesses: a guess built on a guess is noise
    /// (`std::io::prelude::versions_error::Kind`), and letting guessed globs feed each other made
    /// the import fixpoint grow multiplicatively per pass (rust-playground's `orchestrator`).
    pub guessed_globs: BTreeSet<Vec<String>>,
    /// Names bound only by private `use`s, and glob targets imported only by private globs: a
    /// glob import of this module sees them only from inside it (a descendant module; rustc's
    /// privacy), so `pub use helpers::*` does not re-export `helpers`' private `use tempfile::
    /// tempfile;` over the `tempfile` crate (cargo-binstall).
    pub private_imports: BTreeSet<String>,
    pub private_globs: BTreeSet<ModId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnOwner {
    Free,
    Impl(ImplId),
    Trait(TypeId),
}

#[derive(Debug)]
pub struct FnDef {
    pub unit: UnitId,
    pub module: ModId,
    pub file: FileId,
    pub owner: FnOwner,
    pub foreign: bool,
    /// Shared: an instance ([`crate::instances`]) is another `FnDef` over its base's IR.
    pub ir: std::sync::Arc<IrFn>,
}

#[derive(Debug)]
pub enum TypeKind {
    Struct {
        fields: Vec<(String, IrType)>,
        generics: ThinVec<IrGeneric>,
    },
    Enum {
        variants: Vec<(String, Vec<(String, IrType)>)>,
        generics: ThinVec<IrGeneric>,
    },
    Union,
    Trait {
        methods: NameMap<FnId>,
        supertraits: ThinVec<IrPath>,
        /// The trait's type parameters and its associated types' bounds, as written (see
        /// `IrItemKind::Trait`).
        generics: ThinVec<IrGeneric>,
        assoc_bounds: Vec<(String, ThinVec<IrPath>)>,
    },
    Alias {
        target: IrType,
        params: Vec<(String, Option<IrType>)>,
    },
}

impl TypeKind {
    /// Whether this is an enum with a variant named `name`.
    pub fn has_variant(&self, name: &str) -> bool {
        matches!(self, TypeKind::Enum { variants, .. } if variants.iter().any(|(v, _)| v == name))
    }
}

#[derive(Debug)]
pub struct TypeDef {
    pub unit: UnitId,
    pub module: ModId,
    pub name: String,
    pub kind: TypeKind,
    /// Inherent methods by name.
    pub inherent: NameMap<Vec<FnId>>,
    /// Inherent impls (their associated constants are the type's: `StateID::MAX`).
    pub inherent_impls: Vec<ImplId>,
    /// Trait impls for this type (self type resolved to it).
    pub trait_impls: Vec<ImplId>,
    /// Trait impls for a reference to it (`impl Widget for &Block`): method lookup takes them
    /// first on a reference receiver, and after the type's own impls otherwise (autoref), as
    /// rustc's probe does.
    pub ref_trait_impls: Vec<ImplId>,
    /// Traits named by the type's `#[derive(..)]` (unresolved paths, looked up in `module`).
    pub derives: ThinVec<IrPath>,
}

#[derive(Debug)]
pub struct ImplDef {
    pub unit: UnitId,
    pub module: ModId,
    pub ir_self: IrType,
    pub ir_trait: Option<IrPath>,
    pub generics: ThinVec<IrGeneric>,
    pub fns: NameMap<FnId>,
    pub assoc_types: Vec<(String, IrType)>,
    pub assoc_consts: Vec<(String, IrType)>,
    pub self_ty: Ty,
    pub trait_ref: Option<TraitRef>,
}

impl ImplDef {
    /// The trait's arguments as the impl writes them (`impl From<Src> for T` → `[Src]`): empty
    /// for an inherent impl or a trait written without arguments.
    pub fn written_trait_args(&self) -> &[IrType] {
        self.ir_trait
            .as_ref()
            .and_then(|t| t.segments.last())
            .map_or(&[], |s| s.generics.as_slice())
    }
}

#[derive(Debug)]
pub struct MacroDef {
    pub unit: UnitId,
    pub module: ModId,
    pub name: String,
    pub exported: bool,
    pub arms: Vec<ThinVec<IrExpr>>,
}

#[derive(Debug)]
pub struct UnitIndex {
    pub root: ModId,
    pub crate_name: String,
    pub package: usize,
    pub extern_names: BTreeMap<String, DepTarget>,
}

#[derive(Debug, Default)]
pub struct Index {
    pub units: Vec<UnitIndex>,
    pub modules: Vec<Module>,
    pub fns: Vec<FnDef>,
    pub types: Vec<TypeDef>,
    pub impls: Vec<ImplDef>,
    pub macros: Vec<MacroDef>,
    /// Impls of each local trait.
    pub trait_impls: BTreeMap<TypeId, Vec<ImplId>>,
    /// Impls whose self type is a bare generic (`impl<T: X> Tr for T`), by trait.
    pub blanket_impls: Vec<ImplId>,
    /// Trait impls of the analysed graph for external types (`impl PathExt for Path`), by path.
    pub external_impls: NameMap<Vec<ImplId>>,
    /// Per key of `external_impls`, computed on first use: by method name, those of its impls
    /// that may provide the method ([`Index::external_impls_with`]).
    pub external_impls_by_method: NameMap<std::sync::OnceLock<NameMap<Vec<ImplId>>>>,
    /// Impls of std's `From` in the analysed graph, by the last path segment of the type they
    /// convert from (`impl From<io::Error> for MyError` under `Error`), built on first use
    /// ([`Index::from_impls_named`]).
    pub from_impls: std::sync::OnceLock<NameMap<Vec<ImplId>>>,
    /// Macros by name, in id order.
    pub macros_by_name: NameMap<Vec<usize>>,
    /// Blanket impls by the method names they provide (their own fns and their trait's default
    /// methods): method lookup asks only the few that can answer.
    pub blanket_by_method: NameMap<Vec<ImplId>>,
    /// Local traits that have at least one blanket impl.
    pub traits_with_blanket: BTreeSet<TypeId>,
    /// Each unit's transitive dependencies, computed on first use (`scope.rs`).
    pub unit_deps: Vec<std::sync::OnceLock<BTreeSet<UnitId>>>,
    /// Traits in scope per module, computed on first use (`scope.rs`).
    pub trait_scopes: Vec<std::sync::OnceLock<BTreeSet<TypeId>>>,
    /// Per type: a trait's supertraits, resolved once ([`Index::supertraits_of`]).
    pub supertrait_refs: Vec<std::sync::OnceLock<Vec<TraitRef>>>,
    /// Path resolutions the import fixpoint performed (one per `use` per pass): the work count
    /// the scaling regression test checks grows linearly with the number of imports.
    pub import_work: usize,
    /// Crates whose source is not analysed because they are proc-macro crates: everything they
    /// export is a macro, so a name imported from one (`pub use clap_derive::Parser`) lives in
    /// the macro namespace and does not hide a type or trait of the same name from a glob
    /// (`pub use clap_builder::*`'s trait `Parser`).
    pub macro_crates: BTreeSet<String>,
    /// Provided trait methods and generic fns instantiated for concrete types, appended to
    /// `fns` after resolution ([`crate::instances`]).
    pub instances: crate::instances::Instances,
    /// Writes to struct fields outside functions, of every module ([`crate::fields`]).
    pub field_writes: Vec<crate::fields::FieldWrite>,
    /// Every name some module's code or attributes mention ([`crate::fields`]).
    pub mentions: ustr::UstrSet,
    /// Every module's [`crate::ir::IrModule::method_mentions`].
    pub method_mentions: ustr::UstrSet,
}

/// A unit's lowered modules, as the loader produced them.
pub struct LoadedUnit {
    pub unit: UnitId,
    pub modules: Vec<IrModule>,
}

const MAX_RESOLVE_DEPTH: usize = 24;

/// One pass's finding for one `use`: module, bound name (`None`: a glob), what it resolves to,
/// whether that rests on a guess, whether the `use` is public.
type ImportUpdate = (ModId, Option<String>, Vec<Res>, bool, bool);

/// The state one pass of the import fixpoint reads besides the index: what each module's imports
/// and globs already hold, and which modules the previous pass changed.
struct ImportPass<'a> {
    /// Whether a `use` whose reads are unchanged is skipped (always, but in tests).
    incremental: bool,
    seen_imports: &'a [HashMap<String, HashSet<Res>>],
    seen_globs: &'a [HashSet<Res>],
    dirty: &'a [bool],
}

/// What one path resolution learnt besides its result: whether it rested on a guess, and, when
/// asked for (`reads` is `Some`), every module whose names, imports or globs it read. The import
/// fixpoint uses the latter to re-resolve only the `use`s whose inputs changed (see
/// [`Index::resolve_imports`]).
#[derive(Default)]
struct Trace {
    guessed: bool,
    reads: Option<Vec<ModId>>,
}

impl Trace {
    fn recording(module: ModId) -> Trace {
        Trace {
            guessed: false,
            reads: Some(vec![module]),
        }
    }
}

impl Index {
    pub fn build(ws: &Workspace, loaded: Vec<LoadedUnit>) -> Index {
        Index::build_with(ws, loaded, true)
    }

    /// [`Index::build`]; `incremental: false` re-resolves every `use` on every pass of the
    /// import fixpoint (the reference the tests compare the incremental fixpoint against).
    fn build_with(ws: &Workspace, loaded: Vec<LoadedUnit>, incremental: bool) -> Index {
        let mut index = Index::default();
        // Units first so cross-unit references can be filled in by id.
        for unit in &ws.units {
            for dep in unit.deps.values() {
                if let DepTarget::Opaque(name) = dep {
                    index.macro_crates.insert(name.clone());
                }
            }
        }
        for (u, unit) in ws.units.iter().enumerate() {
            index.units.push(UnitIndex {
                root: usize::MAX,
                crate_name: unit.crate_name.clone(),
                package: unit.package,
                extern_names: unit.deps.clone(),
            });
            let _ = u;
        }
        // `extern crate dep;` binds the dependency's root module, which exists only once the
        // dependency's unit is added: a crate that sorts before its dependency (kanidm's
        // `kanidmd_core` before `kanidmd_lib`) would otherwise bind an unanalysed name.
        let mut extern_crates = Vec::new();
        index.reserve_for(&loaded);
        for lu in loaded {
            index.add_unit(lu, &mut extern_crates);
        }
        for (module, key, name) in extern_crates {
            let unit = index.modules[module].unit;
            let res = if name == "self" {
                vec![Res::Module(index.units[unit].root)]
            } else {
                index.extern_crate(unit, &name)
            };
            index.modules[module].imports.insert(key, res);
        }
        index.resolve_imports(incremental);
        index.resolve_impls();
        index.unit_deps = (0..index.units.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        index.trait_scopes = (0..index.modules.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        index.supertrait_refs = (0..index.types.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        index.external_impls_by_method = index
            .external_impls
            .keys()
            .map(|p| (p.clone(), std::sync::OnceLock::new()))
            .collect();
        index
    }

    /// The impls of std's `From` whose source type's last path segment is `name`, in impl
    /// order: the candidates for `x.into()` on a value of a type so named (the blanket `impl<T,
    /// U: From<T>> Into<U> for T` calls `U::from`). A superset: the caller compares the resolved
    /// source type.
    pub fn from_impls_named(&self, name: &str) -> &[ImplId] {
        self.from_impls
            .get_or_init(|| {
                let mut out: NameMap<Vec<ImplId>> = NameMap::default();
                for (iid, imp) in self.impls.iter().enumerate() {
                    let is_from = matches!(&imp.trait_ref,
                        Some(TraitRef::External(p)) if p == "std::convert::From" || p == "From");
                    let source = match imp.written_trait_args().first() {
                        Some(t) if is_from => t.peel_refs(),
                        _ => continue,
                    };
                    if let IrType::Path(p) = source {
                        if let Some(last) = p.segments.last() {
                            out.entry(last.name.to_string()).or_default().push(iid);
                        }
                    }
                }
                out
            })
            .get(name)
            .map_or(&[], Vec::as_slice)
    }

    /// The impls of `external_impls[p]` (in the same order) that may provide `method`: those
    /// with a fn of that name, and those of a local trait that has, or whose supertraits
    /// (transitively) have, a method of that name. The others provide no such method, so method
    /// lookup skips them: asking each impl of a std type for every method called on one (deno
    /// implements its own traits for `String`, `str`, `Vec`, ...) was a quarter of resolution.
    /// A superset of what lookup then accepts (it still checks each impl, and its supertrait
    /// walk is bounded in depth), so skipping the rest changes no answer.
    pub fn external_impls_with(&self, p: &str, method: &str) -> &[ImplId] {
        let Some(by_method) = self.external_impls_by_method.get(p) else {
            return &[];
        };
        by_method
            .get_or_init(|| {
                let mut out: NameMap<Vec<ImplId>> = NameMap::default();
                for &iid in self.external_impls.get(p).into_iter().flatten() {
                    let imp = &self.impls[iid];
                    let mut names: BTreeSet<&str> = imp.fns.keys().map(String::as_str).collect();
                    if let Some(TraitRef::Local(t)) = &imp.trait_ref {
                        self.trait_method_names(*t, &mut BTreeSet::new(), &mut names);
                    }
                    for n in names {
                        out.entry(n.to_string()).or_default().push(iid);
                    }
                }
                out
            })
            .get(method)
            .map_or(&[], Vec::as_slice)
    }

    /// The method names of trait `tr` and of its local supertraits, transitively.
    fn trait_method_names<'a>(
        &'a self,
        tr: TypeId,
        visited: &mut BTreeSet<TypeId>,
        names: &mut BTreeSet<&'a str>,
    ) {
        if !visited.insert(tr) {
            return;
        }
        if let TypeKind::Trait { methods, .. } = &self.types[tr].kind {
            names.extend(methods.keys().map(String::as_str));
        }
        for s in self.supertraits_of(tr) {
            if let TraitRef::Local(st) = s {
                self.trait_method_names(*st, visited, names);
            }
        }
    }

    /// The supertraits of trait `tr`, resolved in its module; empty for any other type. Method
    /// lookup asks for them on every miss in a trait with supertraits: resolving their paths each
    /// time (through glob imports) was a third of a warm deno run's CPU once `str`, slices and
    /// primitives became typed receivers.
    pub fn supertraits_of(&self, tr: TypeId) -> &[TraitRef] {
        self.supertrait_refs[tr].get_or_init(|| match &self.types[tr].kind {
            TypeKind::Trait { supertraits, .. } => supertraits
                .iter()
                .map(|s| self.resolve_trait(self.types[tr].module, s))
                .collect(),
            _ => Vec::new(),
        })
    }

    /// Reserves room for every unit's modules and items: grown one push at a time, the tables
    /// (200 000 functions on deno, each `FnDef` holding its IR inline) were reallocated and
    /// moved at every doubling, a sixth of the index stage's serial time in a profile.
    fn reserve_for(&mut self, loaded: &[LoadedUnit]) {
        let modules = loaded.iter().flat_map(|lu| &lu.modules);
        let (mut m, mut f, mut t, mut i, mut mac) = (0, 0, 0, 0, 0);
        for module in modules {
            m += 1;
            f += module.fns.len() + module.foreign_fns.len();
            f += module.impls.iter().map(|imp| imp.fns.len()).sum::<usize>();
            f += module
                .types
                .iter()
                .map(|ty| match &ty.kind {
                    IrItemKind::Trait { methods, .. } => methods.len(),
                    _ => 0,
                })
                .sum::<usize>();
            t += module.types.len();
            i += module.impls.len();
            mac += module.macros.len();
        }
        self.modules.reserve(m);
        self.fns.reserve(f);
        self.types.reserve(t);
        self.impls.reserve(i);
        self.macros.reserve(mac);
    }

    /// Adds one unit's modules and items; its `extern crate` declarations go to `extern_crates`
    /// (module, bound name, crate name), bound once every unit is in.
    fn add_unit(&mut self, lu: LoadedUnit, extern_crates: &mut Vec<(ModId, String, String)>) {
        let mut by_path: BTreeMap<Vec<String>, ModId> = BTreeMap::new();
        for m in lu.modules {
            let id = self.modules.len();
            let parent = if m.path.is_empty() {
                None
            } else {
                by_path.get(&m.path[..m.path.len() - 1]).copied()
            };
            if m.path.is_empty() {
                self.units[lu.unit].root = id;
            }
            by_path.insert(m.path.clone(), id);
            self.modules.push(Module {
                unit: lu.unit,
                path: m.path.clone(),
                parent,
                file: m.file as usize,
                items: NameMap::default(),
                uses: m.uses,
                imports: NameMap::default(),
                globs: Vec::new(),
                guessed_imports: BTreeSet::new(),
                guessed_globs: BTreeSet::new(),
                private_imports: BTreeSet::new(),
                private_globs: BTreeSet::new(),
            });
            if let Some(p) = parent {
                let name = m.path.last().cloned().unwrap_or_default();
                self.modules[p]
                    .items
                    .entry(name)
                    .or_default()
                    .push(Res::Module(id));
            }
            self.field_writes.extend(m.field_writes);
            self.mentions.extend(m.mentions);
            self.method_mentions.extend(m.method_mentions);
            for (name, alias) in m.extern_crates {
                let key = alias.clone().unwrap_or_else(|| name.clone());
                extern_crates.push((id, key, name));
            }
            for f in m.fns {
                let fid = self.push_fn(lu.unit, id, m.file as usize, FnOwner::Free, false, f);
                let name = self.fns[fid].ir.name.clone();
                self.modules[id]
                    .items
                    .entry(name)
                    .or_default()
                    .push(Res::Fn(fid));
            }
            for f in m.foreign_fns {
                let fid = self.push_fn(lu.unit, id, m.file as usize, FnOwner::Free, true, f);
                let name = self.fns[fid].ir.name.clone();
                self.modules[id]
                    .items
                    .entry(name)
                    .or_default()
                    .push(Res::Fn(fid));
            }
            for (name, ty) in m.values {
                self.modules[id]
                    .items
                    .entry(name)
                    .or_default()
                    .push(Res::Value(id, ty));
            }
            for t in m.types {
                let tid = self.types.len();
                let kind = match t.kind {
                    IrItemKind::Struct { fields, generics } => {
                        TypeKind::Struct { fields, generics }
                    }
                    IrItemKind::Enum { variants, generics } => {
                        TypeKind::Enum { variants, generics }
                    }
                    IrItemKind::Union => TypeKind::Union,
                    IrItemKind::TypeAlias { target, params } => TypeKind::Alias { target, params },
                    IrItemKind::Trait {
                        methods,
                        supertraits,
                        generics,
                        assoc_bounds,
                    } => {
                        self.types.push(TypeDef {
                            unit: lu.unit,
                            module: id,
                            name: t.name.clone(),
                            kind: TypeKind::Enum {
                                variants: Vec::new(),
                                generics: ThinVec::new(),
                            },
                            inherent: NameMap::default(),
                            inherent_impls: Vec::new(),
                            trait_impls: Vec::new(),
                            ref_trait_impls: Vec::new(),
                            derives: ThinVec::new(),
                        });
                        let mut by_name = NameMap::default();
                        for mf in methods {
                            let fid = self.push_fn(
                                lu.unit,
                                id,
                                m.file as usize,
                                FnOwner::Trait(tid),
                                false,
                                mf,
                            );
                            by_name.insert(self.fns[fid].ir.name.clone(), fid);
                        }
                        self.types[tid].kind = TypeKind::Trait {
                            methods: by_name,
                            supertraits,
                            generics,
                            assoc_bounds,
                        };
                        self.modules[id]
                            .items
                            .entry(t.name)
                            .or_default()
                            .push(Res::Type(tid));
                        continue;
                    }
                };
                self.types.push(TypeDef {
                    unit: lu.unit,
                    module: id,
                    name: t.name.clone(),
                    kind,
                    inherent: NameMap::default(),
                    inherent_impls: Vec::new(),
                    trait_impls: Vec::new(),
                    ref_trait_impls: Vec::new(),
                    derives: t.derives,
                });
                self.modules[id]
                    .items
                    .entry(t.name)
                    .or_default()
                    .push(Res::Type(tid));
            }
            for imp in m.impls {
                let iid = self.impls.len();
                self.impls.push(ImplDef {
                    unit: lu.unit,
                    module: id,
                    ir_self: imp.self_ty,
                    ir_trait: imp.trait_,
                    generics: imp.generics,
                    fns: NameMap::default(),
                    assoc_types: imp.assoc_types,
                    assoc_consts: imp.assoc_consts,
                    self_ty: Ty::Unknown,
                    trait_ref: None,
                });
                for f in imp.fns {
                    let fid =
                        self.push_fn(lu.unit, id, m.file as usize, FnOwner::Impl(iid), false, f);
                    let name = self.fns[fid].ir.name.clone();
                    self.impls[iid].fns.insert(name, fid);
                }
            }
            for mac in m.macros {
                self.macros_by_name
                    .entry(mac.name.clone())
                    .or_default()
                    .push(self.macros.len());
                self.macros.push(MacroDef {
                    unit: lu.unit,
                    module: id,
                    name: mac.name,
                    exported: mac.exported,
                    arms: mac.arms,
                });
            }
        }
    }

    fn push_fn(
        &mut self,
        unit: UnitId,
        module: ModId,
        file: FileId,
        owner: FnOwner,
        foreign: bool,
        ir: IrFn,
    ) -> FnId {
        self.fns.push(FnDef {
            unit,
            module,
            file,
            owner,
            foreign,
            ir: std::sync::Arc::new(ir),
        });
        self.fns.len() - 1
    }

    fn extern_crate(&self, unit: UnitId, name: &str) -> Vec<Res> {
        match self.units[unit].extern_names.get(name) {
            Some(DepTarget::Unit(u)) if self.units[*u].root != usize::MAX => {
                vec![Res::Module(self.units[*u].root)]
            }
            Some(DepTarget::Unit(u)) => {
                vec![Res::ExternalRoot(vec![self.units[*u].crate_name.clone()])]
            }
            Some(DepTarget::Opaque(n)) => vec![Res::ExternalRoot(vec![n.clone()])],
            None => match name {
                "std" | "core" | "alloc" => vec![Res::ExternalRoot(vec!["std".to_string()])],
                _ if name == self.units[unit].crate_name => {
                    vec![Res::Module(self.units[unit].root)]
                }
                _ => Vec::new(),
            },
        }
    }

    /// Resolves `use` declarations to a fixpoint: each pass resolves what the previous passes
    /// made reachable; chains through re-exports across crates settle in a few passes.
    ///
    /// Near-linear by construction: a pass costs at most one path resolution per `use`,
    /// membership tests are hash-set lookups (not scans of the growing lists), and guesses never
    /// feed guesses, so the values only grow along chains written in the source and the passes
    /// settle.
    ///
    /// Incremental: a resolution is a function of the state (imports, globs, guesses; items never
    /// change) of the modules it read, which it records ([`Trace`]). A `use` none of whose read
    /// modules changed in the last pass's updates would resolve as before, and what it resolved
    /// to is already recorded (the sets only grow), so it would push no update: it is not resolved
    /// again. The updates, their order and the number of passes are those of re-resolving every
    /// `use` on every pass; the later passes resolve only the `use`s that read what changed.
    ///
    /// Each pass resolves the modules' `use`s in parallel against the state left by the previous
    /// pass (nothing is written during a pass) and collects the updates in module order, so the
    /// result does not depend on the thread count.
    fn resolve_imports(&mut self, incremental: bool) {
        // Per module: what `imports` and `globs` already hold, for O(1) "is it new" checks.
        let mut seen_imports: Vec<HashMap<String, HashSet<Res>>> = self
            .modules
            .iter()
            .map(|m| {
                m.imports
                    .iter()
                    .map(|(n, rs)| (n.clone(), rs.iter().cloned().collect()))
                    .collect()
            })
            .collect();
        let mut seen_globs: Vec<HashSet<Res>> = self
            .modules
            .iter()
            .map(|m| m.globs.iter().cloned().collect())
            .collect();
        // Names bound only by private `use`s: known from the items alone, so the fixpoint itself
        // already resolves through globs without them.
        for m in &mut self.modules {
            let mut public = BTreeSet::new();
            let mut private = BTreeSet::new();
            for u in &m.uses {
                if let Some((_, Some(name))) = use_binding(u) {
                    if u.public {
                        public.insert(name);
                    } else {
                        private.insert(name);
                    }
                }
            }
            m.private_imports = private.difference(&public).cloned().collect();
        }
        let mut public_globs: Vec<HashSet<Res>> = vec![HashSet::new(); self.modules.len()];
        // Per module and `use`: the modules its last resolution read (`None`: never resolved).
        let mut reads: Vec<Vec<Option<Box<[ModId]>>>> = self
            .modules
            .iter()
            .map(|m| vec![None; m.uses.len()])
            .collect();
        // The modules the last pass's updates changed.
        let mut dirty = vec![false; self.modules.len()];
        for _pass in 0..MAX_RESOLVE_DEPTH {
            let this = &*self;
            let pass = ImportPass {
                incremental,
                seen_imports: &seen_imports,
                seen_globs: &seen_globs,
                dirty: &dirty,
            };
            let per_module: Vec<(Vec<ImportUpdate>, usize)> = this
                .modules
                .par_iter()
                .zip(reads.par_iter_mut())
                .enumerate()
                .map(|(mid, (m, reads))| this.resolve_module_uses(mid, m, reads, &pass))
                .collect();
            let mut updates: Vec<ImportUpdate> = Vec::new();
            for (module_updates, work) in per_module {
                self.import_work += work;
                updates.extend(module_updates);
            }
            if updates.is_empty() {
                break;
            }
            dirty.iter_mut().for_each(|d| *d = false);
            for (mid, name, res, guessed, public) in updates {
                dirty[mid] = true;
                if public && name.is_none() {
                    public_globs[mid].extend(res.iter().cloned());
                }
                let module = &mut self.modules[mid];
                match name {
                    Some(n) => {
                        if guessed {
                            module.guessed_imports.insert(n.clone());
                        }
                        let seen = seen_imports[mid].entry(n.clone()).or_default();
                        let entry = module.imports.entry(n).or_default();
                        for r in res {
                            if seen.insert(r.clone()) {
                                entry.push(r);
                            }
                        }
                    }
                    None => {
                        for r in res {
                            if guessed {
                                if let Res::External(p) | Res::ExternalRoot(p) = &r {
                                    module.guessed_globs.insert(p.clone());
                                }
                            }
                            if seen_globs[mid].insert(r.clone()) {
                                module.globs.push(r);
                            }
                        }
                    }
                }
            }
        }
        for (mid, m) in self.modules.iter_mut().enumerate() {
            m.private_globs = m
                .globs
                .iter()
                .filter(|g| !public_globs[mid].contains(*g))
                .filter_map(|g| match g {
                    Res::Module(gm) => Some(*gm),
                    _ => None,
                })
                .collect();
        }
    }

    /// One pass of [`Index::resolve_imports`] over the `use`s of module `mid`: the updates they
    /// yield (in `use` order) and the work done. A `use` whose last resolution read no module the
    /// previous pass changed is skipped; the others are resolved and their reads recorded.
    fn resolve_module_uses(
        &self,
        mid: ModId,
        m: &Module,
        reads: &mut [Option<Box<[ModId]>>],
        pass: &ImportPass<'_>,
    ) -> (Vec<ImportUpdate>, usize) {
        let mut updates = Vec::new();
        let mut work = 0;
        for (u, last_reads) in m.uses.iter().zip(reads.iter_mut()) {
            if let Some(read) = last_reads.as_deref().filter(|_| pass.incremental) {
                if !read.iter().any(|r| pass.dirty[*r]) {
                    continue;
                }
            }
            let Some((path, name)) = use_binding(u) else {
                continue;
            };
            work += 1;

            // `use async_trait::async_trait;`: a path that starts with the name it binds, that
            // of an extern crate, starts at the crate, as in rustc (an import never names itself;
            // another local name shadowing the crate would be ambiguous). Looked up in the
            // module, the first segment would find this very import and the result would grow
            // by one segment per pass, so the fixpoint would never settle and every pass up to
            // the limit would run.
            let names_own_crate = !u.leading_colon
                && name.as_deref() == Some(path[0].as_str())
                && !self.extern_crate(m.unit, &path[0]).is_empty();
            // The module itself is always among the reads: whether a result is new depends on
            // its imports, globs and guesses.
            let mut trace = Trace::recording(mid);
            let res = self.resolve_path_tracked(
                mid,
                path,
                u.leading_colon || names_own_crate,
                0,
                &mut trace,
            );
            let mut read = trace.reads.unwrap_or_default();
            read.sort_unstable();
            read.dedup();
            *last_reads = Some(read.into_boxed_slice());
            let guessed = trace.guessed;
            work += res.len();
            if res.is_empty() {
                continue;
            }
            // Re-resolved every pass: a name first seen through a half-resolved chain (only the
            // module of that name) gains the fn later.
            let new = match &name {
                Some(n) => {
                    let seen = pass.seen_imports[mid].get(n.as_str());
                    res.iter().any(|r| !seen.is_some_and(|s| s.contains(r)))
                }
                None => res.iter().any(|r| !pass.seen_globs[mid].contains(r)),
            };
            let newly_guessed = guessed
                && match &name {
                    Some(n) => !m.guessed_imports.contains(n),
                    None => res.iter().any(|r| match r {
                        Res::External(p) | Res::ExternalRoot(p) => !m.guessed_globs.contains(p),
                        _ => false,
                    }),
                };
            if new || newly_guessed {
                updates.push((mid, name, res, guessed, u.public));
            }
        }
        (updates, work)
    }

    /// Resolves every impl's self type and trait, then files the impl under them. The
    /// resolutions read only modules and type definitions' kinds, which filing never changes, so
    /// they run in parallel first; filing then runs in impl order as before.
    fn resolve_impls(&mut self) {
        let this = &*self;
        let resolved: Vec<(Ty, Option<TraitRef>)> = this
            .impls
            .par_iter()
            .map(|imp| {
                let self_ty = this.resolve_type(imp.module, &imp.ir_self, &imp.generics, None);
                let trait_ref = imp
                    .ir_trait
                    .as_ref()
                    .map(|p| this.resolve_trait(imp.module, p));
                (self_ty, trait_ref)
            })
            .collect();
        for (iid, (self_ty, trait_ref)) in resolved.into_iter().enumerate() {
            match (&self_ty, &trait_ref) {
                (Ty::Adt(TyCon::Local(tid), _), None) => {
                    let names: Vec<(String, FnId)> = self.impls[iid]
                        .fns
                        .iter()
                        .map(|(n, f)| (n.clone(), *f))
                        .collect();
                    for (n, f) in names {
                        self.types[*tid].inherent.entry(n).or_default().push(f);
                    }
                    self.types[*tid].inherent_impls.push(iid);
                }
                (Ty::Adt(TyCon::Local(tid), _), Some(_)) => self.types[*tid].trait_impls.push(iid),
                (Ty::Ref(inner), Some(tr)) => match &**inner {
                    Ty::Adt(TyCon::Local(tid), _) => self.types[*tid].ref_trait_impls.push(iid),
                    // `impl<'a> FromSql<'a> for &'a str` (postgres-types): found for a `str`
                    // receiver by auto-ref, and by `<&str as FromSql>::from_sql(..)`.
                    inner @ (Ty::Adt(TyCon::External(_), _) | Ty::Str | Ty::Slice(_))
                        if matches!(tr, TraitRef::Local(_)) =>
                    {
                        let name = inner.std_owner_name().unwrap_or("slice").to_string();
                        self.external_impls.entry(name).or_default().push(iid)
                    }
                    _ => {}
                },
                (Ty::Param { .. }, Some(_)) => self.blanket_impls.push(iid),
                (Ty::Adt(TyCon::External(p), _), Some(TraitRef::Local(_))) => {
                    self.external_impls.entry(p.clone()).or_default().push(iid)
                }
                // Extension traits on `str` and slices, under the names method lookup gives
                // them (`str::len`, `slice::len`).
                (Ty::Str, Some(TraitRef::Local(_))) => self
                    .external_impls
                    .entry("str".into())
                    .or_default()
                    .push(iid),
                (Ty::Slice(_), Some(TraitRef::Local(_))) => self
                    .external_impls
                    .entry("slice".into())
                    .or_default()
                    .push(iid),
                _ => {}
            }
            if let Some(TraitRef::Local(t)) = &trait_ref {
                self.trait_impls.entry(*t).or_default().push(iid);
            }
            self.impls[iid].self_ty = self_ty;
            self.impls[iid].trait_ref = trait_ref;
        }
        for &iid in &self.blanket_impls {
            let imp = &self.impls[iid];
            let mut names: BTreeSet<&String> = imp.fns.keys().collect();
            if let Some(TraitRef::Local(t)) = &imp.trait_ref {
                self.traits_with_blanket.insert(*t);
                if let TypeKind::Trait { methods, .. } = &self.types[*t].kind {
                    names.extend(
                        methods
                            .iter()
                            .filter(|(_, f)| self.fns[**f].ir.body.is_some())
                            .map(|(n, _)| n),
                    );
                }
            }
            for n in names {
                self.blanket_by_method
                    .entry(n.clone())
                    .or_default()
                    .push(iid);
            }
        }
    }

    /// Names visible in a module without the prelude: items, imports, then globs. `guessed` is
    /// set when a name found rests on a guess (see `Module::guessed_imports`).
    fn lookup_in_module(
        &self,
        module: ModId,
        name: &str,
        depth: usize,
        trace: &mut Trace,
    ) -> Vec<Res> {
        let mut found = Vec::new();
        let mut visited = BTreeSet::new();
        self.lookup_via_globs(
            module,
            module,
            name,
            depth,
            &mut visited,
            &mut found,
            &mut trace.guessed,
        );
        // The walk reads the state of exactly the modules it visits (each once).
        if let Some(reads) = &mut trace.reads {
            reads.extend(visited);
        }
        found
    }

    /// Whether `module` is `ancestor` or one of its descendants: it sees `ancestor`'s private
    /// names.
    pub fn is_within(&self, module: ModId, ancestor: ModId) -> bool {
        let mut m = Some(module);
        while let Some(cur) = m {
            if cur == ancestor {
                return true;
            }
            m = self.modules[cur].parent;
        }
        false
    }

    /// Items and imports of `module`, else of the modules it glob-imports, each visited once:
    /// `use super::*` in a child and `pub use child::*` in its parent form cycles, and without
    /// the visited set the walk is exponential in their number.
    #[allow(clippy::too_many_arguments)]
    fn lookup_via_globs(
        &self,
        start: ModId,
        module: ModId,
        name: &str,
        depth: usize,
        visited: &mut BTreeSet<ModId>,
        found: &mut Vec<Res>,
        guessed: &mut bool,
    ) {
        if !visited.insert(module) {
            return;
        }
        let m = &self.modules[module];
        // Private `use`s of a module reached through a glob are seen only from inside it.
        let sees_private = module == start || self.is_within(start, module);
        let imported = m
            .imports
            .get(name)
            .filter(|_| sees_private || !m.private_imports.contains(name));
        if imported.is_some() && m.guessed_imports.contains(name) {
            *guessed = true;
        }
        // Items and imports live in different namespaces (`mod spawn` beside `pub use x::spawn`
        // for a fn): both are candidates.
        let before = found.len();
        for r in m
            .items
            .get(name)
            .into_iter()
            .flatten()
            .chain(imported.into_iter().flatten())
        {
            if !found.contains(r) {
                found.push(r.clone());
            }
        }
        let only_macros = found[before..].iter().all(|r| match r {
            Res::External(p) | Res::ExternalRoot(p) => {
                p.first().is_some_and(|c| self.macro_crates.contains(c))
            }
            _ => false,
        });
        if (found.len() > before && !only_macros) || depth >= MAX_RESOLVE_DEPTH {
            return;
        }
        for g in &m.globs {
            if let Res::Module(gm) = g {
                if sees_private || !m.private_globs.contains(gm) {
                    self.lookup_via_globs(start, *gm, name, depth + 1, visited, found, guessed);
                }
            }
        }
    }

    /// A later path segment inside a module: its names, then its globs of unanalysed modules.
    fn lookup_segment(
        &self,
        module: ModId,
        name: &str,
        depth: usize,
        trace: &mut Trace,
    ) -> Vec<Res> {
        match name {
            "super" => {
                return self.modules[module]
                    .parent
                    .map(Res::Module)
                    .into_iter()
                    .collect()
            }
            "self" => return vec![Res::Module(module)],
            _ => {}
        }
        let found = self.lookup_in_module(module, name, depth, trace);
        if found.is_empty() {
            self.external_glob(module, name, trace)
        } else {
            found
        }
    }

    /// The first segment of a path: module scope, then extern crates, then std's prelude, then
    /// globs of unanalysed modules (`use std::fs::*`).
    fn resolve_first(
        &self,
        module: ModId,
        name: &str,
        depth: usize,
        trace: &mut Trace,
    ) -> Vec<Res> {
        let unit = self.modules[module].unit;
        match name {
            "crate" => return vec![Res::Module(self.units[unit].root)],
            "self" => return vec![Res::Module(module)],
            "super" => {
                return self.modules[module]
                    .parent
                    .map(Res::Module)
                    .into_iter()
                    .collect()
            }
            "Self" => return Vec::new(),
            _ => {}
        }
        let local = self.lookup_in_module(module, name, depth, trace);
        if !local.is_empty() {
            return local;
        }
        let ext = self.extern_crate(unit, name);
        if !ext.is_empty() {
            return ext;
        }
        if let Some(p) = prelude_path(name) {
            return vec![Res::External(p)];
        }
        self.external_glob(module, name, trace)
    }

    /// `use std::fs::*` in a module: a name not found otherwise may come from that glob. Every
    /// such glob is a candidate (we cannot list an unanalysed module's names); never used for
    /// names of std's prelude, nor from a glob whose own path is a guess. Sets `guessed`. Every
    /// caller has just looked `name` up in `module`, so `module` is among the trace's reads.
    fn external_glob(&self, module: ModId, name: &str, trace: &mut Trace) -> Vec<Res> {
        if prelude_path(name).is_some() {
            return Vec::new();
        }
        let m = &self.modules[module];
        let found: Vec<Res> = m
            .globs
            .iter()
            .filter_map(|g| match g {
                Res::ExternalRoot(p) | Res::External(p) if !m.guessed_globs.contains(p) => {
                    let mut q = p.clone();
                    q.push(name.to_string());
                    Some(Res::External(canonical_external(q)))
                }
                _ => None,
            })
            .collect();
        if !found.is_empty() {
            trace.guessed = true;
        }
        found
    }

    /// Resolves a path written in `module` to every item it may name. Segments may be borrowed
    /// (`&str`): the type and trait resolutions of every resolved body used to copy each path's
    /// segments into fresh `String`s first.
    pub fn resolve_path_in<S: AsRef<str>>(
        &self,
        module: ModId,
        segs: &[S],
        leading_colon: bool,
        depth: usize,
    ) -> Vec<Res> {
        self.resolve_path_tracked(module, segs, leading_colon, depth, &mut Trace::default())
    }

    /// `resolve_path_in`, also saying (in `trace.guessed`) whether any segment rested on a guess
    /// and, if asked, which modules' state it read.
    fn resolve_path_tracked<S: AsRef<str>>(
        &self,
        module: ModId,
        segs: &[S],
        leading_colon: bool,
        depth: usize,
        trace: &mut Trace,
    ) -> Vec<Res> {
        if segs.is_empty() || depth > MAX_RESOLVE_DEPTH {
            return Vec::new();
        }
        let first = segs[0].as_ref();
        let mut current: Vec<Res> = if leading_colon {
            self.extern_crate(self.modules[module].unit, first)
        } else {
            self.resolve_first(module, first, depth + 1, trace)
        };
        for seg in segs[1..].iter().map(AsRef::as_ref) {
            let mut next = Vec::new();
            for r in &current {
                match r {
                    Res::Module(m) => {
                        for x in self.lookup_segment(*m, seg, depth + 1, trace) {
                            if !next.contains(&x) {
                                next.push(x);
                            }
                        }
                    }
                    Res::ExternalRoot(p) | Res::External(p) => {
                        let mut q = p.clone();
                        q.push(seg.to_string());
                        let q = canonical_external(q);
                        let r = if matches!(r, Res::ExternalRoot(_)) {
                            Res::ExternalRoot(q)
                        } else {
                            Res::External(q)
                        };
                        next.push(r);
                    }
                    // `Type::assoc` is handled by the caller, which knows the receiver context.
                    _ => {}
                }
            }
            if next.is_empty() {
                return Vec::new();
            }
            current = next;
        }
        current
            .into_iter()
            .map(|r| match r {
                Res::ExternalRoot(p) => Res::External(p),
                other => other,
            })
            .collect()
    }

    pub fn resolve_trait(&self, module: ModId, p: &IrPath) -> TraitRef {
        let names: Vec<&str> = p.segments.iter().map(|s| s.name.as_str()).collect();
        let found = self.resolve_path_in(module, &names, p.leading_colon, 0);
        // A trait of the graph first: a derive macro of the same name may be found beside it.
        for r in &found {
            if let Res::Type(t) = r {
                if matches!(self.types[*t].kind, TypeKind::Trait { .. }) {
                    return TraitRef::Local(*t);
                }
            }
        }
        for r in found {
            if let Res::External(p) = r {
                return TraitRef::External(p.join("::"));
            }
        }
        TraitRef::External(names.join("::"))
    }

    /// Resolves a written type in `module`, with `generics` in scope and `self_ty` for `Self`.
    pub fn resolve_type(
        &self,
        module: ModId,
        t: &IrType,
        generics: &[IrGeneric],
        self_ty: Option<&Ty>,
    ) -> Ty {
        self.resolve_type_depth(module, t, generics, self_ty, 0)
    }

    fn resolve_type_depth(
        &self,
        module: ModId,
        t: &IrType,
        generics: &[IrGeneric],
        self_ty: Option<&Ty>,
        depth: usize,
    ) -> Ty {
        if depth > 8 {
            return Ty::Unknown;
        }
        let rec = |t: &IrType| self.resolve_type_depth(module, t, generics, self_ty, depth + 1);
        match t {
            IrType::Ref(inner) => Ty::Ref(Box::new(rec(inner))),
            // Raw pointers: std's `pointer` type (`rules/std-types.toml`). Unlike references
            // they do not auto-deref for method calls, so `p.add(1)` is the pointer's method.
            IrType::Ptr(inner) => Ty::external(crate::ty::POINTER, vec![rec(inner)]),
            IrType::Slice(inner) | IrType::Array(inner) => Ty::Slice(Box::new(rec(inner))),
            IrType::Tuple(elems) => Ty::Tuple(elems.iter().map(rec).collect()),
            IrType::ImplTrait(bounds) | IrType::DynTrait(bounds) => Ty::Dyn(
                bounds
                    .iter()
                    .map(|b| self.resolve_trait(module, b))
                    .collect(),
            ),
            IrType::Path(p) => {
                if let Some(q) = &p.qself {
                    // `<T as Trait>::Assoc`: known by the bounds the trait gives `Assoc`.
                    let at = p.qself_position as usize;
                    if at == 0 || p.segments.len() != at + 1 {
                        return Ty::Unknown;
                    }
                    let assoc = &p.segments[at];
                    let trait_path = IrPath {
                        leading_colon: p.leading_colon,
                        segments: p.segments[..at].iter().cloned().collect(),
                        qself: None,
                        qself_position: 0,
                    };
                    let trait_ref = self.resolve_trait(module, &trait_path);
                    let base = match &**q {
                        IrType::Path(qp) => qp.single().unwrap_or("_").to_string(),
                        _ => "_".to_string(),
                    };
                    return self.projection(&base, &[trait_ref], &assoc.name);
                }
                if let Some(name) = p.single() {
                    if name == "Self" {
                        return self_ty.cloned().unwrap_or(Ty::Unknown);
                    }
                    if name == "str" {
                        return Ty::Str;
                    }
                    if let Some(g) = generics.iter().find(|g| g.name == name) {
                        // The bounds' arguments are resolved only near the top: `T: Add<T> +
                        // Sub<T>` would otherwise resolve `T` again in each argument, at every
                        // level down to the depth limit.
                        let bound_args = if depth < MAX_BOUND_ARG_DEPTH {
                            g.bounds
                                .iter()
                                .map(|b| {
                                    let last = b.segments.last();
                                    last.map(|s| s.generics.iter().map(rec).collect())
                                        .unwrap_or_default()
                                })
                                .collect()
                        } else {
                            Vec::new()
                        };
                        return Ty::Param {
                            name: name.to_string(),
                            bounds: g
                                .bounds
                                .iter()
                                .map(|b| self.resolve_trait(module, b))
                                .collect(),
                            bound_args,
                        };
                    }
                }
                let args: Vec<Ty> = p
                    .segments
                    .last()
                    .map(|s| s.generics.iter().map(rec).collect())
                    .unwrap_or_default();
                let names: Vec<&str> = p.segments.iter().map(|s| s.name.as_str()).collect();
                if names.len() == 2 && p.segments[0].generics.is_empty() {
                    if names[0] == "Self" {
                        // `Self::Target` of a concrete impl is found by the caller, which
                        // knows the impl; of a generic `Self` (a trait's own signatures), by
                        // the trait's bounds on it.
                        return match self_ty {
                            Some(Ty::Param { bounds, .. } | Ty::Dyn(bounds)) => {
                                self.projection("Self", bounds, names[1])
                            }
                            _ => Ty::Unknown,
                        };
                    }
                    if let Some(g) = generics.iter().find(|g| g.name == names[0]) {
                        let bounds: Vec<TraitRef> = g
                            .bounds
                            .iter()
                            .map(|b| self.resolve_trait(module, b))
                            .collect();
                        return self.projection(names[0], &bounds, names[1]);
                    }
                }
                for r in self.resolve_path_in(module, &names, p.leading_colon, 0) {
                    match r {
                        Res::Type(tid) => {
                            if let TypeKind::Alias { target, params } = &self.types[tid].kind {
                                return self.expand_alias(tid, target, params, args, depth);
                            }
                            return Ty::Adt(TyCon::Local(tid), args);
                        }
                        Res::External(path) => return Ty::external(path.join("::"), args),
                        _ => {}
                    }
                }
                // Primitive types come last, as in rustc (an item named `u8` shadows them):
                // external, by their own name (`u64::checked_add`).
                match p.single() {
                    Some(name) if crate::ty::is_primitive(name) => Ty::external(name, Vec::new()),
                    _ => Ty::Unknown,
                }
            }
            _ => Ty::Unknown,
        }
    }

    /// `T::Assoc`, `Self::Assoc` of a generic `Self`, or `<T as Trait>::Assoc`, where a trait
    /// of the graph among `traits` (or their supertraits) declares `type Assoc: Bounds`: a
    /// value of that type is known by those bounds, as a generic parameter is (brotli's
    /// `AllocF::AllocatedMemory`, bounded by `AllocatedSlice<T>`, answers `.slice_mut()` through
    /// the supertrait `SliceWrapperMut`). Unknown when no such declaration gives bounds.
    fn projection(&self, base: &str, traits: &[TraitRef], assoc: &str) -> Ty {
        let local = |t: &TraitRef| match t {
            TraitRef::Local(id) => Some(*id),
            TraitRef::External(_) => None,
        };
        let mut stack: Vec<TypeId> = traits.iter().filter_map(local).collect();
        let mut seen: Vec<TypeId> = Vec::new();
        // Supertrait chains are short; the cap only guards against a cyclic (invalid) graph.
        while let Some(tr) = stack.pop() {
            if seen.contains(&tr) || seen.len() > 32 {
                continue;
            }
            seen.push(tr);
            let TypeKind::Trait {
                assoc_bounds,
                supertraits,
                ..
            } = &self.types[tr].kind
            else {
                continue;
            };
            let module = self.types[tr].module;
            if let Some((_, bounds)) = assoc_bounds.iter().find(|(n, _)| n == assoc) {
                return Ty::Param {
                    name: format!("{base}::{assoc}"),
                    bounds: bounds
                        .iter()
                        .map(|b| self.resolve_trait(module, b))
                        .collect(),
                    bound_args: Vec::new(),
                };
            }
            // Not `supertraits_of`: types are also resolved while the index is built, before
            // its per-trait cache exists.
            stack.extend(
                supertraits
                    .iter()
                    .map(|s| self.resolve_trait(module, s))
                    .filter_map(|t| local(&t)),
            );
        }
        Ty::Unknown
    }

    /// A use of a type alias (`Result<File>` for `type Result<T, E = Error> =
    /// std::result::Result<T, E>`): the target with the alias's parameters bound to the written
    /// arguments, or to their defaults (resolved where the alias is declared).
    fn expand_alias(
        &self,
        alias: TypeId,
        target: &IrType,
        params: &[(String, Option<IrType>)],
        args: Vec<Ty>,
        depth: usize,
    ) -> Ty {
        let module = self.types[alias].module;
        let generics: Vec<IrGeneric> = params
            .iter()
            .map(|(name, _)| IrGeneric {
                name: name.clone(),
                bounds: ThinVec::new(),
            })
            .collect();
        let expanded = self.resolve_type_depth(module, target, &generics, None, depth + 1);
        let mut args = args.into_iter();
        let subst: crate::infer::Subst = params
            .iter()
            .filter_map(|(name, default)| {
                let ty = match args.next() {
                    Some(t) => t,
                    None => {
                        self.resolve_type_depth(module, default.as_ref()?, &[], None, depth + 1)
                    }
                };
                Some((name.clone(), ty))
            })
            .collect();
        crate::infer::apply(&expanded, &subst)
    }

    /// The display name of a function: `crate::module::f`, `crate::m::Type::f`,
    /// `<crate::m::Type as Trait>::f`, `crate::m::Trait::f` (default methods).
    pub fn fn_display(&self, f: FnId) -> String {
        let def = &self.fns[f];
        let module = self.module_display(def.module);
        match def.owner {
            FnOwner::Free => format!("{module}::{}", def.ir.name),
            FnOwner::Trait(t) => format!("{}::{}", self.type_display(t), def.ir.name),
            FnOwner::Impl(i) => {
                let imp = &self.impls[i];
                let self_name = self.ty_display(&imp.self_ty, &imp.ir_self, imp.module);
                match &imp.trait_ref {
                    None => format!("{self_name}::{}", def.ir.name),
                    Some(tr) => {
                        let tn = match tr {
                            TraitRef::Local(t) => self.types[*t].name.clone(),
                            TraitRef::External(p) => p.rsplit("::").next().unwrap_or(p).to_string(),
                        };
                        format!("<{self_name} as {tn}>::{}", def.ir.name)
                    }
                }
            }
        }
    }

    fn ty_display(&self, ty: &Ty, written: &IrType, module: ModId) -> String {
        match ty {
            Ty::Adt(TyCon::Local(t), _) => self.type_display(*t),
            Ty::Adt(TyCon::External(p), _) => p.clone(),
            // `impl Widget for &Block`: `<&app::Block as Widget>::render`.
            Ty::Ref(inner) => match written {
                IrType::Ref(w) => format!("&{}", self.ty_display(inner, w, module)),
                _ => format!("{}::<impl>", self.module_display(module)),
            },
            _ => match written {
                IrType::Path(p) => format!("{}::{}", self.module_display(module), p.display()),
                _ => format!("{}::<impl>", self.module_display(module)),
            },
        }
    }

    pub fn type_display(&self, t: TypeId) -> String {
        format!(
            "{}::{}",
            self.module_display(self.types[t].module),
            self.types[t].name
        )
    }

    pub fn module_display(&self, m: ModId) -> String {
        let module = &self.modules[m];
        let mut s = self.units[module.unit].crate_name.clone();
        // An included file's hidden module (`include#0`, `load::Loader::load_include`) is its
        // including module's items: not shown.
        for p in module.path.iter().filter(|p| !p.starts_with("include#")) {
            s.push_str("::");
            s.push_str(p);
        }
        s
    }

    /// The macro a path names, from the invoking unit or the crate the path names.
    pub fn find_macro(&self, module: ModId, path: &IrPath) -> Option<usize> {
        let name = path.segments.last()?.name.as_str();
        let unit = self.modules[module].unit;
        let target_unit = if path.segments.len() >= 2 {
            let first = &path.segments[0].name;
            match self.units[unit].extern_names.get(first.as_str()) {
                Some(DepTarget::Unit(u)) => Some(*u),
                _ if first == "crate" || first == "self" || first == "super" => Some(unit),
                _ => None,
            }
        } else {
            None
        };
        let candidates = self
            .macros_by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|&i| (i, &self.macros[i]));
        match target_unit {
            Some(u) => candidates
                .filter(|(_, m)| m.unit == u)
                .map(|(i, _)| i)
                .next(),
            None => {
                let own = candidates.clone().find(|(_, m)| m.unit == unit);
                if let Some((i, _)) = own {
                    return Some(i);
                }
                let deps: BTreeSet<usize> = self.units[unit]
                    .extern_names
                    .values()
                    .filter_map(|d| match d {
                        DepTarget::Unit(u) => Some(*u),
                        _ => None,
                    })
                    .collect();
                candidates
                    .filter(|(_, m)| m.exported && deps.contains(&m.unit))
                    .map(|(i, _)| i)
                    .next()
            }
        }
    }
}

/// What a `use` binds: the path it resolves and the name it binds (`None` for a glob); `None`
/// for empty paths. `use Trait as _` binds the name `_`, which no path can name: it is kept only
/// so the trait is in scope for method calls (`scope.rs`).
fn use_binding(u: &IrUse) -> Option<(&[String], Option<String>)> {
    let (path, name): (&[String], Option<String>) = if u.glob {
        (&u.path[..], None)
    } else if u.path.last().is_some_and(|l| l == "self") {
        let p = &u.path[..u.path.len() - 1];
        let name = u
            .alias
            .clone()
            .unwrap_or_else(|| p.last().cloned().unwrap_or_default());
        (p, Some(name))
    } else {
        let name = u
            .alias
            .clone()
            .unwrap_or_else(|| u.path.last().cloned().unwrap_or_default());
        (&u.path[..], Some(name))
    };
    if path.is_empty() {
        None
    } else {
        Some((path, name))
    }
}

#[cfg(test)]
mod tests {
    use crate::discover::{DepTarget, SourceKind};
    use crate::index::{Index, Res};
    use crate::testutil::{index_of, module_named, scratch_workspace};

    /// `use pin_project::pin_project;` naming an unanalysed crate (a proc macro) binds the crate's
    /// item once; it used to resolve through itself, one segment longer on every pass, so the
    /// import fixpoint ran to its limit on every graph with such an import.
    #[test]
    fn an_import_named_after_its_crate_starts_at_the_crate() {
        let (mut ws, _scratch) = scratch_workspace(
            "index-self-named",
            "use pin_project::pin_project;\nmod inner { pub use pin_project::pin_project; }\n",
            SourceKind::Workspace,
            false,
        );
        ws.units[0].deps.insert(
            "pin_project".into(),
            DepTarget::Opaque("pin_project".into()),
        );
        let load = crate::load::load_unit(&ws, 0);
        let index = Index::build(&ws, vec![load.loaded]);
        let expected = vec![Res::External(vec![
            "pin_project".to_string(),
            "pin_project".to_string(),
        ])];
        for m in &index.modules {
            assert_eq!(
                m.imports.get("pin_project"),
                Some(&expected),
                "{:?}",
                m.path
            );
        }
    }

    /// rust-playground's `orchestrator::coordinator` shape: a glob of an unanalysed module beside
    /// glob imports of names nothing defines (modules a derive macro generates). Each of those
    /// names is guessed to live in the unanalysed module; guesses used to be extended by further
    /// guesses, so the globs grew by a factor per pass and the run never finished.
    fn guessed_globs(k: usize) -> String {
        let mut src = String::from("use std::io::prelude::*;\n");
        for i in 0..k {
            src.push_str(&format!("use generated_{i}::*;\n"));
        }
        src.push_str("pub fn f() {}\n");
        src
    }

    /// A long chain of glob re-exports over a wide module, the other shape that made the
    /// fixpoint's list scans quadratic.
    fn glob_reexport_chain(width: usize) -> String {
        let mut src = String::from("pub mod m0 {\n");
        for i in 0..width {
            src.push_str(&format!(
                "    pub fn f{i}() {{}}\n    pub use std::fs::read as r{i};\n"
            ));
        }
        src.push_str("}\n");
        for m in 1..8 {
            src.push_str(&format!(
                "pub mod m{m} {{ pub use super::m{}::*; }}\n",
                m - 1
            ));
        }
        src.push_str("use m7::*;\n");
        src
    }

    #[test]
    fn import_fixpoint_work_grows_linearly_with_guessed_globs() {
        let small = index_of("index-guess-8", &guessed_globs(8));
        let large = index_of("index-guess-16", &guessed_globs(16));
        // One resolution per `use` per pass plus the values it yields: a few passes of k uses,
        // one guess each.
        assert!(
            large.import_work <= 2 * small.import_work + 8,
            "work {} for 8 globs, {} for 16",
            small.import_work,
            large.import_work
        );
        assert!(large.import_work <= 10 * 17, "work {}", large.import_work);
        // Each unknown name is guessed once, from the real glob only; no guess on a guess.
        let root = &large.modules[large.units[0].root];
        assert_eq!(root.globs.len(), 17, "{:?}", root.globs);
        assert!(root.globs.iter().all(|g| match g {
            Res::External(p) => p.len() <= 4,
            _ => true,
        }));
        assert_eq!(root.guessed_globs.len(), 16);
    }

    #[test]
    fn import_fixpoint_work_grows_linearly_with_reexport_width() {
        let small = index_of("index-chain-200", &glob_reexport_chain(200));
        let large = index_of("index-chain-400", &glob_reexport_chain(400));
        assert!(
            large.import_work <= 2 * small.import_work + 16,
            "work {} for width 200, {} for 400",
            small.import_work,
            large.import_work
        );
    }

    /// A guess still resolves what it should: `use std::fs::*; read(..)` names `std::fs::read`.
    #[test]
    fn a_name_from_an_unanalysed_glob_is_still_guessed_once() {
        let index = index_of(
            "index-guess-once",
            "use std::fs::*;\nuse sub::*;\npub fn f() {}\n",
        );
        let root = &index.modules[index.units[0].root];
        assert!(root.globs.contains(&Res::External(vec![
            "std".into(),
            "fs".into(),
            "sub".into()
        ])));
        let mut trace = super::Trace::default();
        let found = index.resolve_path_tracked(
            index.units[0].root,
            &["read".to_string()],
            false,
            0,
            &mut trace,
        );
        assert!(trace.guessed);
        assert_eq!(
            found,
            vec![Res::External(vec![
                "std".into(),
                "fs".into(),
                "read".into()
            ])]
        );
    }

    /// Everything the import fixpoint computes for each module, in a comparable form.
    fn import_state(index: &Index) -> Vec<String> {
        index
            .modules
            .iter()
            .map(|m| {
                let imports: std::collections::BTreeMap<_, _> = m.imports.iter().collect();
                format!(
                    "{:?} imports {imports:?} globs {:?} guessed {:?} {:?} private {:?} {:?}",
                    m.path,
                    m.globs,
                    m.guessed_imports,
                    m.guessed_globs,
                    m.private_imports,
                    m.private_globs
                )
            })
            .collect()
    }

    /// Re-exports that settle one link per pass (each module names the next one's re-export,
    /// declared before it), glob cycles, guesses from an unanalysed glob and private uses.
    fn many_pass_imports() -> String {
        let mut src = String::new();
        for i in 0..12 {
            src.push_str(&format!(
                "pub mod a{i} {{ pub use super::a{}::X; }}\n",
                i + 1
            ));
        }
        src.push_str("pub mod a12 { pub struct X; pub fn f() {} }\n");
        src.push_str(
            "pub mod p { pub use super::q::*; pub use super::a0::X as PX; pub fn pf() {} }\n\
             pub mod q { pub use super::p::*; use std::io::prelude::*; pub fn qf() {} }\n\
             mod user { use crate::p::{qf, PX}; use crate::q::*; use generated::*; }\n\
             mod helpers { use std::fs::read as private_read; pub use crate::a3::*; }\n\
             pub use helpers::*;\n",
        );
        src.push_str(&glob_reexport_chain(20));
        src.push_str(&guessed_globs(4));
        src
    }

    /// The incremental fixpoint skips the `use`s whose reads did not change, and ends in the
    /// very state of re-resolving every `use` on every pass, with less work.
    #[test]
    fn incremental_import_fixpoint_matches_full_re_resolution() {
        let (ws, _scratch) = scratch_workspace(
            "index-incremental",
            &many_pass_imports(),
            SourceKind::Workspace,
            false,
        );
        let build = |incremental: bool| {
            let load = crate::load::load_unit(&ws, 0);
            Index::build_with(&ws, vec![load.loaded], incremental)
        };
        let (full, incremental) = (build(false), build(true));
        assert_eq!(import_state(&incremental), import_state(&full));
        // The chain really needed many passes, and was resolved through.
        let user = module_named(&full, "user");
        assert!(
            matches!(
                full.modules[user].imports.get("PX").map(Vec::as_slice),
                Some([Res::Type(_)])
            ),
            "{:?}",
            full.modules[user].imports.get("PX")
        );
        assert!(
            incremental.import_work * 2 < full.import_work,
            "incremental work {} vs full {}",
            incremental.import_work,
            full.import_work
        );
    }

    /// A resolution records every module whose state it read: the module it starts in and each
    /// module a glob walk visits.
    #[test]
    fn a_traced_resolution_records_the_modules_it_read() {
        let index = index_of(
            "index-trace",
            "pub mod a { pub use crate::b::*; }\npub mod b { pub fn f() {} }\nmod c { }\n",
        );
        let (root, a, b, c) = (
            index.units[0].root,
            module_named(&index, "a"),
            module_named(&index, "b"),
            module_named(&index, "c"),
        );
        let mut trace = super::Trace::recording(root);
        let found = index.resolve_path_tracked(root, &["a", "f"], false, 0, &mut trace);
        assert!(matches!(found.as_slice(), [Res::Fn(_)]), "{found:?}");
        let mut reads = trace.reads.unwrap();
        reads.sort_unstable();
        reads.dedup();
        assert!(reads.contains(&root) && reads.contains(&a) && reads.contains(&b));
        assert!(!reads.contains(&c));
    }

    /// Method lookup on a std type asks only the impls that may provide the method: own fns,
    /// the trait's methods and its supertraits', in impl order; an impl providing neither is
    /// left out.
    #[test]
    fn external_impls_are_indexed_by_the_methods_they_may_provide() {
        let index = index_of(
            "index-external-by-method",
            "pub trait A { fn a(&self) {} }\n\
             pub trait B: A { fn b(&self) {} }\n\
             pub trait C { fn c(&self); }\n\
             impl B for String {}\n\
             impl A for String {}\n\
             impl C for String { fn c(&self) {} }\n",
        );
        let (key, impls) = index.external_impls.iter().next().expect("impls on String");
        assert_eq!(impls.len(), 3, "{key}");
        let trait_of = |iid: &usize| match &index.impls[*iid].trait_ref {
            Some(crate::ty::TraitRef::Local(t)) => index.types[*t].name.clone(),
            other => format!("{other:?}"),
        };
        let names = |method: &str| -> Vec<String> {
            index
                .external_impls_with(key, method)
                .iter()
                .map(trait_of)
                .collect()
        };
        assert_eq!(names("a"), ["B", "A"]);
        assert_eq!(names("b"), ["B"]);
        assert_eq!(names("c"), ["C"]);
        assert!(names("len").is_empty());
        assert!(index.external_impls_with("no::Such", "a").is_empty());
    }

    /// The parallel import passes and impl resolution give the same index whatever the thread
    /// count.
    #[test]
    fn the_index_does_not_depend_on_the_thread_count() {
        let (ws, _scratch) = scratch_workspace(
            "index-threads",
            &format!(
                "{}\npub struct S; impl S {{ pub fn m(&self) {{}} }}\n\
                 pub trait T {{ fn t(&self) {{}} }} impl T for S {{}} impl<U: T> T for Vec<U> {{}}\n",
                many_pass_imports()
            ),
            SourceKind::Workspace,
            false,
        );
        let state = |threads: usize| {
            crate::analysis_pool(Some(threads)).unwrap().install(|| {
                let load = crate::load::load_unit(&ws, 0);
                let index = Index::build(&ws, vec![load.loaded]);
                let impls: Vec<String> = index
                    .impls
                    .iter()
                    .map(|i| format!("{:?} {:?}", i.self_ty, i.trait_ref))
                    .collect();
                (import_state(&index), impls, index.import_work)
            })
        };
        assert_eq!(state(1), state(4));
    }

    /// A private `use` is not re-exported by a glob (`pub use helpers::*` must not make
    /// `helpers`' private `use tempfile::tempfile;` shadow the `tempfile` crate, as in
    /// cargo-binstall), but a descendant's `use super::*` still sees it.
    #[test]
    fn glob_imports_see_private_uses_only_from_inside() {
        let src = "mod helpers { use std::fs::read as private_read; pub use std::fs::write as public_write; \
                   pub mod inner { use super::*; } }\n\
                   pub use helpers::*;\n\
                   mod user { use crate::*; }\n";
        let index = index_of("index-private-glob", src);
        let module = |name: &str| module_named(&index, name);
        let resolve =
            |m: usize, name: &str| index.resolve_path_in(m, &[name.to_string()], false, 0);
        let write = vec![Res::External(vec![
            "std".into(),
            "fs".into(),
            "write".into(),
        ])];
        let read = vec![Res::External(vec![
            "std".into(),
            "fs".into(),
            "read".into(),
        ])];
        assert_eq!(resolve(module("user"), "public_write"), write);
        assert_eq!(resolve(module("user"), "private_read"), Vec::<Res>::new());
        assert_eq!(resolve(module("inner"), "private_read"), read);
    }
}

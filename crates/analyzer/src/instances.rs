//! Provided trait methods instantiated per implementing type.
//!
//! A trait's provided (default) method has one body for every implementor. Resolved once, with
//! `Self` a parameter bounded by the trait, its `self.other()` dispatches to every impl of the
//! trait. But a call whose receiver has a known concrete type `T` runs that body with `Self = T`:
//! kanidm's `internal_search_uuid`, called on a `QueryServerWriteTransaction`, calls the write
//! transaction's `get_be_txn`, never the read transaction's. So the resolver gives such a call an
//! *instance* as its target: a function of its own, `<T as Trait>::method`, owned by `T`'s impl
//! (the one that does not override the method), whose body is the trait's, resolved with `Self`
//! the impl's self type. Calls on `self` / `Self::` inside it dispatch to `T`'s impl only, and a
//! provided method calling another provided method gets that method's instance, transitively.
//!
//! Where instances live: during resolution, in a [`Table`] keyed by (provided method, impl),
//! created on demand when a resolved call names one, so only instances reachable from the roots
//! exist and are resolved (at most one per reachable (impl, provided method) pair, each resolved
//! once, like any function). Their ids follow the index's functions; a walker that meets a pair
//! not yet in the table names it by a pending id (from [`PENDING`] on) that
//! [`crate::resolve::resolve_reachable`] replaces, after each frontier, in the frontier's
//! deterministic order: the ids, like the resolved set, do not depend on the thread count. After
//! resolution [`materialize`] appends them to `Index::fns` as `FnDef`s that share the base's IR
//! (`Arc`), so every later stage sees an ordinary function with owner `FnOwner::Impl`.
//!
//! Blanket impls (`impl<T: Bound> Tr for T`: `Self` is a parameter) and receivers of unknown
//! implementor (`dyn Trait`, a generic parameter) keep the trait's own body, which dispatches to
//! every impl. A `&dyn Trait` parameter is of known implementor where the call passes a
//! reference to a concrete type: that call binds it, as a generic parameter.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::index::{FnDef, FnId, FnOwner, Index};
use crate::infer::{unify, Expected, Subst};
use crate::ir::{IrGeneric, IrPath, IrType, Name};
use crate::ty::{TraitRef, Ty, TyCon};

/// Function `base` with `Self` or generic parameters bound.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Instance {
    pub base: FnId,
    /// A provided method instantiated for the impl that does not override it: the instance is
    /// owned by that impl and `Self` is its type. `None`: the base's own owner.
    pub imp: Option<usize>,
    /// Generic parameters bound at the call, sorted by name: the fn's and its impl's type
    /// parameters, `Self` of a provided method reached through a blanket impl (or a derive) on
    /// a concrete receiver, and `#i` for an `impl Trait` or `&dyn Trait` parameter `i`. Only
    /// concrete types, to parameters bounded by a trait of the graph: the graph's or std's for
    /// generic parameters ([`binds_generic`]), the graph's for the others ([`is_bindable`]).
    pub bind: Vec<(String, Ty)>,
}

/// Instances with bindings per base function; more calls fall back to the base (or to the
/// impl's instance without bindings), which dispatches to every impl as before.
pub const MAX_BOUND_INSTANCES: usize = 8;

/// What an `impl Trait` or `&dyn Trait` parameter, or `Self` of a provided method, may bind: a
/// type of the analysed graph (behind references), with no parameter, unknown or trait object
/// in it.
pub(crate) fn is_bindable(t: &Ty) -> bool {
    matches!(t.peel_refs(), Ty::Adt(TyCon::Local(_), _)) && is_concrete(t)
}

/// What a call may bind a generic parameter to ([`call_bindings`]): a concrete type of the
/// graph or of std (`Uuid`, `String`, `&String`, `Vec<Uuid>`), behind references or not. `str`
/// and slices are never bound: std's own method of a name would shadow the bound trait's
/// (tokio's `ToSocketAddrs` for `str` against `str::to_socket_addrs`).
pub(crate) fn binds_generic(t: &Ty) -> bool {
    matches!(t.peel_refs(), Ty::Adt(..)) && is_concrete(t)
}

/// `&dyn Trait` / `&mut dyn Trait` with a trait of the graph among the object's traits.
pub(crate) fn is_local_dyn_ref(t: &Ty) -> bool {
    matches!(t, Ty::Ref(inner) if matches!(&**inner, Ty::Dyn(traits)
        if traits.iter().any(|r| matches!(r, TraitRef::Local(_)))))
}

/// A type that names no parameter, no unknown and no trait object.
pub(crate) fn is_concrete(t: &Ty) -> bool {
    match t {
        Ty::Adt(_, args) => args.iter().all(is_concrete),
        Ty::Ref(inner) | Ty::Slice(inner) => is_concrete(inner),
        Ty::Tuple(elems) => elems.iter().all(is_concrete),
        Ty::Str => true,
        Ty::Param { .. } | Ty::Dyn(_) | Ty::Unknown => false,
    }
}

/// What a call site knows of the types a callee is called with.
#[derive(Clone, Copy)]
pub(crate) struct CallTypes<'a> {
    pub recv: Option<&'a Ty>,
    /// The receiver first for `Type::method(x, ..)`.
    pub arg_types: &'a [Ty],
    /// The `&dyn Trait` fields of struct literals passed as arguments: (argument, field, the
    /// concrete type given).
    pub dyn_fields: &'a [(usize, Name, Ty)],
    /// What the context expects the call's value to be.
    pub expected: Option<&'a Expected>,
}

/// What a call binds in function `base`'s body (`imp`: the impl an instance of a provided
/// method is for), sorted by name: each generic parameter bounded by a trait of the graph (the
/// fn's, its impl's) that the receiver and argument types bind to a concrete type, an `impl
/// Trait` or `&dyn Trait` parameter `i` (trait of the graph) given a concrete argument (`#i`;
/// a reference for the object), and `Self` of a
/// trait's provided method (met through a blanket impl or a derive) on a concrete receiver.
/// Empty: nothing a call through them could dispatch on is known. `arg_types` holds the
/// receiver first for `Type::method(x, ..)`, as for the result type.
pub(crate) fn call_bindings(
    index: &Index,
    table: &Table,
    base: FnId,
    imp: Option<usize>,
    call: &CallTypes<'_>,
) -> Vec<(String, Ty)> {
    let CallTypes {
        recv,
        arg_types,
        dyn_fields,
        expected,
    } = *call;
    let def = &index.fns[base];
    let self_param = matches!(def.owner, FnOwner::Trait(_)) && imp.is_none();
    if def.ir.body.is_none() {
        return Vec::new();
    }
    let fields = field_bindings(index, base, dyn_fields);
    // Most callees have nothing to bind: decided once per function, not per call.
    if imp.is_none() && !self_param && fields.is_empty() {
        let may_bind = table.may_bind[base].get_or_init(|| {
            !call_bindings_uncached(index, base, None, None, &[], None, true).is_empty()
        });
        if !*may_bind {
            return Vec::new();
        }
    }
    let mut bind = call_bindings_uncached(index, base, imp, recv, arg_types, expected, false);
    if !fields.is_empty() {
        bind.extend(fields);
        bind.sort();
        bind.dedup_by(|a, b| a.0 == b.0);
    }
    bind
}

/// `#i.field` bindings: a struct literal passed as argument `i` gave its `&dyn Trait` field
/// `field` a reference to a concrete type; inside the callee, `param.field` is that value
/// (deno's `parse_module_from_ast(ParseModuleFromAstOptions { file_system: &NullFileSystem,
/// .. })` hands `options.file_system` on to the module analysis). Only where the parameter is
/// declared as that struct type, by value or by reference.
fn field_bindings(
    index: &Index,
    base: FnId,
    dyn_fields: &[(usize, Name, Ty)],
) -> Vec<(String, Ty)> {
    if dyn_fields.is_empty() {
        return Vec::new();
    }
    let def = &index.fns[base];
    let skip = usize::from(def.ir.sig.has_self);
    let mut out = Vec::new();
    for (i, field, ty) in dyn_fields {
        let Some(declared) = i.checked_sub(skip).and_then(|k| def.ir.sig.params.get(k)) else {
            continue;
        };
        let d = index.resolve_type(def.module, &declared.1, &def.ir.sig.generics, None);
        let Ty::Adt(TyCon::Local(tid), _) = d.peel_refs() else {
            continue;
        };
        let crate::index::TypeKind::Struct { fields, .. } = &index.types[*tid].kind else {
            continue;
        };
        if fields.iter().any(|(n, _)| n == field.as_str()) {
            out.push((format!("#{}.{field}", i - skip), ty.clone()));
        }
    }
    out
}

/// [`call_bindings`]; with `probe`, only whether some parameter could be bound (a placeholder
/// binding when so).
fn call_bindings_uncached(
    index: &Index,
    base: FnId,
    imp: Option<usize>,
    recv: Option<&Ty>,
    arg_types: &[Ty],
    expected: Option<&Expected>,
    probe: bool,
) -> Vec<(String, Ty)> {
    let def = &index.fns[base];
    let owner_impl = imp.or(match def.owner {
        FnOwner::Impl(i) => Some(i),
        _ => None,
    });
    let mut generics = def.ir.sig.generics.to_vec();
    let mut self_ty = recv.map(|r| r.peel_refs().clone());
    if let Some(i) = owner_impl {
        generics.extend(index.impls[i].generics.iter().cloned());
        self_ty = Some(index.impls[i].self_ty.clone());
    }
    let local_bound = |bounds: &[IrPath]| {
        bounds
            .iter()
            .any(|b| matches!(index.resolve_trait(def.module, b), TraitRef::Local(_)))
    };
    let bound_generics: Vec<&IrGeneric> =
        generics.iter().filter(|g| local_bound(&g.bounds)).collect();
    let self_param = matches!(def.owner, FnOwner::Trait(_)) && imp.is_none();
    let params = &def.ir.sig.params;
    let impl_params = params
        .iter()
        .any(|(_, t)| matches!(t.peel_refs(), IrType::ImplTrait(bounds) if local_bound(bounds)));
    // `&dyn Trait` parameters (also through an alias: deno_graph's `file_system: &FileSystem`,
    // `type FileSystem = dyn FsReadDirBoxed`); the probe asks once per function whether any.
    let resolved_params: Vec<Ty> = params
        .iter()
        .map(|(_, t)| match t.peel_refs() {
            IrType::ImplTrait(_) => Ty::Unknown,
            _ => index.resolve_type(def.module, t, &generics, self_ty.as_ref()),
        })
        .collect();
    let dyn_params = resolved_params.iter().any(is_local_dyn_ref);
    if bound_generics.is_empty() && !impl_params && !dyn_params && !self_param {
        return Vec::new();
    }
    if probe {
        return vec![(String::new(), Ty::Unknown)];
    }
    let mut bind = Vec::new();
    let mut subst = Subst::new();
    if let (Some(i), Some(r)) = (owner_impl, recv) {
        unify(&index.impls[i].self_ty, r.peel_refs(), &mut subst);
    }
    let skip = usize::from(def.ir.sig.has_self && arg_types.len() == params.len() + 1);
    let actuals = &arg_types[skip.min(arg_types.len())..];
    for (i, ((_, declared), actual)) in params.iter().zip(actuals).enumerate() {
        if actual.is_unknown() {
            continue;
        }
        if let IrType::ImplTrait(bounds) = declared.peel_refs() {
            if is_bindable(actual) && local_bound(bounds) {
                bind.push((format!("#{i}"), actual.clone()));
            }
            continue;
        }
        let d = &resolved_params[i];
        if is_local_dyn_ref(d) {
            // A concrete value coerced to the trait object at this call: inside the callee the
            // object is that value, so its calls dispatch to that type's impls only (deno_graph's
            // `fill_module_dependencies(.., &NullFileSystem, ..)` lists no directory).
            if is_bindable(actual) && matches!(actual, Ty::Ref(_)) {
                bind.push((format!("#{i}"), actual.clone()));
            }
            continue;
        }
        unify(d, actual, &mut subst);
    }
    // What the arguments left unbound, the type the caller expects may bind: a parameter named
    // only by the return type (`Row::get<I, T>(&self, idx: I) -> T`).
    let mut from_expected = Subst::new();
    if let (Some(expected), Some(ret), false) = (expected, &def.ir.sig.ret, def.ir.sig.is_async) {
        let declared = index.resolve_type(def.module, ret, &generics, self_ty.as_ref());
        expected.unify_return(&declared, &mut from_expected);
    }
    for g in bound_generics {
        let bound = |s: &Subst| s.get(&g.name).filter(|t| binds_generic(t)).cloned();
        if let Some(t) = bound(&subst).or_else(|| bound(&from_expected)) {
            bind.push((g.name.clone(), t));
        }
    }
    if self_param {
        if let Some(r) = recv.map(Ty::peel_refs).filter(|r| is_bindable(r)) {
            bind.push(("Self".into(), r.clone()));
        }
    }
    bind.sort();
    bind.dedup_by(|a, b| a.0 == b.0);
    bind
}

/// The instances appended to `Index::fns` after resolution: `fns[first + i]` is `list[i]`.
#[derive(Debug, Default)]
pub struct Instances {
    pub first: usize,
    pub list: Vec<Instance>,
    /// Per base method, its instances' ids.
    pub by_base: BTreeMap<FnId, Vec<FnId>>,
}

impl Instances {
    /// What function `f` instantiates, when it is an instance.
    pub fn get(&self, f: FnId) -> Option<&Instance> {
        f.checked_sub(self.first).and_then(|i| self.list.get(i))
    }

    /// `fns` with every instance of each of them added, sorted and deduplicated: a rule or
    /// boundary that names a trait's method names its instances too.
    pub fn widen(&self, fns: &mut Vec<FnId>) {
        if self.list.is_empty() {
            return;
        }
        let extra: Vec<FnId> = fns
            .iter()
            .filter_map(|f| self.by_base.get(f))
            .flatten()
            .copied()
            .collect();
        fns.extend(extra);
        fns.sort_unstable();
        fns.dedup();
    }
}

/// Ids from here on name instances a walker met that the table does not hold yet.
pub(crate) const PENDING: usize = usize::MAX / 2;

/// The instances created during resolution, with ids from `first` (the index's function count).
#[derive(Debug)]
pub(crate) struct Table {
    first: usize,
    by_key: HashMap<Instance, FnId>,
    pub(crate) list: Vec<Instance>,
    /// Instances with bindings per base.
    bound: HashMap<FnId, usize>,
    /// Per function of the index: whether a call can bind anything in it
    /// ([`call_bindings`]), computed on first use.
    may_bind: Vec<std::sync::OnceLock<bool>>,
    /// The fn items constructors store in struct fields ([`crate::field_fns`]), computed on
    /// first use; shared here as everything else the frontiers share.
    pub(crate) field_fns: crate::field_fns::FieldFns,
}

impl Table {
    pub(crate) fn new(first: usize) -> Table {
        Table {
            first,
            by_key: HashMap::new(),
            list: Vec::new(),
            bound: HashMap::new(),
            may_bind: (0..first).map(|_| std::sync::OnceLock::new()).collect(),
            field_fns: Default::default(),
        }
    }

    pub(crate) fn get(&self, key: &Instance) -> Option<FnId> {
        self.by_key.get(key).copied()
    }

    /// The id of `key`, created when new. Past [`MAX_BOUND_INSTANCES`] instances with bindings
    /// of its base, a new key with bindings gets the instance without them (or the base).
    pub(crate) fn intern(&mut self, key: Instance) -> FnId {
        if let Some(&id) = self.by_key.get(&key) {
            return id;
        }
        if !key.bind.is_empty() {
            let n = self.bound.entry(key.base).or_default();
            if *n >= MAX_BOUND_INSTANCES {
                return match key.imp {
                    Some(imp) => self.intern(Instance {
                        base: key.base,
                        imp: Some(imp),
                        bind: Vec::new(),
                    }),
                    None => key.base,
                };
            }
            *n += 1;
        }
        let id = self.first + self.list.len();
        self.list.push(key.clone());
        self.by_key.insert(key, id);
        id
    }

    pub(crate) fn instance(&self, f: FnId) -> Option<&Instance> {
        f.checked_sub(self.first).and_then(|i| self.list.get(i))
    }

    /// Every function id the table knows: the index's and the instances'.
    pub(crate) fn len(&self) -> usize {
        self.first + self.list.len()
    }
}

/// The entry step as a fingerprint sees it: an instance (the context, or the callee) named as
/// its base, so that instantiating a provided method or a generic fn changes no finding's
/// identity (baselines stay valid; the path still names the instance).
pub(crate) fn stable_entry(
    index: &Index,
    entry: &crate::report::Step,
    raw: &crate::propagate::RawStep,
) -> crate::report::Step {
    let mut entry = entry.clone();
    if let crate::propagate::Next::Fn(f) = raw.callee {
        if let Some(i) = index.instances.get(f) {
            entry.callee = index.fn_display(i.base);
        }
    }
    if let Some(i) = index.instances.get(raw.function) {
        let (own, base) = (index.fn_display(raw.function), index.fn_display(i.base));
        if let Some(rest) = entry.function.strip_prefix(own.as_str()) {
            entry.function = format!("{base}{rest}");
        }
    }
    entry
}

/// Appends the instances to `index.fns` (ids `index.fns.len()..`, in `list` order, as the
/// resolver numbered them): same unit, module, file and IR as the base, owned by the impl.
pub fn materialize(index: &mut Index, list: Vec<Instance>) {
    let first = index.fns.len();
    let mut by_base: BTreeMap<FnId, Vec<FnId>> = BTreeMap::new();
    for (i, inst) in list.iter().enumerate() {
        let base = &index.fns[inst.base];
        let def = FnDef {
            unit: base.unit,
            module: base.module,
            file: base.file,
            owner: inst.imp.map_or(base.owner, FnOwner::Impl),
            foreign: false,
            ir: Arc::clone(&base.ir),
        };
        index.fns.push(def);
        by_base.entry(inst.base).or_default().push(first + i);
    }
    index.instances = Instances {
        first,
        list,
        by_base,
    };
}

/// The local traits every one of `tys` (types of the analysed graph, references looked
/// through) implements explicitly, when there is one: what a value of any of them is known to
/// be. `None` when a type is not the graph's or they share no trait.
pub(crate) fn common_traits(index: &Index, tys: &[Ty]) -> Option<Vec<TraitRef>> {
    let mut common: Option<BTreeSet<usize>> = None;
    for t in tys {
        let Ty::Adt(TyCon::Local(tid), _) = t.peel_refs() else {
            return None;
        };
        let traits: BTreeSet<usize> = index.types[*tid]
            .trait_impls
            .iter()
            .filter_map(|&iid| match &index.impls[iid].trait_ref {
                Some(TraitRef::Local(tr)) => Some(*tr),
                _ => None,
            })
            .collect();
        common = Some(match common {
            None => traits,
            Some(c) => c.intersection(&traits).copied().collect(),
        });
    }
    let common = common.filter(|c| !c.is_empty())?;
    Some(common.into_iter().map(TraitRef::Local).collect())
}

/// The traits whose methods an instance's body may call on what it binds without importing
/// them, as the generic body could through its bounds: the bounds (traits of the graph) of each
/// bound parameter, the trait of a provided method (its `Self`), and their supertraits.
pub(crate) fn bound_traits(index: &Index, inst: &Instance) -> BTreeSet<usize> {
    let def = &index.fns[inst.base];
    let mut generics: Vec<&IrGeneric> = def.ir.sig.generics.iter().collect();
    let owner_impl = inst.imp.or(match def.owner {
        FnOwner::Impl(i) => Some(i),
        _ => None,
    });
    if let Some(i) = owner_impl {
        generics.extend(index.impls[i].generics.iter());
    }
    let mut out = BTreeSet::new();
    let mut add = |b: &IrPath| {
        if let TraitRef::Local(t) = index.resolve_trait(def.module, b) {
            out.insert(t);
        }
    };
    for (name, _) in &inst.bind {
        if let Some(i) = name.strip_prefix('#').and_then(|i| i.parse::<usize>().ok()) {
            if let Some((_, t)) = def.ir.sig.params.get(i) {
                if let IrType::ImplTrait(bounds) = t.peel_refs() {
                    bounds.iter().for_each(&mut add);
                }
            }
        } else if let Some(g) = generics.iter().find(|g| g.name == *name) {
            g.bounds.iter().for_each(&mut add);
        }
    }
    if let FnOwner::Trait(t) = def.owner {
        out.insert(t);
    }
    // Supertraits, transitively (bounded: each trait once).
    let mut todo: Vec<usize> = out.iter().copied().collect();
    while let Some(t) = todo.pop() {
        for s in index.supertraits_of(t) {
            if let TraitRef::Local(s) = s {
                if out.insert(*s) {
                    todo.push(*s);
                }
            }
        }
    }
    out
}

/// `Self::Name` (behind references too) in a body or signature whose `Self` is impl `imp`'s
/// type: the impl's associated type `Name` (`type BackendTransactionType =
/// BackendWriteTransaction<'a>`), resolved where the impl is written. `None` for any other
/// type, or an associated type the impl does not declare.
/// `t` with every `Self::Assoc` inside it (`Option<Self::Token>`) replaced by the impl's
/// written associated type (`&'t T`), or `None` when it names none. Only for a fn of the impl
/// itself: the replacement is written in the impl's module, with the impl's generics in scope,
/// which is where the fn's own signature is resolved.
pub(crate) fn with_impl_assoc_types(index: &Index, imp: usize, t: &IrType) -> Option<IrType> {
    let rec = |t: &IrType| with_impl_assoc_types(index, imp, t);
    match t {
        IrType::Path(p) if p.qself.is_none() => {
            if p.segments.len() == 2 && p.segments[0].name == "Self" {
                let (_, ty) = index.impls[imp]
                    .assoc_types
                    .iter()
                    .find(|(n, _)| *n == *p.segments[1].name)?;
                return Some(ty.clone());
            }
            let last = p.segments.last()?;
            let args: Vec<Option<IrType>> = last.generics.iter().map(rec).collect();
            if args.iter().all(Option::is_none) {
                return None;
            }
            let mut out = p.clone();
            let last = out.segments.last_mut()?;
            for (slot, new) in last.generics.iter_mut().zip(args) {
                if let Some(new) = new {
                    *slot = new;
                }
            }
            Some(IrType::Path(out))
        }
        IrType::Ref(inner) => rec(inner).map(|t| IrType::Ref(Box::new(t))),
        IrType::Slice(inner) => rec(inner).map(|t| IrType::Slice(Box::new(t))),
        IrType::Tuple(elems) => {
            let new: Vec<Option<IrType>> = elems.iter().map(rec).collect();
            if new.iter().all(Option::is_none) {
                return None;
            }
            Some(IrType::Tuple(
                elems
                    .iter()
                    .zip(new)
                    .map(|(old, new)| new.unwrap_or_else(|| old.clone()))
                    .collect(),
            ))
        }
        _ => None,
    }
}

pub(crate) fn impl_assoc_type(index: &Index, imp: usize, t: &IrType) -> Option<Ty> {
    match t {
        IrType::Ref(inner) => impl_assoc_type(index, imp, inner).map(|t| Ty::Ref(Box::new(t))),
        IrType::Path(p) if p.qself.is_none() && p.segments.len() == 2 => {
            if p.segments[0].name != "Self" {
                return None;
            }
            let def = &index.impls[imp];
            let (_, ty) = def
                .assoc_types
                .iter()
                .find(|(n, _)| *n == *p.segments[1].name)?;
            let ty = index.resolve_type(def.module, ty, &def.generics, Some(&def.self_ty));
            (!ty.is_unknown()).then_some(ty)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{analyze_files, sites};

    /// kanidm's shape: a query server transaction trait whose provided methods reach the
    /// backend's provided methods through `get_be_txn`, and those the id layer's `get_idl`;
    /// read and write transactions implement all three traits. Read: file reads (NB0101);
    /// write: a sleep (NB0201), so which impl a path went through shows in the rule.
    const TXN: &str = "trait Idl { fn get_idl(&mut self); }\n\
        pub struct IdlRead; pub struct IdlWrite;\n\
        impl Idl for IdlRead { fn get_idl(&mut self) { let _ = std::fs::read(\"r\"); } }\n\
        impl Idl for IdlWrite { fn get_idl(&mut self) { std::thread::sleep(D); } }\n\
        trait Backend { type L: Idl; fn get_idlayer(&mut self) -> &mut Self::L;\n\
          fn search(&mut self) { self.get_idlayer().get_idl(); } }\n\
        pub struct BeRead { idl: IdlRead } pub struct BeWrite { idl: IdlWrite }\n\
        impl Backend for BeRead { type L = IdlRead;\n\
          fn get_idlayer(&mut self) -> &mut IdlRead { &mut self.idl } }\n\
        impl Backend for BeWrite { type L = IdlWrite;\n\
          fn get_idlayer(&mut self) -> &mut IdlWrite { &mut self.idl } }\n\
        trait Qs { type B: Backend; fn get_be_txn(&mut self) -> &mut Self::B;\n\
          fn search(&mut self) { self.get_be_txn().search(); }\n\
          fn search_uuid(&mut self) { Self::search(self); } }\n\
        pub struct QsRead { be: BeRead } pub struct QsWrite { be: BeWrite }\n\
        impl Qs for QsRead { type B = BeRead;\n\
          fn get_be_txn(&mut self) -> &mut BeRead { &mut self.be } }\n\
        impl Qs for QsWrite { type B = BeWrite;\n\
          fn get_be_txn(&mut self) -> &mut BeWrite { &mut self.be } }\n\
        const D: std::time::Duration = std::time::Duration::from_secs(1);\n";

    #[test]
    fn provided_methods_on_a_concrete_receiver_reach_only_its_impls() {
        let src = format!(
            "{TXN}pub async fn write(mut q: QsWrite) {{\n q.search_uuid();\n}}\n\
             pub async fn read(q: &mut QsRead) {{\n q.search_uuid();\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        // Line 22: only the write impl's sleep; line 25: only the read impl's read.
        assert_eq!(sites(&r), [(22, "NB0201".into()), (25, "NB0101".into())]);
        let write = r.findings.iter().find(|f| f.path[0].line == 22).unwrap();
        let steps: Vec<&str> = write.path.iter().map(|s| s.function.as_str()).collect();
        assert_eq!(
            steps,
            [
                "app::write",
                "<app::QsWrite as Qs>::search_uuid",
                "<app::QsWrite as Qs>::search",
                "<app::BeWrite as Backend>::search",
                "<app::IdlWrite as Idl>::get_idl",
            ]
        );
        assert_eq!(write.confidence, "high");
        // The fingerprint names the entry's callee as its base: instantiation changes no
        // finding's identity.
        let mut entry = write.path[0].clone();
        assert_eq!(entry.callee, "<app::QsWrite as Qs>::search_uuid");
        entry.callee = "app::Qs::search_uuid".into();
        assert_eq!(
            write.fingerprint,
            crate::report::fingerprint("NB0201", &entry, "std::thread::sleep", "worker")
        );
    }

    #[test]
    fn unknown_implementors_still_reach_every_impl() {
        let src = format!(
            "{TXN}pub async fn generic<T: Qs>(q: &mut T) {{\n q.search_uuid();\n}}\n\
             pub async fn dynamic(i: &mut dyn Idl) {{\n i.get_idl();\n}}\n\
             pub async fn be(b: &mut dyn Backend<L = IdlWrite>) {{\n b.search();\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        let s = sites(&r);
        assert!(s.contains(&(25, "NB0101".into())), "{s:?}");
        assert!(s.contains(&(25, "NB0201".into())), "{s:?}");
        assert!(s.contains(&(28, "NB0101".into())), "{s:?}");
        assert!(s.contains(&(28, "NB0201".into())), "{s:?}");
    }

    #[test]
    fn associated_types_of_the_impl_type_self_paths_in_instances() {
        // The impls declare `get_idlayer`'s result as `Self::L` too: only the instance knows it.
        let src = TXN
            .replace(
                "fn get_idlayer(&mut self) -> &mut IdlRead",
                "fn get_idlayer(&mut self) -> &mut Self::L",
            )
            .replace(
                "fn get_idlayer(&mut self) -> &mut IdlWrite",
                "fn get_idlayer(&mut self) -> &mut Self::L",
            );
        let src = format!("{src}pub async fn write(b: &mut BeWrite) {{\n b.search();\n}}\n");
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(sites(&r), [(22, "NB0201".into())]);
        assert_eq!(
            r.findings[0].path[1].function,
            "<app::BeWrite as Backend>::search"
        );
    }

    /// deno's shape: `canonicalize_path_maybe_not_exists(sys: &impl FsCanonicalize, ..)` calls
    /// a provided method of a trait every `BaseFsCanonicalize` gets by a blanket impl, from a
    /// generic resolver whose `TSys` the caller's type binds. `RealSys` sleeps (NB0201), the
    /// other implementor reads a file (NB0101).
    const SYS: &str = "pub trait BaseCanon { fn base_canon(&self); }\n\
        pub trait Canon: BaseCanon { fn canon(&self) { self.base_canon(); } }\n\
        impl<T: BaseCanon> Canon for T {}\n\
        #[derive(Default)] pub struct RealSys; pub struct RtSys;\n\
        impl BaseCanon for RealSys { fn base_canon(&self) { std::thread::sleep(D); } }\n\
        impl BaseCanon for RtSys { fn base_canon(&self) { let _ = std::fs::read(\"x\"); } }\n\
        pub fn canonicalize(sys: &impl Canon) { sys.canon(); }\n\
        pub struct Resolver<TSys: BaseCanon> { sys: TSys }\n\
        impl<TSys: BaseCanon> Resolver<TSys> { pub fn resolve(&self) { canonicalize(&self.sys); } }\n\
        pub fn generic_free<S: Canon>(s: &S) { s.canon(); }\n\
        pub type CliResolver = Resolver<RealSys>;\n\
        const D: std::time::Duration = std::time::Duration::from_secs(1);\n";

    #[test]
    fn generics_bound_at_the_call_site_dispatch_to_the_bound_type() {
        let src = format!(
            "{SYS}pub async fn lsp(r: std::sync::Arc<CliResolver>) {{\n r.resolve();\n}}\n\
             pub async fn free(s: RtSys) {{\n generic_free(&s);\n}}\n\
             pub async fn direct() {{\n canonicalize(&RealSys);\n}}\n\
             pub async fn derived() {{\n canonicalize(&RealSys::default());\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(
            sites(&r),
            [
                (14, "NB0201".into()),
                (17, "NB0101".into()),
                (20, "NB0201".into()),
                (23, "NB0201".into())
            ]
        );
    }

    #[test]
    fn bound_traits_stay_callable_where_they_are_not_imported() {
        // deno's `try_read_cached_binary(sys: &impl sys_traits::FsRead, ..)`: the module calls
        // `sys.fs_read(..)` through the bound, without importing the trait.
        let src = format!(
            "pub mod sys {{\n{SYS}}}\n\
             pub mod user {{ pub fn go(s: &impl crate::sys::Canon) {{ s.canon(); }} }}\n\
             pub async fn run() {{\n user::go(&sys::RealSys);\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(sites(&r), [(17, "NB0201".into())]);
    }

    #[test]
    fn std_types_are_not_bound_where_std_methods_would_shadow_the_trait() {
        // tokio's `lookup_host(host: impl ToSocketAddrs)` on a `&str`: the body's
        // `host.to_socket_addrs(..)` is tokio's offloading impl, not std's blocking method.
        let src = "pub trait ToAddrs { fn to_socket_addrs(&self, x: u8); }\n\
            impl ToAddrs for str { fn to_socket_addrs(&self, x: u8) {} }\n\
            pub fn lookup(host: &impl ToAddrs) { host.to_socket_addrs(0); }\n\
            pub async fn run() {\n lookup(\"localhost:80\");\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), []);
    }

    #[test]
    fn unbound_generics_still_reach_every_impl() {
        let src = format!(
            "{SYS}pub async fn unknown<S: Canon>(s: &S) {{\n canonicalize(s);\n}}\n\
             pub async fn dynamic(s: &dyn Canon) {{\n generic_free(s);\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(
            sites(&r),
            [
                (14, "NB0101".into()),
                (14, "NB0201".into()),
                (17, "NB0101".into()),
                (17, "NB0201".into())
            ]
        );
    }

    /// deno_graph's file system shape: an object-safe trait every `BaseCanon` gets by a blanket
    /// impl, and an implementor that does nothing (three lines, after [`SYS`]).
    const BOXED: &str =
        "pub struct NullSys; impl BaseCanon for NullSys { fn base_canon(&self) {} }\n\
        pub trait Boxed { fn boxed(&self); }\n\
        impl<T: BaseCanon> Boxed for T { fn boxed(&self) { self.base_canon(); } }\n";

    #[test]
    fn a_concrete_value_passed_as_a_trait_object_binds_it() {
        // deno_graph's shape: `fill_module_dependencies(.., file_system: &FileSystem, ..)` with
        // `type FileSystem = dyn FsReadDirBoxed` (blanket impl over `BaseFsReadDir`), called
        // with `&NullFileSystem`, which lists nothing, and elsewhere with the real one.
        let src = format!(
            "{SYS}{BOXED}             pub type FileSystem = dyn Boxed;\n\
             fn inner(fs: &FileSystem) {{ fs.boxed(); }}\n\
             fn fill(n: u8, fs: &FileSystem) {{ inner(fs); }}\n\
             pub async fn null() {{\n fill(1, &NullSys);\n}}\n\
             pub async fn real() {{\n fill(1, &RealSys);\n}}\n\
             pub async fn unknown(fs: &dyn Boxed) {{\n fill(1, fs);\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        // `null` reaches nothing; `real` only RealSys's sleep; an object of unknown type every
        // implementor.
        assert_eq!(
            sites(&r),
            [
                (23, "NB0201".into()),
                (26, "NB0101".into()),
                (26, "NB0201".into())
            ]
        );
    }

    #[test]
    fn a_trait_object_field_of_a_struct_literal_argument_binds_it() {
        // deno's LSP: `parse_module_from_ast(ParseModuleFromAstOptions { file_system:
        // &NullFileSystem, .. })`, whose body hands `options.file_system` on.
        let src = format!(
            "{SYS}{BOXED}             pub struct Opts<'a> {{ pub n: u8, pub fs: &'a dyn Boxed }}\n\
             fn inner(fs: &dyn Boxed) {{ fs.boxed(); }}\n\
             pub fn parse(options: Opts) {{ inner(options.fs); }}\n\
             pub async fn null() {{\n parse(Opts {{ n: 1, fs: &NullSys }});\n}}\n\
             pub async fn real() {{\n parse(Opts {{ n: 1, fs: &RealSys }});\n}}\n\
             pub async fn unknown(fs: &dyn Boxed) {{\n parse(Opts {{ n: 1, fs }});\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(
            sites(&r),
            [
                (23, "NB0201".into()),
                (26, "NB0101".into()),
                (26, "NB0201".into())
            ]
        );
    }

    #[test]
    fn a_generic_iterators_next_is_instantiated_for_its_type_arguments() {
        // node_resolver's `ClosestPackageJsonsIterator<'_, TSys>`, iterated in denort with
        // `DenoRtSys`: its `next` reads through that type only.
        let src = format!(
            "{SYS}pub struct Walk<'a, TSys: BaseCanon> {{ sys: &'a TSys }}\n\
             impl<'a, TSys: BaseCanon> Walk<'a, TSys> {{ pub fn new(sys: &'a TSys) -> Self {{ Walk {{ sys }} }} }}\n\
             impl<'a, TSys: BaseCanon> Iterator for Walk<'a, TSys> {{ type Item = u8;\n\
               fn next(&mut self) -> Option<u8> {{ self.sys.base_canon(); None }} }}\n\
             pub async fn looped(s: RtSys) {{\n for _ in Walk::new(&s) {{}}\n}}\n\
             pub async fn adapted(s: RealSys) {{\n let _ = Walk::new(&s).count();\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(sites(&r), [(18, "NB0101".into()), (21, "NB0201".into())]);
    }

    #[test]
    fn bound_instances_are_capped_per_function() {
        // Nine implementors, each bound once: the ninth call falls back to the generic body.
        let mut src = String::from(SYS);
        for i in 0..9 {
            src.push_str(&format!(
                "pub struct S{i}; impl BaseCanon for S{i} {{ fn base_canon(&self) {{}} }}\n"
            ));
        }
        src.push_str("pub async fn many() {\n");
        for i in 0..9 {
            src.push_str(&format!(" generic_free(&S{i});\n"));
        }
        src.push_str("}\n");
        let r = analyze_files(&[("src/lib.rs", &src)]);
        // Only the last call, through the generic body, reaches the blocking impls.
        let lines: Vec<u32> = sites(&r).into_iter().map(|(l, _)| l).collect();
        assert_eq!(lines, [31, 31]);
    }

    #[test]
    fn overridden_and_blanket_methods_keep_their_own_bodies() {
        let src = "trait Tr { fn run(&self) { self.step(); } fn step(&self); }\n\
            pub struct A; pub struct B; pub struct C;\n\
            impl Tr for A { fn step(&self) { let _ = std::fs::read(\"a\"); } }\n\
            impl Tr for B { fn step(&self) { std::thread::sleep(D); }\n\
              fn run(&self) {} }\n\
            trait Ext { fn ext(&self) { self.step2(); } fn step2(&self) {} }\n\
            impl<T: Tr> Ext for T {}\n\
            const D: std::time::Duration = std::time::Duration::from_secs(1);\n\
            pub async fn a(x: A) {\n x.run();\n}\n\
            pub async fn b(x: B) {\n x.run();\n}\n\
            pub async fn c(x: A) {\n x.ext();\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        // `A::run` is the instance (the read only); `B` overrides `run` (nothing); the blanket
        // impl's `ext` keeps the trait's body (nothing blocks there).
        assert_eq!(sites(&r), [(10, "NB0101".into())]);
        let a = &r.findings[0];
        assert_eq!(a.path[1].function, "<app::A as Tr>::run");
    }
}

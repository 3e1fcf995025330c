//! Stage 3b, *resolve*: the body of every function reachable from a root candidate
//! ([`crate::roots`]) → its call sites, each resolved to the functions or external APIs it may
//! call, with local type inference for method receivers.
//!
//! Types are inferred locally only: parameter and `let` annotations, constructor and function
//! return types, struct field types, `self` in impls, `?`/`unwrap` on Result/Option, `&`, `Box`,
//! `Arc` and other derefs. Where the receiver's type stays unknown the call is recorded as
//! unresolved with the reason, and only rules that opt into method-name fallback can match it.
//!
//! Async blocks and async closures become bodies of their own (they run when polled, as async
//! contexts); sync closures passed as call arguments are kept with the call so the graph can drop
//! them at offload boundaries; other sync closures are inlined into the enclosing body.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use rayon::prelude::*;

use crate::critical::{self, Binding, Hold};
use crate::fields::FieldCond;
use crate::index::{FnId, FnOwner, Index, ModId, Res, TypeKind};
use crate::infer::{apply, unify, Expected, Subst};
use crate::instances::{Instance, Table, PENDING};
use crate::ir::METAVAR_PLACEHOLDER;
use crate::ir::*;
use crate::resolve_memo::Outcome;
use crate::rules::RuleDb;
use crate::ty::{external_return, is_identity_method, is_unwrap_method, TraitRef, Ty, TyCon};
use crate::values::{variant_of, ArgFacts, Cond, Fact, SELF_SLOT};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

/// Why a call expression could not be resolved; counted in `stats`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Unresolved {
    /// A call of a local variable (a closure value or fn pointer held in a binding).
    ClosureValue,
    /// A call whose callee is an expression (`(self.f)(x)`, `make()(x)`).
    FnPointer,
    /// A method call whose receiver's type is unknown.
    UnknownReceiver,
    /// A path that names nothing in the analysed graph (generated code, OUT_DIR, macros).
    UnknownPath,
    /// A method not found on a known type (derives, external trait impls).
    UnknownMethod,
    /// A call on a `macro_rules!` metavariable (`$x.method()`, `$f(..)`) in an expansion lowered
    /// without the invocation's tokens (`ir::METAVAR_PLACEHOLDER`): unknowable until macro
    /// expansion binds metavariables. Counted apart so `unknown_receiver` measures inference.
    MacroMetavar,
}

impl Unresolved {
    pub const ALL: [Unresolved; 6] = [
        Unresolved::ClosureValue,
        Unresolved::FnPointer,
        Unresolved::UnknownReceiver,
        Unresolved::UnknownPath,
        Unresolved::UnknownMethod,
        Unresolved::MacroMetavar,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Unresolved::ClosureValue => "closure_value",
            Unresolved::FnPointer => "fn_pointer",
            Unresolved::UnknownReceiver => "unknown_receiver",
            Unresolved::UnknownPath => "unknown_path",
            Unresolved::UnknownMethod => "unknown_method",
            Unresolved::MacroMetavar => "macro_metavar",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Target {
    Fn(FnId, Confidence),
    External(String, Confidence),
    /// A method on a receiver of unknown type: rules with a name fallback may match it.
    /// The method name and the number of arguments (receiver not counted).
    UnknownMethod(String, usize),
    Unresolved(Unresolved),
    /// A call of the enclosing function's parameter `index` (a closure it was given).
    ParamCall(usize),
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ClosureArg {
    pub arg: usize,
    /// The async blocks and closures written inside the closure, as indices into the function's
    /// bodies: when the closure is offloaded (`thread::spawn(|| rt.block_on(async { .. }))`)
    /// they run on that thread, not on a worker, and are not roots.
    pub bodies: std::ops::Range<usize>,
    pub calls: Vec<CallSite>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CallSite {
    pub pos: Pos,
    pub targets: Vec<Target>,
    /// Sync closures written as arguments of this call.
    pub closure_args: Vec<ClosureArg>,
    /// `(argument index, parameter index)`: the enclosing fn's closure parameter flows into this
    /// call's argument (directly or called inside a closure argument).
    pub param_args: Vec<(usize, usize)>,
    /// How long the call's value can live: a lock guard held only briefly is not reported
    /// ([`crate::critical`]).
    pub hold: Hold,
    /// The address argument (the first argument, or the receiver) is already an IP address: an
    /// `IP:port` string literal or a `SocketAddr` value. The rules' `dns_only_apis` then wait
    /// for nothing.
    pub addr_is_ip: bool,
    /// The first argument is a string literal short enough for the IR to keep its text
    /// ([`crate::ir::STR_TEXT_MAX`]): a rule's `small_literal_bytes` may exempt the call.
    pub str_arg: Option<crate::ir::Name>,
    /// Index in the call list where this call's argument calls start (they run up to the call
    /// itself): what a task spawner's argument builds (`graph::detach_spawned`).
    pub args_from: usize,
    /// The `match` arms on the function's parameters this call is written in: it runs only when
    /// those parameters are these variants ([`crate::values`]).
    pub guard: Option<Arc<[Cond]>>,
    /// Constant variants and the function's own parameters among the call's arguments.
    pub facts: Option<Box<ArgFacts>>,
    /// The branches on struct fields this call is written in: it runs only when those fields
    /// hold these variants ([`crate::fields`]).
    pub field_guard: Option<Arc<[FieldCond]>>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum BodyKind {
    Fn,
    AsyncBlock,
    AsyncClosure,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Body {
    pub owner: FnId,
    pub kind: BodyKind,
    pub pos: Pos,
    pub calls: Vec<CallSite>,
    /// A function body's tail expression, kept when it names a parameter
    /// (`FnAttrs::tail_names_param`): what [`crate::stored::returned_params`] reads, here so
    /// the body is not decoded a second time (deno: 36 000 such bodies, a fifth of the graph
    /// stage).
    pub tail: Option<Box<IrExpr>>,
}

fn is_metavar(p: &IrPath) -> bool {
    p.segments.len() == 1 && p.segments[0].name == METAVAR_PLACEHOLDER && p.qself.is_none()
}

/// A sync closure argument whose body is a metavariable, or holds one as a statement or a match
/// arm (`run(move |$c| $body)`, `run(move |$c| match $c { .. => { $body } })`): code of the
/// invocation that the closure runs. A metavariable used as a value inside the closure (tokio's
/// `join!`: `poll_fn(move |cx| .. if skip == $skip ..)`) is not the invocation's code.
fn wraps_metavar_in_closure(e: &IrExpr) -> bool {
    let is_meta = |x: &IrExpr| matches!(x, IrExpr::Path(p, _) if is_metavar(p));
    e.any(&mut |x| {
        let args = match x {
            IrExpr::Call { args, .. } | IrExpr::MethodCall { args, .. } => args,
            _ => return false,
        };
        args.iter().any(|a| {
            let IrExpr::Closure {
                is_async: false,
                body,
                ..
            } = a
            else {
                return false;
            };
            is_meta(body)
                || body.any(&mut |y| match y {
                    IrExpr::Block(b) => b
                        .stmts
                        .iter()
                        .any(|s| matches!(s, IrStmt::Expr(x) if is_meta(x))),
                    IrExpr::Match { arms, .. } => arms.iter().any(|(_, arm)| is_meta(arm)),
                    _ => false,
                })
        })
    })
}

/// Methods of std's `Option` / `Result` whose value carries the receiver's payload, at the
/// position `?` and `unwrap` read it from (the error or `None` side may change).
fn keeps_payload(recv: &Ty, method: &str) -> bool {
    let Some(p) = recv.external_path() else {
        return false;
    };
    let option = p == "std::option::Option";
    let result = p == "std::result::Result" || p.ends_with("::Result");
    let both = matches!(method, "or" | "or_else" | "inspect");
    (result && (both || matches!(method, "map_err" | "inspect_err")))
        || (option
            && (both
                || matches!(
                    method,
                    "ok_or" | "ok_or_else" | "filter" | "xor" | "take" | "replace"
                )))
}

/// Adds `cond` to the guard of each call, and of the calls of the closures they are given.
fn add_guard(calls: &mut [CallSite], cond: &Cond) {
    for c in calls {
        let mut guard = c.guard.as_deref().map_or_else(Vec::new, <[Cond]>::to_vec);
        guard.push(cond.clone());
        c.guard = Some(guard.into());
        for ca in &mut c.closure_args {
            add_guard(&mut ca.calls, cond);
        }
    }
}

/// Adds `cond` to the field guard of each call, and of the calls of the closures they are given.
fn add_field_guard(calls: &mut [CallSite], cond: &FieldCond) {
    for c in calls {
        let mut guard = c
            .field_guard
            .as_deref()
            .map_or_else(Vec::new, <[FieldCond]>::to_vec);
        guard.push(cond.clone());
        c.field_guard = Some(guard.into());
        for ca in &mut c.closure_args {
            add_field_guard(&mut ca.calls, cond);
        }
    }
}

/// The resolved bodies of one run: what [`resolve_reachable`] found from its roots.
pub struct Resolution {
    /// Every function's bodies, indexed by function id: empty for a function without a body,
    /// one not reachable from the roots, or one whose resolution panicked.
    pub bodies: Vec<Vec<Body>>,
    /// The functions whose resolution panicked (caught, so one bad function costs its own
    /// edges, not the run), in id order.
    pub panics: Vec<(FnId, String)>,
    /// How many functions with a body were resolved, directly or through an instance.
    pub resolved: usize,
    /// The provided trait methods instantiated for an implementing type
    /// ([`crate::instances`]): function `index.fns.len() + i` is `instances[i]`, and `bodies`
    /// holds their bodies after the index's functions'. [`crate::instances::materialize`]
    /// appends them to the index.
    pub instances: Vec<Instance>,
    /// How many functions' resolutions were reused from an earlier run ([`crate::resolve_memo`]).
    pub reused: usize,
    /// How many reused resolutions differed from a fresh one (checked only with
    /// `NONBLOCK_VERIFY_RESOLVE_MEMO`).
    pub memo_mismatches: usize,
    /// The memo's write, to wait for before the run ends.
    pub(crate) memo_saving: crate::resolve_memo::Saving,
}

/// Resolves the bodies of `roots` ([`crate::roots::candidates`]) and of every function their
/// calls may reach, one frontier at a time, each in parallel.
///
/// Only these bodies can matter: a root body's findings go through calls only, and everything the
/// graph stage reads per function — edges, API leaves, the closure parameters a function calls
/// ([`crate::graph`]'s `called_params`), inferred boundary wrappers (`infer_wrappers`) — depends
/// on the function's own body and on its callees' facts, never on its callers' (the graph's
/// bounded fixpoints over those facts evolve the same on a set closed under calls). So the closure
/// follows every `Target::Fn` of every call site, in closure arguments too, whatever the graph
/// later makes of the call (an opaque spawner's or a boundary's body is still resolved: whether
/// it calls its closure parameter decides if a closure argument runs in the caller). The set is
/// a closure, so it does not depend on the thread count or the order of resolution, and neither
/// does any body (each is resolved on its own from the index).
pub fn resolve_reachable(index: &Index, rules: &RuleDb, roots: &[FnId]) -> Resolution {
    resolve_reachable_with(index, rules, roots, None)
}

/// [`resolve_reachable`], reusing and recording dependency functions' resolutions in `memo`
/// ([`crate::resolve_memo`]).
pub(crate) fn resolve_reachable_with(
    index: &Index,
    rules: &RuleDb,
    roots: &[FnId],
    memo: Option<crate::resolve_memo::Memo>,
) -> Resolution {
    let mut bodies: Vec<Vec<Body>> = (0..index.fns.len()).map(|_| Vec::new()).collect();
    let mut queued = vec![false; index.fns.len()];
    let mut table = Table::new(index.fns.len());
    // Bodies holding async code are never instantiated: each stays one root, reported once.
    let mut candidate = vec![false; index.fns.len()];
    for &f in roots {
        candidate[f] = true;
    }
    let candidate = &candidate;
    let mut frontier: Vec<FnId> = Vec::new();
    for &f in roots {
        if !std::mem::replace(&mut queued[f], true) {
            frontier.push(f);
        }
    }
    let mut panics = Vec::new();
    let mut resolved = 0;
    let mut counted = vec![false; index.fns.len()];
    let (mut memo_used, mut memo_recorded) = (Vec::new(), Vec::new());
    while !frontier.is_empty() {
        frontier.sort_unstable();
        let table_now = &table;
        let memo_now = memo.as_ref();
        let results: Vec<Result<Outcome, String>> = frontier
            .par_iter()
            .map(|&f| {
                crate::guard::guard(|| {
                    let base = table_now.instance(f).map_or(f, |i| i.base);
                    let unit = &index.units[index.fns[base].unit];
                    crate::guard::inject("resolve", &unit.crate_name);
                    let fresh = || resolve_in(index, rules, table_now, candidate, f);
                    match memo_now {
                        Some(m) => m.resolve(index, table_now, candidate, f, fresh),
                        None => Outcome::Fresh(fresh(), None),
                    }
                })
            })
            .collect();
        let mut next = Vec::new();
        for (f, result) in frontier.into_iter().zip(results) {
            let result = result.map(|outcome| match outcome {
                Outcome::Reused(entry, r) => {
                    memo_used.push(entry);
                    r
                }
                Outcome::Fresh(r, entry) => {
                    memo_recorded.extend(entry);
                    r
                }
            });
            match result {
                Ok(Resolved {
                    bodies: mut fn_bodies,
                    pending,
                    ..
                }) => {
                    // Instances this body met first get their ids here, in frontier order.
                    if !pending.is_empty() {
                        let ids: Vec<FnId> = pending.into_iter().map(|k| table.intern(k)).collect();
                        for b in &mut fn_bodies {
                            renumber(&mut b.calls, &ids);
                        }
                        bodies.resize_with(table.len(), Vec::new);
                        queued.resize(table.len(), false);
                    }
                    for b in &fn_bodies {
                        callees(&b.calls, &mut |g| {
                            if !std::mem::replace(&mut queued[g], true) {
                                next.push(g);
                            }
                        });
                    }
                    // Source functions: an instance counts for its base, once.
                    let source = table.instance(f).map_or(f, |i| i.base);
                    if index.fns[source].ir.body.is_some()
                        && !std::mem::replace(&mut counted[source], true)
                    {
                        resolved += 1;
                    }
                    bodies[f] = fn_bodies;
                }
                Err(panic) => panics.push((f, panic)),
            }
        }
        frontier = next;
    }
    panics.sort();
    let reused = memo_used.len();
    let (memo_mismatches, memo_saving) = memo.map_or((0, Default::default()), |m| {
        m.save(memo_used, memo_recorded)
    });
    Resolution {
        bodies,
        panics,
        resolved,
        instances: table.list,
        reused,
        memo_mismatches,
        memo_saving,
    }
}

/// A function's bodies and the instances they met first ([`resolve_in`]).
pub(crate) struct Resolved {
    pub(crate) bodies: Vec<Body>,
    /// The instances `table` did not hold, in the order of their pending ids.
    pub(crate) pending: Vec<Instance>,
    /// Every instance the walk named, the table's included, in the order it met them: what
    /// [`crate::resolve_memo`] stores so that a reused resolution has the same pending ids.
    pub(crate) met: Vec<Instance>,
}

/// Replaces the pending instance ids of `calls` ([`PENDING`] + i) by `ids[i]`.
fn renumber(calls: &mut [CallSite], ids: &[FnId]) {
    map_fn_ids(calls, &mut |g| {
        Some(if g >= PENDING { ids[g - PENDING] } else { g })
    });
}

/// Maps every `Target::Fn` id of `calls` (closure arguments' calls too) by `f`, stopping at the
/// first it cannot map (`None`; [`crate::resolve_memo`] names ids stably and back with it).
pub(crate) fn map_fn_ids(
    calls: &mut [CallSite],
    f: &mut impl FnMut(FnId) -> Option<FnId>,
) -> Option<()> {
    for c in calls {
        for t in &mut c.targets {
            if let Target::Fn(g, _) = t {
                *g = f(*g)?;
            }
        }
        for ca in &mut c.closure_args {
            map_fn_ids(&mut ca.calls, f)?;
        }
    }
    Some(())
}

/// Every analysed function a call site may call, in its closure arguments too.
pub(crate) fn callees(calls: &[CallSite], out: &mut impl FnMut(FnId)) {
    for c in calls {
        for t in &c.targets {
            if let Target::Fn(g, _) = t {
                out(*g);
            }
        }
        for ca in &c.closure_args {
            callees(&ca.calls, out);
        }
    }
}

/// The bodies of function `f` of the index, resolved on their own. Provided trait methods
/// called on a concrete receiver are named by instance ids past the index's functions
/// ([`crate::instances`]); [`resolve_reachable`] numbers and resolves those.
pub fn resolve_fn(index: &Index, rules: &RuleDb, f: FnId) -> Vec<Body> {
    let table = Table::new(index.fns.len());
    let Resolved {
        mut bodies,
        pending,
        ..
    } = resolve_in(index, rules, &table, &[], f);
    let mut table = table;
    let ids: Vec<FnId> = pending.into_iter().map(|k| table.intern(k)).collect();
    for b in &mut bodies {
        renumber(&mut b.calls, &ids);
    }
    bodies
}

/// The bodies of function `f` (of the index, or an instance `table` numbered), and the
/// instances they name that `table` does not hold yet, in the order of their pending ids.
/// `candidate`: the root candidates, never instantiated (empty: none).
fn resolve_in(
    index: &Index,
    rules: &RuleDb,
    table: &Table,
    candidate: &[bool],
    f: FnId,
) -> Resolved {
    let instance = table.instance(f);
    let def = &index.fns[instance.map_or(f, |i| i.base)];
    let owner = instance
        .and_then(|i| i.imp)
        .map_or(def.owner, FnOwner::Impl);
    let Some(block) = def.ir.body.as_ref().map(FnBody::block) else {
        return Resolved {
            bodies: Vec::new(),
            pending: Vec::new(),
            met: Vec::new(),
        };
    };
    // An instance's bindings, applied to every type its body resolves.
    let subst: Subst = instance
        .map(|i| i.bind.iter().cloned().collect())
        .unwrap_or_default();
    let mut generics = def.ir.sig.generics.to_vec();
    let (self_ty, trait_self) = match owner {
        FnOwner::Impl(i) => {
            generics.extend(index.impls[i].generics.iter().cloned());
            (Some(apply(&index.impls[i].self_ty, &subst)), None)
        }
        FnOwner::Trait(t) => (
            Some(subst.get("Self").cloned().unwrap_or_else(|| Ty::Param {
                name: "Self".into(),
                bounds: vec![TraitRef::Local(t)],
                bound_args: Vec::new(),
            })),
            Some(TraitRef::Local(t)),
        ),
        FnOwner::Free => (None, None),
    };
    let mut w = Walker {
        index,
        rules,
        fn_id: f,
        owner,
        table,
        pending: std::cell::RefCell::new(Vec::new()),
        met: std::cell::RefCell::new(Vec::new()),
        candidate,
        subst,
        bound_traits: instance
            .map(|i| crate::instances::bound_traits(index, i))
            .unwrap_or_default(),
        module: def.module,
        generics,
        self_ty: self_ty.clone(),
        scopes: vec![BTreeMap::new()],
        sink: Vec::new(),
        extra_bodies: Vec::new(),
        pos_override: None,
        macro_stack: Vec::new(),
        macro_budget: MACRO_BUDGET,
        closures: Vec::new(),
        macro_closure_body: None,
        closure_depth: 0,
        closure_ret: Ty::Unknown,
        closure_params: Vec::new(),
        dyn_fields: HashMap::new(),
        expected: None,
        args_expected: Vec::new(),
    };
    let _ = trait_self;
    if def.ir.sig.has_self {
        if let Some(st) = &self_ty {
            w.bind("self", Local::typed(st.clone()));
        }
    }
    for (i, (name, ty)) in def.ir.sig.params.iter().enumerate() {
        if let Some(n) = name {
            let ty = match w.subst.get(&format!("#{i}")) {
                Some(bound) => bound.clone(),
                None => w.resolve_ty(ty),
            };
            w.bind(
                n,
                Local {
                    ty,
                    param: Some(i),
                    closure: None,
                    fn_items: Vec::new(),
                    field_fn_items: Vec::new(),
                },
            );
        }
    }
    // The body's value is expected to have the declared return type (an async fn's is its
    // output's): a generic call in tail position binds from it (`fn decode(row: &Row) -> Uuid {
    // row.get(0) }`).
    let ret = def
        .ir
        .sig
        .ret
        .as_ref()
        .and_then(|r| Expected::is(w.resolve_ty(r)));
    w.walk_block_expecting(&block, ret);
    let mut block = block;
    let tail = match block.stmts.pop() {
        Some(IrStmt::Expr(e)) if def.ir.attrs.tail_names_param && !def.ir.sig.params.is_empty() => {
            Some(Box::new(e))
        }
        _ => None,
    };
    let mut bodies = vec![Body {
        owner: f,
        kind: BodyKind::Fn,
        pos: def.ir.pos,
        calls: std::mem::take(&mut w.sink),
        tail,
    }];
    bodies.append(&mut w.extra_bodies);
    Resolved {
        bodies,
        pending: w.pending.into_inner(),
        met: w.met.into_inner(),
    }
}

#[derive(Clone, Debug)]
struct Local {
    ty: Ty,
    param: Option<usize>,
    /// A sync closure bound by `let`: index into `Walker::closures`.
    closure: Option<usize>,
    /// The functions a local bound to fn items may hold (`let f = if a { g } else { h };`,
    /// lychee's `let function = match self { .. }`): what calling it calls.
    fn_items: Vec<Target>,
    /// A local bound to a struct literal whose fields hold fn items (`let hooks = Hooks {
    /// on_flush: flush_to_disk }`): per field, what `(hooks.on_flush)(..)` calls.
    field_fn_items: Vec<(Name, Vec<Target>)>,
}

impl Local {
    fn typed(ty: Ty) -> Local {
        Local {
            ty,
            param: None,
            closure: None,
            fn_items: Vec::new(),
            field_fn_items: Vec::new(),
        }
    }
}

/// A `let f = || ..` closure: its calls happen where `f` is called, or where it is handed to
/// another function (so `spawn_blocking(f)` offloads them); an unused closure is inlined.
struct StoredClosure {
    calls: Vec<CallSite>,
    bodies: std::ops::Range<usize>,
    used: bool,
    /// Its body's type, as walked where it is written: the type of a call of it
    /// (`let init = || Command::new(..); init().arg(..)`).
    ret: Ty,
}

struct Walker<'i> {
    index: &'i Index,
    rules: &'i RuleDb,
    fn_id: FnId,
    /// Who owns the walked body: an instance's impl for an instance of a provided method.
    owner: FnOwner,
    /// Instances numbered before this frontier.
    table: &'i Table,
    /// Instances met here that `table` does not hold: pending id `PENDING + i`.
    pending: std::cell::RefCell<Vec<Instance>>,
    /// Every instance named, in the order met ([`Resolved::met`]).
    met: std::cell::RefCell<Vec<Instance>>,
    /// Root candidates (by id; shorter: none), never instantiated.
    candidate: &'i [bool],
    /// The walked instance's bindings ([`Instance::bind`]).
    subst: Subst,
    /// Traits in scope in an instance's body through its bindings' bounds
    /// ([`crate::instances::bound_traits`]).
    bound_traits: std::collections::BTreeSet<usize>,
    module: ModId,
    generics: Vec<IrGeneric>,
    self_ty: Option<Ty>,
    scopes: Vec<BTreeMap<String, Local>>,
    sink: Vec<CallSite>,
    extra_bodies: Vec<Body>,
    /// Calls expanded from a `macro_rules!` body are reported at the invocation.
    pos_override: Option<Pos>,
    /// The argument expressions of a `macro_rules!` invocation whose expansion wraps a
    /// metavariable in a sync closure (`$conn.run(move |$conn| $body)`, vaultwarden's
    /// `db_run!`): walked where that closure's body names the metavariable, so their calls
    /// belong to the closure (and are offloaded with it), at their own positions (the
    /// `pos_override` outside the expansion) and only once. With the closure depth at the
    /// invocation: only a closure written in the expansion takes them.
    macro_closure_body: Option<(Vec<IrExpr>, Option<Pos>, usize)>,
    /// Sync closures being walked as call arguments.
    closure_depth: usize,
    /// Macros being expanded: a macro is never re-entered (recursive macros such as
    /// `tokio::select!` would otherwise expand exponentially in their arms).
    macro_stack: Vec<usize>,
    /// Expansions left for this function: a bound on work for macro-heavy code.
    macro_budget: usize,
    closures: Vec<StoredClosure>,
    /// The value type of the sync closure walked last (its body's type): what `opt.map(|x| ..)`
    /// wraps.
    closure_ret: Ty,
    /// Per argument, the parameter types the callee's `Fn*` bound gives a closure written there
    /// ([`Walker::closure_param_types`]); read by [`Walker::walk_args_with`].
    closure_params: Vec<Option<Vec<Ty>>>,
    /// Struct literals walked in this body whose `&dyn Trait` fields (trait of the graph) were
    /// given a reference to a concrete type of the graph, keyed by the literal's address in
    /// the IR: a call taking the literal as an argument binds those fields in its callee
    /// (deno's `parse_module_from_ast(ParseModuleFromAstOptions { file_system:
    /// &NullFileSystem, .. })`). Rare, so a small map.
    dyn_fields: HashMap<usize, Vec<(Name, Ty)>>,
    /// What the context says the expression walked next must be ([`Expected`]): set right
    /// before a `walk` and taken by it, so it never reaches a subexpression by accident.
    expected: Option<Expected>,
    /// Per argument, the expectation on it (`Ok(e)`: `e`'s); read by
    /// [`Walker::walk_args_with`].
    args_expected: Vec<Option<Expected>>,
}

/// What [`Walker::in_scope`] keeps when no candidate's trait is in scope.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fallback {
    /// Nothing (std receivers).
    None,
    /// The receiver type's explicit impls of traits the calling crate can see (analysed types).
    Explicit,
}

/// The type a blanket impl is asked about: one of the analysed graph, or a std type by path.
#[derive(Clone, Copy)]
enum Implementor<'a> {
    Local(usize),
    External(&'a str),
}

/// Targets whose result types a call's value joins ([`Walker::return_type`]).
/// std's `Iterator` provided methods that adapt or consume the iterator (what
/// `Walker::local_iterator` answers for a type of the graph implementing it).
const ITERATOR_PROVIDED: &[&str] = &[
    "all",
    "any",
    "by_ref",
    "chain",
    "cloned",
    "collect",
    "copied",
    "count",
    "cycle",
    "enumerate",
    "filter",
    "filter_map",
    "find",
    "find_map",
    "flat_map",
    "flatten",
    "fold",
    "for_each",
    "fuse",
    "inspect",
    "last",
    "map",
    "map_while",
    "max",
    "max_by",
    "max_by_key",
    "min",
    "min_by",
    "min_by_key",
    "nth",
    "partition",
    "peekable",
    "position",
    "product",
    "reduce",
    "rev",
    "scan",
    "skip",
    "skip_while",
    "step_by",
    "sum",
    "take",
    "take_while",
    "try_fold",
    "try_for_each",
    "unzip",
    "zip",
];

/// Targets of one dispatched call instantiated each ([`Walker::instantiate_with`]); a call
/// dispatched to more impls keeps their generic bodies.
const MAX_INSTANTIATED_TARGETS: usize = 16;

/// How many impls of a bound's trait `Walker::bind_through_bounds` tries.
const MAX_BOUND_IMPLS: usize = 64;
const MAX_JOINED_RESULTS: usize = 16;

/// Macro expansions per function body.
const MACRO_BUDGET: usize = 64;

const MAX_AUTODEREF: usize = 8;

impl Walker<'_> {
    fn bind(&mut self, name: &str, local: Local) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), local);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn lookup_mut(&mut self, name: &str) -> Option<&mut Local> {
        self.scopes.iter_mut().rev().find_map(|s| s.get_mut(name))
    }

    fn resolve_ty(&self, t: &IrType) -> Ty {
        if let FnOwner::Impl(i) = self.owner {
            if let Some(ty) = crate::instances::impl_assoc_type(self.index, i, t) {
                return apply(&ty, &self.subst);
            }
        }
        let ty = self
            .index
            .resolve_type(self.module, t, &self.generics, self.self_ty.as_ref());
        apply(&ty, &self.subst)
    }

    fn pos(&self, p: Pos) -> Pos {
        self.pos_override.unwrap_or(p)
    }

    fn bind_pat(&mut self, pat: &IrPat, ty: Ty) {
        if let Some(n) = &pat.ident {
            self.bind(n, Local::typed(ty));
        } else if let Some(n) = &pat.unwrap_ident {
            self.bind(n, Local::typed(ty.unwrap_result_like()));
        } else if let Some(inner) = &pat.unwrap_pat {
            self.bind_pat(inner, ty.unwrap_result_like());
        } else if let Some(variant) = &pat.variant {
            let (path, elems) = &**variant;
            if let ([last], [elem]) = (path.segments.as_slice(), elems.as_slice()) {
                // `Err(error) => return Err(error.into())` (time's `try_likely_ok!`).
                if last.name == "Err" && last.generics.is_empty() {
                    return self.bind_pat(elem, ty.result_error());
                }
            }
            let fields = self.variant_fields(path, &ty);
            for (i, p) in elems.iter().enumerate() {
                let t = fields.get(i).map(|(_, t)| t.clone());
                self.bind_pat(p, t.unwrap_or(Ty::Unknown));
            }
        } else if let Some(record) = &pat.fields {
            // `let Position { offset, line, .. } = self.pos()`, `Event::Key { code, .. }`: the
            // named type's fields; else the scrutinee's own (a std struct's public fields).
            let (path, elems) = &**record;
            let fields = self.variant_fields(path, &ty);
            for (name, p) in elems {
                let t = match fields.iter().find(|(n, _)| n == name.as_str()) {
                    Some((_, t)) => t.clone(),
                    None => self.field_type(&ty, name),
                };
                self.bind_pat(p, t);
            }
        } else if !pat.elements.is_empty() {
            let elem = self.index_type(ty, false);
            for p in &pat.elements {
                self.bind_pat(p, elem.clone());
            }
        } else if !pat.tuple.is_empty() {
            let elems = match ty.peel_refs() {
                Ty::Tuple(e) => e.clone(),
                _ => Vec::new(),
            };
            for (i, p) in pat.tuple.iter().enumerate() {
                self.bind_pat(p, elems.get(i).cloned().unwrap_or(Ty::Unknown));
            }
        }
        for n in &pat.others {
            self.bind(n, Local::typed(Ty::Unknown));
        }
    }

    /// Pops a scope; closures bound in it and never called or passed on are inlined here.
    fn pop_scope(&mut self) {
        if let Some(scope) = self.scopes.pop() {
            for local in scope.values() {
                if let Some(c) = local.closure {
                    if !self.closures[c].used {
                        self.closures[c].used = true;
                        let calls = self.closures[c].calls.clone();
                        self.inline_calls(calls);
                    }
                }
            }
        }
    }

    /// [`Walker::walk_closure_body`] with every parameter typed (`tys`, from the callee's bound)
    /// unless annotated.
    fn walk_closure_body_typed(
        &mut self,
        params: &[(IrPat, Option<IrType>)],
        body: &IrExpr,
        tys: &[Ty],
    ) -> (Vec<CallSite>, std::ops::Range<usize>) {
        self.closure_params = vec![Some(tys.to_vec())];
        self.walk_closure_body(params, body, None)
    }

    /// For a method call with closure arguments whose parameters are not annotated, the types a
    /// closure at each argument gets from the callee's `Fn*` bound (`closure_params`), when the
    /// call resolves to one fn of the graph. The bound's types are the callee's, with its impl's
    /// parameters bound from the receiver; a type in which a parameter stays unbound is unknown.
    fn closure_param_types(
        &self,
        recv: &Ty,
        method: &str,
        args: &[IrExpr],
    ) -> Vec<Option<Vec<Ty>>> {
        let untyped = |a: &IrExpr| {
            matches!(a, IrExpr::Closure { is_async: false, params, .. }
                if !params.is_empty() && params.iter().any(|(_, t)| t.is_none()))
        };
        if recv.peel_refs().is_unknown() || !args.iter().any(untyped) {
            return Vec::new();
        }
        let (targets, _) = self.method_lookup(recv, method);
        let [Target::Fn(f, _)] = targets.as_slice() else {
            return Vec::new();
        };
        // An instance ([`crate::instances`]) runs its base's IR, owned by the impl it is for.
        let def = &self.index.fns[self.base_fn(*f)];
        let owner = self.instance_impl(*f).map_or(def.owner, FnOwner::Impl);
        let mut generics = def.ir.sig.generics.clone();
        let (impl_generics, self_ty) = match owner {
            FnOwner::Impl(i) => (
                self.index.impls[i].generics.to_vec(),
                Some(self.index.impls[i].self_ty.clone()),
            ),
            _ => (Vec::new(), Some(recv.peel_refs().clone())),
        };
        generics.extend(impl_generics.iter().cloned());
        let mut subst = Subst::new();
        if let FnOwner::Impl(i) = def.owner {
            unify(&self.index.impls[i].self_ty, recv.peel_refs(), &mut subst);
        }
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                if !untyped(a) {
                    return None;
                }
                let inputs = crate::closure_params::bound_inputs(&def.ir.sig, &impl_generics, i)?;
                Some(
                    inputs
                        .iter()
                        .map(|t| {
                            let ty =
                                self.index
                                    .resolve_type(def.module, t, &generics, self_ty.as_ref());
                            // A parameter left unbound (flume's `Arc<Hook<T, S>>`, `S` bound
                            // only by another closure's return) says nothing a call can use.
                            let ty = apply(&ty, &subst);
                            if crate::infer::has_param(&ty) {
                                Ty::Unknown
                            } else {
                                ty
                            }
                        })
                        .collect(),
                )
            })
            .collect()
    }

    /// Walks a sync closure's body into its own call list; also returns the range of the
    /// function's bodies (see [`ClosureArg::bodies`]) created inside it.
    fn walk_closure_body(
        &mut self,
        params: &[(IrPat, Option<IrType>)],
        body: &IrExpr,
        first: Option<&Ty>,
    ) -> (Vec<CallSite>, std::ops::Range<usize>) {
        // Body 0 is the function's own; async bodies follow in `extra_bodies` order.
        let first_body = self.extra_bodies.len() + 1;
        let outer = std::mem::take(&mut self.sink);
        self.scopes.push(BTreeMap::new());
        self.bind_closure_params(params, first);
        self.closure_depth += 1;
        let ret = self.walk(body);
        self.closure_depth -= 1;
        self.pop_scope();
        // An expression body is one statement; a block body was classified by `walk_block`.
        decide_hold(
            &mut self.sink,
            None,
            Hold::of_temporary(critical::expr_waits(body)),
        );
        let calls = std::mem::replace(&mut self.sink, outer);
        self.closure_ret = ret;
        (calls, first_body..self.extra_bodies.len() + 1)
    }

    fn walk_block(&mut self, b: &IrBlock) -> Ty {
        self.walk_block_expecting(b, None)
    }

    /// [`Walker::walk_block`] whose value (its tail expression) is expected to be `expected`.
    fn walk_block_expecting(&mut self, b: &IrBlock, expected: Option<Expected>) -> Ty {
        self.scopes.push(BTreeMap::new());
        let mut last = Ty::Tuple(Vec::new());
        for i in 0..b.stmts.len() {
            if i + 1 == b.stmts.len() && matches!(b.stmts[i], IrStmt::Expr(_)) {
                self.expected = expected.clone();
            }
            last = self.walk_stmt(b, i);
        }
        self.pop_scope();
        last
    }

    /// Statement `i` of `b`, in the block's scope (pushed by the caller): its calls, the
    /// bindings it makes, how long the values its calls return live; its type if it is an
    /// expression statement.
    fn walk_stmt(&mut self, b: &IrBlock, i: usize) -> Ty {
        let s = &b.stmts[i];
        let mut last = Ty::Tuple(Vec::new());
        {
            let first_call = self.sink.len();
            match s {
                IrStmt::Let {
                    pat,
                    init:
                        Some(IrExpr::Closure {
                            is_async: false,
                            params,
                            body,
                            ..
                        }),
                    ..
                } if pat.ident.is_some() => {
                    let name = pat.ident.as_ref().expect("guarded");
                    let (calls, bodies) = self.walk_closure_body(params, body, None);
                    let ret = std::mem::replace(&mut self.closure_ret, Ty::Unknown);
                    self.closures.push(StoredClosure {
                        calls,
                        bodies,
                        used: false,
                        ret,
                    });
                    let index = self.closures.len() - 1;
                    self.bind(
                        name,
                        Local {
                            ty: Ty::Unknown,
                            param: None,
                            closure: Some(index),
                            fn_items: Vec::new(),
                            field_fn_items: Vec::new(),
                        },
                    );
                }
                IrStmt::Let {
                    pat,
                    ty,
                    init,
                    diverge,
                } => {
                    let declared = ty.as_ref().map(|t| self.resolve_ty(t));
                    let init_ty = match init {
                        Some(e) => {
                            self.expected = declared.clone().and_then(Expected::is);
                            self.walk(e)
                        }
                        None => Ty::Unknown,
                    };
                    if let Some(d) = diverge {
                        self.walk_block(d);
                    }
                    let ty = match declared {
                        Some(declared) => fill_holes(declared, init_ty),
                        None => init_ty,
                    };
                    self.bind_pat(pat, ty);
                    if let Some(e) = init {
                        self.carry_fn_items(pat, e);
                    }
                }
                IrStmt::Expr(e) => last = self.walk(e),
                IrStmt::Item => {}
            }
            let statement = Hold::of_temporary(critical::stmt_waits(s));
            let rest_of_block = Hold::of_temporary(
                statement == Hold::Long
                    || critical::until_dropped(s, &b.stmts[i + 1..])
                        .iter()
                        .any(critical::stmt_waits),
            );
            let kept = critical::kept_call(s, i + 1 == b.stmts.len()).map(|(pos, binding)| {
                let hold = match binding {
                    Binding::Let => rest_of_block,
                    Binding::Escapes => Hold::Escapes,
                };
                (self.pos(pos), hold)
            });
            decide_hold(&mut self.sink[first_call..], kept, statement);
        }
        last
    }

    /// Walks an expression: records its calls, returns its type as far as it is known.
    fn walk(&mut self, e: &IrExpr) -> Ty {
        let expected = self.expected.take();
        match e {
            IrExpr::Call { func, args, pos } => {
                let first_call = self.sink.len();
                let ty = self.walk_call(func, args, *pos, expected);
                if self.mark_facts(first_call, *pos, None, args) {
                    self.mark_addr_is_ip(first_call, *pos);
                } else {
                    self.guard_dns_on_params(first_call, *pos, args.first());
                }
                if let Some(IrExpr::Str(Some(text))) = args.first() {
                    self.mark_str_arg(first_call, *pos, *text);
                }
                ty
            }
            IrExpr::MethodCall {
                receiver,
                method,
                args,
                pos,
            } => {
                self.expected = expected
                    .as_ref()
                    .and_then(|x| receiver_expectation(x, method));
                let recv = self.walk(receiver);
                let first_call = self.sink.len();
                if recv.is_unknown()
                    && rooted_in_metavar(receiver)
                    && self.rules.match_fallback(method, args.len()).is_none()
                {
                    let (_, closures, params) = self.walk_args(args);
                    let target = Target::Unresolved(Unresolved::MacroMetavar);
                    self.push_call(*pos, vec![target], closures, params);
                    return Ty::Unknown;
                }
                let option_or_result = recv
                    .peel_refs()
                    .external_path()
                    .is_some_and(crate::ty::is_option_or_result);
                let ty = self.walk_method(recv, method, args, *pos, expected);
                let addr_is_ip = self.mark_facts(first_call, *pos, Some(receiver), args);
                if option_or_result {
                    self.guard_plumbing_closures(first_call, *pos, receiver, method);
                }
                if addr_is_ip {
                    self.mark_addr_is_ip(first_call, *pos);
                } else {
                    self.guard_dns_on_params(first_call, *pos, Some(receiver));
                    self.guard_dns_on_params(first_call, *pos, args.first());
                }
                if let Some(IrExpr::Str(Some(text))) = args.first() {
                    self.mark_str_arg(first_call, *pos, *text);
                }
                ty
            }
            IrExpr::Path(p, _)
                if self
                    .macro_closure_body
                    .as_ref()
                    .is_some_and(|(_, _, depth)| self.closure_depth > *depth)
                    && is_metavar(p) =>
            {
                let (exprs, outer, _) = self.macro_closure_body.take().expect("checked");
                let saved = std::mem::replace(&mut self.pos_override, outer);
                let mut last = Ty::Unknown;
                for e in &exprs {
                    last = self.walk(e);
                }
                self.pos_override = saved;
                last
            }
            IrExpr::Path(p, _) => self.path_value_type(p),
            IrExpr::Field(base, name) => {
                let t = self.walk(base);
                if let Some(bound) = self.bound_param_field(base, name) {
                    return bound;
                }
                self.field_type(&t, name)
            }
            IrExpr::Ref(inner) => Ty::Ref(Box::new(self.walk(inner))),
            IrExpr::Deref(inner) => match self.walk(inner) {
                // `*p` on a raw pointer is its pointee (method calls never deref a pointer).
                Ty::Adt(TyCon::External(p), args) if p == crate::ty::POINTER => {
                    args.into_iter().next().unwrap_or(Ty::Unknown)
                }
                t => match self.deref_once(&t) {
                    Some(target) => target,
                    // `(*rw_mode).into()` on a binding that match ergonomics made a reference,
                    // which the model does not keep: a type of the graph without a `Deref` impl,
                    // or a primitive, can only have been behind one.
                    None if matches!(&t, Ty::Adt(TyCon::Local(_), _))
                        || t.external_path().is_some_and(crate::ty::is_builtin) =>
                    {
                        t
                    }
                    None => Ty::Unknown,
                },
            },
            IrExpr::Try(inner) => {
                self.expected = expected.and_then(|x| x.payload_of());
                self.walk(inner).unwrap_result_like()
            }
            IrExpr::Await(inner) => {
                let t = self.walk(inner);
                self.await_output(t)
            }
            IrExpr::Closure {
                is_async,
                params,
                body,
                pos,
            } => {
                if *is_async {
                    self.walk_async_body(BodyKind::AsyncClosure, *pos, |w| {
                        w.bind_closure_params(params, None);
                        w.walk(body);
                    });
                } else {
                    self.scopes.push(BTreeMap::new());
                    self.bind_closure_params(params, None);
                    self.walk(body);
                    self.pop_scope();
                }
                Ty::Unknown
            }
            IrExpr::Async { body, pos } => {
                self.walk_async_body(BodyKind::AsyncBlock, *pos, |w| {
                    w.walk_block(body);
                });
                Ty::Unknown
            }
            IrExpr::Block(b) => self.walk_block_expecting(b, expected),
            IrExpr::If {
                cond,
                then,
                otherwise,
            } => {
                self.scopes.push(BTreeMap::new());
                self.walk(cond);
                let then_from = self.sink.len();
                let t = self.walk_block_expecting(then, expected.clone());
                self.scopes.pop();
                // `if let Kind::A(..) = param { .. }`: the branch runs only for those variants;
                // `if flag { .. } else { .. }` / `if !flag`: each branch for one value.
                let else_from = self.sink.len();
                let o = otherwise.as_ref().map(|o| {
                    self.expected = expected;
                    self.walk(o)
                });
                match &**cond {
                    IrExpr::Let(pat, init) => {
                        if let Some(slot) = self.param_slot(init) {
                            self.guard_calls_range(then_from, else_from, slot, &pat.variants);
                        } else if let Some(field) = self.field_of(init) {
                            self.field_guard_range(then_from..else_from, field, &pat.variants);
                        }
                    }
                    flag => {
                        if let Some((slot, value)) = self.flag_test(flag) {
                            let this = crate::values::bool_name(value);
                            self.guard_calls_range(then_from, else_from, slot, &[this]);
                            let other = crate::values::bool_name(!value);
                            self.guard_calls(else_from, slot, &[other]);
                        } else if let Some((field, this, other)) = self.field_test(flag) {
                            let end = self.sink.len();
                            self.field_guard_range(then_from..else_from, field, &[this]);
                            self.field_guard_range(else_from..end, field, &[other]);
                        }
                    }
                }
                // Both branches have one type; a diverging or untyped branch says nothing.
                match o {
                    Some(o) if t.is_unknown() => o,
                    _ => t,
                }
            }
            IrExpr::Let(pat, init) => {
                let t = self.walk(init);
                self.bind_pat(pat, t);
                self.carry_fn_items(pat, init);
                Ty::Unknown
            }
            IrExpr::Match { scrutinee, arms } => {
                // `match get_inner(..) { Ok(v) => v, Err(e) => panic!(..) }`: the scrutinee's
                // payload is the value expected of the match.
                if arms.iter().any(|(pat, body)| yields_payload(pat, body)) {
                    self.expected = expected.as_ref().and_then(Expected::payload_of);
                }
                let t = self.walk(scrutinee);
                let matched_param = self.param_slot(scrutinee);
                let matched_field = matched_param
                    .is_none()
                    .then(|| self.field_of(scrutinee))
                    .flatten();
                // Every arm has the match's type: the first arm typed gives it (a diverging
                // arm, `return`/`panic!`/`continue`, is untyped).
                let mut value = Ty::Unknown;
                for (pat, body) in arms {
                    self.scopes.push(BTreeMap::new());
                    self.bind_pat(pat, t.clone());
                    self.carry_fn_items(pat, scrutinee);
                    let first_call = self.sink.len();
                    self.expected = expected.clone();
                    let arm = self.walk(body);
                    if value.is_unknown() {
                        value = arm;
                    }
                    self.scopes.pop();
                    if let Some(slot) = matched_param {
                        self.guard_calls(first_call, slot, &pat.variants);
                    } else if let Some(field) = matched_field {
                        let end = self.sink.len();
                        self.field_guard_range(first_call..end, field, &pat.variants);
                    }
                    // An arm's body is a temporary scope of its own: a guard taken there is
                    // dropped when the arm ends, whatever the rest of the `match` awaits. A guard
                    // that is the arm's value leaves it: long.
                    let statement = Hold::of_temporary(critical::expr_waits(body));
                    let kept = critical::value_call(body).map(|p| (self.pos(p), Hold::Long));
                    decide_hold(&mut self.sink[first_call..], kept, statement);
                }
                value
            }
            IrExpr::For {
                pat,
                iter,
                body,
                pos,
            } => {
                let t = self.walk(iter);
                let elem = self.iterate(t, *pos);
                self.scopes.push(BTreeMap::new());
                self.bind_pat(pat, elem);
                self.walk_block(body);
                self.scopes.pop();
                Ty::Tuple(Vec::new())
            }
            IrExpr::StructLit(p, fields) => {
                let ty = self.resolve_ty(&IrType::Path(p.clone()));
                let mut bound = Vec::new();
                for (name, f) in fields {
                    self.expected = Expected::is(self.field_type(&ty, name));
                    let value = self.walk(f);
                    if crate::instances::is_bindable(&value)
                        && matches!(value, Ty::Ref(_))
                        && crate::instances::is_local_dyn_ref(&self.field_type(&ty, name))
                    {
                        bound.push((*name, value));
                    }
                }
                // Keyed by address: a literal walked here replaces whatever an earlier,
                // since freed expression (a macro expansion's) left under the same address.
                let key = e as *const IrExpr as usize;
                if bound.is_empty() {
                    self.dyn_fields.remove(&key);
                } else {
                    self.dyn_fields.insert(key, bound);
                }
                ty
            }
            // The written type, with the holes of a turbofish (`collect::<Vec<_>>()`, lowered as
            // a cast) filled from the call's own type.
            IrExpr::Cast(inner, t) => {
                let written = self.resolve_ty(t);
                // `.collect::<Vec<_>>()` (a turbofish, lowered as a cast): the written
                // collection is what `collect` is expected to build. A real `as` cast converts,
                // so says nothing of its operand's type.
                if matches!(&**inner, IrExpr::MethodCall { method, .. } if method == "collect") {
                    self.expected = Expected::is(written.clone());
                }
                let inner_ty = self.walk(inner);
                // `.cast::<T>()` types a raw pointer's cast; another type's `cast` method keeps
                // what its signature says (`NonNull::cast` is std's, typed as a pointer too).
                let other_cast = matches!(&**inner, IrExpr::MethodCall { method, .. } if method == "cast")
                    && !inner_ty.is_unknown()
                    && inner_ty.external_path() != Some(crate::ty::POINTER);
                if other_cast {
                    return inner_ty;
                }
                fill_holes(written, inner_ty)
            }
            IrExpr::Str(_) | IrExpr::SocketAddrStr => Ty::Ref(Box::new(Ty::Str)),
            IrExpr::Lit(ty) => Ty::external(
                match ty.as_str() {
                    // rustc's fallback when nothing constrains the literal.
                    crate::ir::UNSUFFIXED_INTEGER => "i32",
                    crate::ir::UNSUFFIXED_FLOAT => "f64",
                    named => named,
                },
                Vec::new(),
            ),
            IrExpr::Macro {
                exprs,
                pos,
                expanded: true,
                ..
            } => self.walk_expansion(exprs, *pos),
            IrExpr::Macro {
                path,
                exprs,
                pos,
                first_ident,
                ..
            } => self.walk_macro(path, exprs, *pos, first_ident.as_deref()),
            IrExpr::Other(children) | IrExpr::Loop(children) => {
                for c in children {
                    self.walk(c);
                }
                Ty::Unknown
            }
            IrExpr::Tuple(elems) => Ty::Tuple(elems.iter().map(|x| self.walk(x)).collect()),
            IrExpr::Array(elems) => {
                let tys: Vec<Ty> = elems.iter().map(|x| self.walk(x)).collect();
                let elem = tys.into_iter().find(|t| !t.is_unknown());
                Ty::Slice(Box::new(elem.unwrap_or(Ty::Unknown)))
            }
            IrExpr::Index { exprs, range } => {
                let base = exprs.first().map_or(Ty::Unknown, |b| self.walk(b));
                for index in exprs.iter().skip(1) {
                    self.walk(index);
                }
                self.index_type(base, *range)
            }
            IrExpr::Arith(operands) => {
                let tys: Vec<Ty> = operands.iter().map(|x| self.walk(x)).collect();
                let number = |t: &Ty| {
                    let t = t.peel_refs();
                    t.external_path()
                        .is_some_and(crate::ty::is_number)
                        .then(|| t.clone())
                };
                // An unsuffixed literal takes the other operand's type (`1 + n` with `n: usize`).
                let written = operands
                    .iter()
                    .zip(&tys)
                    .filter(|(x, _)| !is_unsuffixed_literal(x))
                    .find_map(|(_, t)| number(t));
                written
                    .or_else(|| tys.iter().find_map(number))
                    .unwrap_or(Ty::Unknown)
            }
        }
    }

    /// Binds closure parameters: annotated types, else `first` for the first parameter (the item
    /// type of the iterator or Option the closure adapts).
    fn bind_closure_params(&mut self, params: &[(IrPat, Option<IrType>)], first: Option<&Ty>) {
        // Set by `walk_closure_body_typed` for this closure only.
        let bound = match std::mem::take(&mut self.closure_params).pop() {
            Some(Some(tys)) => tys,
            _ => Vec::new(),
        };
        for (i, (pat, ty)) in params.iter().enumerate() {
            let ty = match ty {
                Some(t) => self.resolve_ty(t),
                None if i < bound.len() => bound[i].clone(),
                None if i == 0 => first.cloned().unwrap_or(Ty::Unknown),
                None => Ty::Unknown,
            };
            self.bind_pat(pat, ty);
        }
    }

    fn walk_async_body(&mut self, kind: BodyKind, pos: Pos, f: impl FnOnce(&mut Self)) {
        let outer = std::mem::take(&mut self.sink);
        self.scopes.push(BTreeMap::new());
        f(self);
        self.pop_scope();
        let calls = std::mem::replace(&mut self.sink, outer);
        let pos = self.pos(pos);
        self.extra_bodies.push(Body {
            owner: self.fn_id,
            kind,
            pos,
            calls,
            tail: None,
        });
    }

    /// A crate-local `macro_rules!` expanded at lowering: its calls are reported at the
    /// invocation, and a single expression's type is the invocation's (`lock!(m).get()`).
    fn walk_expansion(&mut self, exprs: &[IrExpr], pos: Pos) -> Ty {
        let saved = self.pos_override;
        self.pos_override = Some(saved.unwrap_or(pos));
        let mut ty = Ty::Unknown;
        for e in exprs {
            ty = self.walk(e);
        }
        self.pos_override = saved;
        if exprs.len() == 1 {
            ty
        } else {
            Ty::Unknown
        }
    }

    fn walk_macro(
        &mut self,
        path: &IrPath,
        exprs: &[IrExpr],
        pos: Pos,
        first_ident: Option<&str>,
    ) -> Ty {
        let name = path.segments.last().map(|s| s.name.as_str()).unwrap_or("");
        // `write!(w, ..)` calls `w.write_fmt(..)`: a `File` or `TcpStream` writer blocks.
        if matches!(name, "write" | "writeln") && path.segments.len() == 1 {
            if let Some((first, rest)) = exprs.split_first() {
                let recv = self.walk(first);
                self.walk_method(recv, "write_fmt", rest, pos, None);
                return Ty::Unknown;
            }
        }
        // Logging crates' macros (`opaque_macros`) are not expanded.
        let expansion = self.index.find_macro(self.module, path).filter(|&m| {
            let unit = self.index.macros[m].unit;
            !self
                .rules
                .opaque_macros
                .contains(&self.index.units[unit].crate_name)
        });
        let into_closure = self.macro_closure_body.is_none()
            && expansion.is_some_and(|m| {
                !self.macro_stack.contains(&m)
                    && self.index.macros[m]
                        .arms
                        .iter()
                        .flatten()
                        .any(wraps_metavar_in_closure)
            });
        let mut bound_metavar = false;
        if into_closure {
            self.macro_closure_body = Some((exprs.to_vec(), self.pos_override, self.closure_depth));
            // `$conn.run(..)`: the leading `$conn:ident` is the invocation's first identifier.
            if let Some(local) = first_ident.and_then(|n| self.lookup(n)).cloned() {
                self.scopes
                    .push(BTreeMap::from([(METAVAR_PLACEHOLDER.to_string(), local)]));
                bound_metavar = true;
            }
        }
        let mut first_ty = Ty::Unknown;
        if !into_closure {
            for (i, e) in exprs.iter().enumerate() {
                let t = self.walk(e);
                if i == 0 {
                    first_ty = t;
                }
            }
        }
        if let Some(m) = expansion {
            // The budget bounds one expansion tree, not the function: a logging macro that
            // expands through dozens of helper macros must not hide the macros after it.
            if self.macro_stack.is_empty() {
                self.macro_budget = MACRO_BUDGET;
            }
            if self.macro_budget > 0 && !self.macro_stack.contains(&m) {
                self.macro_budget -= 1;
                let saved = self.pos_override;
                self.pos_override = Some(saved.unwrap_or(pos));
                self.macro_stack.push(m);
                for arm in &self.index.macros[m].arms {
                    for e in arm {
                        self.walk(e);
                    }
                }
                self.macro_stack.pop();
                self.pos_override = saved;
            }
        }
        if bound_metavar {
            self.pop_scope();
        }
        if into_closure {
            // The expansion did not reach the closure (budget, recursion): the arguments run
            // here, as for any other macro.
            if let Some((rest, _, _)) = self.macro_closure_body.take() {
                for e in &rest {
                    self.walk(e);
                }
            }
        }
        if expansion.is_some() {
            return Ty::Unknown;
        }
        std_macro_type(path, first_ty)
    }

    /// Walks call arguments: sync closures are collected separately, the rest inline.
    fn walk_args(&mut self, args: &[IrExpr]) -> (Vec<Ty>, Vec<ClosureArg>, Vec<(usize, usize)>) {
        self.walk_args_with(args, None)
    }

    /// Walks call arguments; sync closures (literal or `let`-bound) are kept with the call.
    /// `item` types the first parameter of closure arguments (iterator and Option adapters).
    fn walk_args_with(
        &mut self,
        args: &[IrExpr],
        item: Option<&Ty>,
    ) -> (Vec<Ty>, Vec<ClosureArg>, Vec<(usize, usize)>) {
        let mut types = Vec::new();
        let mut closures = Vec::new();
        let mut param_args = Vec::new();
        let mut typed = std::mem::take(&mut self.closure_params);
        let mut expected = std::mem::take(&mut self.args_expected);
        for (i, a) in args.iter().enumerate() {
            // A closure written as the value of a block (`spawn_blocking({ let x = x.clone();
            // move || .. })`, deno's and actix-rt's way of cloning what the closure captures)
            // is that argument's closure; the block's statements run here, before the call.
            let (closure, init) = match a {
                IrExpr::Block(b) => match b.stmts.split_last() {
                    Some((
                        IrStmt::Expr(
                            c @ IrExpr::Closure {
                                is_async: false, ..
                            },
                        ),
                        init,
                    )) => (Some(c), Some((b, init.len()))),
                    _ => (None, None),
                },
                IrExpr::Closure {
                    is_async: false, ..
                } => (Some(a), None),
                _ => (None, None),
            };
            if let Some(IrExpr::Closure { params, body, .. }) = closure {
                if let Some((b, n)) = init {
                    self.scopes.push(BTreeMap::new());
                    for s in 0..n {
                        self.walk_stmt(b, s);
                    }
                }
                let bound = typed.get_mut(i).and_then(Option::take);
                let (calls, bodies) = match &bound {
                    Some(tys) => self.walk_closure_body_typed(params, body, tys),
                    None => self.walk_closure_body(params, body, item),
                };
                if init.is_some() {
                    self.pop_scope();
                }
                for c in &calls {
                    for t in &c.targets {
                        if let Target::ParamCall(p) = t {
                            param_args.push((i, *p));
                        }
                    }
                }
                closures.push(ClosureArg {
                    arg: i,
                    calls,
                    bodies,
                });
                types.push(Ty::Unknown);
                continue;
            }
            match a {
                IrExpr::Path(p, pos) => {
                    let local = p.single().and_then(|n| self.lookup(n)).cloned();
                    if let Some(Local {
                        param: Some(pi), ..
                    }) = local
                    {
                        param_args.push((i, pi));
                    }
                    if let Some(Local {
                        closure: Some(c), ..
                    }) = local
                    {
                        self.closures[c].used = true;
                        closures.push(ClosureArg {
                            arg: i,
                            calls: self.closures[c].calls.clone(),
                            bodies: self.closures[c].bodies.clone(),
                        });
                    }
                    // A fn item handed over as a value (`.map(Key::load)`, `then(convert)`) is
                    // the closure `|..| Key::load(..)`: whether and where it runs is decided as
                    // for a closure written there.
                    if local.is_none() {
                        if let Some(call) = self.fn_item_call(p, *pos) {
                            closures.push(ClosureArg {
                                arg: i,
                                calls: vec![call],
                                bodies: 0..0,
                            });
                        }
                    }
                    self.expected = expected.get_mut(i).and_then(Option::take);
                    types.push(self.walk(a));
                }
                other => {
                    self.expected = expected.get_mut(i).and_then(Option::take);
                    types.push(self.walk(other));
                }
            }
        }
        (types, closures, param_args)
    }

    /// Appends a stored closure's calls where it is called; their `args_from` indices were
    /// relative to the closure's own call list.
    fn inline_calls(&mut self, calls: Vec<CallSite>) {
        let base = self.sink.len();
        self.sink.extend(calls.into_iter().map(|mut c| {
            c.args_from += base;
            c
        }));
    }

    /// Records where the argument calls of the call just pushed start (see
    /// [`CallSite::args_from`]).
    fn set_args_from(&mut self, args_start: usize) {
        if let Some(c) = self.sink.last_mut() {
            c.args_from = args_start;
        }
    }

    /// What the names a pattern binds from `init` may call: `let f = g;` and `if let Some(h) =
    /// handler` take the fn items `init` holds (the payload of `Some(g)`), `let hooks = Hooks {
    /// on_flush: flush_to_disk }` the fn items of each field.
    fn carry_fn_items(&mut self, pat: &IrPat, init: &IrExpr) {
        let Some(name) = pat.ident.or(pat.unwrap_ident) else {
            return;
        };
        let items = self.fn_items_of(init);
        let fields: Vec<(Name, Vec<Target>)> = match init {
            IrExpr::StructLit(_, fields) if pat.ident.is_some() => fields
                .iter()
                .map(|(n, v)| (*n, self.fn_items_of(v)))
                .filter(|(_, t)| !t.is_empty())
                .collect(),
            _ => Vec::new(),
        };
        if items.is_empty() && fields.is_empty() {
            return;
        }
        if let Some(local) = self.lookup_mut(&name) {
            local.fn_items = items;
            local.field_fn_items = fields;
        }
    }

    /// The functions an expression whose value is a fn item may name: a path to one, or the
    /// tails of `if`/`match`/block arms that are (`let f = match mode { A => a, B => b };`).
    fn fn_items_of(&mut self, e: &IrExpr) -> Vec<Target> {
        // The expressions whose value is the expression's: a block's tail, each branch's.
        fn tail(b: &IrBlock) -> Option<&IrExpr> {
            match b.stmts.last() {
                Some(IrStmt::Expr(t)) => Some(t),
                _ => None,
            }
        }
        let found = match e {
            IrExpr::Path(p, pos) => match p.single().and_then(|n| self.lookup(n)) {
                // A local holding fn items hands them on (`let h = handler;`).
                Some(local) => local.fn_items.clone(),
                None => match self.fn_item_call(p, *pos) {
                    Some(call) => call.targets,
                    None => Vec::new(),
                },
            },
            // `Some(throttle)` / `Ok(f)`: the payload's, taken out again by `Some(h)` patterns
            // ([`Walker::carry_fn_items`]).
            IrExpr::Call { func, args, .. }
                if args.len() == 1
                    && matches!(&**func, IrExpr::Path(p, _)
                        if matches!(p.single(), Some("Some" | "Ok"))) =>
            {
                self.fn_items_of(&args[0])
            }
            IrExpr::Block(b) => tail(b).map_or_else(Vec::new, |t| self.fn_items_of(t)),
            IrExpr::If {
                then, otherwise, ..
            } => {
                let mut ts = tail(then).map_or_else(Vec::new, |t| self.fn_items_of(t));
                if let Some(o) = otherwise {
                    ts.extend(self.fn_items_of(o));
                }
                ts
            }
            IrExpr::Match { arms, .. } => arms
                .iter()
                .flat_map(|(_, arm)| self.fn_items_of(arm))
                .collect(),
            _ => Vec::new(),
        };
        let mut unique: Vec<Target> = Vec::new();
        for t in found {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        unique
    }

    /// The call a fn item named as a value stands for, when the path names a function of the
    /// graph or a blocking API; `None` for constants, statics, unit structs and variants.
    fn fn_item_call(&mut self, path: &IrPath, pos: Pos) -> Option<CallSite> {
        if matches!(path.single(), Some("true" | "false")) {
            return None;
        }
        let (targets, _) = self.resolve_call_path(path, &[], None);
        let targets: Vec<Target> = targets?
            .into_iter()
            .filter(|t| match t {
                Target::Fn(..) => true,
                Target::External(p, _) => self.rules.match_path(p).is_some(),
                _ => false,
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        Some(CallSite {
            pos: self.pos(pos),
            targets,
            closure_args: Vec::new(),
            param_args: Vec::new(),
            hold: Hold::Unknown,
            addr_is_ip: false,
            str_arg: None,
            args_from: 0,
            guard: None,
            field_guard: None,
            facts: None,
        })
    }

    fn push_call(
        &mut self,
        pos: Pos,
        targets: Vec<Target>,
        closure_args: Vec<ClosureArg>,
        param_args: Vec<(usize, usize)>,
    ) {
        let pos = self.pos(pos);
        self.sink.push(CallSite {
            pos,
            targets,
            closure_args,
            param_args,
            hold: Hold::Unknown,
            addr_is_ip: false,
            str_arg: None,
            args_from: self.sink.len(),
            guard: None,
            field_guard: None,
            facts: None,
        });
    }

    /// The parameter of the walked function an expression is, unchanged: `x`, `&x`, `*x`,
    /// `self` ([`crate::values::SELF_SLOT`]). A local that shadows the parameter is not it.
    fn param_slot(&self, e: &IrExpr) -> Option<u32> {
        match e {
            IrExpr::Ref(inner) | IrExpr::Deref(inner) => self.param_slot(inner),
            IrExpr::Path(p, _) => {
                let n = p.single()?;
                if n == "self" {
                    // An instance ([`crate::instances`]) is numbered past the index: its base's
                    // signature is its own.
                    let def = self.base_fn(self.fn_id);
                    return self.index.fns[def].ir.sig.has_self.then_some(SELF_SLOT);
                }
                self.lookup(n)?.param.map(|i| i as u32)
            }
            _ => None,
        }
    }

    /// The struct field an expression reads, through `&`, `*` and the accessors that keep its
    /// variant (`self.skip.as_ref()`), with its owner type's name when the receiver's type is
    /// known ([`crate::fields`]). Tuple fields are not tracked.
    fn field_of(&self, e: &IrExpr) -> Option<(Option<Name>, Name)> {
        match e {
            IrExpr::Ref(inner) | IrExpr::Deref(inner) => self.field_of(inner),
            IrExpr::MethodCall {
                receiver,
                method,
                args,
                ..
            } if args.is_empty()
                && matches!(
                    method.as_str(),
                    "as_ref"
                        | "as_deref"
                        | "as_mut"
                        | "as_deref_mut"
                        | "clone"
                        | "cloned"
                        | "copied"
                ) =>
            {
                self.field_of(receiver)
            }
            IrExpr::Field(recv, name) if !name.starts_with(|c: char| c.is_ascii_digit()) => {
                Some((self.owner_name(recv), *name))
            }
            _ => None,
        }
    }

    /// The name of the type of `self` or of a typed local, as [`crate::fields`] keys owners.
    fn owner_name(&self, recv: &IrExpr) -> Option<Name> {
        let ty = match recv {
            IrExpr::Ref(inner) | IrExpr::Deref(inner) => return self.owner_name(inner),
            IrExpr::Path(p, _) => {
                let n = p.single()?;
                if n == "self" {
                    self.self_ty.clone()?
                } else {
                    self.lookup(n)?.ty.clone()
                }
            }
            _ => return None,
        };
        let mut ty = &ty;
        while let Ty::Ref(inner) = ty {
            ty = inner;
        }
        match ty {
            Ty::Adt(TyCon::Local(id), _) => Some(crate::ir::name(&self.index.types[*id].name)),
            Ty::Adt(TyCon::External(p), _) => p.rsplit("::").next().map(crate::ir::name),
            _ => None,
        }
    }

    /// An `if` condition that tests a field: `x.flag`, `!x.flag`, `x.f.is_some()`,
    /// `x.f.is_none()`: the field, the variant the then-branch needs, the else-branch's.
    fn field_test(&self, cond: &IrExpr) -> Option<((Option<Name>, Name), Name, Name)> {
        let yes = crate::values::bool_name(true);
        let no = crate::values::bool_name(false);
        let (some, none) = (crate::ir::name("Some"), crate::ir::name("None"));
        match cond {
            IrExpr::Field(..) => Some((self.field_of(cond)?, yes, no)),
            IrExpr::Other(inner) if inner.len() == 1 && matches!(inner[0], IrExpr::Field(..)) => {
                Some((self.field_of(&inner[0])?, no, yes))
            }
            IrExpr::MethodCall {
                receiver,
                method,
                args,
                ..
            } if args.is_empty() => match method.as_str() {
                "is_some" => Some((self.field_of(receiver)?, some, none)),
                "is_none" => Some((self.field_of(receiver)?, none, some)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Guards the calls pushed in `range` by a field holding one of `variants`; a pattern that
    /// is not only `Option`/`bool` variants constrains nothing ([`crate::fields::decidable`]).
    fn field_guard_range(
        &mut self,
        range: std::ops::Range<usize>,
        (owner, field): (Option<Name>, Name),
        variants: &[Name],
    ) {
        if variants.is_empty() || !variants.iter().all(|v| crate::fields::decidable(v)) {
            return;
        }
        let cond = FieldCond {
            owner,
            field,
            any_of: variants.into(),
        };
        add_field_guard(&mut self.sink[range], &cond);
    }

    /// An `if` condition that tests a parameter by itself: `flag` (true) or `!flag` (false;
    /// lowered as an [`IrExpr::Other`] of the operand, and an `if` condition is a bool).
    fn flag_test(&self, cond: &IrExpr) -> Option<(u32, bool)> {
        match cond {
            IrExpr::Path(..) => self.param_slot(cond).map(|s| (s, true)),
            IrExpr::Other(inner) if inner.len() == 1 && matches!(inner[0], IrExpr::Path(..)) => {
                self.param_slot(&inner[0]).map(|s| (s, false))
            }
            _ => None,
        }
    }

    /// `param.unwrap_or_else(|| build())` on an `Option`/`Result` parameter: the closure runs only
    /// when the parameter is `None`/`Err` (`map`, `and_then`: only when `Some`/`Ok`), so the call
    /// carrying it is guarded like a `match` arm on the parameter ([`crate::values`]). A caller
    /// passing `Some(client)` never reaches the closure: sentry's
    /// `ReqwestHttpTransport::with_client` calls `new_internal(options, Some(client))`, whose
    /// `client.unwrap_or_else(|| { .. load the system's certificates .. })` reached mas'
    /// transport setup before (scripts/apps/review-s11-new.toml).
    fn guard_plumbing_closures(
        &mut self,
        first_call: usize,
        pos: Pos,
        recv: &IrExpr,
        method: &str,
    ) {
        let variants: &[&str] = match method {
            "unwrap_or_else" | "or_else" | "ok_or_else" | "get_or_insert_with" | "map_err"
            | "inspect_err" => &["None", "Err"],
            "map" | "and_then" | "inspect" | "filter" | "is_some_and" | "is_ok_and" | "map_or" => {
                &["Some", "Ok"]
            }
            _ => return,
        };
        let Some(slot) = self.param_slot(recv) else {
            return;
        };
        let cond = Cond {
            slot,
            any_of: variants.iter().map(|v| crate::ir::name(v)).collect(),
        };
        if let Some(c) = self.pushed_call(first_call, pos) {
            add_guard(std::slice::from_mut(c), &cond);
        }
    }

    /// Records on the calls pushed since `from` (closure arguments' calls included) that they
    /// run only when parameter `slot` is one of `variants`; no variants, no condition.
    fn guard_calls(&mut self, from: usize, slot: u32, variants: &[Name]) {
        let to = self.sink.len();
        self.guard_calls_range(from, to, slot, variants);
    }

    /// [`Self::guard_calls`] for the calls pushed in `from..to`.
    fn guard_calls_range(&mut self, from: usize, to: usize, slot: u32, variants: &[Name]) {
        if variants.is_empty() {
            return;
        }
        let cond = Cond {
            slot,
            any_of: variants.iter().copied().collect(),
        };
        add_guard(&mut self.sink[from..to], &cond);
    }

    /// Records on the call at `pos` pushed since `first_call` which of its arguments are
    /// constant variants or the walked function's parameters ([`crate::values`]).
    ///
    /// Returns whether the receiver or the first argument is an IP address
    /// ([`Self::is_ip_address`]): the address a dns-only API would resolve.
    fn mark_facts(
        &mut self,
        first_call: usize,
        pos: Pos,
        receiver: Option<&IrExpr>,
        args: &[IrExpr],
    ) -> bool {
        let fact = |w: &Self, e: &IrExpr| -> Option<Fact> {
            // Known from the type, so it holds whatever the caller passed.
            if w.is_ip_address(e) {
                return Some(Fact::Variant(crate::values::ip_address_variant()));
            }
            if let Some(slot) = w.param_slot(e) {
                return Some(Fact::Param(slot));
            }
            // A local of an UpperCamel name is a value, not a variant.
            let local = match e {
                IrExpr::Path(p, _) => p.single().is_some_and(|n| w.lookup(n).is_some()),
                _ => false,
            };
            if local {
                return None;
            }
            variant_of(e).map(Fact::Variant)
        };
        let facts = ArgFacts {
            method_syntax: receiver.is_some(),
            receiver: receiver.and_then(|r| fact(self, r)),
            args: args
                .iter()
                .enumerate()
                .filter_map(|(i, a)| fact(self, a).map(|f| (i as u32, f)))
                .collect(),
        };
        let ip = Fact::Variant(crate::values::ip_address_variant());
        let addr_is_ip = facts.receiver == Some(ip) || facts.args.first() == Some(&(0, ip));
        if !facts.is_empty() {
            if let Some(c) = self.pushed_call(first_call, pos) {
                c.facts = Some(Box::new(facts));
            }
        }
        addr_is_ip
    }

    /// The call at `pos` pushed since `first_call`: the call itself, pushed after its
    /// arguments' calls (the last one at that position).
    fn pushed_call(&mut self, first_call: usize, pos: Pos) -> Option<&mut CallSite> {
        let pos = self.pos(pos);
        self.sink[first_call..]
            .iter_mut()
            .rev()
            .find(|c| c.pos == pos)
    }

    /// Marks the call at `pos` pushed since `first_call` (the call itself, after its arguments'
    /// calls) as taking an address that needs no name resolution.
    fn mark_addr_is_ip(&mut self, first_call: usize, pos: Pos) {
        if let Some(c) = self.pushed_call(first_call, pos) {
            c.addr_is_ip = true;
        }
    }

    /// A dns-only API (the rules' `dns_only_apis`) called at `pos` with the walked function's
    /// parameter as its address (`addr`): the call runs only in the arm "the parameter is not an
    /// IP address", so a caller passing one (an [`crate::values::ip_address_variant`] fact)
    /// excludes it in that context ([`crate::values`]).
    fn guard_dns_on_params(&mut self, first_call: usize, pos: Pos, addr: Option<&IrExpr>) {
        let Some(slot) = addr.and_then(|a| self.param_slot(a)) else {
            return;
        };
        let rules = self.rules;
        let Some(c) = self.pushed_call(first_call, pos) else {
            return;
        };
        let dns_only = c.targets.iter().any(|t| match t {
            Target::External(p, _) => rules
                .match_path(p)
                .is_some_and(|m| rules.rules[m.rule].apis[m.api].dns_only),
            _ => false,
        });
        if dns_only {
            let cond = Cond {
                slot,
                any_of: Arc::from([crate::values::host_name_variant()]),
            };
            add_guard(std::slice::from_mut(c), &cond);
        }
    }

    /// Records on the call at `pos` pushed since `first_call` the short string literal written
    /// as its first argument (`Regex::new("^[a-z]+$")`).
    fn mark_str_arg(&mut self, first_call: usize, pos: Pos, text: crate::ir::Name) {
        if let Some(c) = self.pushed_call(first_call, pos) {
            c.str_arg = Some(text);
        }
    }

    /// Whether an (already walked) expression is an IP address with a port: an `IP:port` string
    /// literal, a local, field or reference of type `SocketAddr`/`SocketAddrV4`/`SocketAddrV6`,
    /// or a pair whose first element is an `IpAddr`/`Ipv4Addr`/`Ipv6Addr` (`(ip, port)`).
    /// Typed without walking again, so no call is recorded twice.
    fn is_ip_address(&self, e: &IrExpr) -> bool {
        fn value_type(w: &Walker<'_>, e: &IrExpr) -> Ty {
            match e {
                IrExpr::Path(p, _) => w.path_value_type(p),
                IrExpr::Field(base, name) => w.field_type(&value_type(w, base), name),
                IrExpr::Ref(inner) | IrExpr::Deref(inner) => value_type(w, inner),
                IrExpr::Tuple(elems) => Ty::Tuple(elems.iter().map(|x| value_type(w, x)).collect()),
                _ => Ty::Unknown,
            }
        }
        if matches!(e, IrExpr::SocketAddrStr) {
            return true;
        }
        let ty = value_type(self, e);
        let is = |ty: &Ty, paths: &[&str]| {
            ty.peel_refs()
                .external_path()
                .is_some_and(|p| paths.contains(&p))
        };
        match ty.peel_refs() {
            // `(ip, port)`: std's `ToSocketAddrs` for `(IpAddr, u16)` builds the address.
            Ty::Tuple(elems) => {
                elems.len() == 2
                    && is(
                        &elems[0],
                        &[
                            "std::net::IpAddr",
                            "std::net::Ipv4Addr",
                            "std::net::Ipv6Addr",
                        ],
                    )
            }
            t => is(
                t,
                &[
                    "std::net::SocketAddr",
                    "std::net::SocketAddrV4",
                    "std::net::SocketAddrV6",
                ],
            ),
        }
    }

    fn walk_call(
        &mut self,
        func: &IrExpr,
        args: &[IrExpr],
        pos: Pos,
        expected: Option<Expected>,
    ) -> Ty {
        // `(hooks.on_flush)(..)` on a local bound to a struct literal that stored fn items.
        if let IrExpr::Field(base, field) = func {
            let stored = match &**base {
                IrExpr::Path(p, _) => p.single().and_then(|n| self.lookup(n)).and_then(|l| {
                    l.field_fn_items
                        .iter()
                        .find(|(f, _)| f == field)
                        .map(|(_, t)| t.clone())
                }),
                _ => None,
            };
            if let Some(targets) = stored {
                self.walk(func);
                let (_, closures, params) = self.walk_args(args);
                self.push_call(pos, targets, closures, params);
                return Ty::Unknown;
            }
        }
        let IrExpr::Path(path, _) = func else {
            // `(self.persist)(v)`: the fn items the struct's constructors store in that field.
            let stored = match func {
                IrExpr::Field(base, field) => match self.walk(base).peel_refs() {
                    Ty::Adt(TyCon::Local(tid), _) => {
                        self.table.field_fns.get(self.index, *tid, field.as_str())
                    }
                    _ => Default::default(),
                },
                _ => {
                    self.walk(func);
                    Default::default()
                }
            };
            let targets = if stored.is_empty() {
                vec![Target::Unresolved(Unresolved::FnPointer)]
            } else {
                stored
                    .iter()
                    .map(|&f| Target::Fn(f, Confidence::Medium))
                    .collect()
            };
            let (_, closures, params) = self.walk_args(args);
            self.push_call(pos, targets, closures, params);
            return Ty::Unknown;
        };
        if let Some(name) = path.single() {
            if let Some(local) = self.lookup(name).cloned() {
                if let Some(c) = local.closure {
                    let (_, closures, params) = self.walk_args(args);
                    self.closures[c].used = true;
                    let calls = self.closures[c].calls.clone();
                    self.inline_calls(calls);
                    if !closures.is_empty() || !params.is_empty() {
                        self.push_call(
                            pos,
                            vec![Target::Unresolved(Unresolved::ClosureValue)],
                            closures,
                            params,
                        );
                    }
                    return self.closures[c].ret.clone();
                }
                let (_, closures, params) = self.walk_args(args);
                if !local.fn_items.is_empty() {
                    self.push_call(pos, local.fn_items.clone(), closures, params);
                    return Ty::Unknown;
                }
                let target = match local.param {
                    Some(p) => Target::ParamCall(p),
                    None => Target::Unresolved(Unresolved::ClosureValue),
                };
                self.push_call(pos, vec![target], closures, params);
                return Ty::Unknown;
            }
        }
        if path.segments.first().map(|s| s.name.as_str()) == Some(METAVAR_PLACEHOLDER) {
            let (_, closures, params) = self.walk_args(args);
            let target = Target::Unresolved(Unresolved::MacroMetavar);
            self.push_call(pos, vec![target], closures, params);
            return Ty::Unknown;
        }
        let args_start = self.sink.len();
        // `Ok(e)` / `Some(e)`: `e` is expected to be the payload.
        if matches!(path.single(), Some("Ok" | "Some")) && args.len() == 1 {
            self.args_expected = vec![expected.as_ref().and_then(Expected::inside)];
        }
        let (arg_types, closures, params) = self.walk_args(args);
        let (targets, ret) = self.resolve_call_path(path, &arg_types, expected.as_ref());
        match targets {
            None => ret, // a constructor: tuple struct or enum variant
            Some(targets) => {
                let fields = self.dyn_field_args(args);
                let targets =
                    self.instantiate_with(targets, None, &arg_types, &fields, expected.as_ref());
                self.push_call(pos, targets, closures, params);
                self.set_args_from(args_start);
                ret
            }
        }
    }

    /// Resolves the callee of a path call. `None` targets: the path is a constructor.
    fn resolve_call_path(
        &mut self,
        path: &IrPath,
        arg_types: &[Ty],
        expected: Option<&Expected>,
    ) -> (Option<Vec<Target>>, Ty) {
        let method = path
            .segments
            .last()
            .map(|s| s.name.to_string())
            .unwrap_or_default();
        if let Some(q) = &path.qself {
            let qty = self.resolve_ty(q);
            if path.qself_position == 0 {
                let targets = self.assoc_targets(&qty, &method);
                let ret = self.return_type(&targets, Some(&qty), arg_types);
                return (
                    Some(self.or_unresolved(targets, Unresolved::UnknownPath)),
                    ret,
                );
            }
            let trait_path = IrPath {
                leading_colon: path.leading_colon,
                segments: path.segments[..path.qself_position as usize].into(),
                qself: None,
                qself_position: 0,
            };
            let tr = self.index.resolve_trait(self.module, &trait_path);
            let mut targets = match (&qty, &tr) {
                (Ty::Adt(TyCon::Local(_), _), _) => self.method_targets(&qty, &method),
                // `<&str as FromSql>::from_sql(..)`: the graph's impl for that std type, else
                // every impl of the trait.
                (_, TraitRef::Local(t)) => {
                    let found = self.std_impl_fns(&qty, &method, Some(*t));
                    if found.is_empty() {
                        self.trait_dispatch(*t, &method)
                    } else {
                        found
                            .into_iter()
                            .map(|(_, f)| Target::Fn(f, Confidence::High))
                            .collect()
                    }
                }
                (Ty::Adt(TyCon::External(p), _), _) => {
                    vec![Target::External(format!("{p}::{method}"), Confidence::High)]
                }
                (_, TraitRef::External(p)) => vec![Target::External(
                    format!("{p}::{method}"),
                    Confidence::Medium,
                )],
            };
            if targets.is_empty() {
                if let TraitRef::Local(t) = tr {
                    targets = self.trait_dispatch(t, &method);
                }
            }
            let ret = self.return_type(&targets, Some(&qty), arg_types);
            return (
                Some(self.or_unresolved(targets, Unresolved::UnknownPath)),
                ret,
            );
        }
        let names: Vec<String> = path.segments.iter().map(|s| s.name.to_string()).collect();
        // `Self(..)` in an impl of a tuple struct: its constructor.
        if names.len() == 1 && names[0] == "Self" {
            if let Some(st @ Ty::Adt(TyCon::Local(t), _)) = &self.self_ty {
                if matches!(self.index.types[*t].kind, TypeKind::Struct { .. }) {
                    return (None, st.clone());
                }
            }
        }
        if names.len() == 2 && names[0] == "Self" {
            let st = self.self_ty.clone().unwrap_or(Ty::Unknown);
            let mut targets = self.std_self_impls(&st, &method);
            if targets.is_empty() {
                targets = self.assoc_targets(&st, &method);
            }
            // `Self::Variant(..)` in an impl of an enum: a constructor, no call; so is
            // `Self::default()` of a type deriving `Default` (the derive writes no fn here).
            if let Ty::Adt(TyCon::Local(t), _) = &st {
                let def = &self.index.types[*t];
                if targets.is_empty()
                    && (def.kind.has_variant(&method)
                        || (method == "default" && derives(def, "Default")))
                {
                    return (None, st);
                }
            }
            let ret = self.return_type(&targets, Some(&st), arg_types);
            return (
                Some(self.or_unresolved(targets, Unresolved::UnknownPath)),
                ret,
            );
        }
        let resolved = self
            .index
            .resolve_path_in(self.module, &names, path.leading_colon, 0);
        let mut targets = Vec::new();
        let mut ctor = None;
        for r in &resolved {
            match r {
                Res::Fn(f) => targets.push(Target::Fn(*f, Confidence::High)),
                Res::External(p) => {
                    let p = p.join("::");
                    if is_constructor_path(&p) {
                        ctor = Some(constructor_type(&p, arg_types));
                    } else {
                        targets.push(Target::External(p, Confidence::High));
                    }
                }
                Res::Type(t) => ctor = Some(Ty::Adt(TyCon::Local(*t), Vec::new())),
                _ => {}
            }
        }
        if targets.is_empty() {
            if let Some(c) = ctor {
                return (None, c);
            }
        }
        if targets.is_empty() && names.len() >= 2 {
            let prefix = IrPath {
                leading_colon: path.leading_colon,
                segments: path.segments[..path.segments.len() - 1].into(),
                qself: None,
                qself_position: 0,
            };
            let ty = self.resolve_ty(&IrType::Path(prefix));
            if ty.is_unknown() && resolved.is_empty() && !self.first_segment_known(path) {
                // A crate outside the analysed graph (or not declared): keep the path as
                // written so rules and boundaries named by path still match.
                let p = crate::ty::canonical_external(names.clone()).join("::");
                let target = Target::External(p, Confidence::High);
                let ret = self.return_type(std::slice::from_ref(&target), None, arg_types);
                return (Some(vec![target]), ret);
            }
            if let Ty::Adt(TyCon::Local(t), _) = &ty {
                if matches!(self.index.types[*t].kind, TypeKind::Enum { .. })
                    && self.assoc_targets(&ty, &method).is_empty()
                {
                    return (None, ty); // an enum variant
                }
            }
            targets = match &ty {
                Ty::Adt(TyCon::Local(t), _) => self
                    .trait_call_on_receiver(*t, &method, arg_types)
                    .or_else(|| self.trait_call_on_expected(*t, &method, expected?)),
                // `T::from_sql(..)` with `T` bound to a std type in this instance.
                _ if names.len() == 2 && self.subst.contains_key(names[0].as_str()) => {
                    Some(self.std_self_impls(&ty, &method)).filter(|t| !t.is_empty())
                }
                _ => None,
            }
            .unwrap_or_else(|| self.assoc_targets(&ty, &method));
            // `CliSys::default()` on a type deriving `Default`: a value of the type, no call
            // (the derive's code is generated). It binds what the value is passed to.
            if let Ty::Adt(TyCon::Local(t), _) = &ty {
                let derives_default = || {
                    self.index.types[*t]
                        .derives
                        .iter()
                        .any(|d| d.segments.last().is_some_and(|s| s.name == "Default"))
                };
                if targets.is_empty() && method == "default" && derives_default() {
                    return (None, ty);
                }
            }
            let ret = self.return_type(&targets, Some(&ty), arg_types);
            return (
                Some(self.or_unresolved(targets, Unresolved::UnknownPath)),
                ret,
            );
        }
        if let [Target::Fn(decl, _)] = targets.as_slice() {
            if let Some(FnOwner::Trait(t)) = self.index.fns.get(*decl).map(|d| d.owner) {
                if let Some(found) = self
                    .trait_call_on_receiver(t, &method, arg_types)
                    .or_else(|| self.trait_call_on_expected(t, &method, expected?))
                {
                    targets = found;
                }
            }
        }
        // `Read::read_to_end(f, ..)`: a std trait method called on a known std type.
        if let (Some(Target::External(p, _)), Some(recv)) = (targets.first(), arg_types.first()) {
            if targets.len() == 1 && self.rules.match_path(p).is_none() {
                let (alt, _) = self.method_lookup(recv, &method);
                if let Some(Target::External(q, c)) = alt.first() {
                    if self.rules.match_path(q).is_some() {
                        targets = vec![Target::External(q.clone(), *c)];
                    }
                }
            }
        }
        let ret = self.return_type(&targets, None, arg_types);
        (
            Some(self.or_unresolved(targets, Unresolved::UnknownPath)),
            ret,
        )
    }

    /// `Trait::method(x, ..)`, a trait's method named by path with the receiver as the first
    /// argument (ratatui's `Widget::render(&self, area, buf)`): the impl of that trait that
    /// `x.method(..)` finds for `x`'s type, not every impl of the trait. Without this, the call
    /// in `impl Widget for Block` reached every `Widget` and `StatefulWidget` impl of the graph,
    /// atuin's history list among them (scripts/apps/review-s11-new.toml). `None`: `t` is not a
    /// trait, the method takes no `self`, the first argument's type is unknown or
    /// generic, or its lookup finds no impl of the trait (the trait's dispatch stays).
    fn trait_call_on_receiver(
        &self,
        t: usize,
        method: &str,
        arg_types: &[Ty],
    ) -> Option<Vec<Target>> {
        let decl = self.trait_method(t, method, 0)?;
        let FnOwner::Trait(t) = self.index.fns[decl].owner else {
            return None;
        };
        let recv = arg_types.first()?;
        if !self.index.fns[decl].ir.sig.has_self
            || recv.is_unknown()
            || matches!(recv.peel_refs(), Ty::Param { .. } | Ty::Dyn(_))
        {
            return None;
        }
        self.trait_impl_for(t, decl, recv, method)
    }

    /// `Trait::method(..)` whose `Self` only its return type names (postgres-types'
    /// `FromSql::from_sql_nullable(ty, raw) -> Result<Self, _>`, called by tokio-postgres'
    /// `Row::get_inner` as the value it returns): the impl for the type the context expects
    /// there. `None` when the expectation binds no concrete `Self`.
    fn trait_call_on_expected(
        &self,
        t: usize,
        method: &str,
        expected: &Expected,
    ) -> Option<Vec<Target>> {
        let decl = self.trait_method(t, method, 0)?;
        let FnOwner::Trait(t) = self.index.fns[decl].owner else {
            return None;
        };
        let def = &self.index.fns[decl];
        let ret = def.ir.sig.ret.as_ref()?;
        let self_param = Ty::Param {
            name: "Self".into(),
            bounds: vec![TraitRef::Local(t)],
            bound_args: Vec::new(),
        };
        let declared =
            self.index
                .resolve_type(def.module, ret, &def.ir.sig.generics, Some(&self_param));
        let mut subst = Subst::new();
        expected.unify_return(&declared, &mut subst);
        let implementor = subst
            .remove("Self")
            .filter(crate::instances::binds_generic)?;
        match &implementor {
            Ty::Adt(TyCon::External(_), _) => {
                Some(self.std_self_impls(&implementor, method)).filter(|f| !f.is_empty())
            }
            _ => self.trait_impl_for(t, decl, &implementor, method),
        }
    }

    /// The graph's impls of `method` for the std type `st`, with their trait in scope:
    /// `Self::from_sql(..)` in `impl FromSql for String`, or `T::from_sql(..)` in an instance
    /// that bound `T` to `String` ([`crate::instances::call_bindings`]), is that impl's fn,
    /// which std's type knows nothing of. Empty for any other type.
    fn std_self_impls(&self, st: &Ty, method: &str) -> Vec<Target> {
        if !matches!(st, Ty::Adt(TyCon::External(_), _)) {
            return Vec::new();
        }
        let explicit = self.std_impl_fns(st, method, None);
        self.in_scope(explicit, Vec::new(), Fallback::None)
    }

    /// The fns named `method` of the graph's explicit impls for the std type `st` (behind
    /// references: `impl FromSql for &str` for `<&str as FromSql>::from_sql`), of trait `tr`
    /// only when given, with the trait each belongs to (a provided method as the impl's
    /// instance, [`Walker::impl_method`]).
    fn std_impl_fns(&self, st: &Ty, method: &str, tr: Option<usize>) -> Vec<(Option<usize>, FnId)> {
        let Some(p) = st.peel_refs().std_owner_name() else {
            return Vec::new();
        };
        let mut explicit = Vec::new();
        for &iid in self.index.external_impls_with(p, method) {
            if tr.is_some_and(|t| self.index.impls[iid].trait_ref != Some(TraitRef::Local(t))) {
                continue;
            }
            self.impl_method(iid, method, &mut explicit);
        }
        explicit
    }

    /// The fns of trait `t`'s impl (or provided-method instance) that `method` finds on
    /// `recv`; `None` when lookup finds none of the trait's.
    fn trait_impl_for(&self, t: usize, decl: FnId, recv: &Ty, method: &str) -> Option<Vec<Target>> {
        let of_trait = |g: FnId| {
            let base = self.base_fn(g);
            if base == decl {
                return true;
            }
            let owner = self
                .instance_impl(g)
                .map_or(self.index.fns[base].owner, FnOwner::Impl);
            matches!(owner, FnOwner::Impl(i)
                if self.index.impls[i].trait_ref == Some(TraitRef::Local(t)))
        };
        let found: Vec<Target> = self
            .method_targets(recv, method)
            .into_iter()
            .filter(|target| matches!(target, Target::Fn(g, _) if of_trait(*g)))
            .collect();
        (!found.is_empty()).then_some(found)
    }

    fn first_segment_known(&self, path: &IrPath) -> bool {
        let first = [path.segments[0].name.to_string()];
        matches!(first[0].as_str(), "crate" | "self" | "super" | "Self")
            || self.generics.iter().any(|g| g.name == first[0])
            || !self
                .index
                .resolve_path_in(self.module, &first, path.leading_colon, 0)
                .is_empty()
    }

    fn or_unresolved(&self, targets: Vec<Target>, why: Unresolved) -> Vec<Target> {
        if targets.is_empty() {
            vec![Target::Unresolved(why)]
        } else {
            targets
        }
    }

    fn walk_method(
        &mut self,
        recv: Ty,
        method: &str,
        args: &[IrExpr],
        pos: Pos,
        expected: Option<Expected>,
    ) -> Ty {
        let recv_peeled = recv.peel_refs().clone();
        // An adapter on a type of the graph that implements std's `Iterator` (sccache's
        // `ArgsIter::new(..).enumerate()`): std's provided method, typed as std's iterators are
        // with the impl's `Item`, and a call of the impl's `next`, which the adapter drives.
        if let Some((next, item)) = self.local_iterator(&recv_peeled, method) {
            let model = Ty::external("std::slice::Iter", vec![item]);
            let ty = self.walk_method(model, method, args, pos, None);
            let next = self.instantiate(
                vec![Target::Fn(next, Confidence::High)],
                Some(&recv_peeled),
                &[],
            );
            self.push_call(pos, next, Vec::new(), Vec::new());
            return ty;
        }
        let item = adapter_item(&recv_peeled, method);
        let args_start = self.sink.len();
        self.closure_ret = Ty::Unknown;
        self.closure_params = if item.is_none() {
            self.closure_param_types(&recv, method, args)
        } else {
            Vec::new()
        };
        let (arg_types, closures, params) = self.walk_args_with(args, item.as_ref());
        // The one closure argument's value type: what `map`-like adapters wrap.
        let closure_ret = match (args, closures.as_slice()) {
            ([IrExpr::Closure { .. }], [_]) => {
                std::mem::replace(&mut self.closure_ret, Ty::Unknown)
            }
            // A fn item in the closure's place (`.map(Arc::clone)`, `.map(PathBuf::from)`):
            // its value is the path called with the item.
            ([IrExpr::Path(p, _)], []) => match &item {
                Some(it) if !it.is_unknown() => {
                    self.resolve_call_path(p, std::slice::from_ref(it), None).1
                }
                _ => Ty::Unknown,
            },
            _ => Ty::Unknown,
        };
        if let Some(t) = mapped_result(&recv_peeled, method, &closure_ret) {
            if recv_peeled.external_path() == Some("std::slice::Iter") {
                let target =
                    Target::External(format!("std::iter::Iterator::{method}"), Confidence::High);
                self.push_call(pos, vec![target], closures, params);
            } else {
                let (targets, _) = self.method_lookup(&recv, method);
                self.push_call(pos, targets, closures, params);
                self.set_args_from(args_start);
            }
            return t;
        }
        if let Some(t) = iterator_result(&recv_peeled, method) {
            if !closures.is_empty() || !params.is_empty() {
                let target =
                    Target::External(format!("std::iter::Iterator::{method}"), Confidence::High);
                self.push_call(pos, vec![target], closures, params);
            }
            return t;
        }
        // Option/Result plumbing: not calls worth recording, but they carry the type. Results of
        // external calls are not modelled (`File::open` is typed `File`), so `unwrap` on any
        // other external type is the identity.
        if let Some(p) = recv_peeled.external_path() {
            let plumbing = crate::ty::is_option_or_result(p)
                && (is_unwrap_method(method)
                    || method == "ok"
                    || method == "as_ref"
                    || method == "as_mut");
            if (is_unwrap_method(method) || plumbing)
                && (!closures.is_empty() || !params.is_empty())
            {
                // `opt.unwrap_or_else(|| prepare_package(spec))`: the closure runs here when the
                // value is missing, so its calls are kept (the call itself is not modelled).
                let target = Target::External(format!("{p}::{method}"), Confidence::High);
                self.push_call(pos, vec![target], closures, params);
                self.set_args_from(args_start);
                return if plumbing && !is_unwrap_method(method) {
                    recv_peeled
                } else if plumbing {
                    recv_peeled.unwrap_result_like()
                } else {
                    recv_peeled
                };
            }
            if is_unwrap_method(method) && !crate::ty::is_option_or_result(p) {
                return recv_peeled;
            }
            // The same model: `dir.read_dir().ok()` is an `Option<ReadDir>` (no std type but
            // `Result` has an `ok` method).
            if method == "ok"
                && args.is_empty()
                && p.starts_with("std::")
                && !crate::ty::is_option_or_result(p)
            {
                return Ty::external("std::option::Option", vec![recv_peeled]);
            }
            if plumbing {
                return if is_unwrap_method(method) {
                    recv_peeled.unwrap_result_like()
                } else {
                    recv_peeled
                };
            }
        }
        // `x.into()` on a type of the graph: std's blanket `impl<T, U: From<T>> Into<U> for T`
        // calls `U::from(x)`, one of the graph's `From` impls taking x's type.
        if method == "into" && args.is_empty() {
            if let Some((targets, ret)) = self.conversion_via_from(&recv_peeled, expected.as_ref())
            {
                self.push_call(pos, targets, closures, params);
                self.set_args_from(args_start);
                return ret;
            }
        }
        // `(&x).m()` with `x` untyped: the receiver is as unknown as `x`. A tuple's methods
        // come from std's traits (`("h", 80).to_socket_addrs()`), which only the rules' name
        // fallbacks know, as before tuples were typed.
        let (targets, level) =
            if recv.peel_refs().is_unknown() || matches!(recv.peel_refs(), Ty::Tuple(_)) {
                (
                    vec![Target::UnknownMethod(method.to_string(), args.len())],
                    recv.clone(),
                )
            } else {
                let (t, level) = self.method_lookup(&recv, method);
                if t.is_empty() {
                    if is_identity_method(method) {
                        return bound_conversion(&recv_peeled, method).unwrap_or(recv_peeled);
                    }
                    if method == "into" && args.is_empty() {
                        // No `From` impl of the graph takes this type: the conversion is one of
                        // std's (`impl<T> From<T> for T`, `Option<T>`, `Box<dyn Error>`) or a
                        // generic impl's (`anyhow::Error: From<E: Error>`); which one the
                        // context wants is not inferred.
                        let into = "std::convert::Into::into".to_string();
                        self.push_call(
                            pos,
                            vec![Target::External(into, Confidence::Low)],
                            closures,
                            params,
                        );
                        self.set_args_from(args_start);
                        return Ty::Unknown;
                    }
                    (vec![Target::Unresolved(Unresolved::UnknownMethod)], level)
                } else {
                    (t, level)
                }
            };
        let ret = self.return_type(&targets, Some(&level), &arg_types);
        let targets =
            self.instantiate_with(targets, Some(&level), &arg_types, &[], expected.as_ref());
        self.push_call(pos, targets, closures, params);
        self.set_args_from(args_start);
        if ret.is_unknown() {
            if let Some(t) = bound_conversion(&recv_peeled, method) {
                return t;
            }
        }
        // `x.to_string()` on a type with no such method of its own: std's blanket `ToString`
        // for `Display` types (sqlx-sqlite's `Encode::<Sqlite>::encode(self.format("%F")
        // .to_string(), buf)` then dispatches on `String`).
        if ret.is_unknown() && method == "to_string" && args.is_empty() {
            return Ty::external("std::string::String", Vec::new());
        }
        if ret.is_unknown() && method == "collect" && args.is_empty() {
            if let Some(Expected::Is(into)) = &expected {
                if let Some(t) = collected(&recv_peeled, into) {
                    return t;
                }
            }
        }
        // At the level the method was found: `guard.as_ref()` on a `MutexGuard<Option<T>>` is
        // `Option::as_ref`, an `Option<&T>` (the references are the model's usual loss).
        if ret.is_unknown() && is_identity_method(method) {
            return match level.peel_refs() {
                Ty::Unknown => recv_peeled,
                found => found.clone(),
            };
        }
        // `extract(f).map_err(..)?`, `opt.ok_or(e)?`: the payload `?` and `unwrap` yield is
        // unchanged (mas' `AppConfig::extract(figment).map_err(anyhow::Error::from_boxed)?`).
        if ret.is_unknown() && keeps_payload(&recv_peeled, method) {
            return recv_peeled;
        }
        ret
    }

    /// Method lookup with auto-deref. External receivers yield `Type::method` at the first deref
    /// level whose path the rule database or the runtime table knows, else at the first level.
    fn method_targets(&self, recv: &Ty, method: &str) -> Vec<Target> {
        self.method_lookup(recv, method).0
    }

    /// Method lookup returning also the auto-deref level the method was found at (the receiver
    /// type its signature sees).
    fn method_lookup(&self, recv: &Ty, method: &str) -> (Vec<Target>, Ty) {
        let mut t = recv.clone();
        let mut first_external: Option<(String, Ty)> = None;
        let mut guard_fallback: Option<(String, Ty)> = None;
        for _ in 0..MAX_AUTODEREF {
            let peeled = t.peel_refs().clone();
            match &peeled {
                Ty::Adt(TyCon::Local(tid), args) => {
                    let found = self.local_methods(*tid, args, method, matches!(t, Ty::Ref(_)));
                    if !found.is_empty() {
                        return (found, peeled);
                    }
                }
                // `str` and slices are std types too, named `str::len`, `slice::len`.
                Ty::Adt(TyCon::External(_), _) | Ty::Str | Ty::Slice(_) => {
                    let p = peeled.std_owner_name().unwrap_or("slice");
                    let cand = format!("{p}::{method}");
                    // Extension traits of the analysed graph implemented for std types, explicitly
                    // or by a blanket impl, when in scope at the call.
                    let mut explicit = Vec::new();
                    for &iid in self.index.external_impls_with(p, method) {
                        // `impl Ext for [u8]` is no method of a `[String]`.
                        if let (Ty::Slice(have), Ty::Slice(want)) =
                            (&peeled, self.index.impls[iid].self_ty.peel_refs())
                        {
                            if !may_be_same(have, want) {
                                continue;
                            }
                        }
                        self.impl_method(iid, method, &mut explicit);
                    }
                    // An explicit impl of a trait in scope wins over std's method of the name:
                    // tokio's `self[..].to_socket_addrs(sealed::Internal)` on a `str` is its own
                    // sealed `ToSocketAddrsPriv`, not std's `ToSocketAddrs` (not in scope there).
                    // A graph's trait method named like one of std's inherent methods would be
                    // callable only by path, so a crate does not write one.
                    let own = self.in_scope(explicit, Vec::new(), Fallback::None);
                    if !own.is_empty() {
                        return (own, peeled);
                    }
                    if self.rules.match_path(&cand).is_some()
                        || self.rules.is_boundary(&cand)
                        || self.rules.is_opaque(&cand)
                    {
                        return (vec![Target::External(cand, Confidence::High)], peeled);
                    }
                    // No fallback for std types: their methods mostly come from std's own traits,
                    // which the index does not see, so an out-of-scope impl of the graph is not
                    // the answer (opentelemetry's `String::hash` is not garage's `PartitionKey`).
                    // Primitives, `str` and slices meet a blanket impl's bounds on the graph's
                    // traits only by explicit impls: "the trait has some blanket impl" would let
                    // `n.eq(&m)` on an `i32` reach diesel's `ExpressionMethods::eq`.
                    let blanket = if crate::ty::is_builtin(p) {
                        self.blanket_methods_where(method, |iid| self.bounds_explicitly_met(iid, p))
                    } else {
                        self.blanket_methods(Implementor::External(p), method)
                    };
                    // No explicit impl is in scope (above), so only blanket ones can answer.
                    let ext = self.in_scope(Vec::new(), blanket, Fallback::None);
                    if !ext.is_empty() {
                        return (ext, peeled);
                    }
                    // A guard's method is its target's (`has_no_methods`); its own name only
                    // when the target is unknown.
                    if crate::ty::has_no_methods(p) {
                        if guard_fallback.is_none() {
                            guard_fallback = Some((cand, peeled.clone()));
                        }
                    } else if first_external.is_none() {
                        first_external = Some((cand, peeled.clone()));
                    }
                }
                Ty::Param { bounds, .. } | Ty::Dyn(bounds) => {
                    let mut out = Vec::new();
                    for b in bounds {
                        match b {
                            TraitRef::Local(tr) => out.extend(self.trait_dispatch(*tr, method)),
                            TraitRef::External(p) => {
                                let cand = format!("{p}::{method}");
                                if self.rules.match_path(&cand).is_some() {
                                    out.push(Target::External(cand, Confidence::Medium));
                                }
                            }
                        }
                    }
                    // Else the std trait among the bounds the method belongs to: the call is
                    // that trait's method (`labels.next()` on `T: Iterator`), whatever `T` is
                    // at a call of the generic fn.
                    // A local bound's std supertraits count too: byteorder's `trait
                    // ReadBytesExt: io::Read` calls `self.read_exact(..)`, itertools'
                    // `trait Itertools: Iterator` calls `self.next()`.
                    if out.is_empty() {
                        let bounds = self.with_std_supertraits(bounds);
                        if let Some(tr) = std_bound_of(&bounds, method) {
                            let cand = format!("{tr}::{method}");
                            out.push(Target::External(cand, Confidence::Medium));
                        }
                    }
                    return (out, peeled);
                }
                _ => break,
            }
            match self.deref_once(&peeled) {
                Some(next) => t = next,
                None => break,
            }
        }
        match first_external.or(guard_fallback) {
            Some((c, level)) => (vec![Target::External(c, Confidence::High)], level),
            None => (Vec::new(), recv.clone()),
        }
    }

    /// `bounds` and the std traits among their local traits' supertraits, transitively.
    fn with_std_supertraits(&self, bounds: &[TraitRef]) -> Vec<TraitRef> {
        let mut out = bounds.to_vec();
        let mut seen = BTreeSet::new();
        let mut stack: Vec<usize> = bounds
            .iter()
            .filter_map(|b| match b {
                TraitRef::Local(t) => Some(*t),
                TraitRef::External(_) => None,
            })
            .collect();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            for s in self.index.supertraits_of(t) {
                match s {
                    TraitRef::Local(st) => stack.push(*st),
                    TraitRef::External(_) if !out.contains(s) => out.push(s.clone()),
                    TraitRef::External(_) => {}
                }
            }
        }
        out
    }

    /// Inherent methods; else the methods of the type's trait impls, explicit and blanket
    /// (`impl<T: Bound> Tr for T`), whose trait is in scope at the call, as rustc probes them.
    /// `by_ref`: the receiver is a reference to the type, so the impls for `&Type` come before
    /// the type's own (on an owned receiver they come after: autoref).
    ///
    /// Inherent methods of impls for other type arguments do not apply: `Self::build_internal`
    /// in `impl ConfigBuilder<AsyncState>` is that impl's (async) fn, not the one of `impl
    /// ConfigBuilder<DefaultState>` (config-rs; review round 8's wrong-impl). When no impl's
    /// arguments fit `args` (an argument inferred wrong), all are kept.
    fn local_methods(&self, tid: usize, args: &[Ty], method: &str, by_ref: bool) -> Vec<Target> {
        let ty = &self.index.types[tid];
        if let Some(fs) = ty.inherent.get(method) {
            let fits = |f: &FnId| match self.index.fns[*f].owner {
                FnOwner::Impl(iid) => {
                    type_args_fit(self.index.impls[iid].self_ty.type_args(), args)
                }
                _ => true,
            };
            let fitting: Vec<FnId> = fs.iter().copied().filter(fits).collect();
            let chosen = if fitting.is_empty() {
                fs.to_vec()
            } else {
                fitting
            };
            return chosen
                .into_iter()
                .map(|f| Target::Fn(f, Confidence::High))
                .collect();
        }
        let mut explicit = Vec::new();
        let (first, then) = if by_ref {
            (&ty.ref_trait_impls, &ty.trait_impls)
        } else {
            (&ty.trait_impls, &ty.ref_trait_impls)
        };
        for &iid in first {
            self.impl_method(iid, method, &mut explicit);
        }
        if explicit.is_empty() {
            for &iid in then {
                self.impl_method(iid, method, &mut explicit);
            }
        }
        let blanket = self.blanket_methods(Implementor::Local(tid), method);
        let found = self.in_scope(explicit, blanket, Fallback::Explicit);
        if found.is_empty() {
            return self.derived_methods(tid, method);
        }
        found
    }

    /// A method of a trait the type derives (`#[derive(Parser)]` then `Options::parse()`): the
    /// derive's impl is generated by a proc macro the analysis never runs, so the call goes to
    /// the trait's own method (its default body, with `Self` the type), at medium confidence.
    fn derived_methods(&self, tid: usize, method: &str) -> Vec<Target> {
        let ty = &self.index.types[tid];
        ty.derives
            .iter()
            .filter_map(|p| match self.index.resolve_trait(ty.module, p) {
                TraitRef::Local(t) => match &self.index.types[t].kind {
                    TypeKind::Trait { methods, .. } => methods.get(method).copied(),
                    _ => None,
                },
                _ => None,
            })
            .map(|f| Target::Fn(f, Confidence::Medium))
            .collect()
    }

    /// The blanket impls' methods named `method` that may apply to `implementor`.
    fn blanket_methods(
        &self,
        implementor: Implementor<'_>,
        method: &str,
    ) -> Vec<(Option<usize>, FnId)> {
        self.blanket_methods_where(method, |iid| self.blanket_applies(iid, implementor))
    }

    /// The methods named `method` of the blanket impls that `applies` accepts.
    fn blanket_methods_where(
        &self,
        method: &str,
        applies: impl Fn(usize) -> bool,
    ) -> Vec<(Option<usize>, FnId)> {
        let mut out = Vec::new();
        for &iid in self
            .index
            .blanket_by_method
            .get(method)
            .into_iter()
            .flatten()
        {
            if applies(iid) {
                self.impl_method(iid, method, &mut out);
            }
        }
        out
    }

    /// The method `method` an impl provides, or its trait's default: (local trait, fn).
    fn impl_method(&self, iid: usize, method: &str, out: &mut Vec<(Option<usize>, FnId)>) {
        let imp = &self.index.impls[iid];
        let tr = match &imp.trait_ref {
            Some(TraitRef::Local(t)) => Some(*t),
            _ => None,
        };
        if let Some(f) = imp.fns.get(method) {
            out.push((tr, *f));
        } else if let Some(t) = tr {
            if let Some(f) = self.trait_method(t, method, 0) {
                if self.index.fns[f].ir.body.is_some() {
                    // The default body runs with `Self` the impl's type: its instance for that
                    // impl ([`crate::instances`]), for a concrete type, of the graph or std's
                    // (sqlx-postgres' `impl Encode<Postgres> for i32` running `Encode::encode`'s
                    // `self.encode_by_ref(buf)`); a blanket impl's `Self` is a parameter. On a
                    // std type, method lookup inside finds std's inherent method of a name
                    // first, as rustc does, and else the in-scope impls of the graph.
                    let concrete = !matches!(imp.self_ty.peel_refs(), Ty::Param { .. })
                        && crate::instances::is_concrete(&imp.self_ty);
                    let f = if concrete && !self.candidate.get(f).copied().unwrap_or(false) {
                        self.instance_id(Instance {
                            base: f,
                            imp: Some(iid),
                            bind: Vec::new(),
                        })
                    } else {
                        f
                    };
                    out.push((tr, f));
                }
            }
        }
    }

    /// Generics bound at the call site ([`crate::instances`]): the one analysed target of a
    /// call whose generic parameters bounded by a trait of the graph (its own, its impl's, an
    /// `impl Trait` parameter's, or `Self` of a provided method met through a blanket impl on a
    /// concrete receiver) the receiver and argument types bind to concrete types becomes the
    /// instance with those bindings, so calls through them inside dispatch to the bound types'
    /// impls only. Anything else is kept: the base body dispatches to every impl.
    fn instantiate(
        &self,
        targets: Vec<Target>,
        recv: Option<&Ty>,
        arg_types: &[Ty],
    ) -> Vec<Target> {
        self.instantiate_with(targets, recv, arg_types, &[], None)
    }

    /// [`Walker::instantiate`], with the `&dyn Trait` fields of struct literals passed as
    /// arguments (argument index, field, the concrete type given).
    fn instantiate_with(
        &self,
        targets: Vec<Target>,
        recv: Option<&Ty>,
        arg_types: &[Ty],
        fields: &[(usize, Name, Ty)],
        expected: Option<&Expected>,
    ) -> Vec<Target> {
        // A call dispatched to a few impls (a generic receiver: sqlx's `arguments.add(value)` on
        // `DB::Arguments`) binds each impl's own generics from the arguments, so the value's
        // type still decides what runs inside (`value.encode(..)` on a `Uuid` is `Uuid`'s
        // encoder, not every `Encode` impl's). Many impls: left generic, a bound on the work.
        if targets.len() > 1 {
            if targets.len() > MAX_INSTANTIATED_TARGETS {
                return targets;
            }
            return targets
                .into_iter()
                .flat_map(|t| match t {
                    Target::Fn(..) => {
                        self.instantiate_with(vec![t], recv, arg_types, fields, expected)
                    }
                    other => vec![other],
                })
                .collect();
        }
        let [Target::Fn(f, conf)] = targets.as_slice() else {
            return targets;
        };
        let (f, conf) = (*f, *conf);
        let base = self.base_fn(f);
        if self.candidate.get(base).copied().unwrap_or(false) || self.is_bound_instance(f) {
            return targets;
        }
        let imp = self.instance_impl(f);
        let call = crate::instances::CallTypes {
            recv,
            arg_types,
            dyn_fields: fields,
            expected,
        };
        let bind = crate::instances::call_bindings(self.index, self.table, base, imp, &call);
        if bind.is_empty() {
            return targets;
        }
        let key = Instance { base, imp, bind };
        vec![Target::Fn(self.instance_id(key), conf)]
    }

    /// The struct-literal arguments of a call whose `&dyn Trait` fields were given concrete
    /// values ([`Walker::dyn_fields`]): (argument index, field, type).
    fn dyn_field_args(&mut self, args: &[IrExpr]) -> Vec<(usize, Name, Ty)> {
        if self.dyn_fields.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if let Some(bound) = self.dyn_fields.remove(&(a as *const IrExpr as usize)) {
                out.extend(bound.into_iter().map(|(n, t)| (i, n, t)));
            }
        }
        out
    }

    /// In an instance, the type bound to field `name` of a parameter (`#i.name`): the
    /// concrete value a caller's struct literal gave that `&dyn Trait` field.
    fn bound_param_field(&self, base: &IrExpr, name: &Name) -> Option<Ty> {
        if self.subst.is_empty() {
            return None;
        }
        let IrExpr::Path(p, _) = base else {
            return None;
        };
        let i = self.lookup(p.single()?)?.param?;
        self.subst.get(&format!("#{i}.{name}")).cloned()
    }

    /// The id of the instance `key`: the table's, or a pending one.
    fn instance_id(&self, key: Instance) -> FnId {
        if let Some(id) = self.table.get(&key) {
            let mut met = self.met.borrow_mut();
            if !met.contains(&key) {
                met.push(key);
            }
            return id;
        }
        let mut pending = self.pending.borrow_mut();
        if let Some(i) = pending.iter().position(|k| *k == key) {
            return PENDING + i;
        }
        // New to `pending`, so new to `met` too.
        self.met.borrow_mut().push(key.clone());
        pending.push(key);
        PENDING + pending.len() - 1
    }

    /// The impl an instance `f` instantiates its provided method for.
    fn instance_impl(&self, f: FnId) -> Option<usize> {
        if f >= PENDING {
            return self.pending.borrow()[f - PENDING].imp;
        }
        self.table.instance(f).and_then(|i| i.imp)
    }

    /// Whether `f` is an instance with bindings.
    fn is_bound_instance(&self, f: FnId) -> bool {
        if f >= PENDING {
            return !self.pending.borrow()[f - PENDING].bind.is_empty();
        }
        self.table.instance(f).is_some_and(|i| !i.bind.is_empty())
    }

    /// The function of the index whose IR function `f` runs: `f` itself, or the provided
    /// method an instance instantiates.
    fn base_fn(&self, f: FnId) -> FnId {
        if f >= PENDING {
            return self.pending.borrow()[f - PENDING].base;
        }
        self.table.instance(f).map_or(f, |i| i.base)
    }

    /// Whether a blanket impl's self parameter may be `implementor`: each bound naming a trait of
    /// the analysed graph must be implemented by it (explicitly, or by some blanket impl, which
    /// is not checked further). Bounds on std traits are assumed to hold.
    fn blanket_applies(&self, iid: usize, implementor: Implementor<'_>) -> bool {
        let Ty::Param { bounds, .. } = &self.index.impls[iid].self_ty else {
            return false;
        };
        bounds.iter().all(|b| match b {
            TraitRef::Local(bt) => self.implements(implementor, *bt),
            TraitRef::External(_) => true,
        })
    }

    fn implements(&self, implementor: Implementor<'_>, tr: usize) -> bool {
        let explicit = match implementor {
            Implementor::Local(tid) => &self.index.types[tid].trait_impls,
            Implementor::External(p) => match self.index.external_impls.get(p) {
                Some(impls) => impls,
                None => return self.has_blanket_impl(tr),
            },
        };
        explicit
            .iter()
            .any(|iid| self.index.impls[*iid].trait_ref == Some(TraitRef::Local(tr)))
            || self.has_blanket_impl(tr)
    }

    /// Whether blanket impl `iid` has every bound on a trait of the graph implemented
    /// explicitly by the std type `p` (bounds on std's traits are assumed to hold).
    fn bounds_explicitly_met(&self, iid: usize, p: &str) -> bool {
        let Ty::Param { bounds, .. } = &self.index.impls[iid].self_ty else {
            return false;
        };
        let explicit = self.index.external_impls.get(p);
        bounds.iter().all(|b| match b {
            TraitRef::Local(bt) => explicit.is_some_and(|impls| {
                impls
                    .iter()
                    .any(|i| self.index.impls[*i].trait_ref == Some(TraitRef::Local(*bt)))
            }),
            TraitRef::External(_) => true,
        })
    }

    fn has_blanket_impl(&self, tr: usize) -> bool {
        self.index.traits_with_blanket.contains(&tr)
    }

    /// Keeps the candidates whose trait is in scope in the calling module (std traits, which
    /// the index does not know, always are). When none is, the scope computation may have
    /// missed an import (one a macro makes, say): with [`Fallback::Explicit`] the type's explicit
    /// impls are kept, at medium confidence; blanket impls never are, since they match nearly
    /// any receiver (tracing's `AtomicBool::load` is not diesel's blanket `RunQueryDsl::load`).
    fn in_scope(
        &self,
        explicit: Vec<(Option<usize>, FnId)>,
        blanket: Vec<(Option<usize>, FnId)>,
        fallback: Fallback,
    ) -> Vec<Target> {
        if explicit.is_empty() && blanket.is_empty() {
            return Vec::new();
        }
        let scope = self.index.traits_in_scope(self.module);
        let own = self.own_trait();
        let visible: Vec<FnId> = explicit
            .iter()
            .chain(&blanket)
            .filter(|(t, _)| {
                t.is_none_or(|t| {
                    scope.contains(&t) || own == Some(t) || self.bound_traits.contains(&t)
                })
            })
            .map(|(_, f)| *f)
            .collect();
        if visible.is_empty() && fallback == Fallback::None {
            return Vec::new();
        }
        let fallback = visible.is_empty();
        let mut fns = if fallback {
            // Only traits the calling crate can name at all: its own or its dependencies'.
            let unit = self.index.modules[self.module].unit;
            explicit
                .iter()
                .filter(|(t, _)| {
                    t.is_none_or(|t| self.index.unit_sees(unit, self.index.types[t].unit))
                })
                .map(|(_, f)| *f)
                .collect()
        } else {
            visible
        };
        fns.sort_unstable();
        fns.dedup();
        let conf = if fns.len() == 1 && !fallback {
            Confidence::High
        } else {
            Confidence::Medium
        };
        fns.into_iter().map(|f| Target::Fn(f, conf)).collect()
    }

    /// The trait the walked function belongs to (a trait's default method, or an impl of a
    /// trait): it is in scope in its own body whatever the module imports.
    fn own_trait(&self) -> Option<usize> {
        match self.owner {
            FnOwner::Trait(t) => Some(t),
            FnOwner::Impl(i) => match &self.index.impls[i].trait_ref {
                Some(TraitRef::Local(t)) => Some(*t),
                _ => None,
            },
            FnOwner::Free => None,
        }
    }

    fn trait_method(&self, tr: usize, method: &str, depth: usize) -> Option<FnId> {
        let TypeKind::Trait { methods, .. } = &self.index.types[tr].kind else {
            return None;
        };
        if let Some(f) = methods.get(method) {
            return Some(*f);
        }
        if depth > 4 {
            return None;
        }
        self.index.supertraits_of(tr).iter().find_map(|s| match s {
            TraitRef::Local(st) => self.trait_method(*st, method, depth + 1),
            _ => None,
        })
    }

    /// A call through a trait on an unknown implementor: every impl in the analysed graph.
    fn trait_dispatch(&self, tr: usize, method: &str) -> Vec<Target> {
        let Some(decl) = self.trait_method(tr, method, 0) else {
            return Vec::new();
        };
        let owner_trait = match self.index.fns[decl].owner {
            FnOwner::Trait(t) => t,
            _ => tr,
        };
        let mut fns = Vec::new();
        for &iid in self
            .index
            .trait_impls
            .get(&owner_trait)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            match self.index.impls[iid].fns.get(method) {
                Some(f) => fns.push(*f),
                None if self.index.fns[decl].ir.body.is_some() => fns.push(decl),
                None => {}
            }
        }
        if fns.is_empty() && self.index.fns[decl].ir.body.is_some() {
            fns.push(decl);
        }
        fns.sort_unstable();
        fns.dedup();
        let conf = if fns.len() == 1 {
            Confidence::High
        } else {
            Confidence::Medium
        };
        fns.into_iter().map(|f| Target::Fn(f, conf)).collect()
    }

    /// `Type::name(..)` where `Type` is known.
    fn assoc_targets(&self, ty: &Ty, name: &str) -> Vec<Target> {
        match ty {
            Ty::Adt(TyCon::Local(tid), args) => {
                if let TypeKind::Trait { .. } = self.index.types[*tid].kind {
                    return self.trait_dispatch(*tid, name);
                }
                self.local_methods(*tid, args, name, false)
            }
            Ty::Adt(TyCon::External(p), _) => {
                vec![Target::External(format!("{p}::{name}"), Confidence::High)]
            }
            Ty::Param { .. } | Ty::Dyn(_) => self.method_targets(ty, name),
            _ => Vec::new(),
        }
    }

    /// The type of a call's value: its first target's result; when the analysed targets
    /// (several impls of a trait method) return different types of the graph, the traits all
    /// of those implement ([`crate::instances::common_traits`]), so that a method called on
    /// the value dispatches to every impl rather than to the first target's type.
    fn return_type(&self, targets: &[Target], recv: Option<&Ty>, arg_types: &[Ty]) -> Ty {
        let Some(first) = targets.first() else {
            return Ty::Unknown;
        };
        if let Some(ty) = self.declared_return_type(first, recv, arg_types) {
            return ty;
        }
        let ty = self.target_return_type(first, recv, arg_types);
        if targets.len() < 2 || !matches!(first, Target::Fn(..)) {
            return ty;
        }
        // Bounded: a dispatch to very many impls keeps its first type.
        if targets.len() > MAX_JOINED_RESULTS {
            return ty;
        }
        let mut tys = vec![ty.clone()];
        for t in &targets[1..] {
            if let Target::Fn(..) = t {
                let other = self.target_return_type(t, recv, arg_types);
                if !tys.contains(&other) {
                    tys.push(other);
                }
            }
        }
        if tys.len() > 1 {
            if let Some(common) = crate::instances::common_traits(self.index, &tys) {
                return Ty::Dyn(common);
            }
        }
        ty
    }

    /// On a generic or trait-object receiver the trait's declaration says what the call
    /// returns, whichever impl runs: `a.alloc_cell(n)` on `A: Allocator<u8>` gives
    /// `A::AllocatedMemory`, not the first impl's own memory type. `None` when the receiver is
    /// concrete or the declaration's type is unknown (the impls' types are used then).
    fn declared_return_type(
        &self,
        target: &Target,
        recv: Option<&Ty>,
        arg_types: &[Ty],
    ) -> Option<Ty> {
        let recv_ty = recv?.peel_refs();
        if !matches!(recv_ty, Ty::Param { .. } | Ty::Dyn(_)) {
            return None;
        }
        let Target::Fn(f, conf) = target else {
            return None;
        };
        let def = &self.index.fns[self.base_fn(*f)];
        let decl = match def.owner {
            FnOwner::Trait(_) => *f,
            FnOwner::Impl(i) => match &self.index.impls[i].trait_ref {
                Some(TraitRef::Local(tr)) => self.trait_method(*tr, &def.ir.name, 0)?,
                _ => return None,
            },
            FnOwner::Free => return None,
        };
        match self.target_return_type(&Target::Fn(decl, *conf), recv, arg_types) {
            Ty::Unknown => None,
            t => Some(t),
        }
    }

    /// Binds parameters that only a bound's arguments mention, from the impl that a bound
    /// parameter's type has: sccache's `ArgsIter::<I, T, S>::new(it, &ARGS[..])` with `S:
    /// SearchableArgInfo<T>` gets `S = &[ArgInfo<ArgData>]` from the argument, and `impl<T>
    /// SearchableArgInfo<T> for &'static [ArgInfo<T>]` then gives `T = ArgData`. Only impls of
    /// the graph's traits written for a type (not blanket ones) count, the first that fits wins,
    /// and at most `MAX_BOUND_IMPLS` impls are tried per bound.
    fn bind_through_bounds(
        &self,
        generics: &[IrGeneric],
        module: ModId,
        self_ty: Option<&Ty>,
        subst: &mut Subst,
    ) {
        for g in generics {
            let Some(actual) = subst.get(&g.name).cloned() else {
                continue;
            };
            if matches!(
                actual.peel_refs(),
                Ty::Param { .. } | Ty::Unknown | Ty::Dyn(_)
            ) {
                continue;
            }
            for bound in &g.bounds {
                let Some(last) = bound.segments.last() else {
                    continue;
                };
                if last.generics.is_empty() {
                    continue;
                }
                let TraitRef::Local(tr) = self.index.resolve_trait(module, bound) else {
                    continue;
                };
                let impls = self
                    .index
                    .trait_impls
                    .get(&tr)
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                for &iid in impls.iter().take(MAX_BOUND_IMPLS) {
                    let imp = &self.index.impls[iid];
                    if matches!(imp.self_ty, Ty::Param { .. }) {
                        continue;
                    }
                    let mut impl_subst = Subst::new();
                    unify(&imp.self_ty, &actual, &mut impl_subst);
                    if apply(&imp.self_ty, &impl_subst).peel_refs() != actual.peel_refs() {
                        continue;
                    }
                    // An impl in `trait_impls` always names its trait: the first impl whose
                    // self type fits decides.
                    for (want, have) in last.generics.iter().zip(imp.written_trait_args()) {
                        let want = self.index.resolve_type(module, want, generics, self_ty);
                        let have = self.index.resolve_type(
                            imp.module,
                            have,
                            &imp.generics,
                            Some(&imp.self_ty),
                        );
                        unify(&want, &apply(&have, &impl_subst), subst);
                    }
                    break;
                }
            }
        }
    }

    /// `x.into()` on a value of a type of the graph (`src`): the `from` fns of the graph's
    /// `impl From<Src> for U`, and `U` when there is one such impl (else unknown: which `U` the
    /// context wants is not inferred). `None` when no such impl exists or `src` is not a type of
    /// the graph: a std type's `into` stays std's (dispatching `String::into` to every
    /// `From<String>` of a large app would make each a path of every string conversion).
    fn conversion_via_from(
        &self,
        src: &Ty,
        expected: Option<&Expected>,
    ) -> Option<(Vec<Target>, Ty)> {
        let src = src.peel_refs();
        let Ty::Adt(TyCon::Local(tid), _) = src else {
            return None;
        };
        // (the impl's `from`, the type it converts into)
        let mut candidates: Vec<(FnId, Ty)> = Vec::new();
        for &iid in self.index.from_impls_named(&self.index.types[*tid].name) {
            let imp = &self.index.impls[iid];
            let Some(written) = imp.written_trait_args().first() else {
                continue;
            };
            let have =
                self.index
                    .resolve_type(imp.module, written, &imp.generics, Some(&imp.self_ty));
            if !matches!(have.peel_refs(), Ty::Adt(con, _) if *con == TyCon::Local(*tid)) {
                continue;
            }
            if let Some(&f) = imp.fns.get("from") {
                candidates.push((f, imp.self_ty.clone()));
            }
        }
        if candidates.is_empty() {
            return None;
        }
        // `let label: Label = mode.into()`: the impl for the type the context expects, when the
        // graph has one (else the conversion may be to a wrapper the expectation does not name,
        // and every candidate is kept).
        let mut confidence = Confidence::Medium;
        if let Some(Expected::Is(want)) = expected {
            let (fit, other): (Vec<_>, Vec<_>) = candidates
                .iter()
                .cloned()
                .partition(|(_, t)| may_be_same(t, want));
            if !fit.is_empty() && !other.is_empty() {
                candidates = fit;
                confidence = Confidence::High;
            }
        }
        let ret = match candidates.as_slice() {
            // An impl's own parameters (`impl<T> From<Src> for Wrapper<T>`) are not bound here.
            [(_, one)] if !crate::infer::has_param(one) => one.clone(),
            _ => Ty::Unknown,
        };
        let targets = candidates
            .into_iter()
            .map(|(f, _)| Target::Fn(f, confidence))
            .collect();
        Some((targets, ret))
    }

    /// For `method`, one of std's `Iterator` provided methods, called on a type of the graph
    /// that implements `Iterator` and has no method of that name itself: the impl's `next` and
    /// its `Item` type (unknown when not written).
    fn local_iterator(&self, recv: &Ty, method: &str) -> Option<(FnId, Ty)> {
        let Ty::Adt(TyCon::Local(tid), args) = recv else {
            return None;
        };
        if !ITERATOR_PROVIDED.contains(&method) {
            return None;
        }
        let iid = self.index.types[*tid]
            .trait_impls
            .iter()
            .copied()
            .find(|&i| {
                matches!(&self.index.impls[i].trait_ref,
                Some(TraitRef::External(p)) if p == "std::iter::Iterator")
            })?;
        let next = *self.index.impls[iid].fns.get("next")?;
        if !self.method_lookup(recv, method).0.is_empty() {
            return None;
        }
        let item = self
            .impl_assoc_for(iid, "Item", recv, args)
            .unwrap_or(Ty::Unknown);
        Some((next, item))
    }

    /// The trait's type parameters as a generic receiver's bound gives them: on `a: A` with
    /// `A: Parser<Input, Output, Error>`, `Parser<I, O, E>`'s `I` is `Input` and so on.
    fn trait_args_of(&self, recv: Option<&Ty>, tr: usize, trait_generics: &[IrGeneric]) -> Subst {
        let mut out = Subst::new();
        let Some(Ty::Param {
            bounds, bound_args, ..
        }) = recv
        else {
            return out;
        };
        let Some(k) = bounds.iter().position(|b| *b == TraitRef::Local(tr)) else {
            return out;
        };
        for (g, arg) in trait_generics
            .iter()
            .zip(bound_args.get(k).into_iter().flatten())
        {
            if !arg.is_unknown() {
                out.insert(g.name.clone(), arg.clone());
            }
        }
        out
    }

    fn target_return_type(&self, first: &Target, recv: Option<&Ty>, arg_types: &[Ty]) -> Ty {
        match first {
            Target::Fn(f, _) => {
                let def = &self.index.fns[self.base_fn(*f)];
                let Some(ret) = &def.ir.sig.ret else {
                    return Ty::Tuple(Vec::new());
                };
                let mut generics = def.ir.sig.generics.clone();
                let mut trait_args = Subst::new();
                let self_ty = match def.owner {
                    FnOwner::Impl(i) => {
                        generics.extend(self.index.impls[i].generics.iter().cloned());
                        Some(self.index.impls[i].self_ty.clone())
                    }
                    FnOwner::Trait(tr) => {
                        let recv = recv.map(|r| r.peel_refs().clone());
                        if let TypeKind::Trait {
                            generics: trait_generics,
                            ..
                        } = &self.index.types[tr].kind
                        {
                            generics.extend(trait_generics.iter().cloned());
                            trait_args = self.trait_args_of(recv.as_ref(), tr, trait_generics);
                        }
                        recv
                    }
                    FnOwner::Free => recv.map(|r| r.peel_refs().clone()),
                };
                // An instance's `Self::Assoc` is its impl's associated type.
                let imp = match def.owner {
                    FnOwner::Impl(i) => Some(i),
                    _ => self.instance_impl(*f),
                };
                let resolve = |t: &IrType| {
                    // The impl's own fn: `Self::Assoc` anywhere in the type is the impl's.
                    if let FnOwner::Impl(i) = def.owner {
                        if let Some(t) = crate::instances::with_impl_assoc_types(self.index, i, t) {
                            return self.index.resolve_type(
                                def.module,
                                &t,
                                &generics,
                                self_ty.as_ref(),
                            );
                        }
                    }
                    imp.and_then(|i| crate::instances::impl_assoc_type(self.index, i, t))
                        .unwrap_or_else(|| {
                            self.index
                                .resolve_type(def.module, t, &generics, self_ty.as_ref())
                        })
                };
                // Generics bound at the call: the impl's from the receiver (`Wrapper<T>::get` on
                // a `Wrapper<File>`; a blanket impl's `Self` is the receiver), the fn's from the
                // argument types (`arg_types` holds the receiver first in `Type::method(x, ..)`).
                let mut subst = trait_args;
                if let (FnOwner::Impl(i), Some(r)) = (def.owner, recv) {
                    unify(&self.index.impls[i].self_ty, r.peel_refs(), &mut subst);
                }
                let params = &def.ir.sig.params;
                let skip = usize::from(def.ir.sig.has_self && arg_types.len() == params.len() + 1);
                for ((_, declared), actual) in
                    params.iter().zip(&arg_types[skip.min(arg_types.len())..])
                {
                    if !actual.is_unknown() {
                        unify(&resolve(declared), actual, &mut subst);
                    }
                }
                self.bind_through_bounds(&generics, def.module, self_ty.as_ref(), &mut subst);
                match apply(&resolve(ret), &subst) {
                    // A parameter nothing bound: unknown, not a dispatch over every impl. A
                    // projection (`Self::AllocatedMemory`) is known by its bounds.
                    Ty::Param { name, .. } if !name.contains("::") => Ty::Unknown,
                    t => t,
                }
            }
            Target::External(p, _) => {
                if let Some(t) = external_return(p, recv) {
                    return t;
                }
                if recv.is_none() && is_constructor_like(p) {
                    return constructor_type(p, arg_types);
                }
                Ty::Unknown
            }
            _ => Ty::Unknown,
        }
    }

    fn path_value_type(&self, p: &IrPath) -> Ty {
        if let Some(name) = p.single() {
            if let Some(l) = self.lookup(name) {
                return l.ty.clone();
            }
            // A bool literal (lowered as a path for `crate::values`).
            if matches!(name, "true" | "false") {
                return Ty::external("bool", Vec::new());
            }
        }
        let names: Vec<String> = p.segments.iter().map(|s| s.name.to_string()).collect();
        // `usize::MAX`, `u32::BITS`: a primitive's associated constants.
        if let [ty, konst] = names.as_slice() {
            if crate::ty::is_primitive(ty)
                && konst.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            {
                let ty = if konst == "BITS" { "u32" } else { ty.as_str() };
                return Ty::external(ty, Vec::new());
            }
        }
        for r in self
            .index
            .resolve_path_in(self.module, &names, p.leading_colon, 0)
        {
            match r {
                Res::Value(m, t) => return self.index.resolve_type(m, &t, &[], None),
                // A unit struct used as a value: `DiskJob.run()`.
                Res::Type(t) if matches!(self.index.types[t].kind, TypeKind::Struct { .. }) => {
                    return Ty::Adt(TyCon::Local(t), Vec::new())
                }
                _ => {}
            }
        }
        self.assoc_const_type(p).unwrap_or(Ty::Unknown)
    }

    /// The type of an associated constant of a type of the graph: `StateID::MAX`, `Self::ZERO`
    /// (aho-corasick's and regex-automata's id types), from an inherent impl or, failing that,
    /// a trait impl of the type.
    fn assoc_const_type(&self, p: &IrPath) -> Option<Ty> {
        let (last, rest) = p.segments.split_last()?;
        if rest.is_empty() {
            return None;
        }
        let owner = IrPath {
            segments: rest.into(),
            ..p.clone()
        };
        let this = self.resolve_ty(&IrType::Path(owner));
        let Ty::Adt(TyCon::Local(tid), _) = &this else {
            return None;
        };
        let def = &self.index.types[*tid];
        def.inherent_impls
            .iter()
            .chain(&def.trait_impls)
            .find_map(|&iid| {
                let imp = &self.index.impls[iid];
                let (_, t) = imp.assoc_consts.iter().find(|(n, _)| *n == *last.name)?;
                Some(
                    self.index
                        .resolve_type(imp.module, t, &imp.generics, Some(&this)),
                )
            })
    }

    /// The field types of the tuple variant (`S::Server`) or tuple struct (`Wrapper`) a pattern
    /// names, with the scrutinee's type arguments substituted when it is the same type.
    fn variant_fields(&mut self, path: &IrPath, scrutinee: &Ty) -> Vec<(String, Ty)> {
        if let Some((last, rest)) = path.segments.split_last() {
            if !rest.is_empty() {
                let owner = IrPath {
                    segments: rest.into(),
                    ..path.clone()
                };
                if let Some(fields) = self.payload_types(&owner, Some(&last.name), scrutinee) {
                    return fields;
                }
            }
        }
        self.payload_types(path, None, scrutinee)
            .unwrap_or_default()
    }

    /// The fields (name, type; a tuple field's name is its index) of variant `variant` of the
    /// enum at `owner`, or (`None`) of the struct at `owner`; `None` when `owner` is not such a
    /// type of the analysed graph.
    fn payload_types(
        &mut self,
        owner: &IrPath,
        variant: Option<&str>,
        scrutinee: &Ty,
    ) -> Option<Vec<(String, Ty)>> {
        let Ty::Adt(TyCon::Local(tid), mut args) = self.resolve_ty(&IrType::Path(owner.clone()))
        else {
            return None;
        };
        if let Ty::Adt(TyCon::Local(s), sargs) = scrutinee.peel_refs() {
            if *s == tid {
                args = sargs.clone();
            }
        }
        let def = &self.index.types[tid];
        let (fields, generics) = match (&def.kind, variant) {
            (TypeKind::Enum { variants, generics }, Some(v)) => {
                (&variants.iter().find(|(n, _)| n == v)?.1, generics)
            }
            (TypeKind::Struct { fields, generics }, None) => (fields, generics),
            _ => return None,
        };
        let this = Ty::Adt(TyCon::Local(tid), args.clone());
        Some(
            fields
                .iter()
                .map(|(name, ft)| {
                    let resolved = self
                        .index
                        .resolve_type(def.module, ft, generics, Some(&this));
                    (name.clone(), substitute(&resolved, generics, &args))
                })
                .collect(),
        )
    }

    fn field_type(&self, t: &Ty, field: &str) -> Ty {
        let mut cur = t.clone();
        for _ in 0..MAX_AUTODEREF {
            let peeled = cur.peel_refs().clone();
            if let Ty::Adt(TyCon::Local(tid), args) = &peeled {
                if let TypeKind::Struct { fields, generics } = &self.index.types[*tid].kind {
                    if let Some((_, ft)) = fields.iter().find(|(n, _)| n == field) {
                        let m = self.index.types[*tid].module;
                        let resolved = self.index.resolve_type(m, ft, generics, Some(&peeled));
                        return substitute(&resolved, generics, args);
                    }
                }
            }
            if let Ty::Tuple(elems) = &peeled {
                if let Ok(i) = field.parse::<usize>() {
                    return elems.get(i).cloned().unwrap_or(Ty::Unknown);
                }
            }
            // A std struct's public field (`output.status`): `rules/std-types.toml`.
            if let Some(t) = crate::std_types::table().field(&peeled, field) {
                return t;
            }
            match self.deref_once(&peeled) {
                Some(n) => cur = n,
                None => break,
            }
        }
        Ty::Unknown
    }

    /// The calls a `for` loop makes on its iterated value of type `t`, as rustc desugars it:
    /// `IntoIterator::into_iter(t)`, then `next` on the iterator (`walkdir::WalkDir` reaches
    /// `read_dir` through `IntoIter::next`). Only the analysed graph's impls are recorded as
    /// calls; std collections keep the element typing of [`element_type`]. Returns the element
    /// type: what the iterator's `next` yields, when known.
    fn iterate(&mut self, t: Ty, pos: Pos) -> Ty {
        let fallback = element_type(&t);
        let local = |ty: &Ty| matches!(ty.peel_refs(), Ty::Adt(TyCon::Local(_), _));
        if !local(&t) {
            return fallback;
        }
        // Instantiated like any method call: a generic iterator's `next` on a receiver whose
        // type arguments are known binds them (node_resolver's `ClosestPackageJsonsIterator<
        // '_, TSys>` in denort reads through `DenoRtSys`, not every `FsRead`).
        // Return types are read from the base functions, before instantiation (an instance's
        // id may be pending).
        let (into, into_level) = self.method_lookup(&t, "into_iter");
        let iter_ty = if into.iter().any(|x| matches!(x, Target::Fn(..))) {
            let ret = self.return_type(&into, Some(&t), &[]);
            let into = self.instantiate(into, Some(&into_level), &[]);
            self.push_call(pos, into, Vec::new(), Vec::new());
            if ret.is_unknown() {
                return fallback;
            }
            ret
        } else {
            t.clone()
        };
        let (next, level) = self.method_lookup(&iter_ty, "next");
        if !next.iter().any(|x| matches!(x, Target::Fn(..))) {
            return fallback;
        }
        let item = self
            .return_type(&next, Some(&level), &[])
            .unwrap_result_like();
        let next = self.instantiate(next, Some(&level), &[]);
        self.push_call(pos, next, Vec::new(), Vec::new());
        match item {
            Ty::Unknown => fallback,
            item => item,
        }
    }

    /// The type `.await` yields on a value of type `t`: `T` of `impl Future<Output = T>` (also
    /// behind `Pin<Box<..>>`), the `Output` of an analysed type's `Future` impl (tokio's
    /// `JoinHandle<T>` yields `Result<T, JoinError>`), else `t` itself: an `async fn` call is
    /// typed by its declared output already.
    fn await_output(&self, t: Ty) -> Ty {
        let mut cur = t.peel_refs().clone();
        for _ in 0..4 {
            match &cur {
                Ty::Adt(TyCon::External(p), args) if p == "std::future::Future" => {
                    return args.first().cloned().unwrap_or(Ty::Unknown);
                }
                Ty::Adt(TyCon::Local(tid), args) => {
                    if let Some(out) = self.future_impl_output(*tid, args, &cur) {
                        return out;
                    }
                    break;
                }
                Ty::Adt(TyCon::External(p), args)
                    if matches!(p.as_str(), "std::pin::Pin" | "std::boxed::Box") =>
                {
                    match args.first() {
                        Some(inner) => cur = inner.peel_refs().clone(),
                        None => break,
                    }
                }
                _ => break,
            }
        }
        t
    }

    /// `impl<T> Future for JoinHandle<T> { type Output = Result<T, JoinError>; }` → the output
    /// for the given type arguments.
    fn future_impl_output(&self, tid: usize, args: &[Ty], ty: &Ty) -> Option<Ty> {
        self.index.types[tid].trait_impls.iter().find_map(|&iid| {
            let imp = &self.index.impls[iid];
            let is_future = matches!(&imp.trait_ref,
                Some(TraitRef::External(p)) if p == "std::future::Future" || p == "Future");
            if !is_future {
                return None;
            }
            let (_, output) = imp.assoc_types.iter().find(|(n, _)| n == "Output")?;
            let resolved = self
                .index
                .resolve_type(imp.module, output, &imp.generics, Some(ty));
            Some(substitute_by_self(
                &resolved,
                &imp.ir_self,
                &imp.generics,
                args,
            ))
        })
    }

    /// The type of the place `base[index]` (the element, not a reference to it), through
    /// auto-deref: std's slices, `str`, `Vec`/`VecDeque` and maps by their type arguments, an
    /// analysed type by its `impl Index` (the one for a range when `range`), whose `Output` is
    /// the element. Unknown otherwise: a wrong element type would send later calls astray.
    fn index_type(&self, base: Ty, range: bool) -> Ty {
        let mut cur = base;
        for _ in 0..MAX_AUTODEREF {
            let peeled = cur.peel_refs().clone();
            match &peeled {
                Ty::Slice(elem) => {
                    return if range {
                        peeled.clone()
                    } else {
                        (**elem).clone()
                    }
                }
                Ty::Str => return Ty::Str,
                Ty::Adt(TyCon::External(p), args) if p.starts_with("std::") => {
                    let arg = |i: usize| args.get(i).cloned().unwrap_or(Ty::Unknown);
                    match p.rsplit("::").next().unwrap_or(p) {
                        "Vec" | "VecDeque" if range => return Ty::Slice(Box::new(arg(0))),
                        "Vec" | "VecDeque" => return arg(0),
                        "String" => return Ty::Str,
                        "HashMap" | "BTreeMap" => return arg(1),
                        _ => {}
                    }
                }
                Ty::Adt(TyCon::Local(_), _) => {
                    if let Some(t) = self.local_index_output(&peeled, range) {
                        return t;
                    }
                }
                _ => {}
            }
            match self.deref_once(&peeled) {
                Some(n) => cur = n,
                None => break,
            }
        }
        Ty::Unknown
    }

    /// `Output` of the analysed type's `impl Index<I>` whose `I` is a range exactly when
    /// `range` (`Index<usize>` and `Index<Range<usize>>` differ in their output).
    fn local_index_output(&self, t: &Ty, range: bool) -> Option<Ty> {
        let Ty::Adt(TyCon::Local(tid), args) = t else {
            return None;
        };
        for iid in self.std_trait_impls(*tid, "std::ops::Index") {
            let imp = &self.index.impls[iid];
            let by_range = imp.written_trait_args().first().is_some_and(|g| {
                matches!(g, IrType::Path(p)
                    if p.segments.last().is_some_and(|s| s.name.starts_with("Range")))
            });
            if by_range != range {
                continue;
            }
            return self.impl_assoc_for(iid, "Output", t, args);
        }
        None
    }

    /// The impls of type `tid` for the std trait at `path` (`std::ops::Deref`), also when the
    /// trait was written by its bare name and not resolved further.
    fn std_trait_impls<'s>(
        &'s self,
        tid: crate::index::TypeId,
        path: &'s str,
    ) -> impl Iterator<Item = usize> + 's {
        let bare = path.rsplit("::").next().unwrap_or(path);
        self.index.types[tid]
            .trait_impls
            .iter()
            .copied()
            .filter(move |&iid| {
                matches!(&self.index.impls[iid].trait_ref,
                    Some(TraitRef::External(p)) if p == path || p == bare)
            })
    }

    /// Associated type `name` of impl `iid` for the concrete type `t` (arguments `args`).
    fn impl_assoc_for(&self, iid: usize, name: &str, t: &Ty, args: &[Ty]) -> Option<Ty> {
        let imp = &self.index.impls[iid];
        let assoc = imp.assoc_types.iter().find(|(n, _)| n == name)?;
        let resolved = self
            .index
            .resolve_type(imp.module, &assoc.1, &imp.generics, Some(t));
        let impl_args: Vec<IrGeneric> = imp.generics.to_vec();
        Some(substitute_by_self(
            &resolved,
            &imp.ir_self,
            &impl_args,
            args,
        ))
    }

    /// One auto-deref step: references, std smart pointers, and local `impl Deref` targets.
    fn deref_once(&self, t: &Ty) -> Option<Ty> {
        if let Some(n) = t.deref_external() {
            return Some(n);
        }
        let Ty::Adt(TyCon::Local(tid), args) = t else {
            return None;
        };
        let iid = self.std_trait_impls(*tid, "std::ops::Deref").next()?;
        self.impl_assoc_for(iid, "Target", t, args)
    }
}

/// The expectation on `recv` in `recv.method(..)` given the one on the call: the payload is
/// unchanged by the unwrapping and error-mapping methods (`get_inner(..).map_err(..)`,
/// `opt.ok_or(e)?`, `x.unwrap()`). `None` for other methods (their result says nothing of
/// their receiver here).
fn receiver_expectation(expected: &Expected, method: &str) -> Option<Expected> {
    if is_unwrap_method(method) {
        return expected.payload_of();
    }
    match method {
        "map_err" | "context" | "with_context" | "ok_or" | "ok_or_else" | "ok" | "inspect_err"
        | "or_else" => expected.same_payload(),
        _ => None,
    }
}

/// A `match` arm `Ok(v) => v` / `Some(v) => v`: the match's value is the scrutinee's payload.
fn yields_payload(pat: &IrPat, body: &IrExpr) -> bool {
    let Some(v) = &pat.unwrap_ident else {
        return false;
    };
    pat.variants
        .iter()
        .any(|n| matches!(n.as_str(), "Ok" | "Some"))
        && matches!(body, IrExpr::Path(p, _) if p.single() == Some(v.as_str()))
}

/// What a closure-taking adapter returns given the closure's value type `ret`:
/// `Option<T>::map(f)` → `Option<R>`, `Result<T, E>::map(f)` → `Result<R, E>`, `and_then(f)` →
/// `R` (an `Option`/`Result` already), an iterator's `map(f)` → an iterator of `R` and its
/// `filter_map(f)` of `R`'s payload. `None` when `ret` is unknown or the method is none of these.
fn mapped_result(recv: &Ty, method: &str, ret: &Ty) -> Option<Ty> {
    if ret.is_unknown() {
        return None;
    }
    let Ty::Adt(TyCon::External(p), args) = recv else {
        return None;
    };
    let option = p == "std::option::Option";
    let result = p == "std::result::Result" || p.ends_with("::Result");
    let ret_path = ret.external_path();
    let ret_wraps = ret_path.is_some_and(crate::ty::is_option_or_result);
    if is_local_key(p) {
        return match method {
            "with" | "with_borrow" | "with_borrow_mut" => Some(ret.clone()),
            "try_with" => Some(Ty::external("std::result::Result", vec![ret.clone()])),
            _ => None,
        };
    }
    match method {
        "map" if option => Some(Ty::external(p.as_str(), vec![ret.clone()])),
        "map" if result => {
            let mut a = args.clone();
            match a.first_mut() {
                Some(first) => *first = ret.clone(),
                None => a.push(ret.clone()),
            }
            Some(Ty::external(p.as_str(), a))
        }
        "and_then" if (option || result) && ret_wraps => Some(ret.clone()),
        "map" if p == "std::slice::Iter" => Some(Ty::external(p.as_str(), vec![ret.clone()])),
        "filter_map" if p == "std::slice::Iter" && ret_path == Some("std::option::Option") => {
            Some(Ty::external(p.as_str(), ret.type_args().to_vec()))
        }
        _ => None,
    }
}

/// Whether two types may be the same, judged by their outer constructor (unknown types and
/// generic parameters may be anything).
fn may_be_same(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Unknown | Ty::Param { .. }, _) | (_, Ty::Unknown | Ty::Param { .. }) => true,
        (Ty::Adt(x, _), Ty::Adt(y, _)) => x == y,
        (Ty::Ref(x), Ty::Ref(y)) | (Ty::Slice(x), Ty::Slice(y)) => may_be_same(x, y),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// Whether an impl's self-type arguments (`ConfigBuilder<DefaultState>`: `[DefaultState]`) can
/// be those of a receiver's: a generic or unknown argument on either side fits anything, types
/// of the graph or std must be the same constructor with fitting arguments. Looser than
/// [`may_be_same`] on other pairs of kinds (a trait object against a struct fits): a wrong
/// exclusion here loses the impl that runs.
fn type_args_fit(impl_args: &[Ty], args: &[Ty]) -> bool {
    impl_args.iter().zip(args).all(|(i, a)| match (i, a) {
        (Ty::Param { .. } | Ty::Unknown, _) | (_, Ty::Param { .. } | Ty::Unknown) => true,
        (Ty::Adt(ci, ai), Ty::Adt(ca, aa)) => ci == ca && type_args_fit(ai, aa),
        (Ty::Ref(i), Ty::Ref(a)) => type_args_fit(std::slice::from_ref(i), std::slice::from_ref(a)),
        (Ty::Adt(..), Ty::Ref(_) | Ty::Tuple(_) | Ty::Slice(_) | Ty::Str)
        | (Ty::Ref(_) | Ty::Tuple(_) | Ty::Slice(_) | Ty::Str, Ty::Adt(..)) => false,
        _ => true,
    })
}

/// The value of a std macro that the analysed graph does not define: `vec![a, b]` is a
/// `Vec` of the first element's type, `format!(..)` a `String`; any other is unknown.
fn std_macro_type(path: &IrPath, first: Ty) -> Ty {
    let names = path.names();
    let name = match names.as_slice() {
        [name] | ["std" | "alloc", name] => *name,
        _ => return Ty::Unknown,
    };
    match name {
        "vec" => Ty::external("std::vec::Vec", vec![first]),
        "format" => Ty::external("std::string::String", Vec::new()),
        _ => Ty::Unknown,
    }
}

/// The type a closure argument of `recv.method(|x| ..)` receives, for adapters of iterators,
/// Options and Results whose item type is known.
/// Classifies the calls of one statement that no inner block has classified: the kept call (a
/// `let` initialiser's or the block value's, with its hold) and the statement's temporaries.
fn decide_hold(calls: &mut [CallSite], kept: Option<(Pos, Hold)>, statement: Hold) {
    for c in calls {
        if c.hold != Hold::Unknown {
            continue;
        }
        c.hold = match kept {
            Some((pos, hold)) if pos == c.pos => hold,
            _ => statement,
        };
    }
}

fn adapter_item(recv: &Ty, method: &str) -> Option<Ty> {
    let Ty::Adt(TyCon::External(p), args) = recv else {
        return None;
    };
    let item = args.first()?.clone();
    if is_local_key(p) {
        // `KEY.with(|v: &T| ..)`; `with_borrow(|v: &U| ..)` on a `LocalKey<RefCell<U>>`.
        let value = match method {
            "with" | "try_with" => item,
            "with_borrow" | "with_borrow_mut" => item.type_args().first()?.clone(),
            _ => return None,
        };
        return Some(Ty::Ref(Box::new(value)));
    }
    let is_option_like = crate::ty::is_option_or_result(p);
    let option_adapter = matches!(
        method,
        "map"
            | "and_then"
            | "filter"
            | "inspect"
            | "is_some_and"
            | "is_ok_and"
            | "map_or"
            | "map_or_else"
            | "take_if"
    );
    let iter_adapter = matches!(
        method,
        "map"
            | "filter"
            | "for_each"
            | "any"
            | "all"
            | "find"
            | "filter_map"
            | "flat_map"
            | "inspect"
            | "take_while"
            | "skip_while"
            | "position"
            | "find_map"
            | "try_for_each"
            | "map_while"
            | "partition"
    );
    if (is_option_like && option_adapter) || (p == "std::slice::Iter" && iter_adapter) {
        Some(item)
    } else {
        None
    }
}

/// The result of the iterator plumbing we model: `iter()` on collections, and adapters that
/// keep the item type. `None`: not modelled (the call is resolved as usual).
fn iterator_result(recv: &Ty, method: &str) -> Option<Ty> {
    let elem = element_type(recv);
    if matches!(method, "iter" | "iter_mut" | "into_iter" | "drain") && !elem.is_unknown() {
        return Some(Ty::external("std::slice::Iter", vec![elem]));
    }
    if recv.external_path() == Some("std::slice::Iter") {
        return match method {
            "filter" | "skip" | "take" | "rev" | "peekable" | "skip_while" | "take_while"
            | "inspect" | "cloned" | "copied" | "chain" | "fuse" | "step_by" => Some(recv.clone()),
            "enumerate" => Some(Ty::external(
                "std::slice::Iter",
                vec![Ty::Tuple(vec![Ty::external("usize", Vec::new()), elem])],
            )),
            "map" | "filter_map" | "flat_map" | "zip" | "map_while" => {
                Some(Ty::external("std::slice::Iter", vec![Ty::Unknown]))
            }
            "for_each" | "try_for_each" => Some(Ty::Unknown),
            "any" | "all" => Some(Ty::external("bool", Vec::new())),
            "count" => Some(Ty::external("usize", Vec::new())),
            "position" | "rposition" => Some(Ty::external(
                "std::option::Option",
                vec![Ty::external("usize", Vec::new())],
            )),
            "find" | "next" | "last" | "max" | "min" | "nth" | "max_by_key" | "min_by_key"
            | "max_by" | "min_by" | "next_back" => Some(Ty::external(
                "std::option::Option",
                recv.type_args().to_vec(),
            )),
            _ => None,
        };
    }
    None
}

/// What a std conversion method yields on a generic bounded by that conversion with its
/// argument: `p.as_ref()` with `P: AsRef<[u8]>` is a `&[u8]` (aho-corasick's `Builder::add`,
/// http's `create_authority`), `x.into()` with `X: Into<String>` a `String`.
fn bound_conversion(recv: &Ty, method: &str) -> Option<Ty> {
    let Ty::Param {
        bounds, bound_args, ..
    } = recv
    else {
        return None;
    };
    let (conversion, by_ref) = match method {
        "as_ref" => ("AsRef", true),
        "as_mut" => ("AsMut", true),
        "borrow" => ("Borrow", true),
        "borrow_mut" => ("BorrowMut", true),
        "into" => ("Into", false),
        _ => return None,
    };
    bounds.iter().zip(bound_args).find_map(|(bound, args)| {
        let TraitRef::External(p) = bound else {
            return None;
        };
        if p.rsplit("::").next() != Some(conversion) {
            return None;
        }
        match args.as_slice() {
            [arg] if !arg.is_unknown() => Some(if by_ref {
                Ty::Ref(Box::new(arg.clone()))
            } else {
                arg.clone()
            }),
            _ => None,
        }
    })
}

/// Whether type `def` derives the trait named `name` (`#[derive(Default)]`, by last segment).
fn derives(def: &crate::index::TypeDef, name: &str) -> bool {
    def.derives
        .iter()
        .any(|d| d.segments.last().is_some_and(|s| s.name == name))
}

/// A number literal without a suffix (`1`, `0.5`): its type is its context's.
fn is_unsuffixed_literal(e: &IrExpr) -> bool {
    matches!(e, IrExpr::Lit(n)
        if n.as_str() == crate::ir::UNSUFFIXED_INTEGER || n.as_str() == crate::ir::UNSUFFIXED_FLOAT)
}

/// The item type of iterating over `t` (`Vec<T>`, `&[T]`, `Option<T>`), or unknown.
fn element_type(t: &Ty) -> Ty {
    match t.peel_refs() {
        Ty::Slice(inner) => (**inner).clone(),
        Ty::Adt(TyCon::External(p), args)
            if matches!(
                p.as_str(),
                "std::vec::Vec"
                    | "std::collections::VecDeque"
                    | "std::option::Option"
                    | "std::collections::HashSet"
                    | "std::collections::BTreeSet"
                    | "std::slice::Iter"
            ) =>
        {
            args.first().cloned().unwrap_or(Ty::Unknown)
        }
        // A map iterates over its (key, value) pairs; by reference they are `(&K, &V)`, which
        // resolves the same methods (auto-deref), so one shape serves both.
        Ty::Adt(TyCon::External(p), args) if is_std_map(p) && args.len() == 2 => {
            Ty::Tuple(args.clone())
        }
        _ => Ty::Unknown,
    }
}

/// std's `thread::LocalKey`, the type of a `thread_local!` static.
fn is_local_key(path: &str) -> bool {
    path.starts_with("std::") && path.ends_with("::LocalKey")
}

/// A written type (a `let` annotation, a turbofish) with its holes (`Vec<_>`) filled from the
/// type of the value it describes, where both have the same constructor (at any depth:
/// `Result<Vec<_>, E>`); the value's type when nothing is written.
fn fill_holes(written: Ty, value: Ty) -> Ty {
    match (written, value) {
        (Ty::Adt(con, args), Ty::Adt(known, known_args)) if con == known => Ty::Adt(
            con,
            args.into_iter()
                .zip(known_args.into_iter().chain(std::iter::repeat(Ty::Unknown)))
                .map(|(a, k)| fill_holes(a, k))
                .collect(),
        ),
        (Ty::Unknown, value) => value,
        (written, _) => written,
    }
}

/// What `iter.collect()` builds when the context names the collection with holes
/// (`let v: Vec<_> = map.iter().collect()`, `.collect::<Vec<_>>()`): the collection of the
/// iterator's items, a map of its `(key, value)` pairs, or a `Result`/`Option` of either from
/// items that are `Result`s/`Option`s. `None` when the iterator's item or the target is unknown.
fn collected(iter: &Ty, into: &Ty) -> Option<Ty> {
    if iter.external_path() != Some("std::slice::Iter") {
        return None;
    }
    let item = iter.type_args().first()?;
    collect_into(item, into)
}

fn collect_into(item: &Ty, into: &Ty) -> Option<Ty> {
    let Ty::Adt(TyCon::External(p), args) = into else {
        return None;
    };
    if crate::ty::is_option_or_result(p) {
        // `Result<Vec<_>, E>` from items of `Result<T, E>`: a collection of the payloads.
        let inner = collect_into(&item.clone().unwrap_result_like(), args.first()?)?;
        let mut filled = args.clone();
        filled[0] = inner;
        return Some(Ty::Adt(TyCon::External(p.clone()), filled));
    }
    let fill = |have: &[Ty], from: Vec<Ty>| -> Vec<Ty> {
        from.into_iter()
            .enumerate()
            .map(|(i, f)| match have.get(i) {
                Some(h) if !h.is_unknown() => h.clone(),
                _ => f,
            })
            .collect()
    };
    let elem = item.peel_refs();
    if is_std_map(p) {
        let Ty::Tuple(kv) = elem else {
            return None;
        };
        return (kv.len() == 2)
            .then(|| Ty::Adt(TyCon::External(p.clone()), fill(args, kv.clone())));
    }
    let sequence = [
        "std::vec::Vec",
        "std::collections::VecDeque",
        "std::collections::HashSet",
        "std::collections::BTreeSet",
        "std::collections::BinaryHeap",
    ];
    if !sequence.contains(&p.as_str()) || item.is_unknown() {
        return None;
    }
    Some(Ty::Adt(
        TyCon::External(p.clone()),
        fill(args, vec![item.clone()]),
    ))
}

/// `std::collections::{HashMap, BTreeMap}` under any of their std paths.
fn is_std_map(path: &str) -> bool {
    path.starts_with("std::") && (path.ends_with("::HashMap") || path.ends_with("::BTreeMap"))
}

/// The std trait among `bounds` whose method a call `x.method()` on a `T: bounds` is: the
/// trait that declares a well-known method (`clone` → `Clone`, `into` → `Into`, ..), else the one
/// std bound that is not a marker or derive-style trait (`T: Iterator + Send` → `Iterator`).
/// `None` when that is ambiguous: the call stays unresolved rather than named after a guess.
fn std_bound_of<'b>(bounds: &'b [TraitRef], method: &str) -> Option<&'b str> {
    let std_bounds: Vec<&str> = bounds
        .iter()
        .filter_map(|b| match b {
            TraitRef::External(p) if p.starts_with("std::") => Some(p.as_str()),
            _ => None,
        })
        .collect();
    let name = |p: &str| p.rsplit("::").next().unwrap_or(p).to_string();
    let declaring: &[&str] = match method {
        "clone" | "clone_from" => &["Clone"],
        "into" => &["Into"],
        "as_ref" => &["AsRef"],
        "as_mut" => &["AsMut"],
        "borrow" => &["Borrow"],
        "eq" | "ne" => &["PartialEq", "Eq"],
        "cmp" | "max" | "min" => &["Ord"],
        "partial_cmp" => &["PartialOrd"],
        "hash" => &["Hash"],
        "fmt" => &["Display", "Debug"],
        "to_string" => &["Display", "ToString"],
        "default" => &["Default"],
        "from" => &["From"],
        "try_from" => &["TryFrom"],
        "try_into" => &["TryInto"],
        "into_iter" => &["IntoIterator"],
        _ => &[],
    };
    if !declaring.is_empty() {
        return std_bounds
            .iter()
            .find(|p| declaring.contains(&name(p).as_str()))
            .copied();
    }
    let markers = [
        "Send",
        "Sync",
        "Sized",
        "Unpin",
        "Copy",
        "Clone",
        "Debug",
        "Display",
        "PartialEq",
        "Eq",
        "PartialOrd",
        "Ord",
        "Hash",
        "Default",
        "Into",
        "From",
        "AsRef",
        "AsMut",
        "Borrow",
        "ToString",
        "UnwindSafe",
        "RefUnwindSafe",
    ];
    let mut rest = std_bounds
        .iter()
        .filter(|p| !markers.contains(&name(p).as_str()));
    match (rest.next(), rest.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Substitutes a struct's generic parameters by the arguments of the concrete type.
fn substitute(t: &Ty, generics: &[IrGeneric], args: &[Ty]) -> Ty {
    let map: Vec<(&str, &Ty)> = generics
        .iter()
        .map(|g| g.name.as_str())
        .zip(args.iter())
        .collect();
    subst(t, &map)
}

/// For `impl<T> Deref for Wrapper<T>`: maps the impl's parameters through the written self type.
fn substitute_by_self(t: &Ty, ir_self: &IrType, generics: &[IrGeneric], args: &[Ty]) -> Ty {
    let IrType::Path(p) = ir_self else {
        return t.clone();
    };
    let Some(last) = p.segments.last() else {
        return t.clone();
    };
    let mut map: Vec<(&str, &Ty)> = Vec::new();
    for (written, actual) in last.generics.iter().zip(args.iter()) {
        if let IrType::Path(wp) = written {
            if let Some(n) = wp.single() {
                if generics.iter().any(|g| g.name == n) {
                    map.push((n, actual));
                }
            }
        }
    }
    subst(t, &map)
}

fn subst(t: &Ty, map: &[(&str, &Ty)]) -> Ty {
    match t {
        Ty::Param { name, .. } => map
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| (*t).clone())
            .unwrap_or_else(|| {
                // A projection (`A::AllocatedMemory`) keeps its bounds whatever `A` becomes.
                if name.contains("::") {
                    t.clone()
                } else {
                    Ty::Unknown
                }
            }),
        Ty::Adt(c, args) => Ty::Adt(c.clone(), args.iter().map(|a| subst(a, map)).collect()),
        Ty::Ref(i) => Ty::Ref(Box::new(subst(i, map))),
        Ty::Slice(i) => Ty::Slice(Box::new(subst(i, map))),
        Ty::Tuple(e) => Ty::Tuple(e.iter().map(|a| subst(a, map)).collect()),
        other => other.clone(),
    }
}

/// Whether an expression's value comes from a macro metavariable: its base, through fields,
/// method calls, `?`, `.await`, `&` and `*`, is the placeholder (`$me.buf.push(..)`).
fn rooted_in_metavar(e: &IrExpr) -> bool {
    match e {
        IrExpr::Path(p, _) => p.single() == Some(METAVAR_PLACEHOLDER),
        IrExpr::Field(base, _) => rooted_in_metavar(base),
        IrExpr::MethodCall { receiver, .. } => rooted_in_metavar(receiver),
        IrExpr::Try(i) | IrExpr::Await(i) | IrExpr::Ref(i) | IrExpr::Deref(i) => {
            rooted_in_metavar(i)
        }
        _ => false,
    }
}

/// `Some`, `Ok`, `Err`, `None` and other std enum variants are constructors, not calls.
fn is_constructor_path(p: &str) -> bool {
    matches!(
        p,
        "std::option::Option::Some"
            | "std::result::Result::Ok"
            | "std::result::Result::Err"
            | "std::option::Option::None"
    )
}

/// `std::x::Type::new(..)`-style paths: the second-to-last segment is a type name.
fn is_constructor_like(p: &str) -> bool {
    let mut segs = p.rsplit("::");
    let _fn = segs.next();
    segs.next()
        .is_some_and(|t| t.chars().next().is_some_and(char::is_uppercase))
}

/// The type an associated constructor of an external type yields. Wrappers (`Arc::new(x)`)
/// carry the argument's type so that `.lock()` on them still resolves.
fn constructor_type(p: &str, arg_types: &[Ty]) -> Ty {
    match p {
        "std::option::Option::Some" => {
            return Ty::external("std::option::Option", arg_types.to_vec())
        }
        "std::result::Result::Ok" => {
            return Ty::external("std::result::Result", arg_types.to_vec())
        }
        _ => {}
    }
    let Some((type_path, _)) = p.rsplit_once("::") else {
        return Ty::Unknown;
    };
    let wraps = matches!(
        type_path,
        "std::sync::Arc"
            | "std::rc::Rc"
            | "std::boxed::Box"
            | "std::sync::Mutex"
            | "std::sync::RwLock"
            | "std::cell::RefCell"
            | "std::pin::Pin"
    );
    let args = if wraps {
        arg_types.first().cloned().into_iter().collect()
    } else {
        Vec::new()
    };
    Ty::external(type_path, args)
}

#[cfg(test)]
mod tests {
    use crate::testutil::{analyze_files, lib_rs_sites as one, sites};

    #[test]
    fn a_macro_with_a_large_expansion_tree_does_not_hide_later_macros() {
        // `log!` expands to 2^7 nested macro calls (like tracing's `info!`), well over one
        // expansion tree's budget; `load!` after it must still be expanded.
        let mut src = String::from("macro_rules! m0 { () => { () } }\n");
        for i in 1..=7 {
            src.push_str(&format!(
                "macro_rules! m{i} {{ () => {{ m{p}!(); m{p}!() }} }}\n",
                p = i - 1
            ));
        }
        src.push_str(
            "macro_rules! load { () => { std::fs::read(\"x\") } }\n\
             async fn a() {\n m7!();\n let _ = load!();\n}\n",
        );
        assert_eq!(one(&src), [(12, "NB0101".into())]);
    }

    /// Four lines: two types with a `sync` method of the same name, one reading a file, one
    /// sleeping, so a test tells which type a receiver was given by the rule that fires.
    pub(super) const TWO_SYNCS: &str = "struct Db; struct Fail;\n\
                             impl Db { fn sync(&self) { std::fs::read(\"db\").ok(); } }\n\
                             impl Fail { fn sync(&self) { std::thread::sleep(d()); } }\n\
                             fn d() -> std::time::Duration { todo!() }\n";

    /// `Err(e)` binds the `Result`'s error type, not its value type: `e.sync()` on a
    /// `Result<Db, Fail>` calls `Fail::sync` (time's `try_likely_ok!` matches `Err(error)` and
    /// converts it); an `io::Result`'s error is `std::io::Error`.
    #[test]
    fn err_patterns_bind_the_error_type() {
        let src = TWO_SYNCS.to_string()
            + "fn open() -> Result<Db, Fail> { todo!() }\n\
                   async fn a() {\n\
                   \x20   match open() { Ok(db) => db.sync(), Err(e) => e.sync() }\n\
                   \x20   if let Err(e) = std::fs::File::open(\"x\") { let _ = e.kind(); }\n\
                   }\n";
        assert_eq!(
            one(&src),
            [
                (7, "NB0101".into()),
                (7, "NB0201".into()),
                (8, "NB0101".into())
            ]
        );
    }

    /// `let [a, b, ..] = *state;` binds each name to the array's element type (sha2's
    /// compression rounds on `[u64; 8]`); `rest @ ..` binds a slice, left unknown.
    #[test]
    fn slice_patterns_bind_the_element_type() {
        let src = TWO_SYNCS.to_string()
            + "async fn a(dbs: &[Db; 3]) {\n\
                   \x20   let [first, .., last] = dbs;\n\
                   \x20   first.sync();\n\
                   \x20   last.sync();\n\
                   }\n";
        assert_eq!(one(&src), [(7, "NB0101".into()), (8, "NB0101".into())]);
    }

    /// An array expression is a slice of its elements' type: a loop over an array of tuples
    /// binds typed names (deno's `for (url, file_type) in [(.., ..), ..]` then
    /// `file_path.exists()`), and a repeated element (`[x; 4]`) types the same way.
    #[test]
    fn array_expressions_are_typed_by_their_elements() {
        let src = TWO_SYNCS.to_string()
            + "async fn a(db: Db, fail: Fail) {\n\
                   \x20   for (d, _) in [(db, 1)] { d.sync(); }\n\
                   \x20   let all = [fail; 4];\n\
                   \x20   for f in all.iter() { f.sync(); }\n\
                   }\n";
        assert_eq!(one(&src), [(6, "NB0101".into()), (8, "NB0201".into())]);
    }

    /// A turbofish types the result of `collect`, `sum` and `parse` (reqsign's
    /// `env::vars().collect::<HashMap<_, _>>()` then `.get(..)`); a real `as` cast stays the
    /// written type.
    #[test]
    fn a_turbofish_types_collect_and_parse() {
        let src = TWO_SYNCS.to_string()
            + "async fn a(dbs: Vec<Db>, text: &str) {\n\
                   \x20   let all = dbs.into_iter().collect::<Vec<Db>>();\n\
                   \x20   all[0].sync();\n\
                   \x20   let n = text.parse::<Fail>().unwrap();\n\
                   \x20   n.sync();\n\
                   \x20   let k = 3u8 as u64;\n\
                   \x20   k.sync();\n\
                   }\n";
        assert_eq!(one(&src), [(7, "NB0101".into()), (9, "NB0201".into())]);
    }

    /// Same-named inherent methods of impls for different type arguments (config-rs'
    /// `impl ConfigBuilder<DefaultState>` and `impl ConfigBuilder<AsyncState>`, both with
    /// `build_internal`): `Self::` and `self.` calls go to the impl whose arguments fit.
    #[test]
    fn inherent_methods_of_impls_for_other_type_arguments_do_not_apply() {
        let src = "pub struct Sync_; pub struct Async_;\n\
                   pub struct Builder<St> { st: St }\n\
                   impl Builder<Sync_> {\n\
                   \x20   fn internal() { std::fs::read(\"cfg\").ok(); }\n\
                   \x20   fn helper(&self) { std::thread::sleep(std::time::Duration::from_secs(1)); }\n\
                   }\n\
                   impl Builder<Async_> {\n\
                   \x20   async fn internal() {}\n\
                   \x20   fn helper(&self) {}\n\
                   \x20   pub async fn build(&self) { Self::internal().await; self.helper(); }\n\
                   }\n\
                   pub async fn sync_one(b: &Builder<Sync_>) { b.helper(); }\n";
        assert_eq!(one(src), [(12, "NB0201".into())]);
    }

    #[test]
    fn aliases_groups_and_globs_resolve_to_std() {
        let src = "use std::fs as f;\nuse std::thread::{self, sleep as nap};\nmod g { pub use std::fs::*; }\n\
                   async fn a() {\n f::read(\"x\");\n nap(d());\n g::write(\"x\", \"y\");\n thread::sleep(d());\n}\nfn d() -> std::time::Duration { todo!() }\n";
        assert_eq!(
            one(src),
            [
                (5, "NB0101".into()),
                (6, "NB0201".into()),
                (7, "NB0101".into()),
                (8, "NB0201".into())
            ]
        );
    }

    #[test]
    fn method_receivers_typed_from_annotations_constructors_fields_and_derefs() {
        let src = "use std::sync::{Arc, Mutex};\nuse std::fs::File;\n\
                   struct S { f: File, m: Arc<Mutex<File>> }\n\
                   async fn a(s: &S, p: &std::path::Path) -> std::io::Result<()> {\n\
                   let g = File::open(p)?;\n\
                   g.sync_all()?;\n\
                   s.f.sync_data()?;\n\
                   s.m.lock().unwrap().set_len(0)?;\n\
                   p.exists();\n\
                   Ok(())\n}\n";
        assert_eq!(
            one(src),
            [
                (5, "NB0101".into()),
                (6, "NB0101".into()),
                (7, "NB0101".into()),
                // `set_len` through the `MutexGuard` is found; the lock itself is a one-statement
                // critical section (crate::critical) and not reported.
                (8, "NB0101".into()),
                (9, "NB0101".into())
            ]
        );
    }

    #[test]
    fn user_types_with_blocking_method_names_are_not_std() {
        let src = "struct Cache;\nimpl Cache { fn read(&self) -> u8 { 0 } fn lock(&self) {} }\n\
                   mod fs { pub fn read(_: &str) {} }\n\
                   async fn a(c: Cache) {\n c.read();\n c.lock();\n fs::read(\"x\");\n}\n";
        assert_eq!(one(src), Vec::<(u32, String)>::new());
    }

    #[test]
    fn trait_path_calls_dispatch_on_the_first_arguments_type_and_reference_impls() {
        // ratatui's shape: `impl Widget for Block` renders through `Widget::render(&self, ..)`,
        // i.e. `impl Widget for &Block`; `&List` renders through its `StatefulWidget` impl.
        // atuin's history list implements `StatefulWidget` too and must not be reached.
        let src = "pub trait Widget { fn render(self, n: u8); }\n\
                   pub trait StatefulWidget { fn render(self, n: u8, s: &mut u8); }\n\
                   pub struct Block; pub struct List; pub struct History;\n\
                   impl Widget for Block { fn render(self, n: u8) { Widget::render(&self, n); } }\n\
                   impl Widget for &Block { fn render(self, n: u8) { std::fs::read(\"b\").ok(); } }\n\
                   impl Widget for &List { fn render(self, n: u8) { let mut s = 0; StatefulWidget::render(self, n, &mut s); } }\n\
                   impl StatefulWidget for &List { fn render(self, n: u8, s: &mut u8) {} }\n\
                   impl StatefulWidget for History { fn render(self, n: u8, s: &mut u8) { std::fs::read(\"h\").ok(); } }\n\
                   pub async fn block(b: Block) { b.render(1); }\n\
                   pub async fn list(l: List) { Widget::render(&l, 2); (&l).render(3); }\n\
                   pub async fn hist(h: History) { let mut s = 0; h.render(1, &mut s); }\n";
        let r = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let mut paths: Vec<String> = r
            .findings
            .iter()
            .map(|f| {
                let steps: Vec<String> = f.path.iter().map(|s| s.callee.clone()).collect();
                steps.join(" -> ")
            })
            .collect();
        paths.sort();
        assert_eq!(
            paths,
            [
                "<app::Block as Widget>::render -> <&app::Block as Widget>::render -> std::fs::read",
                "<app::History as StatefulWidget>::render -> std::fs::read",
            ],
            "{paths:#?}"
        );
    }

    #[test]
    fn trait_calls_dispatch_to_the_known_impl_or_every_impl() {
        let src = "trait Store { fn get(&self); }\nstruct Disk; struct Mem;\n\
                   impl Store for Disk { fn get(&self) { std::fs::read(\"x\"); } }\n\
                   impl Store for Mem { fn get(&self) {} }\n\
                   async fn known(m: Mem) { m.get(); }\n\
                   async fn generic<T: Store>(t: T) { t.get(); }\n\
                   async fn dynamic(t: Box<dyn Store>) { t.get(); }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(6, "NB0101".into()), (7, "NB0101".into())]);
        let generic = r.findings.iter().find(|f| f.path[0].line == 6).unwrap();
        assert_eq!(generic.confidence, "medium");
        assert_eq!(generic.path[1].function, "<app::Disk as Store>::get");
    }

    #[test]
    fn local_macro_rules_bodies_are_expanded_at_the_call_site() {
        let src = "macro_rules! load { ($p:expr) => { std::fs::read($p) }; }\n\
                   async fn a() {\n let _ = load!(\"x\");\n}\n";
        assert_eq!(one(src), [(3, "NB0101".into())]);
    }

    #[test]
    fn recursive_macros_expand_once_per_level_without_blowing_up() {
        let mut arms = String::new();
        for i in 0..12 {
            arms.push_str(&format!(
                "(@a{i} $($t:tt)*) => {{ m!(@b $($t)*); m!(@c $($t)*); }};\n"
            ));
        }
        let src = format!("macro_rules! m {{\n{arms}() => {{ std::fs::read(\"x\") }};\n}}\nasync fn a() {{\n m!(@a0 x);\n}}\n");
        assert_eq!(one(&src), [(17, "NB0101".into())]);
    }

    #[test]
    fn cyclic_glob_imports_resolve_without_exponential_walks() {
        // Twelve modules that glob-import each other in a ring and their parent: any lookup of
        // a missing name visits each module once.
        let mut src = String::from("pub use m0::*;\n");
        for i in 0..12 {
            src.push_str(&format!(
                "pub mod m{i} {{ pub use super::*; pub use super::m{}::*; }}\n",
                (i + 1) % 12
            ));
        }
        src.push_str("async fn a() {\n m5::missing();\n std::fs::read(\"x\");\n}\n");
        assert_eq!(one(&src), [(16, "NB0101".into())]);
    }

    #[test]
    fn unknown_receivers_only_match_rules_with_a_name_fallback() {
        // Line 4: tokio's sealed `to_socket_addrs(&self, Internal)` has the name but not the
        // arity of std's (`name_fallback = ["to_socket_addrs()"]`).
        let src = "async fn a(x: impl Sized, y: impl Sized) {\n x.read_to_string();\n (\"h\", 80).to_socket_addrs();\n y.to_socket_addrs(Internal);\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(3, "NB0301".into())]);
        assert_eq!(r.findings[0].confidence, "low");
    }

    /// A crate's `Result` alias (generic, with a defaulted error parameter), a nested generic
    /// alias, and a dependency-style alias of std's: `let x = open()?; x.method()` resolves
    /// whatever alias `open` returns.
    #[test]
    fn generic_aliases_are_substituted_at_each_use() {
        let src = "pub struct Error;\n\
                   pub type Result<T, E = Error> = std::result::Result<T, E>;\n\
                   pub type Shared<T> = std::sync::Arc<std::sync::Mutex<T>>;\n\
                   pub type IoResult<T> = std::io::Result<T>;\n\
                   pub struct Db;\n\
                   impl Db {\n\
                   pub fn open() -> Result<Db> { Ok(Db) }\n\
                   pub fn query(&self) { let _ = std::fs::read(\"q\"); }\n\
                   pub fn file() -> IoResult<std::fs::File> { std::fs::File::open(\"f\") }\n\
                   }\n\
                   async fn a(shared: Shared<std::fs::File>) -> Result<()> {\n\
                   let db = Db::open()?;\n\
                   db.query();\n\
                   shared.lock().unwrap().sync_all();\n\
                   let f = Db::file().unwrap();\n\
                   f.sync_data();\n\
                   Ok(())\n}\n";
        let sites = one(src);
        for line in [13, 14, 15, 16] {
            assert!(
                sites.contains(&(line, "NB0101".into())),
                "line {line}: {sites:?}"
            );
        }
    }

    /// Generics bound at the call: a blanket impl's `Self` is the receiver; an impl's parameter
    /// comes from the receiver's arguments; a fn's from its argument types. An unbound
    /// parameter stays unknown.
    #[test]
    fn generic_results_bind_from_receivers_and_arguments() {
        let src = "pub trait Make { fn make() -> Self where Self: Sized; }\n\
                   pub trait Fresh { fn fresh() -> Self; }\n\
                   impl<D: Default> Fresh for D { fn fresh() -> Self { D::default() } }\n\
                   #[derive(Default)] pub struct Disk;\n\
                   impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub struct Wrapper<T> { inner: T }\n\
                   impl<T> Wrapper<T> { pub fn get(&self) -> &T { &self.inner } }\n\
                   pub fn first<T>(v: Vec<T>) -> T { v.into_iter().next().unwrap() }\n\
                   pub fn unbound<T: Default>() -> T { T::default() }\n\
                   async fn a(w: Wrapper<Disk>, v: Vec<Disk>) {\n\
                   let d = Disk::fresh();\n\
                   d.flush();\n\
                   w.get().flush();\n\
                   first(v).flush();\n\
                   let u: u8 = unbound();\n\
                   }\n";
        let sites = one(src);
        for line in [12, 13, 14] {
            assert!(
                sites.contains(&(line, "NB0101".into())),
                "line {line}: {sites:?}"
            );
        }
        assert!(!sites.iter().any(|(l, _)| *l == 15), "{sites:?}");
    }

    /// A crate listed in `opaque_macros` (logging) has its `macro_rules!` bodies skipped at call
    /// sites in other crates; the invocation's own arguments are still walked.
    #[test]
    fn macros_of_opaque_macro_crates_are_not_expanded_but_their_arguments_are() {
        let src = "pub async fn a() {\n\
                   logger::log_it!(std::thread::sleep(std::time::Duration::from_secs(1)));\n\
                   }\n";
        let (mut ws, scratch) = crate::testutil::scratch_workspace(
            "opaque-macros",
            src,
            crate::discover::SourceKind::Workspace,
            false,
        );
        let logger = scratch.0.join("logger/src/lib.rs");
        std::fs::create_dir_all(logger.parent().unwrap()).unwrap();
        std::fs::write(
            &logger,
            "#[macro_export] macro_rules! log_it { ($e:expr) => { let _ = std::fs::read(\"/log\"); $e } }\n",
        )
        .unwrap();
        let mut package = ws.packages[0].clone();
        package.name = "logger".into();
        package.id = "registry+https://example.invalid#logger@1.0.0".into();
        package.report_roots = false;
        ws.packages.push(package);
        let mut unit = ws.units[0].clone();
        unit.package = 1;
        unit.crate_name = "logger".into();
        unit.root = logger;
        ws.units.push(unit);
        ws.units[0]
            .deps
            .insert("logger".into(), crate::discover::DepTarget::Unit(1));
        let run = |rules: &crate::RuleDb| {
            let report = crate::analyze_workspace(
                &ws,
                rules,
                &crate::config::Config::default(),
                &crate::progress::Silent,
                std::time::Instant::now(),
                std::collections::BTreeMap::new(),
                false,
            );
            let mut rules: Vec<String> = report.findings.iter().map(|f| f.rule.clone()).collect();
            rules.sort();
            rules
        };
        assert_eq!(run(&crate::RuleDb::builtin()), ["NB0101", "NB0201"]);
        let mut opaque = crate::RuleDb::builtin();
        opaque.opaque_macros.push("logger".into());
        assert_eq!(run(&opaque), ["NB0201"]);
    }

    /// Calls on a metavariable of a `macro_rules!` that could not be expanded at its invocation
    /// (here: no arm matches `;`) are counted as `macro_metavar`, not as an inference gap; a
    /// name-fallback rule still matches them (`$a.to_socket_addrs()`).
    #[test]
    fn calls_on_macro_metavariables_have_their_own_reason() {
        let src = "macro_rules! touch { ($me:expr, $a:expr) => { $me.buf.push(1); $me.flush(); ($me.make)(); $a.to_socket_addrs() } }\n\
                   pub async fn a(x: (&str, u16)) {\n\
                   let _ = touch!(x; x);\n\
                   }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let reasons = &report.stats.unresolved_by_reason;
        assert_eq!(reasons.get("macro_metavar"), Some(&2), "{reasons:?}");
        // `$a.to_socket_addrs()` stays an unknown receiver, so the name fallback can match it.
        assert_eq!(reasons.get("unknown_receiver"), Some(&1), "{reasons:?}");
        assert!(report.findings.iter().any(|f| f.rule == "NB0301"));
    }

    /// A crate-local `macro_rules!` is expanded at its invocation: metavariables stand for the
    /// invocation's tokens, so calls on them resolve (`lock!(self.disk).flush()` through the
    /// expansion's type), only the matching arm's calls are made, and a tt-muncher that invokes
    /// itself per step expands without walking every arm at every step.
    #[test]
    fn crate_local_macro_rules_are_expanded_at_the_invocation() {
        let src = "pub struct Disk;\n\
                   impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } pub fn quiet(&self) {} }\n\
                   pub struct Holder { disk: std::sync::Mutex<Disk> }\n\
                   macro_rules! lock { ($m:expr) => { $m.lock().unwrap() } }\n\
                   macro_rules! pick { (slow $d:expr) => { std::thread::sleep(std::time::Duration::from_secs(1)) }; (fast $d:expr) => { $d.quiet() } }\n\
                   macro_rules! steps { ($d:ident :) => {}; ($d:ident : $s:ident $($rest:ident)*) => { $d.$s(); steps!($d : $($rest)*); } }\n\
                   impl Holder {\n\
                   pub async fn a(&self) { lock!(self.disk).flush(); }\n\
                   pub async fn b(&self, d: Disk) { pick!(fast d); }\n\
                   pub async fn c(&self, d: Disk) { steps!(d : quiet quiet flush); }\n\
                   }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let sites = crate::testutil::sites(&report);
        assert!(sites.contains(&(8, "NB0101".into())), "{sites:?}");
        // `pick!(fast d)` does not make the `slow` arm's sleep.
        assert!(!sites.iter().any(|(l, _)| *l == 9), "{sites:?}");
        assert!(sites.contains(&(10, "NB0101".into())), "{sites:?}");
        let reasons = &report.stats.unresolved_by_reason;
        assert_eq!(reasons.get("macro_metavar"), Some(&0), "{reasons:?}");
        assert_eq!(reasons.get("unknown_receiver"), Some(&0), "{reasons:?}");
    }

    /// A `#[macro_export]` macro is path-scoped: a module lowered before the one defining it
    /// (`pub mod js;` before `pub mod util;`, rsvim's `lock!` reached through `use
    /// crate::prelude::*`) still expands it, so the guard's `File::write` resolves. A module's
    /// own textual definition of the same name wins over the export.
    #[test]
    fn exported_macro_rules_expand_before_their_textual_definition() {
        let files = [
            (
                "src/lib.rs",
                "pub mod js;\npub mod quiet;\npub mod prelude;\npub mod util;\n",
            ),
            (
                "src/js.rs",
                "use crate::prelude::*;\n\
                 use std::io::Write;\n\
                 pub async fn write(h: std::sync::Arc<std::sync::Mutex<std::fs::File>>) {\n\
                 let mut f = lock!(h);\n\
                 let _ = f.write(b\"x\");\n\
                 }\n",
            ),
            (
                "src/quiet.rs",
                "use std::io::Write;\n\
                 macro_rules! lock { ($id:expr) => { std::io::sink() } }\n\
                 pub async fn q(h: std::sync::Arc<std::sync::Mutex<std::fs::File>>) {\n\
                 let mut f = lock!(h);\n\
                 let _ = f.write(b\"x\");\n\
                 }\n",
            ),
            ("src/prelude.rs", "pub use crate::lock;\n"),
            (
                "src/util.rs",
                "#[macro_export]\nmacro_rules! lock { ($id:expr) => { ($id).lock().unwrap() } }\n",
            ),
        ];
        let report = crate::testutil::analyze_files(&files);
        let found: Vec<(String, u32, String)> = report
            .findings
            .iter()
            .filter_map(|f| {
                let s = f.path.last()?;
                Some((s.file.clone(), s.line, f.api.clone()))
            })
            .collect();
        assert!(
            found.contains(&("src/js.rs".into(), 5, "std::fs::File::write".into())),
            "{found:?}"
        );
        assert!(
            !found.iter().any(|(f, _, _)| f == "src/quiet.rs"),
            "{found:?}"
        );
    }

    /// typst package-check's `SystemWorld::source`: `self.slot(id, |slot| slot.source(..))` with
    /// `fn slot<F, T>(&self, id: u32, f: F) -> T where F: FnOnce(&mut FileSlot) -> T` types
    /// `slot` from the bound, so `FileSlot::source`'s download is found. Inline bounds and
    /// `impl FnMut(..)` parameters too; a look-alike whose bound names another type (with a quiet
    /// `source`) is not reported, an annotated parameter keeps its annotation, and a bound type
    /// with a parameter nothing binds (flume's `Arc<Hook<T, S>>`) types nothing.
    #[test]
    fn closure_parameters_are_typed_from_the_callees_fn_bound() {
        let src = "pub struct FileSlot;\n\
                   impl FileSlot { pub fn source(&mut self) -> Vec<u8> { std::fs::read(\"pkg\").unwrap() } }\n\
                   pub struct Memo;\n\
                   impl Memo { pub fn source(&mut self) -> Vec<u8> { Vec::new() } }\n\
                   pub struct World { slots: std::sync::Mutex<Vec<FileSlot>> }\n\
                   impl World {\n\
                   fn slot<F, T>(&self, id: usize, f: F) -> T where F: FnOnce(&mut FileSlot) -> T { let mut s = self.slots.lock().unwrap(); f(&mut s[id]) }\n\
                   fn memo<F: FnOnce(&mut Memo) -> T, T>(&self, f: F) -> T { f(&mut Memo) }\n\
                   fn each(&self, mut f: impl FnMut(&mut FileSlot)) { f(&mut FileSlot) }\n\
                   pub async fn a(&self) { let _ = self.slot(0, |slot| slot.source()); }\n\
                   pub async fn b(&self) { let _ = self.memo(|slot| slot.source()); }\n\
                   pub async fn c(&self) { self.each(|s| { s.source(); }); }\n\
                   pub async fn d(&self) { let _ = self.slot(0, |slot: &mut FileSlot| slot.source()); }\n\
                   fn recv<S>(&self, block: bool, make: impl FnOnce() -> Hook<S>, wait: impl FnOnce(Hook<S>)) { if block { wait(make()) } }\n\
                   pub async fn e(&self) { self.recv(false, || Hook(Spin), |h| h.wait()); }\n\
                   }\n\
                   pub struct Hook<S>(S); pub struct Spin; pub struct Sync;\n\
                   impl Hook<Sync> { pub fn wait(&self) { std::thread::park(); } }\n\
                   impl Hook<Spin> { pub fn wait(&self) {} }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        // `e`: `Hook<S>` with `S` unbound (flume's `recv_sync`) types nothing.
        assert_eq!(lines, [10, 12, 13], "{lines:?}");
    }

    /// The closure of `unwrap_or_else` (and the other Option/Result plumbing, whose call is not
    /// modelled) runs in place: typst package-check's `read` resolves a package root with
    /// `expect_parents(..).map(|r| Ok(r.join(..))).unwrap_or_else(|| prepare_package(spec))`,
    /// and `prepare_package` downloads. A quiet closure is not reported.
    #[test]
    fn closures_of_option_and_result_plumbing_run_in_place() {
        let src = "fn expect_parents(d: &std::path::Path) -> Option<std::path::PathBuf> { None }\n\
                   fn prepare_package(s: &str) -> Result<std::path::PathBuf, String> { let _ = std::fs::read(s); Ok(s.into()) }\n\
                   pub async fn a(d: &std::path::Path, s: &str) {\n\
                   let _ = expect_parents(d).map(|r| Ok(r.join(\"x\"))).unwrap_or_else(|| prepare_package(s)).unwrap();\n\
                   }\n\
                   pub async fn b(d: &std::path::Path) {\n\
                   let _ = expect_parents(d).unwrap_or_else(|| std::path::PathBuf::new());\n\
                   }\n\
                   pub async fn c(r: Result<u8, String>) {\n\
                   let _ = r.unwrap_or_else(|e| { std::thread::sleep(std::time::Duration::from_secs(1)); e.len() as u8 });\n\
                   }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [4, 10], "{lines:?}");
    }

    /// Items a crate-local macro generates (an impl per type, glib's `wrapper!` style) are
    /// analysed like written ones: the generated method's blocking call is found.
    #[test]
    fn items_generated_by_crate_local_macros_are_analysed() {
        let src = "pub struct A; pub struct B;\n\
                   macro_rules! loader { ($($t:ident => $path:literal),*) => { $( impl $t { pub fn load(&self) -> Vec<u8> { std::fs::read($path).unwrap() } } )* } }\n\
                   loader!(A => \"a\", B => \"b\");\n\
                   pub async fn a(b: B) { b.load(); }\n";
        let sites = one(src);
        assert!(sites.contains(&(4, "NB0101".into())), "{sites:?}");
    }

    /// `debug_assert!` and `#[cfg(debug_assertions)]` code does not run in a release build; the
    /// same call in `assert!` does.
    #[test]
    fn debug_assertions_are_not_production() {
        let src = "pub async fn a(p: &std::path::Path) {\n\
                   debug_assert!(std::fs::metadata(p).is_ok());\n\
                   debug_assert_eq!(std::fs::read(p).unwrap(), b\"x\");\n\
                   #[cfg(debug_assertions)] { let _ = std::fs::read(\"dbg\"); }\n\
                   assert!(std::fs::metadata(p).is_ok());\n\
                   }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [5]);
    }

    /// A tuple variant or tuple struct pattern types its bindings from the payload's fields:
    /// `Some(S::Server(c)) => c.run()` reaches `server::Options::run` only, a generic enum's
    /// payload takes the scrutinee's argument, and a tuple struct pattern unwraps its field.
    #[test]
    fn variant_patterns_type_their_payloads() {
        let src = "pub struct Disk; impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub struct Mem; impl Mem { pub fn flush(&self) {} }\n\
                   pub enum S { Server(Disk), Worker(Mem) }\n\
                   pub enum E<T> { A(T), B }\n\
                   pub struct Wrapper(pub Disk);\n\
                   pub async fn a(s: Option<S>) { match s { Some(S::Server(c)) => c.flush(), _ => {} } }\n\
                   pub async fn b(s: S) { if let S::Worker(m) = s { m.flush(); } }\n\
                   pub async fn c(e: E<Disk>) { if let E::A(d) = e { d.flush(); } }\n\
                   pub async fn d(w: Wrapper) { let Wrapper(inner) = w; inner.flush(); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [6, 8, 9]);
        assert_eq!(
            report.stats.unresolved_by_reason.get("unknown_receiver"),
            Some(&0)
        );
    }

    /// Struct patterns bind their fields' types: a struct, a struct variant, `Self { .. }`, a
    /// field renamed in the pattern, and a std struct's public field (`Output { status, .. }`).
    #[test]
    fn struct_patterns_type_their_fields() {
        let src = "pub struct Disk; impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub struct Mem; impl Mem { pub fn flush(&self) {} }\n\
                   pub struct Pair { pub disk: Disk, pub mem: Mem }\n\
                   pub enum S { Server { store: Disk }, Worker { store: Mem } }\n\
                   impl Pair { pub async fn own(self) { let Self { disk, .. } = self; disk.flush(); } }\n\
                   pub async fn a(p: Pair) { let Pair { mem, .. } = p; mem.flush(); }\n\
                   pub async fn b(p: &Pair) { let Pair { disk: d, mem: _ } = p; d.flush(); }\n\
                   pub async fn c(s: S) { match s { S::Server { store } => store.flush(), S::Worker { store } => store.flush() } }\n\
                   pub async fn d(o: std::process::Output) { let std::process::Output { status, .. } = o; if status.success() {} }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        // `own` (line 5), `b` (7) and `c`'s server arm (8) reach the write; `a` and the worker
        // arm flush memory.
        assert_eq!(lines, [5, 7, 8]);
        assert_eq!(
            report.stats.unresolved_by_reason.get("unknown_receiver"),
            Some(&0)
        );
    }

    /// Index expressions are typed as the element: std's `Vec`, slices, `str` ranges, maps,
    /// and an analysed type's `impl Index` (the one for ranges apart).
    #[test]
    fn index_expressions_type_their_elements() {
        let src = "use std::collections::HashMap;\n\
                   pub struct Disk; impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub struct Mem; impl Mem { pub fn flush(&self) {} }\n\
                   pub struct Table { disks: Vec<Disk> }\n\
                   impl std::ops::Index<usize> for Table { type Output = Disk; fn index(&self, i: usize) -> &Disk { &self.disks[i] } }\n\
                   impl std::ops::Index<std::ops::Range<usize>> for Table { type Output = [Mem]; fn index(&self, r: std::ops::Range<usize>) -> &[Mem] { loop {} } }\n\
                   pub async fn a(v: Vec<Disk>) { v[0].flush(); }\n\
                   pub async fn b(m: HashMap<String, Mem>) { m[\"k\"].flush(); }\n\
                   pub async fn c(t: &Table) { t[1].flush(); }\n\
                   pub async fn d(t: &Table) { t[0..2][0].flush(); }\n\
                   pub async fn e(s: &[Disk]) { s[1..][0].flush(); }\n\
                   pub async fn f(s: String) { let n = s[1..].trim().len(); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [7, 9, 11]);
        assert_eq!(
            report.stats.unresolved_by_reason.get("unknown_receiver"),
            Some(&0)
        );
    }

    /// Arithmetic on primitive numbers keeps their type, a primitive's constants have it, raw
    /// pointers are std's `pointer` (their methods resolve, `*p` is the pointee), and std's
    /// iterators of strings yield `&str` (`rules/std-types.toml`).
    #[test]
    fn arithmetic_constants_pointers_and_std_iterators_are_typed() {
        let src = "pub struct Disk; impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub trait Open { fn open_it(&self) -> Disk; }\n\
                   impl Open for usize { fn open_it(&self) -> Disk { Disk } }\n\
                   impl Open for str { fn open_it(&self) -> Disk { Disk } }\n\
                   pub async fn a(n: usize, s: u32) { (n >> s).open_it().flush(); }\n\
                   pub async fn b() { usize::MAX.open_it().flush(); }\n\
                   pub async fn c(p: *const Disk) { unsafe { (*p.add(1)).flush() } }\n\
                   pub async fn d(text: String) { for l in text.lines() { l.trim().open_it().flush(); } }\n\
                   pub async fn e(n: usize) { (1 + n).checked_add(2).unwrap().open_it().flush(); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [5, 6, 7, 8, 9]);
        assert_eq!(
            report.stats.unresolved_by_reason.get("unknown_receiver"),
            Some(&0)
        );
    }

    /// Shapes from sccache's, pingap's and their dependencies' unresolved calls (session 17):
    /// `x.into()` reaches the graph's `impl From<X>`; `Self::Variant(..)` constructs; a bool,
    /// number or char literal has its type (an unsuffixed one takes the other operand's in
    /// arithmetic); a let-bound closure's call has its body's type; `position` yields an index;
    /// a primitive's `try_from` and any `try_into` yield a `Result`; `as_ref`/`into` on a generic
    /// bounded by `AsRef<X>`/`Into<X>` yield `&X`/`X`. Negatives: `into` on a type
    /// no `From` impl takes is std's conversion (no call into the graph); a conversion from
    /// another type does not reach the blocking `From`.
    #[test]
    fn conversions_literals_and_closure_calls_are_typed() {
        let src = "pub struct Disk; impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub trait Open { fn open_it(&self) -> Disk; }\n\
                   impl Open for u8 { fn open_it(&self) -> Disk { Disk } }\n\
                   impl Open for u32 { fn open_it(&self) -> Disk { Disk } }\n\
                   impl Open for usize { fn open_it(&self) -> Disk { Disk } }\n\
                   pub struct Src; pub struct Other; pub struct Plain; pub struct Dst;\n\
                   impl From<Src> for Dst { fn from(_: Src) -> Self { std::thread::sleep(std::time::Duration::from_secs(1)); Dst } }\n\
                   impl From<Other> for Dst { fn from(_: Other) -> Self { Dst } }\n\
                   pub enum E { A(u8), B }\n\
                   impl E { pub fn mk(v: u8) -> Self { if v > 0 { Self::A(v) } else { Self::B } } }\n\
                   pub async fn a(s: Src) { let _d: Dst = s.into(); }\n\
                   pub async fn b() { let _ = E::mk(1); }\n\
                   pub async fn c() { let init = || 5u32; init().open_it().flush(); }\n\
                   pub async fn d(v: Vec<u8>) { v.iter().position(|x| *x == 1).unwrap().open_it().flush(); }\n\
                   pub async fn e(n: usize) { u32::try_from(n).unwrap().open_it().flush(); }\n\
                   pub async fn f() { let c = 0u8; c.checked_add(1).unwrap().open_it().flush(); }\n\
                   pub async fn g(n: usize) { (2 + n).open_it().flush(); }\n\
                   pub async fn h(b: &[u8], k: bool) { let _: [u8; 2] = b[..2].try_into().unwrap(); let _ = k.then_some(1).unwrap(); let _ = true.then(|| 2).unwrap(); }\n\
                   pub async fn i(p: Plain, o: Other) { let _: Option<Plain> = p.into(); let _d: Dst = o.into(); }\n\
                   pub async fn j<P: AsRef<u32>>(p: P) { p.as_ref().open_it().flush(); }\n\
                   pub async fn k<S: Into<usize>>(s: S) { s.into().open_it().flush(); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(
            crate::testutil::site_lines(&report),
            [11, 13, 14, 15, 16, 17, 20, 21]
        );
        assert_nothing_unresolved(&report);
    }

    /// No call of the report left unresolved for want of a receiver type, method or path.
    fn assert_nothing_unresolved(report: &crate::report::Report) {
        for reason in ["unknown_receiver", "unknown_method", "unknown_path"] {
            assert_eq!(
                report.stats.unresolved_by_reason.get(reason),
                Some(&0),
                "{reason}"
            );
        }
    }

    /// Fn items kept in values: `Some(f)` taken out by `if let`/`match`, and a struct
    /// literal's `fn` field called as `(hooks.on_flush)(..)`; pure ones stay silent.
    #[test]
    fn fn_items_in_options_and_struct_fields_are_called() {
        let src = "fn slow(ms: u64) { std::thread::sleep(std::time::Duration::from_millis(ms)); }\n\
                   fn quick(ms: u64) -> u64 { ms }\n\
                   fn flush(p: &str) { let _ = std::fs::write(p, b\"\"); }\n\
                   pub struct Hooks { pub on_flush: fn(&str) }\n\
                   pub async fn a(e: u64) { let h = Some(slow); if let Some(f) = h { f(e); } }\n\
                   pub async fn b(e: u64) { let h = Some(slow); match h { Some(f) => f(e), None => {} } }\n\
                   pub async fn c(e: u64) { let h = Some(quick); if let Some(f) = h { f(e); } }\n\
                   pub async fn d(p: &str) { let hooks = Hooks { on_flush: flush }; (hooks.on_flush)(p); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(crate::testutil::site_lines(&report), [5, 6, 8]);
    }

    /// sccache's shapes: a const declared in a body, `.map(Arc::clone)` (a fn item where the
    /// closure goes), `Option<&T>::cloned()`, and a method of a local bound's std supertrait
    /// (byteorder's `trait ReadBytesExt: io::Read` calling `self.read_exact(..)`).
    #[test]
    fn body_consts_fn_items_in_adapters_and_std_supertraits_are_typed() {
        let src = "use std::sync::Arc;\n\
                   #[derive(Clone)] pub struct Disk; impl Disk { pub fn flush(&self) { let _ = std::fs::write(\"d\", \"x\"); } }\n\
                   pub struct St { d: Disk }\n\
                   pub trait ReadExt: std::io::Read { fn u8_(&mut self) -> u8 { let mut b = [0u8; 1]; let _ = self.read_exact(&mut b); b[0] } }\n\
                   pub async fn a() { const D: Disk = Disk; D.flush(); }\n\
                   pub async fn b(v: Vec<Arc<St>>) { let s = v.first().map(Arc::clone); s.as_deref().unwrap().d.flush(); }\n\
                   pub async fn c(v: Vec<Disk>) { v.first().cloned().unwrap().flush(); }\n\
                   impl ReadExt for std::fs::File {}\n\
                   pub async fn d(mut f: std::fs::File) { f.u8_(); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        // Line 9: the provided `u8_` runs as `File`'s instance, so its `read_exact` is the
        // file's (a blocking read), not `io::Read`'s in general.
        assert_eq!(crate::testutil::site_lines(&report), [5, 6, 7, 9]);
        assert_nothing_unresolved(&report);
    }

    /// `Self(..)` of a tuple struct, `Self::default()` of a type deriving `Default` and
    /// `cfg!(..)` (a constant of the build, lowered as its value) are no calls: each was an
    /// `unknown_path` on sccache's dependencies (libc, blake3, chrono). `Self::missing()` on a
    /// type without such a fn stays unresolved.
    #[test]
    fn self_constructors_and_cfg_are_not_calls() {
        let src = "#[derive(Default)] pub struct W(u8);\n\
                   pub struct V(u8);\n\
                   impl W { pub fn new(v: u8) -> Self { Self(v) } pub fn d() -> Self { Self::default() } }\n\
                   impl V { pub fn d() -> Self { Self::default() } }\n\
                   pub async fn go() { let _ = W::new(1); let _ = W::d(); let _ = V::d(); if cfg!(not(target_os = \"redox\")) { let _ = 1; } }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(
            report.stats.unresolved_by_reason.get("unknown_path"),
            Some(&1),
            "only V's Self::default(), V deriving nothing"
        );
    }

    /// A trait of the graph in scope, implemented explicitly for a std type, wins over std's
    /// method of the same name (tokio's sealed `ToSocketAddrsPriv` for `str`, called on
    /// `self[..]`); where only std's trait is in scope, std's method is the call.
    #[test]
    fn an_in_scope_trait_impl_for_a_std_type_wins_over_stds_method() {
        let src = "pub mod sealed { pub struct Internal; pub trait ToAddrs { fn to_socket_addrs(&self, i: Internal) -> u8; } }\n\
                   use sealed::ToAddrs;\n\
                   impl ToAddrs for str { fn to_socket_addrs(&self, _: sealed::Internal) -> u8 { 0 } }\n\
                   impl ToAddrs for String { fn to_socket_addrs(&self, _: sealed::Internal) -> u8 { self[..].to_socket_addrs(sealed::Internal) } }\n\
                   pub async fn a(s: String) { s.to_socket_addrs(sealed::Internal); }\n\
                   pub mod other { use std::net::ToSocketAddrs; pub async fn b(s: &str) { let _ = s.to_socket_addrs(); } }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(crate::testutil::site_lines(&report), [6]);
    }

    /// A method call on a type parameter bound by a std trait is that trait's method, also
    /// through a where clause and a `dyn` object; with two candidate std traits it stays
    /// unresolved.
    #[test]
    fn methods_of_std_bounds_resolve_to_the_trait() {
        use crate::ty::TraitRef;
        let src = "pub fn a<'a, T>(mut labels: T) -> usize where T: Iterator<Item = &'a [u8]> + Send { labels.next(); 0 }\n\
                   pub fn b<T: Clone + Iterator>(x: T) { let _ = x.clone(); }\n\
                   pub fn c(x: Box<dyn Iterator<Item = u8>>) { let mut x = x; x.next(); }\n\
                   pub fn d<T: Iterator + std::io::Read>(x: T) { x.bytes(); }\n\
                   pub async fn run() { a(std::iter::empty()); b(std::iter::empty::<u8>()); c(Box::new(std::iter::empty())); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        // `d` is not called from the root, so it is never resolved (lazy resolution); its
        // ambiguous bound is checked on `std_bound_of` below.
        assert_eq!(
            report.stats.unresolved_by_reason.get("unknown_method"),
            Some(&0),
            "{:?}",
            report.stats.unresolved_by_reason
        );
        // (bounds, method) → the trait the call is named after.
        let cases: [(&[&str], &str, Option<&str>); 4] = [
            (
                &["std::iter::Iterator", "std::marker::Send"],
                "next",
                Some("std::iter::Iterator"),
            ),
            (
                &["std::iter::Iterator", "std::clone::Clone"],
                "clone",
                Some("std::clone::Clone"),
            ),
            (&["std::iter::Iterator", "std::io::Read"], "bytes", None),
            (&["std::marker::Send"], "next", None),
        ];
        for (bounds, method, expected) in cases {
            let bounds: Vec<TraitRef> = bounds
                .iter()
                .map(|b| TraitRef::External(b.to_string()))
                .collect();
            assert_eq!(super::std_bound_of(&bounds, method), expected, "{method}");
        }
    }

    /// A derived trait's method resolves to the trait's own (`#[derive(Parser)]` generates the
    /// impl in a proc macro): `Options::parse()` has type `Options`, so `opts.persist()` resolves.
    #[test]
    fn derived_trait_methods_resolve_to_the_trait() {
        let src = "pub mod clap { pub trait Parser: Sized { fn parse() -> Self { loop {} } } }\n\
                   use clap::Parser;\n\
                   #[derive(Debug, Parser)] pub struct Options;\n\
                   impl Options { pub fn persist(&self) { let _ = std::fs::write(\"o\", \"x\"); } }\n\
                   pub async fn a() { let opts = Options::parse(); opts.persist(); }\n\
                   pub struct Plain;\n\
                   pub async fn b() { let p = Plain::parse(); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [5]);
        let reasons = &report.stats.unresolved_by_reason;
        // `Plain` derives nothing: `Plain::parse` stays unknown.
        assert_eq!(reasons.get("unknown_path"), Some(&1), "{reasons:?}");
        assert_eq!(reasons.get("unknown_receiver"), Some(&0), "{reasons:?}");
    }

    /// clap's layout: `pub use clap_derive::Parser` (a proc-macro crate: a macro) beside `pub use
    /// clap_builder::*` (the trait `Parser`). The macro import must not hide the glob's trait,
    /// or `#[derive(Parser)]` then `Options::parse()` stays unresolved.
    #[test]
    fn a_derive_macro_import_does_not_hide_the_trait_of_the_same_name() {
        let src = "pub mod cli { pub use my_derive::Parser; pub use self::traits::*; pub mod traits { pub trait Parser: Sized { fn parse() -> Self { loop {} } } } }\n\
                   use cli::Parser;\n\
                   #[derive(Parser)] pub struct Options;\n\
                   impl Options { pub fn persist(&self) { let _ = std::fs::write(\"o\", \"x\"); } }\n\
                   pub async fn a() { let opts = Options::parse(); opts.persist(); }\n";
        let (mut ws, _scratch) = crate::testutil::scratch_workspace(
            "derive-macro-import",
            src,
            crate::discover::SourceKind::Workspace,
            false,
        );
        ws.units[0].deps.insert(
            "my_derive".into(),
            crate::discover::DepTarget::Opaque("my_derive".into()),
        );
        let report = crate::testutil::analyze_workspace_of(&ws);
        let lines = crate::testutil::site_lines(&report);
        assert_eq!(lines, [5]);
    }

    /// `.await` yields the future's output: an async fn's declared type (tokio's `Mutex::lock`,
    /// then the guard's `Deref`), `impl Future<Output = T>`, `Pin<Box<dyn Future<Output = T>>>`
    /// and the `Output` of a type's `Future` impl (tokio's `JoinHandle<T>`).
    #[test]
    fn await_yields_the_future_output() {
        let src = "pub mod rt {\n\
                   pub struct JoinHandle<T>(T);\n\
                   pub struct JoinError;\n\
                   impl<T> std::future::Future for JoinHandle<T> { type Output = Result<T, JoinError>; }\n\
                   pub fn spawn_it<T>(t: T) -> JoinHandle<T> { JoinHandle(t) }\n\
                   pub struct Mutex<T>(T);\n\
                   pub struct MutexGuard<'a, T>(&'a T);\n\
                   impl<T> Mutex<T> { pub async fn lock(&self) -> MutexGuard<'_, T> { MutexGuard(&self.0) } }\n\
                   impl<T> std::ops::Deref for MutexGuard<'_, T> { type Target = T; fn deref(&self) -> &T { self.0 } }\n\
                   }\n\
                   pub struct Repo;\n\
                   impl Repo { pub fn save(&self) { let _ = std::fs::write(\"r\", \"x\"); } }\n\
                   pub struct State { pub repo: rt::Mutex<Repo> }\n\
                   fn later() -> impl std::future::Future<Output = Repo> { async { Repo } }\n\
                   fn boxed() -> std::pin::Pin<Box<dyn std::future::Future<Output = Repo> + Send>> { Box::pin(async { Repo }) }\n\
                   async fn a(state: &State) {\n\
                   state.repo.lock().await.save();\n\
                   later().await.save();\n\
                   boxed().await.save();\n\
                   rt::spawn_it(Repo).await.unwrap().save();\n\
                   }\n";
        let sites = one(src);
        for line in [17, 18, 19, 20] {
            assert!(
                sites.contains(&(line, "NB0101".into())),
                "line {line}: {sites:?}"
            );
        }
    }

    /// `for entry in WalkDir::new(..)` calls `into_iter` and the iterator's `next` (walkdir's
    /// reads the directory there); the element type is `next`'s, so `entry?.metadata()`
    /// resolves. A std collection records no call.
    #[test]
    fn for_loops_call_into_iter_and_next_of_analysed_iterators() {
        let src = "pub mod walk {\n\
                   pub struct WalkDir; pub struct IntoIter; pub struct DirEntry;\n\
                   impl DirEntry { pub fn metadata(&self) { let _ = std::fs::metadata(\"x\"); } }\n\
                   impl IntoIterator for WalkDir { type Item = Result<DirEntry, ()>; type IntoIter = IntoIter; fn into_iter(self) -> IntoIter { IntoIter } }\n\
                   impl Iterator for IntoIter { type Item = Result<DirEntry, ()>; fn next(&mut self) -> Option<Result<DirEntry, ()>> { let _ = std::fs::read_dir(\".\"); None } }\n\
                   }\n\
                   async fn a(names: Vec<String>) {\n\
                   for entry in walk::WalkDir {\n\
                   let e = entry.unwrap();\n\
                   e.metadata();\n\
                   }\n\
                   for n in names { let _ = n.len(); }\n\
                   }\n";
        let sites = one(src);
        assert!(sites.contains(&(8, "NB0101".into())), "{sites:?}");
        assert!(sites.contains(&(10, "NB0101".into())), "{sites:?}");
        assert!(!sites.iter().any(|(l, _)| *l == 12), "{sites:?}");
    }

    /// A closure written as the value of a block argument (`spawn_blocking({ let x = x.clone();
    /// move || .. })`: deno's LSP diagnostics and `publish`, actix-rt's `Arbiter::with_tokio_rt`
    /// handing `{ let tx = tx.clone(); move || { runtime_factory(); .. } }` to
    /// `thread::Builder::spawn`) is that argument's closure: offloaded with it, and a parameter it
    /// calls makes the enclosing fn an inferred boundary. The block's own statements run in the
    /// caller, and a block-valued closure handed to a fn that calls it runs there.
    #[test]
    fn closures_written_as_the_value_of_a_block_argument_are_that_argument() {
        let src = "pub struct Snapshot;\n\
                   impl Snapshot { pub fn scan(&self) { std::fs::remove_dir(\"d\"); } }\n\
                   fn with_rt<F: FnOnce() + Send + 'static>(factory: F) {\n\
                   let name = String::new();\n\
                   std::thread::Builder::new().name(name.clone()).spawn({ let n = name.clone(); move || { factory(); drop(n); } });\n\
                   }\n\
                   fn run_now<F: FnOnce()>(f: F) { f() }\n\
                   pub async fn diagnostics(snapshot: std::sync::Arc<Snapshot>) {\n\
                   let h = tokio::task::spawn_blocking({\n\
                   let snapshot = snapshot.clone();\n\
                   move || snapshot.scan()\n\
                   });\n\
                   with_rt(move || { std::fs::read(\"r\"); });\n\
                   run_now({\n\
                   let s = snapshot.clone();\n\
                   let f = std::fs::File::open(\"f\");\n\
                   move || s.scan()\n\
                   });\n\
                   }\n";
        // Line 2: `scan` reached through `run_now`'s closure (entry at 17); line 16: the
        // block's own statement runs in `diagnostics`.
        assert_eq!(one(src), [(16, "NB0101".into()), (17, "NB0101".into())]);
    }

    /// std's `Option`/`Result` combinators that keep the payload carry its type to `?`:
    /// mas' `AppConfig::extract(figment).map_err(anyhow::Error::from_boxed)?` (a trait default
    /// method returning `Result<Self, _>`), then `config.secrets.key_store().await`.
    #[test]
    fn map_err_and_ok_or_keep_the_payload_for_the_question_mark() {
        let src = "pub trait Section: Sized { fn extract(x: &i32) -> Result<Self, Box<dyn std::error::Error>> { loop {} } }\n\
                   pub struct Secrets;\n\
                   impl Secrets { pub fn key_store(&self) { std::fs::read(\"k\"); } }\n\
                   pub struct App { pub secrets: Secrets }\n\
                   impl Section for App {}\n\
                   pub async fn run(o: Option<Secrets>) -> Result<(), Box<dyn std::error::Error>> {\n\
                   let c = App::extract(&1).map_err(|e| e)?;\n\
                   c.secrets.key_store();\n\
                   o.ok_or(\"none\")?.key_store();\n\
                   let n: Result<u8, ()> = Ok(1);\n\
                   n.map(|_| Secrets).map_err(|e| e).unwrap().key_store();\n\
                   Ok(())\n\
                   }\n";
        // `Result::map` changes the payload to the closure's value: line 11 reaches `key_store`.
        assert_eq!(
            one(src),
            [
                (8, "NB0101".into()),
                (9, "NB0101".into()),
                (11, "NB0101".into())
            ]
        );
    }

    /// Calls on primitives, `str` and slices are std calls (`u64::checked_add`, `str::len`,
    /// `slice::len`), not unknown methods; an extension trait of the graph on `[u8]` is
    /// dispatched, but never for a `[String]` receiver (sccache's and regex's slice-heavy code).
    #[test]
    fn primitives_strs_and_slices_are_std_receivers() {
        let src = "pub trait Load { fn load(&self); }\n\
                   impl Load for [u8] { fn load(&self) { let _ = std::fs::read(\"a\"); } }\n\
                   impl Load for [String] { fn load(&self) {} }\n\
                   pub struct Blob;\n\
                   impl Blob { pub fn save(&self) { let _ = std::fs::read(\"b\"); } }\n\
                   pub async fn run(b: &[u8], s: &[String], n: u64, t: &str, v: Vec<Blob>) {\n\
                   b.load();\n\
                   s.load();\n\
                   let m = n.checked_add(1).unwrap().wrapping_add(2);\n\
                   let _ = (m as usize).max(t.trim().len());\n\
                   v.last().unwrap().save();\n\
                   }\n";
        let report = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(
            sites(&report),
            [(7, "NB0101".into()), (11, "NB0101".into())]
        );
        assert_eq!(report.stats.unresolved_calls, 0, "{:?}", report.stats);
        // A user type named like a primitive shadows it, as in rustc.
        let shadow = "#[allow(non_camel_case_types)] pub struct u64;\n\
                      impl u64 { pub fn checked_add(&self, _: i32) { let _ = std::fs::read(\"c\"); } }\n\
                      pub async fn run(n: u64) { n.checked_add(1); }\n";
        assert_eq!(one(shadow), [(3, "NB0101".into())]);
    }

    /// A blanket impl of the graph applies to a primitive only when its bounds are implemented
    /// for it explicitly: lemmy's `n.eq(&m)` on an `i32` is std's `PartialEq`, not diesel's
    /// `impl<T: Expression> ExpressionMethods for T` (`Expression` having blanket impls itself).
    #[test]
    fn blanket_impls_reach_primitives_only_through_explicit_bounds() {
        let src = "pub trait Column {}\n\
                   pub trait Expression {}\n\
                   impl<T: Column> Expression for T {}\n\
                   pub trait ExprMethods { fn eq2(&self) { let _ = std::fs::read(\"x\"); } }\n\
                   impl<T: Expression> ExprMethods for T {}\n\
                   pub struct Id;\n\
                   impl Column for Id {}\n\
                   pub trait Named { fn named(&self) { let _ = std::fs::read(\"n\"); } }\n\
                   impl<T: Column> Named for T {}\n\
                   impl Column for u16 {}\n\
                   pub async fn run(n: i32, c: Id, p: u16) {\n\
                   n.eq2();\n\
                   c.eq2();\n\
                   p.named();\n\
                   }\n";
        assert_eq!(one(src), [(13, "NB0101".into()), (14, "NB0101".into())]);
    }

    /// `match`/`if` values take the first typed arm's type, `vec![..]` is a `Vec` of its
    /// elements (`v[0]` one of them), and `Option::map`/`and_then` wrap their closure's value; a diverging arm or a
    /// closure of another type must not lend its type.
    #[test]
    fn match_values_vec_macros_and_mapped_options_are_typed() {
        let src = "pub struct Db;\n\
                   impl Db { pub fn query(&self) { let _ = std::fs::read(\"q\"); } }\n\
                   pub struct Cache;\n\
                   impl Cache { pub fn query(&self) {} }\n\
                   pub async fn run(flag: bool, o: Option<u8>) {\n\
                   let a = match flag { true => Db, false => return };\n\
                   a.query();\n\
                   let b = if flag { panic!() } else { Cache };\n\
                   b.query();\n\
                   let v = vec![Db];\n\
                   v[0].query();\n\
                   v.first().unwrap().query();\n\
                   o.map(|_| Cache).unwrap().query();\n\
                   o.and_then(|_| Some(Db)).unwrap().query();\n\
                   }\n";
        assert_eq!(
            one(src),
            [
                (7, "NB0101".into()),
                (11, "NB0101".into()),
                (12, "NB0101".into()),
                (14, "NB0101".into())
            ]
        );
    }
}

#[cfg(test)]
mod projection_tests {
    use super::tests::TWO_SYNCS;
    use crate::testutil::lib_rs_sites as one;

    /// A trait whose associated type is bounded by a trait with a supertrait, as brotli's
    /// `Allocator<T> { type AllocatedMemory: AllocatedSlice<T>; }` (alloc-no-stdlib), with
    /// one implementor that reads a file in `slice_mut` and another trait whose
    /// `slice_mut` sleeps (the look-alike that must not be taken).
    const ALLOC: &str = "pub trait SliceWrapper<T> { fn slice(&self) -> &[T]; }\n\
        pub trait SliceWrapperMut<T>: SliceWrapper<T> { fn slice_mut(&mut self) -> &mut [T]; }\n\
        pub trait AllocatedSlice<T>: SliceWrapperMut<T> {}\n\
        pub trait Allocator<T> { type AllocatedMemory: AllocatedSlice<T>;\n\
        \x20   fn alloc_cell(&mut self, n: usize) -> Self::AllocatedMemory; }\n\
        pub struct Mem(Vec<u8>);\n\
        impl SliceWrapper<u8> for Mem { fn slice(&self) -> &[u8] { &self.0 } }\n\
        impl SliceWrapperMut<u8> for Mem { fn slice_mut(&mut self) -> &mut [u8] { std::fs::read(\"m\").ok(); &mut self.0 } }\n\
        pub trait Other { fn slice_mut(&self); }\n\
        impl Other for u8 { fn slice_mut(&self) { std::thread::sleep(todo!()) } }\n\
        pub struct Heap; pub struct Quiet;\n\
        impl Allocator<u8> for Heap { type AllocatedMemory = Mem; fn alloc_cell(&mut self, n: usize) -> Mem { todo!() } }\n\
        impl Allocator<u8> for Quiet { type AllocatedMemory = Mem; fn alloc_cell(&mut self, n: usize) -> Self::AllocatedMemory { todo!() } }\n";

    /// `A::AllocatedMemory` (a field, a parameter), `<A as Allocator<u8>>::AllocatedMemory` (a
    /// local's annotation) and `Self::AllocatedMemory` (the trait's own return type) are
    /// known by the bounds the trait gives them: `.slice_mut()` dispatches to the graph's
    /// impls of `SliceWrapperMut`, never to the unrelated `Other`.
    #[test]
    fn associated_types_of_generic_parameters_are_known_by_their_bounds() {
        let src = ALLOC.to_string()
            + "pub struct Model<A: Allocator<u8>> { costs: A::AllocatedMemory }\n\
               pub async fn field<A: Allocator<u8>>(m: &mut Model<A>) { m.costs.slice_mut(); }\n\
               pub async fn param<A: Allocator<u8>>(mut c: A::AllocatedMemory) { c.slice_mut(); }\n\
               pub async fn qualified<A: Allocator<u8>>(a: &mut A) {\n\
               \x20   let mut n: <A as Allocator<u8>>::AllocatedMemory;\n\
               \x20   n = a.alloc_cell(3);\n\
               \x20   n.slice_mut();\n\
               \x20   a.alloc_cell(1).slice_mut();\n\
               }\n";
        assert_eq!(
            one(&src),
            [
                (15, "NB0101".into()),
                (16, "NB0101".into()),
                (20, "NB0101".into()),
                (21, "NB0101".into())
            ]
        );
    }

    /// nom's shape: a combinator generic over `A: Parser<I, O, E>` calls `a.parse(..)`; the
    /// trait's `E` is the combinator's `E`, so the error's `or` is `ParseError::or` (a file
    /// read here), not the look-alike `Unrelated::or` (a sleep) that the one impl's own error
    /// type (`u32`) would give.
    #[test]
    fn a_generic_bound_binds_the_traits_parameters() {
        let src = "pub trait ParseError<I> { fn or(self, other: Self) -> Self; }\n\
            pub struct Loud;\n\
            impl ParseError<u8> for Loud { fn or(self, o: Self) -> Self { std::fs::read(\"x\").ok(); o } }\n\
            pub trait Parser<I, O, E> { fn parse(&mut self, i: I) -> Result<(I, O), E>; }\n\
            pub trait Unrelated { fn or(self, o: u32); }\n\
            impl Unrelated for u32 { fn or(self, o: u32) { std::thread::sleep(todo!()) } }\n\
            pub struct Q; impl Parser<u32, u32, u32> for Q { fn parse(&mut self, i: u32) -> Result<(u32, u32), u32> { todo!() } }\n\
            pub async fn alt<I: Clone, O, E: ParseError<I>, A: Parser<I, O, E>>(a: &mut A, i: I, e0: E) {\n\
            \x20   if let Err(e) = a.parse(i.clone()) { e.or(e0); }\n\
            }\n";
        assert_eq!(one(src), [(9, "NB0101".into())]);
    }

    /// sccache's argument parser: `T` of `ArgsIter<T, S>` is mentioned only by the bound `S:
    /// Search<T>`; the argument's type (`&[Info<Db>]`) and the impl `Search<T> for &[Info<T>]`
    /// bind it, so the parsed item's `sync` is `Db`'s (a file read), not `Fail`'s (a sleep,
    /// the other impl's type).
    #[test]
    fn a_parameter_only_a_bound_mentions_is_bound_through_the_impl() {
        let src = TWO_SYNCS.to_string()
            + "pub struct Info<T>(T);\n\
               pub trait Search<T> { fn find(&self) -> Option<&Info<T>>; }\n\
               impl<T> Search<T> for &'static [Info<T>] { fn find(&self) -> Option<&Info<T>> { None } }\n\
               impl Search<Fail> for (u8, u8) { fn find(&self) -> Option<&Info<Fail>> { None } }\n\
               pub struct ArgsIter<T, S: Search<T>> { s: S, t: Option<T> }\n\
               impl<T, S: Search<T>> ArgsIter<T, S> { pub fn new(s: S) -> Self { todo!() } pub fn item(&self) -> T { todo!() } }\n\
               static ARGS: [Info<Db>; 1] = [Info(Db)];\n\
               async fn a() { ArgsIter::new(&ARGS[..]).item().sync(); }\n";
        assert_eq!(one(&src), [(12, "NB0101".into())]);
    }

    /// std's `Iterator` adapters on a type of the graph implementing it (sccache's
    /// `ArgsIter::new(..).enumerate()`): the adapter calls the impl's `next` (a file read here)
    /// and its items have the impl's `Item` type (`Fail`: a sleep); a type's own method of an
    /// adapter's name (`Own::map`, nothing blocking) is that method.
    #[test]
    fn adapters_on_a_local_iterator_call_its_next_and_yield_its_items() {
        let src = TWO_SYNCS.to_string()
            + "pub struct Lines; pub struct Own;\n\
               impl Iterator for Lines { type Item = Fail; fn next(&mut self) -> Option<Fail> { std::fs::read(\"l\").ok(); None } }\n\
               impl Iterator for Own { type Item = Fail; fn next(&mut self) -> Option<Fail> { None } }\n\
               impl Own { fn map(self, f: u8) -> u8 { f } }\n\
               async fn a(it: Lines, own: Own) {\n\
               \x20   for (_, l) in it.enumerate() { l.sync(); }\n\
               \x20   let _ = own.map(1);\n\
               }\n";
        assert_eq!(one(&src), [(10, "NB0101".into()), (10, "NB0201".into())]);
    }

    /// An associated type declared without bounds stays unknown: no method is guessed for it.
    #[test]
    fn an_unbounded_associated_type_stays_unknown() {
        let src = ALLOC.to_string()
            + "pub trait Plain { type Out; }\n\
               pub async fn f<P: Plain>(o: P::Out) { o.slice_mut(); }\n";
        assert_eq!(one(&src), []);
    }
}

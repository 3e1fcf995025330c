//! Stage 4, *graph*: call edges between function bodies, blocking-API leaves, offload boundaries
//! (declared and inferred), and the async contexts that are roots.
//!
//! Invariants: a closure passed to an offload boundary contributes no edge; a boundary's or
//! opaque runtime entry's own body is never entered; async blocks and async closures are bodies
//! of their own, so they are reported where they are written, once.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::critical::Hold;
use crate::dedicated::DedicatedRuntimes;
use crate::discover::Workspace;
use crate::index::{FnId, FnOwner, Index, Res, TypeKind};
use crate::ir::Pos;
use crate::resolve::{Body, BodyKind, CallSite, Confidence, Target};
use crate::rules::{Api, ApiMatch, FfiPolicy, RuleDb, Scope};
use crate::ty::TraitRef;

/// What one resolved target of a call does.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// The call is a blocking API.
    Api { api: ApiKey, confidence: Confidence },
    /// The call continues into an analysed function. `init`: the call is written in (or is) a
    /// one-time initialiser, so everything the callee reaches is [`ApiKey::init`] from here.
    Edge {
        callee: FnId,
        confidence: Confidence,
        init: bool,
    },
}

/// A blocking API as reported: the rule and the API's concrete path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiKey {
    pub rule: usize,
    pub api_index: usize,
    pub path: String,
    /// Reached through a one-time initialiser (`OnceLock::get_or_init`'s closure, `Once::
    /// call_once`, `Lazy::new`): it runs once per process. Such keys exist only when the
    /// configuration reports them (`[report] init = true`); otherwise those calls are dropped.
    pub init: bool,
}

impl ApiKey {
    /// The same API reached through a one-time initialiser.
    pub fn as_init(&self) -> ApiKey {
        ApiKey {
            init: true,
            ..self.clone()
        }
    }
}

/// One call in a body after offload filtering: where it is and what it does.
#[derive(Clone, Debug)]
pub struct EffectiveCall {
    pub pos: Pos,
    pub effects: Vec<Effect>,
    /// How long the call's value lives ([`crate::critical`]), for lock helpers.
    pub hold: Hold,
    /// The call's arm conditions and argument facts ([`crate::values`]): propagation skips the
    /// call in a context that fixes a parameter to another variant, and passes facts on.
    pub guard: Option<std::sync::Arc<[crate::values::Cond]>>,
    pub facts: Option<Box<crate::values::ArgFacts>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RootKind {
    AsyncFn,
    AsyncBlock,
    AsyncClosure,
    PollFn,
    /// A sync fn declared a root in the configuration (`roots = [..]`).
    Configured,
    /// A body driven by `block_on` on the thread that called it, beside the worker pool
    /// (`#[tokio::main]`, `rt.block_on(async { .. })`, async fns only awaited there):
    /// [`crate::threads`].
    BlockOnThread,
    /// An async block written in a one-time initialiser (tokio's `OnceCell::get_or_init(|| async
    /// { .. })`): reported only with `[report] init = true`, as kind `init`.
    InitAsync,
    /// An async fn whose only callers run it from a one-time initialiser
    /// ([`off_worker_only`]): reported only with `[report] init = true`, as kind `init`.
    InitAsyncFn,
}

impl RootKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RootKind::AsyncFn => "async fn",
            RootKind::AsyncBlock => "async block",
            RootKind::AsyncClosure => "async closure",
            RootKind::PollFn => "poll fn",
            RootKind::Configured => "configured root",
            RootKind::BlockOnThread => "block_on thread",
            RootKind::InitAsync => "async block in an initialiser",
            RootKind::InitAsyncFn => "async fn run by an initialiser",
        }
    }
}

pub struct GraphBody {
    pub owner: FnId,
    pub kind: BodyKind,
    pub pos: Pos,
    pub root: Option<RootKind>,
    pub calls: Vec<EffectiveCall>,
}

pub struct CallGraph {
    /// Every body; the `Fn` body of function `f` is `fn_body[f]` when it has one.
    pub bodies: Vec<GraphBody>,
    pub fn_body: Vec<Option<usize>>,
    /// Resolved call effects of the source functions' bodies (instances not counted again).
    pub call_edges: usize,
    /// Calls dropped because they sit in a branch on a struct field that no live code sets to
    /// the branch's variant ([`crate::fields`]), instances included.
    pub dead_field_branch_calls: usize,
    /// Async fns left out as roots because nothing can call them ([`uncalled_roots`]).
    pub uncalled_roots: usize,
    /// Which member binaries link which units, when there are several ([`crate::link`]).
    pub links: Option<crate::link::Links>,
}

/// Per-function facts the rules and runtime table give before any body is walked.
struct Leaves {
    api: BTreeMap<FnId, ApiKey>,
    /// Foreign fns declared by system-binding crates (`rules/runtime.toml`: `system_ffi`): thin
    /// syscall wrappers that async runtimes call on purpose; reported only from workspace code.
    system_ffi: BTreeSet<FnId>,
    /// Per function: the closure parameters it calls before returning.
    calls_param: Vec<BTreeSet<usize>>,
    /// Per function: the parameters stored in the value it returns (a combinator's closure,
    /// called when that value is polled or iterated: [`crate::stored`]).
    returns_param: Vec<BTreeSet<usize>>,
    boundary: BTreeMap<FnId, BTreeSet<usize>>,
    opaque: BTreeSet<FnId>,
    /// One-time initialisers of analysed crates (`init` in `rules/runtime.toml`: once_cell's
    /// `get_or_init`, tokio's `OnceCell::get_or_init`).
    init: BTreeSet<FnId>,
    /// Functions that run only on a dependency's rare, self-guarded path (`cold` in
    /// `rules/runtime.toml`: chrono's time-zone refresh check). Unlike `init`, their body is
    /// followed: a call of one is one-time work like a memoised value's ([`crate::memo`]).
    cold: BTreeSet<FnId>,
    /// Functions that hand one of their closure parameters to a one-time initialiser (deno's
    /// `Deferred::get_or_try_init(&self, create)` → `self.0.get_or_try_init(create)`), per
    /// parameter, to a fixpoint ([`infer_init_wrappers`]): a closure given there runs once too.
    /// Unlike `init`, the wrapper's own body is still followed.
    init_wrappers: BTreeMap<FnId, BTreeSet<usize>>,
    /// Foreign fns of libraries without a policy (`rules/ffi.toml`): low confidence.
    ffi_unknown: BTreeSet<FnId>,
}

/// Empties the calls written in a branch on a field that cannot hold the branch's variant
/// ([`crate::fields`]): no targets, no closure arguments. They stay in place, since call
/// indices (`args_from`) point into the list. Returns how many were dropped.
fn drop_dead_field_branches(fields: &crate::fields::FieldValues, calls: &mut [CallSite]) -> usize {
    let mut dropped = 0;
    for c in calls {
        let dead = c
            .field_guard
            .as_deref()
            .is_some_and(|g| g.iter().any(|cond| fields.is_dead(cond)));
        if dead {
            c.targets.clear();
            c.param_args.clear();
            for ca in &mut c.closure_args {
                ca.calls.clear();
            }
            dropped += 1;
        } else {
            for ca in &mut c.closure_args {
                dropped += drop_dead_field_branches(fields, &mut ca.calls);
            }
        }
    }
    dropped
}

/// Marker for "every argument" in a declared boundary's offloaded set.
const ALL_ARGS: usize = usize::MAX;

/// `roots` are functions the configuration declares as running on a runtime worker (display
/// paths, e.g. `app::worker::poll_jobs`).
pub fn build(
    ws: &Workspace,
    index: &Index,
    rules: &RuleDb,
    roots: &[String],
    resolved: Vec<Vec<Body>>,
) -> CallGraph {
    let fields = crate::fields::FieldValues::compute(ws, index, roots);
    build_with_fields(ws, index, rules, roots, resolved, &fields)
}

/// [`build`], given the field values (`FieldValues::compute`), which read neither the resolved
/// bodies nor instances: `analyze` computes them while resolution runs.
pub fn build_with_fields(
    ws: &Workspace,
    index: &Index,
    rules: &RuleDb,
    roots: &[String],
    mut resolved: Vec<Vec<Body>>,
    fields: &crate::fields::FieldValues,
) -> CallGraph {
    // Taken before dead branches are emptied and spawned calls detached.
    let referenced = referenced_fns(index, &resolved);
    let dead_field_branch_calls = resolved
        .par_iter_mut()
        .flatten()
        .map(|b| drop_dead_field_branches(fields, &mut b.calls))
        .sum();
    let spawners = spawners(index, rules, &resolved);
    let mut spawned = BTreeSet::new();
    let mut spawn_sites = BTreeMap::new();
    for b in resolved.iter_mut().flatten() {
        let owner = b.owner;
        detach_spawned(
            index,
            rules,
            &spawners,
            (owner, &mut b.calls),
            &mut spawned,
            &mut spawn_sites,
        );
    }
    let member_unit: Vec<bool> = index
        .units
        .iter()
        .map(|u| ws.packages[u.package].is_member)
        .collect();
    let mut leaves = leaves(index, rules, &member_unit);
    // The parameter fixpoints read only the calls that pass a parameter on (deno: a few
    // thousand of a million call sites), so their rounds visit those alone.
    let passing = param_passing_calls(&resolved);
    (leaves.calls_param, leaves.returns_param) = rayon::join(
        || called_params(&resolved, &passing),
        || crate::stored::returned_params(index, &resolved),
    );
    infer_wrappers(rules, &passing, &mut leaves);
    infer_init_wrappers(rules, &passing, &mut leaves);
    let report_unit: Vec<bool> = index
        .units
        .iter()
        .map(|u| ws.packages[u.package].report_roots)
        .collect();

    let dedicated = DedicatedRuntimes::resolve(index, &rules.dedicated_runtimes);
    let mut bodies = Vec::new();
    let mut fn_body = vec![None; index.fns.len()];
    let mut call_edges = 0;
    // What `threads` needs besides the roots: async bodies driven off the workers, and
    // test-support fns, whose calls decide no thread.
    let mut off_thread = crate::threads::OffWorker::default();
    // Each function's bodies are flattened on their own (in parallel: a fifth of the graph
    // stage), then numbered in function order, so ids do not depend on the thread count.
    let per_fn: Vec<FnGraph> = resolved
        .into_par_iter()
        .enumerate()
        .map(|(f, fn_bodies)| {
            let unit = index.fns[f].unit;
            let mut off_worker = BTreeSet::new();
            let mut in_init = BTreeSet::new();
            for b in &fn_bodies {
                offloaded_bodies(rules, &leaves, &b.calls, &mut off_worker);
                init_bodies(rules, &leaves, &b.calls, &mut in_init);
            }
            // Tasks spawned onto a configured dedicated runtime do not run on the main runtime.
            if !dedicated.is_empty() && report_unit[unit] {
                off_worker.extend(dedicated.spawned_bodies(index, f, &fn_bodies));
            }
            // Test kits and `_for_tests` helpers hold no root; production callers still reach
            // them.
            let test_support =
                report_unit[unit] && crate::roots::is_test_support(ws, index, f, roots);
            let reports_here = report_unit[unit] && !test_support;
            let mut out = FnGraph {
                test_support,
                bodies: Vec::with_capacity(fn_bodies.len()),
                call_edges: 0,
                dropped: DroppedCallees::default(),
            };
            for (body_index, b) in fn_bodies.into_iter().enumerate() {
                let mut calls = Vec::new();
                let calls_closure_values = calls_closure_value(&b.calls);
                for c in &b.calls {
                    flatten(
                        &Flatten {
                            index,
                            rules,
                            leaves: &leaves,
                            in_member: member_unit[unit],
                            calls_closure_values,
                            memoised: &index.fns[f].ir.attrs.memoised,
                        },
                        c,
                        false,
                        &mut calls,
                        &mut out.dropped,
                    );
                }
                out.call_edges += calls.iter().map(|c| c.effects.len()).sum::<usize>();
                let root = if in_init.contains(&body_index) {
                    (reports_here && rules.report_init && !off_worker.contains(&body_index))
                        .then_some(RootKind::InitAsync)
                } else if reports_here
                    && !off_worker.contains(&body_index)
                    // An instance of a provided method runs where it is called: its base is the
                    // root.
                    && index.instances.get(f).is_none()
                {
                    root_kind(index, f, b.kind).or_else(|| {
                        (b.kind == BodyKind::Fn && roots.contains(&index.fn_display(f)))
                            .then_some(RootKind::Configured)
                    })
                } else {
                    None
                };
                // An initialiser's async block runs once: with initialisers not reported, what
                // only it polls is off the workers too ([`off_worker_only`]).
                let off_thread = if in_init.contains(&body_index) {
                    !rules.report_init
                } else {
                    off_worker.contains(&body_index)
                };
                out.bodies.push((
                    GraphBody {
                        owner: f,
                        kind: b.kind,
                        pos: b.pos,
                        root,
                        calls,
                    },
                    off_thread,
                ));
            }
            out
        })
        .collect();
    let mut dropped = DroppedCallees::default();
    for (f, g) in per_fn.into_iter().enumerate() {
        dropped.append(g.dropped);
        if g.test_support {
            off_thread.test_support.insert(f);
        }
        // Counted once per source function, as unresolved calls are (`lib.rs`): an instance's
        // edges are its base's calls again, bound to one type.
        if index.instances.get(f).is_none() {
            call_edges += g.call_edges;
        }
        for (body, off) in g.bodies {
            if body.kind == BodyKind::Fn {
                fn_body[f] = Some(bodies.len());
            } else if off {
                off_thread.bodies.insert(bodies.len());
            }
            bodies.push(body);
        }
    }
    let uncalled_roots = if rules.report_uncalled {
        0
    } else {
        uncalled_roots(ws, index, roots, &referenced, &mut bodies)
    };
    off_worker_only(
        index,
        rules,
        &mut bodies,
        &fn_body,
        &spawned,
        &dropped,
        &mut off_thread,
    );
    crate::threads::mark_block_on_roots(
        index,
        &mut bodies,
        &fn_body,
        &spawned,
        &spawn_sites,
        &off_thread,
    );
    let helpers = guard_helpers(rules, &bodies, &fn_body);
    if !helpers.is_empty() {
        for b in &mut bodies {
            for c in &mut b.calls {
                if c.hold == Hold::Short {
                    let before = c.effects.len();
                    c.effects.retain(
                        |e| !matches!(e, Effect::Edge { callee, .. } if helpers.contains(callee)),
                    );
                    if index.instances.get(b.owner).is_none() {
                        call_edges -= before - c.effects.len();
                    }
                }
            }
            b.calls.retain(|c| !c.effects.is_empty());
        }
    }
    CallGraph {
        bodies,
        fn_body,
        call_edges,
        dead_field_branch_calls,
        uncalled_roots,
        links: crate::link::Links::compute(ws, index),
    }
}

/// Whether some analysed code mentions `def`'s name where it could call or name it: as a path's
/// last segment (or an attribute's identifier), or, for a method, also as a method call. A free
/// fn cannot be called with method syntax.
fn mentioned(index: &Index, def: &crate::index::FnDef) -> bool {
    let name = crate::ir::name(&def.ir.name);
    index.mentions.contains(&name)
        || (def.owner != FnOwner::Free && index.method_mentions.contains(&name))
}

/// Every function a resolved call site (closures included) targets, instances mapped to their
/// base: taken before spawned calls are detached, so a spawned async fn counts as called.
fn referenced_fns(index: &Index, resolved: &[Vec<Body>]) -> Vec<bool> {
    // Per function, in parallel, then merged into one flag per function (a set of a million
    // call targets was a twentieth of deno's graph stage).
    let lists: Vec<Vec<FnId>> = resolved
        .par_iter()
        .map(|bodies| {
            let mut out = Vec::new();
            for b in bodies {
                crate::resolve::callees(&b.calls, &mut |f| {
                    out.push(f);
                    if let Some(i) = index.instances.get(f) {
                        out.push(i.base);
                    }
                });
            }
            out
        })
        .collect();
    let mut out = vec![false; index.fns.len()];
    for f in lists.into_iter().flatten() {
        if let Some(slot) = out.get_mut(f) {
            *slot = true;
        }
    }
    out
}

/// Async fns of an application's own libraries that nothing can call are no roots: a worker
/// never runs them (atuin's `atuin_client::register::register_classic`, left over after the CLI
/// moved to other flows; scripts/apps/review-s12.toml). Every `async fn` of a reported package
/// is a root on its own so that a caller the analysis cannot see still finds what it blocks on;
/// an fn is taken as uncalled only when all of these hold:
/// - no resolved call site targets it (spawned, stored and offloaded calls included), and no
///   analysed code mentions its name where it could name it (a path's last segment, in a body,
///   a macro argument or an initialiser, or an attribute's identifiers: `IrModule::mentions`;
///   for a method also a method call's name: `IrModule::method_mentions`), so neither an
///   unresolved call nor a fn pointer can be it;
/// - it is a free fn or an inherent method (a trait's method is called through dispatch), not a
///   runtime entry, not a configured root, and carries no attribute that may export it
///   (`FnAttrs::exported`: `#[wasm_bindgen]`, a framework's proc macro);
/// - it belongs to an application's library: the workspace has a member binary, and the fn is
///   in a member library another member depends on. A library's public API stays rooted in a
///   workspace of libraries, whoever calls it; so does a binary's async fn (rustc's `dead_code`
///   lint already names an uncalled one, and a handler not wired yet is still meant to run:
///   examples/demo-service).
///
/// Returns how many roots were dropped (`stats.uncalled_roots`).
fn uncalled_roots(
    ws: &Workspace,
    index: &Index,
    configured: &[String],
    referenced: &[bool],
    bodies: &mut [GraphBody],
) -> usize {
    let has_member_bin = ws
        .units
        .iter()
        .any(|u| u.kind == crate::discover::UnitKind::Bin && ws.packages[u.package].is_member);
    if !has_member_bin {
        return 0;
    }
    // Member packages whose library another member's unit depends on.
    let mut used_libs = BTreeSet::new();
    for u in ws.units.iter().filter(|u| ws.packages[u.package].is_member) {
        for dep in u.deps.values() {
            if let crate::discover::DepTarget::Unit(d) = dep {
                let dp = ws.units[*d].package;
                if dp != u.package && ws.packages[dp].is_member {
                    used_libs.insert(dp);
                }
            }
        }
    }
    let mut dropped = 0;
    for b in bodies.iter_mut() {
        if b.root != Some(RootKind::AsyncFn) || b.kind != BodyKind::Fn {
            continue;
        }
        let f = b.owner;
        let def = &index.fns[f];
        // Index units are ws.units, in order (`Index::build`).
        let unit = &ws.units[def.unit];
        let in_app =
            unit.kind == crate::discover::UnitKind::Lib && used_libs.contains(&unit.package);
        let inherent = match def.owner {
            FnOwner::Free => true,
            FnOwner::Impl(i) => index.impls[i].ir_trait.is_none(),
            FnOwner::Trait(_) => false,
        };
        if !in_app
            || !inherent
            || def.ir.attrs.exported
            || def.ir.attrs.runtime_entry
            || referenced.get(f).copied().unwrap_or(false)
            || mentioned(index, def)
            || configured.contains(&index.fn_display(f))
        {
            continue;
        }
        b.root = None;
        dropped += 1;
    }
    dropped
}

/// One function's part of the graph, built on its own ([`build`]): its bodies, each with whether
/// it is an async body driven off the workers, and whether the function is test support.
struct FnGraph {
    test_support: bool,
    bodies: Vec<(GraphBody, bool)>,
    call_edges: usize,
    dropped: DroppedCallees,
}

/// The async fns called only where [`flatten`] drops the call: in a one-time initialiser's
/// closure (with `[report] init` off) or in a closure handed to an offload boundary. Their
/// futures are driven there (`LazyLock::new(|| thread::spawn(|| rt.block_on(Config::load()))
/// .join())`, `META_STORE.get_or_try_init(MetaStore::new)`), never by a runtime worker; the
/// graph has no edge for those calls, so without this record such a fn looked uncalled and
/// stayed a worker root of its own ([`off_worker_only`]).
#[derive(Default)]
struct DroppedCallees {
    init: BTreeSet<FnId>,
    offloaded: BTreeSet<FnId>,
}

impl DroppedCallees {
    /// Records the async fns that `c` and the closures in its arguments call.
    fn record(&mut self, index: &Index, c: &CallSite, init: bool) {
        let set = if init {
            &mut self.init
        } else {
            &mut self.offloaded
        };
        crate::resolve::callees(std::slice::from_ref(c), &mut |f| {
            if index.fns[f].ir.sig.is_async {
                set.insert(f);
            }
        });
    }

    fn append(&mut self, other: DroppedCallees) {
        self.init.extend(other.init);
        self.offloaded.extend(other.offloaded);
    }
}

/// Async fns that are worker roots only because nothing else calls them: every call of theirs
/// is dropped by [`flatten`] (in a one-time initialiser, or an offloaded closure), is an edge
/// marked `init`, or (with `[report] init` on) comes from a body that is itself an initialiser's
/// root; and none is spawned. They run once, or on the thread that closure runs on. With
/// `[report] init` off, each loses its root and joins `off.bodies`, so what only it polls runs
/// there too ([`crate::threads`]; the async blocks of initialisers are in `off.bodies` already).
/// With it on, one called from an initialiser becomes an `init` root, and so, to a fixpoint, does
/// an async fn whose every caller is one. Calls in test-support fns do not count as callers, as
/// in `threads`.
fn off_worker_only(
    index: &Index,
    rules: &RuleDb,
    bodies: &mut [GraphBody],
    fn_body: &[Option<usize>],
    spawned: &BTreeSet<FnId>,
    dropped: &DroppedCallees,
    off: &mut crate::threads::OffWorker,
) {
    if dropped.init.is_empty() && dropped.offloaded.is_empty() && !rules.report_init {
        return;
    }
    // Callers of each async fn: (calling body, whether the edge is marked `init`).
    let callers = crate::threads::async_fn_callers(index, bodies, off, |bi, _, init| (bi, init));
    let eligible = |f: FnId, bodies: &[GraphBody]| -> Option<usize> {
        let b = fn_body[f]?;
        (bodies[b].root == Some(RootKind::AsyncFn) && !spawned.contains(&f)).then_some(b)
    };
    // With `init` off there are no init edges nor init roots, so only fns whose every call was
    // dropped qualify, and one pass settles; with it on, init roots feed the fixpoint.
    let is_init_root =
        |r: Option<RootKind>| matches!(r, Some(RootKind::InitAsync) | Some(RootKind::InitAsyncFn));
    loop {
        let mut changed = false;
        let fns: BTreeSet<FnId> = callers
            .keys()
            .chain(&dropped.init)
            .chain(&dropped.offloaded)
            .copied()
            .collect();
        for f in fns {
            let Some(b) = eligible(f, bodies) else {
                continue;
            };
            let cs = callers.get(&f).map_or(&[][..], Vec::as_slice);
            if !cs
                .iter()
                .all(|&(c, init)| init || is_init_root(bodies[c].root))
            {
                continue;
            }
            let once = dropped.init.contains(&f) || !cs.is_empty();
            if rules.report_init && once {
                bodies[b].root = Some(RootKind::InitAsyncFn);
            } else {
                bodies[b].root = None;
                off.bodies.insert(b);
            }
            changed = true;
        }
        if !changed {
            return;
        }
    }
}

/// The task spawners of the graph: those listed in `spawners` (rules/runtime.toml), and a
/// library's own wrappers around them (mongodb's `runtime::spawn(fut)` → `AsyncJoinHandle::spawn`
/// → `Handle::spawn`): functions that hand one of their parameters to a spawner, to a fixpoint. A
/// wrapper is not opaque (its own body is analysed like any other); only what its arguments build
/// is detached ([`detach_spawned`]).
fn spawners(index: &Index, rules: &RuleDb, resolved: &[Vec<Body>]) -> BTreeSet<FnId> {
    let mut spawners = resolve_all_paths(index, &rules.spawners);
    loop {
        let mut grew = false;
        for (f, bodies) in resolved.iter().enumerate() {
            if spawners.contains(&f) {
                continue;
            }
            let Some(body) = fn_body_of(bodies) else {
                continue;
            };
            let hands_on = body.calls.iter().any(|c| {
                !c.param_args.is_empty()
                    && !c.targets.is_empty()
                    && c.targets.iter().all(|t| is_spawner(rules, &spawners, t))
            });
            if hands_on {
                spawners.insert(f);
                grew = true;
            }
        }
        if !grew {
            return spawners;
        }
    }
}

fn is_spawner(rules: &RuleDb, spawners: &BTreeSet<FnId>, t: &Target) -> bool {
    match t {
        Target::Fn(f, _) => spawners.contains(f),
        Target::External(p, _) => rules.spawners.iter().any(|s| s == p),
        _ => false,
    }
}

/// `tokio::spawn(report_loop(rx))`, `runtime::spawn(track(monitor.execute()))`: calling an async
/// fn only builds its future; when the future goes to a task spawner its body runs as another task
/// (and is reported with the async fn itself as the root), not as part of the caller. So the
/// async-fn calls written in a spawner call's arguments (`CallSite::args_from` up to the call)
/// lose their edge. Sync calls there (`tokio::spawn(make_future(load()))`) still run in the
/// caller and keep it. Applied to every call list, closure arguments' included. The async fns
/// detached are added to `spawned`: they run as tasks on a worker ([`crate::threads`]); the
/// spawner calls' positions to `spawn_sites` under their owner, so that an async block written in
/// one (`tokio::spawn(async {..}).await`) is not taken for a future the caller polls.
fn detach_spawned(
    index: &Index,
    rules: &RuleDb,
    spawners: &BTreeSet<FnId>,
    (owner, calls): (FnId, &mut [CallSite]),
    spawned: &mut BTreeSet<FnId>,
    spawn_sites: &mut BTreeMap<FnId, BTreeSet<Pos>>,
) {
    for i in 0..calls.len() {
        if calls[i]
            .targets
            .iter()
            .any(|t| is_spawner(rules, spawners, t))
        {
            spawn_sites.entry(owner).or_default().insert(calls[i].pos);
            let from = calls[i].args_from.min(i);
            for arg_call in &mut calls[from..i] {
                arg_call.targets.retain(|t| match t {
                    Target::Fn(f, _) if index.fns[*f].ir.sig.is_async => {
                        spawned.insert(*f);
                        false
                    }
                    _ => true,
                });
            }
        }
        for ca in &mut calls[i].closure_args {
            detach_spawned(
                index,
                rules,
                spawners,
                (owner, &mut ca.calls),
                spawned,
                spawn_sites,
            );
        }
    }
}

/// Lock helpers (`fn wait_lock(m: &Mutex<T>) -> MutexGuard<T> { m.lock().unwrap() }`, flume):
/// functions whose every effect is a lock acquisition (or another helper's) whose guard is the
/// function's value. A call to one is judged like a call to `lock` itself: with a short critical
/// section at the call site it is not a finding. Iterated to a fixpoint for helpers of helpers.
fn guard_helpers(
    rules: &RuleDb,
    bodies: &[GraphBody],
    fn_body: &[Option<usize>],
) -> BTreeSet<FnId> {
    let mut helpers = BTreeSet::new();
    loop {
        let mut grew = false;
        for (f, b) in fn_body.iter().enumerate() {
            let Some(b) = b else { continue };
            if helpers.contains(&f) || bodies[*b].calls.is_empty() {
                continue;
            }
            let only_guards = bodies[*b].calls.iter().all(|c| {
                c.hold == Hold::Escapes
                    && c.effects.iter().all(|e| match e {
                        Effect::Api { .. } => api_of(rules, e).is_some_and(|a| a.guard),
                        Effect::Edge { callee, .. } => helpers.contains(callee),
                    })
            });
            if only_guards {
                helpers.insert(f);
                grew = true;
            }
        }
        if !grew {
            return helpers;
        }
    }
}

pub(crate) fn root_kind(index: &Index, f: FnId, kind: BodyKind) -> Option<RootKind> {
    match kind {
        BodyKind::AsyncBlock => Some(RootKind::AsyncBlock),
        BodyKind::AsyncClosure => Some(RootKind::AsyncClosure),
        BodyKind::Fn => {
            let def = &index.fns[f];
            if def.ir.sig.is_async {
                return Some(RootKind::AsyncFn);
            }
            if let FnOwner::Impl(i) = def.owner {
                let name = def.ir.name.as_str();
                let is_poll_trait = match &index.impls[i].trait_ref {
                    Some(TraitRef::External(p)) => {
                        (name == "poll" && p.ends_with("Future"))
                            || (name == "poll_next" && p.ends_with("Stream"))
                    }
                    Some(TraitRef::Local(t)) => {
                        let tn = index.types[*t].name.as_str();
                        (name == "poll" && tn == "Future")
                            || (name == "poll_next" && tn == "Stream")
                    }
                    None => false,
                };
                if is_poll_trait {
                    return Some(RootKind::PollFn);
                }
            }
            None
        }
    }
}

/// Resolves an absolute API path (`reqwest::blocking::get`, `tokio::fs::File::open`) to the
/// analysed functions it names, in every analysed version of the crate.
pub(crate) fn resolve_absolute(index: &Index, path: &str) -> Vec<FnId> {
    let segs: Vec<String> = path.split("::").map(str::to_string).collect();
    if segs.len() < 2 || segs.iter().any(|s| s == "*") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for u in &index.units {
        if u.crate_name != segs[0] || u.root == usize::MAX {
            continue;
        }
        for r in index.resolve_path_in(u.root, &segs[1..], false, 0) {
            if let Res::Fn(f) = r {
                out.push(f);
            }
        }
        if segs.len() >= 3 {
            let method = &segs[segs.len() - 1];
            for r in index.resolve_path_in(u.root, &segs[1..segs.len() - 1], false, 0) {
                if let Res::Type(t) = r {
                    let ty = &index.types[t];
                    if let Some(fs) = ty.inherent.get(method) {
                        out.extend(fs.iter().copied());
                    }
                    for &iid in &ty.trait_impls {
                        if let Some(f) = index.impls[iid].fns.get(method) {
                            out.push(*f);
                        }
                    }
                    // A trait's method names its declaration and every impl's version of it,
                    // blanket impls included (`digest::Digest::update` is written in
                    // `impl<D: Update + ..> Digest for D`).
                    if let TypeKind::Trait { methods, .. } = &ty.kind {
                        if let Some(f) = methods.get(method) {
                            out.push(*f);
                        }
                        for &iid in index.trait_impls.get(&t).into_iter().flatten() {
                            if let Some(f) = index.impls[iid].fns.get(method) {
                                out.push(*f);
                            }
                        }
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    // A trait's method names its instances for each implementor too.
    index.instances.widen(&mut out);
    out
}

fn leaves(index: &Index, rules: &RuleDb, member_unit: &[bool]) -> Leaves {
    let mut api = BTreeMap::new();
    let mut ffi_unknown = BTreeSet::new();
    // Functions declared non-blocking (a library's model, the project's `allow`) are no API,
    // whatever pattern covers them; `prefix::*` entries are checked on the function's path.
    let exempt_fns = resolve_all_paths(index, &rules.exempt);
    let globbed = rules.exempt.iter().any(|p| p.ends_with("::*"));
    let exempt =
        |f: FnId| exempt_fns.contains(&f) || (globbed && rules.is_exempt(&index.fn_display(f)));
    for (ri, rule) in rules.rules.iter().enumerate() {
        for (ai, a) in rule.apis.iter().enumerate() {
            if a.pattern.starts_with("std::") || rules.is_exempt(&a.pattern) {
                continue;
            }
            for f in resolve_absolute(index, &a.pattern) {
                if exempt(f) {
                    continue;
                }
                api.entry(f).or_insert(ApiKey {
                    rule: ri,
                    api_index: ai,
                    path: a.pattern.clone(),
                    init: false,
                });
            }
        }
    }
    let mut system_ffi = BTreeSet::new();
    if let Some(ffi) = rules.ffi_rule() {
        let fast = resolve_all_paths(index, &rules.fast_ffi);
        let fast_symbols: BTreeSet<&str> = rules
            .fast_ffi
            .iter()
            .filter_map(|p| p.strip_prefix("libc::"))
            .collect();
        for (f, def) in index.fns.iter().enumerate() {
            let library = &index.units[def.unit].crate_name;
            if !def.foreign
                || rules.trusted_ffi.contains(library)
                || fast.contains(&f)
                || fast_symbols.contains(def.ir.name.as_str())
                || exempt(f)
            {
                continue;
            }
            let path = match rules.ffi_policy(library, &def.ir.name, member_unit[def.unit]) {
                FfiPolicy::Quiet => continue,
                FfiPolicy::Report => index.fn_display(f),
                // Once per library: every foreign fn of it is the same API.
                FfiPolicy::Unknown => {
                    ffi_unknown.insert(f);
                    format!("{library}::*")
                }
            };
            {
                api.entry(f).or_insert(ApiKey {
                    rule: ffi,
                    api_index: usize::MAX,
                    path,
                    init: false,
                });
                if rules
                    .system_ffi
                    .iter()
                    .any(|c| *c == index.units[def.unit].crate_name)
                {
                    system_ffi.insert(f);
                }
            }
        }
    }
    let mut boundary = BTreeMap::new();
    for b in &rules.boundaries {
        for f in resolve_absolute(index, b) {
            boundary.insert(f, BTreeSet::from([ALL_ARGS]));
        }
    }
    Leaves {
        api,
        system_ffi,
        calls_param: Vec::new(),
        returns_param: Vec::new(),
        boundary,
        opaque: opaque_fns(index, rules),
        init: resolve_all_paths(index, &rules.init),
        cold: resolve_all_paths(index, &rules.cold),
        init_wrappers: BTreeMap::new(),
        ffi_unknown,
    }
}

/// The analysed functions behind the runtime's opaque entries (`tokio::spawn`, tracing's
/// dispatch, configured `allow` paths): never entered by the graph.
fn opaque_fns(index: &Index, rules: &RuleDb) -> BTreeSet<FnId> {
    resolve_all_paths(index, &rules.opaque)
}

/// [`resolve_absolute`] over a list of paths from the rule data.
fn resolve_all_paths(index: &Index, paths: &[String]) -> BTreeSet<FnId> {
    paths
        .iter()
        .flat_map(|p| resolve_absolute(index, p))
        .collect()
}

/// Whether a call runs its closure argument `arg` before returning (as `Option::map` or a
/// helper that calls its parameter do), rather than storing it (`Arc::new(closure)`).
fn runs_closure_arg(index: &Index, leaves: &Leaves, target: &Target, arg: usize) -> bool {
    match target {
        Target::Fn(f, _) => {
            index.fns[*f].ir.body.is_none()
                || leaves.calls_param[*f].contains(&arg)
                || leaves.returns_param[*f].contains(&arg)
        }
        Target::External(p, _) => !is_storing_constructor(p),
        _ => true,
    }
}

/// Whether a body calls a closure held in a variable (`for f in &fs { f() }`).
fn calls_closure_value(calls: &[CallSite]) -> bool {
    calls.iter().any(|c| {
        c.targets.iter().any(|t| {
            matches!(
                t,
                Target::Unresolved(crate::resolve::Unresolved::ClosureValue)
            )
        }) || c
            .closure_args
            .iter()
            .any(|ca| calls_closure_value(&ca.calls))
    })
}

/// std constructors that store their argument instead of calling it.
pub(crate) fn is_storing_constructor(path: &str) -> bool {
    let Some((ty, f)) = path.rsplit_once("::") else {
        return false;
    };
    matches!(
        f,
        "new" | "pin" | "from" | "new_cyclic" | "push" | "push_back" | "insert"
    ) && matches!(
        ty,
        "std::boxed::Box"
            | "std::sync::Arc"
            | "std::rc::Rc"
            | "std::sync::Mutex"
            | "std::sync::RwLock"
            | "std::cell::RefCell"
            | "std::cell::Cell"
            | "std::cell::OnceCell"
            | "std::sync::OnceLock"
            | "std::pin::Pin"
            | "std::vec::Vec"
            | "std::collections::VecDeque"
            | "std::collections::HashMap"
            | "std::collections::BTreeMap"
    )
}

/// For every function, the parameters it calls (directly, or by passing them to a function
/// that calls that parameter), to a fixpoint.
fn called_params(resolved: &[Vec<Body>], passing: &[(FnId, &CallSite)]) -> Vec<BTreeSet<usize>> {
    fn direct(calls: &[CallSite], out: &mut BTreeSet<usize>) {
        for c in calls {
            for t in &c.targets {
                if let Target::ParamCall(p) = t {
                    out.insert(*p);
                }
            }
            for ca in &c.closure_args {
                direct(&ca.calls, out);
            }
        }
    }
    let mut called: Vec<BTreeSet<usize>> = resolved
        .par_iter()
        .map(|bodies| {
            let mut out = BTreeSet::new();
            if let Some(b) = fn_body_of(bodies) {
                direct(&b.calls, &mut out);
            }
            out
        })
        .collect();
    // Only calls that pass a parameter on can add to the sets: the rounds visit those alone, in
    // the order a walk over every function would.
    for _ in 0..16 {
        let mut changed = false;
        for &(f, c) in passing {
            for &(arg, param) in &c.param_args {
                if called[f].contains(&param) {
                    continue;
                }
                let passes_to_caller = c.targets.iter().any(|t| match t {
                    Target::Fn(g, _) => called[*g].contains(&arg),
                    Target::External(p, _) => !is_storing_constructor(p),
                    _ => false,
                });
                if passes_to_caller {
                    called[f].insert(param);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    called
}

/// A function's own body (not one of its async blocks or closures), when it was resolved.
pub(crate) fn fn_body_of(bodies: &[Body]) -> Option<&Body> {
    bodies.iter().find(|b| b.kind == BodyKind::Fn)
}

/// The call sites of functions' own bodies that pass one of the function's parameters on as an
/// argument, in function order: what the parameter fixpoints ([`called_params`],
/// [`infer_param_wrappers`]) read.
fn param_passing_calls(resolved: &[Vec<Body>]) -> Vec<(FnId, &CallSite)> {
    resolved
        .iter()
        .enumerate()
        .filter_map(|(f, bodies)| Some((f, fn_body_of(bodies)?)))
        .flat_map(|(f, b)| {
            b.calls
                .iter()
                .filter(|c| !c.param_args.is_empty())
                .map(move |c| (f, c))
        })
        .collect()
}

/// Fills `leaves.init_wrappers`: a function whose closure parameter flows into an argument that
/// every target of the call runs once (a listed initialiser, or a wrapper of one for that
/// argument), to a fixpoint as [`infer_wrappers`] does for offload boundaries.
fn infer_init_wrappers(rules: &RuleDb, passing: &[(FnId, &CallSite)], leaves: &mut Leaves) {
    infer_param_wrappers(
        passing,
        leaves,
        |l| &mut l.init_wrappers,
        |l, c, arg| runs_arg_once(rules, l, c, arg),
    );
}

/// The fixpoint behind [`infer_wrappers`] and [`infer_init_wrappers`]: a function whose closure
/// parameter flows into a call's argument that `passes_on` accepts (given what is known so far)
/// is recorded in `map` for that parameter, until nothing new is found (16 rounds at most).
fn infer_param_wrappers(
    passing: &[(FnId, &CallSite)],
    leaves: &mut Leaves,
    map: fn(&mut Leaves) -> &mut BTreeMap<FnId, BTreeSet<usize>>,
    passes_on: impl Fn(&Leaves, &CallSite, usize) -> bool,
) {
    for _ in 0..16 {
        let mut found = Vec::new();
        for &(f, c) in passing {
            for &(arg, param) in &c.param_args {
                let known = map(leaves)
                    .get(&f)
                    .is_some_and(|s| s.contains(&param) || s.contains(&ALL_ARGS));
                if !known && passes_on(leaves, c, arg) {
                    found.push((f, param));
                }
            }
        }
        if found.is_empty() {
            break;
        }
        for (f, p) in found {
            map(leaves).entry(f).or_default().insert(p);
        }
    }
}

/// Whether every target of `c` runs its argument `arg` once: a listed one-time initialiser, or
/// an inferred wrapper of one for that argument.
fn runs_arg_once(rules: &RuleDb, leaves: &Leaves, c: &CallSite, arg: usize) -> bool {
    !c.targets.is_empty()
        && c.targets.iter().all(|t| {
            is_init_target(rules, leaves, t)
                || matches!(t, Target::Fn(f, _)
                    if leaves.init_wrappers.get(f).is_some_and(|s| s.contains(&arg)))
        })
}

fn offloads_arg(leaves: &Leaves, rules: &RuleDb, target: &Target, arg: usize) -> bool {
    match target {
        Target::Fn(f, _) => leaves
            .boundary
            .get(f)
            .is_some_and(|s| s.contains(&ALL_ARGS) || s.contains(&arg)),
        Target::External(p, _) => rules.is_boundary(p),
        _ => false,
    }
}

/// A function that passes its closure parameter to a boundary is a boundary for that parameter.
/// Iterated to a fixpoint so wrappers of wrappers are found.
fn infer_wrappers(rules: &RuleDb, passing: &[(FnId, &CallSite)], leaves: &mut Leaves) {
    infer_param_wrappers(
        passing,
        leaves,
        |l| &mut l.boundary,
        |l, c, arg| {
            !c.targets.is_empty() && c.targets.iter().all(|t| offloads_arg(l, rules, t, arg))
        },
    );
}

/// Whether closure argument `arg` of a call runs on another thread (every target offloads it).
fn closure_offloaded(leaves: &Leaves, rules: &RuleDb, c: &CallSite, arg: usize) -> bool {
    !c.targets.is_empty()
        && c.targets
            .iter()
            .all(|t| offloads_arg(leaves, rules, t, arg))
}

/// The async bodies written inside offloaded closures (`thread::spawn(move || rt.block_on(async
/// { .. }))`, reqwest's blocking client thread): they are driven on that thread, not on a
/// runtime worker, so they are not roots. Collected from every call site, closures included.
fn offloaded_bodies(
    rules: &RuleDb,
    leaves: &Leaves,
    calls: &[CallSite],
    out: &mut BTreeSet<usize>,
) {
    for c in calls {
        for ca in &c.closure_args {
            if closure_offloaded(leaves, rules, c, ca.arg) {
                out.extend(ca.bodies.clone());
            }
            offloaded_bodies(rules, leaves, &ca.calls, out);
        }
    }
}

/// What [`flatten`] needs besides the call: the same for every call of one body.
struct Flatten<'a> {
    index: &'a Index,
    rules: &'a RuleDb,
    leaves: &'a Leaves,
    in_member: bool,
    calls_closure_values: bool,
    /// Calls of the body's fn whose value it memoises in a static (`crate::memo`).
    memoised: &'a [crate::ir::Pos],
}

/// Whether a call is a one-time initialiser (`rules/runtime.toml`: `init`).
fn is_init_call(rules: &RuleDb, leaves: &Leaves, c: &CallSite) -> bool {
    c.targets.iter().any(|t| is_init_target(rules, leaves, t))
}

/// Whether a target is a one-time initialiser: listed in `rules/runtime.toml`'s `init`, or the
/// analysed function such an entry names.
fn is_init_target(rules: &RuleDb, leaves: &Leaves, t: &Target) -> bool {
    match t {
        Target::Fn(f, _) => leaves.init.contains(f),
        Target::External(p, _) => rules.init.iter().any(|i| i == p),
        _ => false,
    }
}

/// Turns a call site (and the sync closures written in its arguments) into effective calls.
/// `init`: the call is written in a one-time initialiser's closure.
fn flatten(
    cx: &Flatten,
    c: &CallSite,
    init: bool,
    out: &mut Vec<EffectiveCall>,
    dropped: &mut DroppedCallees,
) {
    let Flatten {
        index,
        rules,
        leaves,
        in_member,
        calls_closure_values,
        memoised,
    } = *cx;
    // The closure a one-time initialiser runs: once per process. Dropped unless the
    // configuration reports it (`[report] init = true`); then marked. The initialiser's own body
    // only waits for a concurrent initialiser (once_cell's `thread::park`): never followed.
    let init_call = is_init_call(rules, leaves, c);
    // A value built on a hand-written cache's cold path is one-time initialisation too.
    // So is a call of a dependency's cold path (`cold` in `rules/runtime.toml`).
    let cold_call = c
        .targets
        .iter()
        .any(|t| matches!(t, Target::Fn(f, _) if leaves.cold.contains(f)));
    let init = init || init_call || cold_call || memoised.contains(&c.pos);
    if init && !rules.report_init {
        dropped.record(index, c, true);
        return;
    }
    let mut effects = Vec::new();
    for t in c.targets.iter().filter(|_| !init_call) {
        if let Some(e) = effect(index, rules, leaves, t, in_member) {
            // A lock with a short critical section, a name lookup given an IP address, or a call
            // given a short fixed literal (a small regex).
            if api_of(rules, &e).is_some_and(|a| {
                (a.guard && c.hold == Hold::Short)
                    || (a.dns_only && c.addr_is_ip)
                    || c.str_arg.is_some_and(|s| a.exempts_literal(&s))
            }) {
                continue;
            }
            let e = if init { mark_init(e) } else { e };
            if !effects.contains(&e) {
                effects.push(e);
            }
        }
    }
    if !effects.is_empty() {
        out.push(EffectiveCall {
            pos: c.pos,
            effects,
            hold: c.hold,
            guard: c.guard.clone(),
            facts: c.facts.clone(),
        });
    }
    for ca in &c.closure_args {
        let offloaded = closure_offloaded(leaves, rules, c, ca.arg);
        // A stored closure (`vec![Box::new(|| ..)]`) runs where the same body later calls a
        // closure value; without such a call it runs elsewhere, if at all.
        let stored = c
            .targets
            .iter()
            .all(|t| matches!(t, Target::External(p, _) if is_storing_constructor(p)));
        let runs_here = c
            .targets
            .iter()
            .any(|t| runs_closure_arg(index, leaves, t, ca.arg))
            || (calls_closure_values && stored)
            || init;
        if offloaded {
            for inner in &ca.calls {
                dropped.record(index, inner, init);
            }
        }
        // A closure handed to a wrapper of a one-time initialiser runs once.
        let once = !init_call && runs_arg_once(rules, leaves, c, ca.arg);
        if offloaded || !(runs_here || once) {
            continue;
        }
        for inner in &ca.calls {
            flatten(cx, inner, init || once, out, dropped);
        }
    }
}

fn mark_init(e: Effect) -> Effect {
    match e {
        Effect::Api { api, confidence } => Effect::Api {
            api: api.as_init(),
            confidence,
        },
        Effect::Edge {
            callee, confidence, ..
        } => Effect::Edge {
            callee,
            confidence,
            init: true,
        },
    }
}

/// The async bodies written in one-time initialisers' closures (tokio's `OnceCell::
/// get_or_init(|| async { .. })`): they run once per process.
fn init_bodies(rules: &RuleDb, leaves: &Leaves, calls: &[CallSite], out: &mut BTreeSet<usize>) {
    for c in calls {
        let init = is_init_call(rules, leaves, c);
        for ca in &c.closure_args {
            if init || runs_arg_once(rules, leaves, c, ca.arg) {
                out.extend(ca.bodies.clone());
            }
            init_bodies(rules, leaves, &ca.calls, out);
        }
    }
}

/// The rule database entry an API effect matched: its `guard` ([`crate::critical`]) and
/// `dns_only` flags decide, per call site, whether the call is reported.
fn api_of<'r>(rules: &'r RuleDb, e: &Effect) -> Option<&'r Api> {
    match e {
        Effect::Api { api, .. } => rules.rules[api.rule].apis.get(api.api_index),
        Effect::Edge { .. } => None,
    }
}

fn in_scope(rules: &RuleDb, rule: usize, in_member: bool) -> bool {
    rules.rules[rule].scope == Scope::Any || in_member
}

fn effect(
    index: &Index,
    rules: &RuleDb,
    leaves: &Leaves,
    t: &Target,
    in_member: bool,
) -> Option<Effect> {
    match t {
        Target::Fn(f, conf) => {
            if let Some(api) = leaves.api.get(f) {
                if !in_member && leaves.system_ffi.contains(f) {
                    return None;
                }
                // A library without an FFI policy: one low-confidence finding per library.
                let confidence = if leaves.ffi_unknown.contains(f) {
                    Confidence::Low
                } else {
                    *conf
                };
                return in_scope(rules, api.rule, in_member).then(|| Effect::Api {
                    api: api.clone(),
                    confidence,
                });
            }
            if leaves.opaque.contains(f)
                || leaves
                    .boundary
                    .get(f)
                    .is_some_and(|s| s.contains(&ALL_ARGS))
            {
                return None;
            }
            index.fns[*f].ir.body.as_ref()?;
            Some(Effect::Edge {
                callee: *f,
                confidence: *conf,
                init: false,
            })
        }
        Target::External(p, conf) => {
            let m = rules.match_path(p)?;
            in_scope(rules, m.rule, in_member).then(|| Effect::Api {
                api: api_key(m, p),
                confidence: *conf,
            })
        }
        // A method-name guess is only made in workspace code: inside dependencies, generic
        // plumbing (`(**self).to_socket_addrs()`) would make it fire on every wrapper.
        Target::UnknownMethod(name, args) if in_member => {
            let m = rules.match_fallback(name, *args)?;
            let path = rules.rules[m.rule].apis[m.api].pattern.clone();
            Some(Effect::Api {
                api: api_key(m, &path),
                confidence: Confidence::Low,
            })
        }
        Target::UnknownMethod(..) => None,
        Target::Unresolved(_) | Target::ParamCall(_) => None,
    }
}

fn api_key(m: ApiMatch, path: &str) -> ApiKey {
    ApiKey {
        rule: m.rule,
        api_index: m.api,
        path: path.to_string(),
        init: false,
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{analyze_files, lib_rs_sites as one, sites};

    #[test]
    fn futures_handed_to_a_librarys_own_spawn_wrapper_are_detached() {
        // mongodb: runtime::spawn(shutdown.tasks.track_future(monitor.execute())).
        let src =
            "fn spawn<F: std::future::Future + Send + 'static>(fut: F) { tokio::spawn(fut); }\n\
                   fn spawn_named<F: std::future::Future + Send + 'static>(fut: F) { spawn(fut) }\n\
                   fn track<F>(f: F) -> F { f }\n\
                   async fn monitor() { std::fs::read(\"x\"); }\n\
                   async fn start() { spawn_named(track(monitor())); }\n\
                   async fn awaited() { track(monitor()).await; }\n";
        // The read is reported in `monitor` (4), reached from where the future is awaited (6),
        // not from `start`, which only spawns it.
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(4, "NB0101".into())]);
        let callers: Vec<u32> = r.findings[0].reached_from.iter().map(|c| c.line).collect();
        assert_eq!(callers, [6]);
    }

    #[test]
    fn async_blocks_inside_offloaded_closures_are_not_roots() {
        // reqwest's blocking client: a thread with its own runtime drives the async block.
        let src = "fn client() {\n\
                   std::thread::spawn(move || {\n\
                   let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();\n\
                   let f = async move { std::fs::read(\"x\") };\n\
                   rt.block_on(f)\n\
                   });\n}\n\
                   fn main_like(rt: tokio::runtime::Runtime) {\n\
                   rt.block_on(async { std::fs::read(\"y\") });\n}\n";
        assert_eq!(one(src), [(9, "NB0101".into())]);
    }

    #[test]
    fn closures_passed_to_offload_boundaries_are_not_reported() {
        let src = "async fn a() {\n\
                   tokio::task::spawn_blocking(|| std::fs::read(\"x\"));\n\
                   std::thread::spawn(move || std::thread::sleep(d()));\n\
                   let f = || std::fs::read(\"y\");\n\
                   f();\n}\nfn d() -> std::time::Duration { todo!() }\n";
        assert_eq!(one(src), [(4, "NB0101".into())]);
    }

    #[test]
    fn user_wrappers_around_boundaries_are_inferred_and_chained() {
        let src = "fn offload<F: FnOnce() + Send + 'static>(f: F) { std::thread::spawn(f); }\n\
                   fn offload2<F: FnOnce() + Send + 'static>(g: F) { offload(move || g()); }\n\
                   fn not_a_wrapper<F: FnOnce()>(f: F) { f() }\n\
                   async fn a() {\n\
                   offload(|| { std::fs::read(\"x\"); });\n\
                   offload2(|| { std::fs::read(\"x\"); });\n\
                   not_a_wrapper(|| { std::fs::read(\"x\"); });\n}\n";
        assert_eq!(one(src), [(7, "NB0101".into())]);
    }

    #[test]
    fn async_blocks_and_closures_are_roots_reported_where_written() {
        let src = "fn spawn_it() {\n\
                   tokio::spawn(async move {\n std::fs::read(\"x\");\n });\n\
                   let c = async move |x: u8| { std::thread::sleep(d()); };\n}\n\
                   async fn caller() { spawn_it(); }\nfn d() -> std::time::Duration { todo!() }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(3, "NB0101".into()), (5, "NB0201".into())]);
        let kinds: Vec<&str> = r.findings.iter().map(|f| f.root.kind.as_str()).collect();
        assert_eq!(kinds, ["async block", "async closure"]);
    }

    #[test]
    fn poll_impls_are_async_contexts_and_sync_code_is_not() {
        let src = "use std::future::Future; use std::pin::Pin; use std::task::{Context, Poll};\n\
                   struct F;\n\
                   impl Future for F { type Output = (); fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {\n std::fs::read(\"x\");\n Poll::Ready(()) } }\n\
                   fn sync_only() { std::fs::read(\"x\"); }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(4, "NB0101".into())]);
        assert_eq!(r.findings[0].root.kind, "poll fn");
    }
}

#[cfg(test)]
mod where_tests {
    use crate::config::Config;
    use crate::testutil::{analyze_files, analyze_files_with};

    /// `src` analysed with `[report] init = true`.
    fn with_init_reported(src: &str) -> crate::Report {
        analyze_files_with(
            &[("src/lib.rs", src)],
            &Config {
                report_init: true,
                ..Config::default()
            },
        )
    }

    fn kinds(r: &crate::Report) -> Vec<(u32, String, String)> {
        let mut v: Vec<_> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.rule.clone(), f.kind.clone()))
            .collect();
        v.sort();
        v
    }

    /// vaultwarden's `CONFIG`: a `static` whose `LazyLock` initialiser drives `Config::load()`
    /// with `block_on` on a thread of its own; atuin's `META_STORE.get_or_try_init(MetaStore::
    /// new)`; a dedicated thread's `rt.block_on(serve())`. Those async fns, and what only they
    /// await, run once or off the workers: no worker root. One that a handler also awaits stays
    /// reported through it, and one that is also spawned stays a root.
    #[test]
    fn async_fns_driven_only_by_initialisers_or_offloaded_closures_are_no_worker_roots() {
        let src = "pub struct Config;\n\
                   pub static CONFIG: std::sync::LazyLock<Config> = std::sync::LazyLock::new(|| {\n\
                   std::thread::spawn(|| tokio::runtime::Runtime::new().unwrap().block_on(Config::load())).join().unwrap()\n\
                   });\n\
                   impl Config { pub async fn load() -> Config { std::fs::read(\"cfg\"); read_more().await; Config } }\n\
                   async fn read_more() { std::fs::read(\"more\"); }\n\
                   static STORE: std::sync::OnceLock<u8> = std::sync::OnceLock::new();\n\
                   async fn open_store() -> u8 { std::fs::read(\"store\"); 1 }\n\
                   pub async fn store() -> u8 { *STORE.get_or_init(|| futures::executor::block_on(open_store())) }\n\
                   pub fn start() { std::thread::spawn(|| tokio::runtime::Runtime::new().unwrap().block_on(serve())); }\n\
                   async fn serve() { std::fs::read(\"serve\"); }\n\
                   async fn shared() { std::fs::read(\"shared\"); }\n\
                   pub fn start_shared() { std::thread::spawn(|| tokio::runtime::Runtime::new().unwrap().block_on(shared())); }\n\
                   pub async fn handler() { shared().await; }\n\
                   async fn spawned() { std::fs::read(\"spawned\"); }\n\
                   pub fn start_spawned() { std::thread::spawn(|| tokio::runtime::Runtime::new().unwrap().block_on(spawned())); }\n\
                   pub async fn spawn_it() { tokio::spawn(spawned()); }\n";
        let off = analyze_files(&[("src/lib.rs", src)]);
        let w = |l: u32| (l, "NB0101".to_string(), "worker".to_string());
        assert_eq!(kinds(&off), [w(12), w(15)]);
        let shared = off.findings.iter().find(|f| f.path[0].line == 12).unwrap();
        assert_eq!(
            shared
                .reached_from
                .iter()
                .map(|c| c.line)
                .collect::<Vec<_>>(),
            [14]
        );
        // With initialisers reported, what they drive is kind `init`, and so is what only such
        // an fn awaits (`read_more`) and the `block_on` in `store`'s initialiser; the offloaded
        // thread's `serve` stays quiet.
        let on = with_init_reported(src);
        let init = |l: u32| (l, "NB0101".to_string(), "init".to_string());
        let block_on = (9, "NB0801".to_string(), "init".to_string());
        assert_eq!(
            kinds(&on),
            [init(5), init(6), init(8), block_on, w(12), w(15)]
        );
    }

    /// deno's `Deferred<T>`: a wrapper handing its closure parameter to `OnceCell::
    /// get_or_try_init`, two levels deep here; the closures given to it run once. A wrapper that
    /// calls its closure on every call is no initialiser, and the wrapper's own body is still
    /// followed.
    #[test]
    fn closures_handed_to_wrappers_of_initialisers_run_once() {
        let src = "pub struct Deferred<T>(std::sync::OnceLock<T>);\n\
                   impl<T> Deferred<T> {\n\
                   pub fn get_or_init(&self, create: impl FnOnce() -> T) -> &T { std::fs::read(\"w\"); self.0.get_or_init(create) }\n\
                   pub fn get(&self, create: impl FnOnce() -> T) -> &T { self.get_or_init(create) }\n\
                   pub fn every_time(&self, create: impl FnOnce() -> T) -> T { create() }\n\
                   }\n\
                   pub async fn handler(d: &Deferred<Vec<u8>>) {\n\
                   d.get_or_init(|| std::fs::read(\"a\").unwrap());\n\
                   d.get(|| std::fs::read(\"b\").unwrap());\n\
                   d.every_time(|| std::fs::read(\"c\").unwrap());\n\
                   }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        let entries: Vec<(u32, String)> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.path.last().unwrap().callee.clone()))
            .collect();
        assert_eq!(
            entries,
            [
                (8, "std::fs::read".to_string()),
                (9, "std::fs::read".to_string()),
                (10, "std::fs::read".to_string())
            ]
        );
        // Lines 8 and 9 reach the wrapper's own read (line 3); line 10 its closure's.
        let sinks: Vec<u32> = r
            .findings
            .iter()
            .map(|f| f.path.last().unwrap().line)
            .collect();
        assert_eq!(sinks, [3, 3, 10]);
    }

    /// A member library's async fns that nothing calls or names are no roots when a member
    /// binary uses the library (dead code of the application: a worker never runs them), unless
    /// `[report] uncalled = true`; one named anywhere (here as a fn pointer value), a trait's
    /// method, or one carrying an exporting attribute stays a root, and so does every async fn
    /// of a library no member binary uses, and a binary's own. A method call of the same name
    /// (`c.leftover()`) cannot call a free fn.
    #[test]
    fn async_fns_nothing_in_an_application_calls_are_no_roots() {
        let lib = "pub async fn leftover() { std::fs::read(\"a\"); }\n\
                   pub async fn named() { std::fs::read(\"b\"); }\n\
                   pub fn table() -> Vec<fn()> { let _f = named; Vec::new() }\n\
                   pub trait Job { async fn run(&self); }\n\
                   pub struct J;\n\
                   impl Job for J { async fn run(&self) { std::fs::read(\"c\"); } }\n\
                   #[wasm_bindgen::prelude::wasm_bindgen]\n\
                   pub async fn exported() { std::fs::read(\"d\"); }\n\
                   pub struct C;\n\
                   impl C { pub fn leftover(&self) {} }\n\
                   pub fn method_namesake(c: &C) { c.leftover(); }\n";
        let main = "fn main() {}\nasync fn unwired() { std::fs::read(\"e\"); }\n";
        let analyse = |with_bin: bool, report_uncalled: bool| {
            let (mut ws, _scratch) = crate::testutil::scratch_workspace(
                if with_bin {
                    "uncalled-app"
                } else {
                    "uncalled-lib"
                },
                lib,
                crate::discover::SourceKind::Workspace,
                false,
            );
            ws.packages[0].is_member = true;
            if with_bin {
                let main_rs = ws.root.join("bin/src/main.rs");
                std::fs::create_dir_all(main_rs.parent().unwrap()).unwrap();
                std::fs::write(&main_rs, main).unwrap();
                let mut package = ws.packages[0].clone();
                package.name = "bin".into();
                package.id = "path+file:///bin#0.1.0".into();
                package.manifest_dir = ws.root.join("bin");
                ws.packages.push(package);
                let mut unit = ws.units[0].clone();
                unit.package = 1;
                unit.crate_name = "bin".into();
                unit.kind = crate::discover::UnitKind::Bin;
                unit.root = main_rs;
                unit.deps
                    .insert("dep".into(), crate::discover::DepTarget::Unit(0));
                ws.units.push(unit);
            }
            let config = Config {
                report_uncalled,
                ..Config::default()
            };
            let rules = config.apply(&crate::rules::RuleDb::builtin());
            let r = crate::analyze_workspace(
                &ws,
                &rules,
                &config,
                &crate::progress::Silent,
                std::time::Instant::now(),
                Default::default(),
                false,
            );
            let mut sites: Vec<(String, u32)> = r
                .findings
                .iter()
                .map(|f| {
                    (
                        f.path[0].file.rsplit('/').next().unwrap().to_string(),
                        f.path[0].line,
                    )
                })
                .collect();
            sites.sort();
            (sites, r.stats.uncalled_roots)
        };
        let at = |lines: &[u32], main: bool| -> Vec<(String, u32)> {
            let mut v: Vec<(String, u32)> =
                lines.iter().map(|&l| ("lib.rs".to_string(), l)).collect();
            if main {
                v.push(("main.rs".to_string(), 2));
            }
            v
        };
        assert_eq!(analyse(true, false), (at(&[2, 6, 8], true), 1));
        assert_eq!(analyse(true, true), (at(&[1, 2, 6, 8], true), 0));
        assert_eq!(analyse(false, false), (at(&[1, 2, 6, 8], false), 0));
    }

    #[test]
    fn one_time_initialisers_are_kind_init_and_off_by_default() {
        let src = "static CELL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();\n\
                   static ONCE: std::sync::Once = std::sync::Once::new();\n\
                   fn config() -> &'static Vec<u8> { CELL.get_or_init(|| std::fs::read(\"c\").unwrap()) }\n\
                   async fn a() {\n\
                   CELL.get_or_init(|| std::fs::read(\"x\").unwrap());\n\
                   ONCE.call_once(|| { std::fs::read(\"y\"); });\n\
                   config();\n\
                   std::fs::read(\"z\");\n\
                   }\n";
        let off = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(kinds(&off), [(8, "NB0101".into(), "worker".into())]);
        let on = with_init_reported(src);
        let init = |l: u32| (l, "NB0101".to_string(), "init".to_string());
        assert_eq!(
            kinds(&on),
            [
                init(5),
                init(6),
                init(7),
                (8, "NB0101".into(), "worker".into())
            ]
        );
        assert!(on.findings[0].message.contains("once per process"));
        assert_eq!(on.findings[0].severity, "warning");
    }

    /// chrono's local time zone, as its source is shaped (`offset/local/unix.rs`): the zone file
    /// is read once per thread (a memoised `Cache::default`) and again only when
    /// `Cache::offset`'s rate-limited check finds its source changed, a path listed as `cold` in
    /// `rules/runtime.toml`. `Local::now()` is kind `init`; a real read beside it stays a worker
    /// finding.
    #[test]
    fn a_dependencys_cold_path_is_kind_init() {
        let chrono = "pub mod offset { pub mod local {\n\
                      pub struct Local;\n\
                      impl Local { pub fn now() -> usize { inner::offset() } }\n\
                      mod inner {\n\
                      use std::cell::RefCell;\n\
                      thread_local! { static TZ_INFO: RefCell<Option<Cache>> = Default::default() }\n\
                      pub(super) fn offset() -> usize {\n\
                      TZ_INFO.with(|c| c.borrow_mut().get_or_insert_with(Cache::default).offset())\n\
                      }\n\
                      struct Cache { zone: Vec<u8> }\n\
                      impl Default for Cache { fn default() -> Cache { Cache { zone: current_zone() } } }\n\
                      fn current_zone() -> Vec<u8> { std::fs::read(\"/etc/localtime\").unwrap_or_default() }\n\
                      impl Cache {\n\
                      fn offset(&mut self) -> usize {\n\
                      if std::fs::symlink_metadata(\"/etc/localtime\").is_ok() { self.zone = current_zone(); }\n\
                      self.zone.len()\n\
                      }\n\
                      }\n\
                      }\n\
                      } }\n\
                      pub fn parse_from_disk() -> Vec<u8> { std::fs::read(\"x\").unwrap() }\n";
        let app = "async fn handler() {\n\
                   chrono::offset::local::Local::now();\n\
                   chrono::parse_from_disk();\n\
                   }\n";
        let off = crate::testutil::analyze_app_with_dependency("cold-off", app, "chrono", chrono);
        assert_eq!(kinds(&off), [(3, "NB0101".into(), "worker".into())]);
        let on = crate::testutil::analyze_app_with_dependency_with(
            "cold-on",
            app,
            "chrono",
            chrono,
            &Config {
                report_init: true,
                ..Config::default()
            },
        );
        let got = kinds(&on);
        assert!(
            got.contains(&(2, "NB0101".into(), "init".into())),
            "{got:?}"
        );
        assert!(
            !got.contains(&(2, "NB0101".into(), "worker".into())),
            "{got:?}"
        );
        assert!(
            got.contains(&(3, "NB0101".into(), "worker".into())),
            "{got:?}"
        );
    }

    /// pyroscope declares libc's `setitimer` in its own `extern` block: the symbol is libc's
    /// (one C namespace), listed in `fast_ffi`, so no finding; a symbol not listed still is one.
    #[test]
    fn a_crates_own_declaration_of_a_fast_libc_symbol_is_not_reported() {
        let src = "extern \"C\" {\n\
                   fn setitimer(which: i32, new: *mut u8, old: *mut u8) -> i32;\n\
                   fn verify(p: *const u8) -> i32;\n\
                   }\n\
                   async fn a() {\n\
                   unsafe { setitimer(2, std::ptr::null_mut(), std::ptr::null_mut()) };\n\
                   unsafe { verify(std::ptr::null()) };\n\
                   }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        let lines: Vec<u32> = r.findings.iter().map(|f| f.path[0].line).collect();
        assert_eq!(lines, [7], "{:?}", r.findings);
    }

    #[test]
    fn ffi_policy_follows_the_library_defaults_and_the_configuration() {
        // A member's own extern block is reported per call.
        let src =
            "extern \"C\" { fn verify(p: *const u8) -> i32; fn check(p: *const u8) -> i32; }\n\
                   async fn a() {\n\
                   unsafe { verify(std::ptr::null()) };\n\
                   unsafe { check(std::ptr::null()) };\n\
                   }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(r.findings.len(), 2);
        assert!(r.findings.iter().all(|f| f.confidence == "high"));
        let trusted = analyze_files_with(
            &[("src/lib.rs", src)],
            &Config {
                ffi_trust: vec!["app".into()],
                ..Config::default()
            },
        );
        assert!(trusted.findings.is_empty());
        let db = crate::RuleDb::builtin();
        use crate::rules::FfiPolicy::*;
        // (library, foreign fn, declared in a workspace member) → policy.
        let expected = [
            ("v8", "v8__Isolate__New", false, Quiet),
            ("libsqlite3_sys", "sqlite3_step", false, Report),
            ("libsqlite3_sys", "sqlite3_column_int", false, Quiet),
            ("openssl_sys", "SSL_connect", false, Report),
            ("openssl_sys", "SSL_CTX_new", false, Quiet),
            ("libgit2_sys", "git_clone", false, Report),
            ("libc", "close", false, Quiet),
            ("tree_sitter", "ts_parser_parse_with_options", false, Report),
            ("tree_sitter", "ts_node_child_count", false, Quiet),
            ("libc", "nanosleep", false, Report),
            ("pingora_openssl", "SSL_use_certificate", false, Quiet),
            ("lmdb_sys", "mdb_txn_commit", false, Report),
            ("lmdb_sys", "mdb_stat", false, Quiet),
            ("lmdb_master_sys", "mdb_env_open", false, Report),
            ("lmdb_master_sys", "mdb_txn_begin", false, Quiet),
            // A family entry (`tree_sitter_*`) covers every grammar crate, not the core.
            ("tree_sitter_fish", "tree_sitter_fish", false, Quiet),
            ("tree_sitter_bash", "tree_sitter_bash", false, Quiet),
            ("tree_sitter", "ts_query_new", false, Report),
            ("some_sys", "f", false, Unknown),
            ("some_sys", "f", true, Report),
        ];
        for (lib, f, member, policy) in expected {
            assert_eq!(db.ffi_policy(lib, f, member), policy, "{lib}::{f}");
        }
        let mut quiet = db.clone();
        quiet.ffi_unknown_quiet = true;
        quiet.ffi_report = vec!["v8".into()];
        assert_eq!(quiet.ffi_policy("some_sys", "f", false), Quiet);
        assert_eq!(quiet.ffi_policy("v8", "v8__Isolate__New", false), Report);
    }
}

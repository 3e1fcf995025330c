//! Part of stage 4, *graph*: which thread a root body runs on.
//!
//! `block_on` drives its future on the thread that calls it. Under `#[tokio::main]` (multi-thread
//! flavor, the default) that is the main thread, beside the worker pool: blocking there stalls
//! the main future (and whatever it awaits, joins or selects), not the workers that run the
//! spawned tasks. Such bodies get [`RootKind::BlockOnThread`] and are reported as their own kind
//! (a warning), never as worker starvation. Everything spawned, `flavor = "current_thread"`
//! bodies, `#[tokio::test]` (current-thread by default) and actix's single-threaded system stay
//! worker roots: there the blocked thread is the one that runs every task.
//!
//! The block_on-thread bodies are, to a greatest fixpoint:
//! - the body of a `#[tokio::main]` / `#[async_std::main]` fn ([`crate::ir::FnAttrs`]);
//! - an async block written as an argument of a call named `block_on` (`rt.block_on(async {..})`,
//!   `Handle::block_on`, `futures::executor::block_on`);
//! - an async block awaited (`async {..}.await`) or joined/selected (`join!`, `select!`) in a
//!   block_on-thread body;
//! - an async fn that is never handed to a task spawner and whose every call is polled by a
//!   block_on-thread body: awaited there (`run().await`, `timeout(d, run()).await`), joined or
//!   selected there, or written as an argument of `block_on` in sync code. An async fn with a
//!   caller anywhere else (a spawned task, a sync fn that only builds the future, an `let f =
//!   run();` whose future may go anywhere) stays a worker root. A dependency's async fn, no root
//!   by itself, becomes a block_on-thread root under the same condition (its entries would
//!   otherwise be reported as a worker's through the kind of async fn it is).
//!
//! Calls written in test-support fns (`roots::is_test_support`: `*_for_tests`, test kits) are not
//! callers here: such code holds no root, and the calls it makes decide no thread (lemmy's
//! `build_db_pool`, awaited by `main` and by `build_db_pool_for_tests`).
//!
//! The async bodies that are no roots because they run off the workers (written in a closure
//! handed to an offload boundary, `thread::spawn(move || rt.block_on(async { .. }))`, or spawned
//! onto a configured dedicated runtime) poll in the same way: an async fn polled only by them,
//! or by fns polled only by them, runs on their thread and is no root at all (pingap's
//! `new_async_logger`, deno's web workers); one also polled by a block_on-thread body is
//! [`RootKind::BlockOnThread`].
//!
//! Everything here is read from the IR of the owners (which call positions are polled where) and
//! from the graph's edges; positions are those the resolver gives call sites and async bodies.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::graph::{Effect, GraphBody, RootKind};
use crate::index::{FnId, Index};
use crate::ir::{FnBody, IrBlock, IrExpr, IrStmt, Pos};
use crate::resolve::BodyKind;

/// What one function's IR says about polling: per context (`None`: the fn body; `Some(pos)`:
/// the async block written at `pos`), the calls and async blocks that context polls itself.
#[derive(Default)]
struct Polling {
    contexts: BTreeMap<Option<Pos>, Polled>,
    /// Async blocks written as arguments of `block_on`, with the context the call is in.
    block_on_blocks: BTreeMap<Pos, Option<Pos>>,
    /// Calls written (at any depth) in the arguments of `block_on`, with their context.
    block_on_calls: BTreeMap<Pos, Option<Pos>>,
}

#[derive(Default)]
struct Polled {
    calls: BTreeSet<Pos>,
    blocks: BTreeSet<Pos>,
}

/// Macros whose arguments are futures polled by the context that invokes them.
fn polls_arguments(name: &str) -> bool {
    matches!(
        name,
        "join" | "try_join" | "select" | "select_biased" | "join_all" | "try_join_all" | "pin"
    )
}

struct Scan<'p> {
    out: &'p mut Polling,
    /// Positions of this fn's task-spawner calls (`tokio::spawn`, `JoinSet::spawn`, inferred
    /// wrappers): their arguments run as tasks, never polled by the caller.
    spawn_calls: &'p BTreeSet<Pos>,
}

impl Scan<'_> {
    fn block(&mut self, b: &IrBlock, ctx: Option<Pos>) {
        for s in &b.stmts {
            self.stmt(s, ctx);
        }
    }

    fn stmt(&mut self, s: &IrStmt, ctx: Option<Pos>) {
        match s {
            IrStmt::Let { init, diverge, .. } => {
                if let Some(e) = init {
                    self.expr(e, ctx, false, false);
                }
                if let Some(d) = diverge {
                    self.block(d, ctx);
                }
            }
            IrStmt::Expr(e) => self.expr(e, ctx, false, false),
            IrStmt::Item => {}
        }
    }

    /// `polled`: the value of `e` is polled by `ctx` (under `.await`, in `join!`); `block_on`: it
    /// is an argument of `block_on`.
    fn expr(&mut self, e: &IrExpr, ctx: Option<Pos>, polled: bool, block_on: bool) {
        match e {
            IrExpr::Call { func, args, pos } => {
                self.call(*pos, ctx, polled, block_on);
                let named_block_on = matches!(&**func, IrExpr::Path(p, _)
                    if p.segments.last().is_some_and(|s| s.name == "block_on"));
                self.expr(func, ctx, polled, block_on);
                self.args(args, *pos, ctx, polled, block_on || named_block_on);
            }
            IrExpr::MethodCall {
                receiver,
                method,
                args,
                pos,
            } => {
                self.call(*pos, ctx, polled, block_on);
                self.expr(receiver, ctx, polled, block_on);
                self.args(args, *pos, ctx, polled, block_on || method == "block_on");
            }
            IrExpr::Await(inner) => self.expr(inner, ctx, true, block_on),
            IrExpr::Async { body, pos } => {
                if block_on {
                    self.out.block_on_blocks.insert(*pos, ctx);
                }
                self.async_context(*pos, ctx, polled);
                self.block(body, Some(*pos));
            }
            // A closure handed to a future the context polls (`for_each_concurrent(n, |x| async
            // {..})`, `join_all(v.map(|x| check(x)))`) returns the future that consumer polls in
            // place: its value is polled by the context too. Its other calls run when it is
            // called, and are not polled futures.
            IrExpr::Closure {
                is_async,
                body,
                pos,
                ..
            } => {
                if *is_async {
                    self.async_context(*pos, ctx, polled);
                    self.expr(body, Some(*pos), false, false);
                } else {
                    self.closure_value(body, ctx, polled);
                }
            }
            IrExpr::Macro { path, exprs, .. } => {
                let polls = path
                    .segments
                    .last()
                    .is_some_and(|s| polls_arguments(&s.name));
                for x in exprs {
                    self.expr(x, ctx, polled || polls, block_on);
                }
            }
            IrExpr::Field(inner, _)
            | IrExpr::Ref(inner)
            | IrExpr::Deref(inner)
            | IrExpr::Try(inner)
            | IrExpr::Cast(inner, _) => self.expr(inner, ctx, polled, block_on),
            IrExpr::Let(_, inner) => self.expr(inner, ctx, false, false),
            IrExpr::Block(b) => self.block(b, ctx),
            IrExpr::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond, ctx, false, false);
                self.block(then, ctx);
                if let Some(o) = otherwise {
                    self.expr(o, ctx, polled, block_on);
                }
            }
            IrExpr::Match { scrutinee, arms } => {
                self.expr(scrutinee, ctx, polled, block_on);
                for (_, arm) in arms {
                    self.expr(arm, ctx, false, false);
                }
            }
            IrExpr::For { iter, body, .. } => {
                self.expr(iter, ctx, false, false);
                self.block(body, ctx);
            }
            IrExpr::StructLit(_, fields) => {
                for (_, f) in fields {
                    self.expr(f, ctx, false, false);
                }
            }
            // `select!` arms (`res = run() => ..`) lower to `Other`: keep what the macro polls;
            // a tuple of futures is polled with the tuple (`(a(), b()).join().await`).
            IrExpr::Other(children)
            | IrExpr::Tuple(children)
            | IrExpr::Array(children)
            | IrExpr::Index {
                exprs: children, ..
            }
            | IrExpr::Arith(children) => {
                for c in children {
                    self.expr(c, ctx, polled, block_on);
                }
            }
            IrExpr::Loop(children) => {
                for c in children {
                    self.expr(c, ctx, false, false);
                }
            }
            IrExpr::Path(..) | IrExpr::Str(_) | IrExpr::SocketAddrStr | IrExpr::Lit(_) => {}
        }
    }

    /// A call's arguments: polled with the call (and `block_on` for a `block_on` call), unless
    /// the call at `pos` is a task spawner, whose arguments run as tasks.
    fn args(&mut self, args: &[IrExpr], pos: Pos, ctx: Option<Pos>, polled: bool, block_on: bool) {
        let spawns = self.spawn_calls.contains(&pos);
        for a in args {
            // A fn item handed over as a value is the closure `|..| f(..)` (the resolver records
            // that call at the path): its future is polled as the closure's value would be.
            if let IrExpr::Path(_, at) = a {
                self.call(*at, ctx, polled && !spawns, block_on && !spawns);
            }
            self.expr(a, ctx, polled && !spawns, block_on && !spawns);
        }
    }

    /// An async block or async closure at `pos`, written in `ctx`: a context of its own, and one
    /// `ctx` polls when its value is polled there.
    fn async_context(&mut self, pos: Pos, ctx: Option<Pos>, polled: bool) {
        if polled {
            self.out.contexts.entry(ctx).or_default().blocks.insert(pos);
        }
        self.out.contexts.entry(Some(pos)).or_default();
    }

    /// A sync closure's body: its value (the tail) is polled when the closure is, the rest not.
    fn closure_value(&mut self, body: &IrExpr, ctx: Option<Pos>, polled: bool) {
        match body {
            IrExpr::Block(b) => {
                let (last, init) = match b.stmts.split_last() {
                    Some((IrStmt::Expr(e), init)) => (Some(e), init),
                    _ => (None, &b.stmts[..]),
                };
                for s in init {
                    self.stmt(s, ctx);
                }
                if let Some(e) = last {
                    self.expr(e, ctx, polled, false);
                }
            }
            e => self.expr(e, ctx, polled, false),
        }
    }

    fn call(&mut self, pos: Pos, ctx: Option<Pos>, polled: bool, block_on: bool) {
        if polled {
            self.out.contexts.entry(ctx).or_default().calls.insert(pos);
        }
        if block_on {
            self.out.block_on_calls.insert(pos, ctx);
        }
    }
}

fn polling(index: &Index, f: FnId, spawn_calls: &BTreeSet<Pos>) -> Polling {
    let mut out = Polling::default();
    if let Some(body) = index.fns[f].ir.body.as_ref().map(FnBody::block) {
        out.contexts.entry(None).or_default();
        Scan {
            out: &mut out,
            spawn_calls,
        }
        .block(&body, None);
    }
    out
}

/// What the graph knows about code that runs off the workers or not in production at all.
#[derive(Default)]
pub(crate) struct OffWorker {
    /// Async bodies that are not roots because they are driven on another thread: written in a
    /// closure handed to an offload boundary (`thread::spawn(move || rt.block_on(async { .. }))`)
    /// or spawned onto a configured dedicated runtime. What only they poll runs there too.
    pub bodies: BTreeSet<usize>,
    /// Test-support fns of the reported packages (`roots::is_test_support`): they hold no root,
    /// and their calls do not decide where an async fn runs (lemmy's `build_db_pool_for_tests`).
    pub test_support: BTreeSet<FnId>,
}

/// Gives the block_on-thread bodies their root kind. `spawned`: async fns whose future is handed
/// to a task spawner somewhere (`graph::detach_spawned`): they run as tasks on the workers.
/// An async fn polled only by `off.bodies` (and by fns polled only there) is no root at all.
pub(crate) fn mark_block_on_roots(
    index: &Index,
    bodies: &mut [GraphBody],
    fn_body: &[Option<usize>],
    spawned: &BTreeSet<FnId>,
    spawn_sites: &BTreeMap<FnId, BTreeSet<Pos>>,
    off: &OffWorker,
) {
    let owners: BTreeSet<FnId> = bodies
        .iter()
        .filter(|b| b.root.is_some() || b.kind == BodyKind::Fn)
        .map(|b| b.owner)
        .collect();
    // Only functions that can start or continue a block_on context are scanned.
    let seeds: Vec<usize> = (0..bodies.len())
        .filter(|&b| bodies[b].root.is_some())
        .collect();
    let mut by_owner: BTreeMap<FnId, Vec<usize>> = BTreeMap::new();
    for (bi, b) in bodies.iter().enumerate() {
        by_owner.entry(b.owner).or_default().push(bi);
    }
    let any_seed = !off.bodies.is_empty()
        || owners.iter().any(|&f| {
            let def = &index.fns[f];
            def.ir.attrs.block_on_entry || def.ir.attrs.names_block_on
        });
    if !any_seed {
        return;
    }
    // Each scan decodes a body: in parallel (deno: 20 000 async fns, a fifth of the graph stage
    // when sequential), collected into a map, so the order of the work does not matter.
    let scanned: Vec<FnId> = owners
        .iter()
        .copied()
        .filter(|f| {
            let def = &index.fns[*f];
            def.ir.sig.is_async
                || def.ir.attrs.block_on_entry
                || by_owner[f].len() > 1
                || def.ir.attrs.names_block_on
        })
        .collect();
    let none = BTreeSet::new();
    let polling_of: BTreeMap<FnId, Polling> = scanned
        .par_iter()
        .map(|&f| (f, polling(index, f, spawn_sites.get(&f).unwrap_or(&none))))
        .collect();
    let context_of = |b: usize| -> Option<Pos> {
        match bodies[b].kind {
            BodyKind::Fn => None,
            _ => Some(bodies[b].pos),
        }
    };
    // Callers of each async fn: (calling body, call position).
    let callers = async_fn_callers(index, bodies, off, |bi, c, _| (bi, c.pos));
    let by_variant = flavor_by_variant(index, bodies, &by_owner, &polling_of);
    let polled_by_variant = |b: usize, pos: Pos| {
        bodies[b].kind == BodyKind::Fn && by_variant.contains(&(bodies[b].owner, pos))
    };
    // The async fns those calls poll: (fn, its body), entries of the block_on thread while
    // every caller of theirs is (the fixpoint below keeps them in `fns` only then).
    let variant_entries: Vec<(FnId, usize)> = by_variant
        .iter()
        .filter_map(|&(g, pos)| Some((fn_body[g]?, pos)))
        .flat_map(|(b, pos)| bodies[b].calls.iter().filter(move |c| c.pos == pos))
        .flat_map(|c| &c.effects)
        .filter_map(|e| match e {
            Effect::Edge { callee, .. } => Some((*callee, fn_body[*callee]?)),
            _ => None,
        })
        .collect();
    let variant_seeds = |fns: &BTreeSet<FnId>| {
        variant_entries
            .iter()
            .filter(|(f, _)| fns.contains(f))
            .map(|e| e.1)
            .collect::<Vec<usize>>()
    };
    // The body a context of `owner` is (`None`: its fn body).
    let body_of = |owner: FnId, ctx: Option<Pos>| -> Option<usize> {
        by_owner[&owner].iter().copied().find(|&b| match ctx {
            None => bodies[b].kind == BodyKind::Fn,
            Some(p) => bodies[b].kind == BodyKind::AsyncBlock && bodies[b].pos == p,
        })
    };
    // A `block_on` call runs its argument on the thread that makes the call: the block_on
    // thread when the call is written in a block_on-thread body, or in sync code no worker root
    // reaches (a `main`, a tool's client); on that worker otherwise (`futures::executor::
    // block_on(fut)` in a sync helper of async code, itself reported as NB0801).
    let on_block_on_thread =
        |owner: FnId, ctx: Option<Pos>, on_thread: &BTreeSet<usize>, worker: &[bool]| {
            match body_of(owner, ctx) {
                Some(b) if bodies[b].root.is_some() => on_thread.contains(&b),
                // A sync fn that may build a current-thread runtime (`Builder::new_current_thread()`,
                // even beside a multi-thread one chosen at run time, as atuin's client does) may run
                // its `block_on` on the only worker: its argument stays a worker root.
                Some(_) => !worker[owner] && !index.fns[owner].ir.attrs.builds_current_thread,
                None => false,
            }
        };
    // Greatest fixpoint: assume every block_on argument and every eligible async fn is polled
    // only by block_on threads, then drop those reached from elsewhere until nothing changes.
    let mut entry_seeds: BTreeSet<usize> = seeds
        .iter()
        .copied()
        .filter(|&b| {
            let owner = bodies[b].owner;
            match bodies[b].kind {
                BodyKind::Fn => index.fns[owner].ir.attrs.block_on_entry,
                BodyKind::AsyncBlock => polling_of
                    .get(&owner)
                    .is_some_and(|p| p.block_on_blocks.contains_key(&bodies[b].pos)),
                BodyKind::AsyncClosure => false,
            }
        })
        .collect();
    // A dependency's async fn is no root (it is reached through its callers), but one polled
    // only by block_on threads runs there too, and becomes a root of that kind: its entries
    // are then reported as block_on-thread ones (atuin's `eye_declare::driver_tokio::run_with`,
    // awaited only by the TUI that `atuin ai` runs under `block_on`).
    let mut fns: BTreeSet<FnId> = callers
        .keys()
        .copied()
        .filter(|f| {
            !spawned.contains(f)
                && fn_body[*f].is_some_and(|b| {
                    bodies[b].root.is_some()
                        || (bodies[b].kind == BodyKind::Fn && index.fns[*f].ir.sig.is_async)
                })
        })
        .collect();
    let mut worker_reach = WorkerReach::new(bodies, fn_body);
    loop {
        let mut seeds_and_off: BTreeSet<usize> = entry_seeds.union(&off.bodies).copied().collect();
        seeds_and_off.extend(variant_seeds(&fns));
        let on_thread = closure(
            bodies,
            fn_body,
            &by_owner,
            &polling_of,
            &seeds_and_off,
            &fns,
        );
        let worker = worker_reach.update(bodies, fn_body, &on_thread);
        let before = (entry_seeds.len(), fns.len());
        entry_seeds.retain(|&b| {
            let owner = bodies[b].owner;
            if bodies[b].kind == BodyKind::Fn {
                return true;
            }
            let ctx = polling_of[&owner].block_on_blocks[&bodies[b].pos];
            on_block_on_thread(owner, ctx, &on_thread, worker)
        });
        fns.retain(|f| {
            callers[f].iter().all(|&(b, pos)| {
                if polled_by_variant(b, pos) {
                    return true;
                }
                let owner = bodies[b].owner;
                let Some(p) = polling_of.get(&owner) else {
                    return false;
                };
                if let Some(&ctx) = p.block_on_calls.get(&pos) {
                    return on_block_on_thread(owner, ctx, &on_thread, worker);
                }
                on_thread.contains(&b)
                    && p.contexts
                        .get(&context_of(b))
                        .is_some_and(|c| c.calls.contains(&pos))
            })
        });
        if (entry_seeds.len(), fns.len()) == before {
            // Which of them a block_on thread polls: from its entries, through the fns with a
            // caller there (a block_on argument in sync code, or a body reached so far); a fn
            // polled only by off-worker bodies runs on their thread, and is no root.
            let mut main_fns = BTreeSet::new();
            let mut entries = entry_seeds.clone();
            entries.extend(variant_seeds(&fns));
            let reached = loop {
                let reached = closure(bodies, fn_body, &by_owner, &polling_of, &entries, &main_fns);
                let next: BTreeSet<FnId> = fns
                    .iter()
                    .copied()
                    .filter(|f| {
                        callers[f].iter().any(|&(b, pos)| {
                            reached.contains(&b)
                                || polled_by_variant(b, pos)
                                || polling_of
                                    .get(&bodies[b].owner)
                                    .is_some_and(|p| p.block_on_calls.contains_key(&pos))
                        })
                    })
                    .collect();
                if next == main_fns {
                    break reached;
                }
                main_fns = next;
            };
            for b in on_thread {
                if off.bodies.contains(&b) {
                    continue;
                }
                bodies[b].root = reached.contains(&b).then_some(RootKind::BlockOnThread);
            }
            return;
        }
    }
}

/// Calls that run on a multi-thread runtime's `block_on` thread because the runtime's flavor is
/// chosen by the same value that picks the arm they are in (atuin's client):
///
/// ```ignore
/// let runtime = if matches!(&self, Self::Ai(_)) { Builder::new_multi_thread() }
///               else { Builder::new_current_thread() };
/// runtime.block_on(self.run_inner(..));        // run_inner: `match self { Self::Ai(ai) => ai.run().await, .. }`
/// ```
///
/// The fn naming both flavors keeps `run_inner` a worker root (on a current-thread runtime the
/// calling thread is the only worker), but the calls in `run_inner`'s arms for the variants
/// `matches!` tests (or for the others, when the `if` builds the current-thread runtime) are
/// polled by the multi-thread runtime's `block_on` thread: (`run_inner`, call position).
/// Recognised syntactically: an `if matches!(X, V1 | ..)` whose branches name
/// `new_multi_thread` and `new_current_thread`, a `block_on` argument `X.method(..)`, and a `match
/// self` in that method's body.
fn flavor_by_variant(
    index: &Index,
    bodies: &[GraphBody],
    by_owner: &BTreeMap<FnId, Vec<usize>>,
    polling_of: &BTreeMap<FnId, Polling>,
) -> BTreeSet<(FnId, Pos)> {
    let mut out = BTreeSet::new();
    for (&f, polling) in polling_of {
        let def = &index.fns[f];
        if !def.ir.attrs.builds_current_thread || polling.block_on_calls.is_empty() {
            continue;
        }
        let Some(body) = def.ir.body.as_ref().map(FnBody::block) else {
            continue;
        };
        let Some((subject, variants, multi_when_matched)) = flavor_choice(&body) else {
            continue;
        };
        // `subject.method(..)` calls written in a `block_on` argument.
        let mut method_calls = BTreeSet::new();
        body.any(&mut |e| {
            if let IrExpr::MethodCall { receiver, pos, .. } = e {
                if polling.block_on_calls.contains_key(pos)
                    && peel(receiver).and_then(|p| p.single()) == Some(subject.as_str())
                {
                    method_calls.insert(*pos);
                }
            }
            false
        });
        let Some(fn_body) = by_owner[&f]
            .iter()
            .find(|&&b| bodies[b].kind == BodyKind::Fn)
        else {
            continue;
        };
        let callees = bodies[*fn_body]
            .calls
            .iter()
            .filter(|c| method_calls.contains(&c.pos))
            .flat_map(|c| &c.effects)
            .filter_map(|e| match e {
                Effect::Edge { callee, .. } => Some(*callee),
                _ => None,
            });
        for g in callees {
            let Some(gbody) = index.fns[g].ir.body.as_ref().map(FnBody::block) else {
                continue;
            };
            gbody.any(&mut |e| {
                if let IrExpr::Match { scrutinee, arms } = e {
                    if peel(scrutinee).and_then(|p| p.single()) == Some("self") {
                        for (pat, arm) in arms {
                            let matched = !pat.variants.is_empty()
                                && pat.variants.iter().all(|v| variants.contains(v));
                            if !pat.variants.is_empty() && matched == multi_when_matched {
                                arm.any(&mut |x| {
                                    if let IrExpr::Call { pos, .. }
                                    | IrExpr::MethodCall { pos, .. } = x
                                    {
                                        out.insert((g, *pos));
                                    }
                                    false
                                });
                            }
                        }
                    }
                }
                false
            });
        }
    }
    out
}

/// `if matches!(X, A | B) { ..new_multi_thread.. } else { ..new_current_thread.. }` (or the
/// flavors the other way round) in a body: `X`, the variants, whether the match builds the
/// multi-thread runtime.
fn flavor_choice(body: &IrBlock) -> Option<(String, Vec<crate::ir::Name>, bool)> {
    let mut found = None;
    body.any(&mut |e| {
        let IrExpr::If {
            cond,
            then,
            otherwise: Some(otherwise),
        } = e
        else {
            return false;
        };
        let IrExpr::Macro { path, exprs, .. } = &**cond else {
            return false;
        };
        if path.segments.last().is_none_or(|s| s.name != "matches") || exprs.len() < 2 {
            return false;
        }
        let Some(subject) = peel(&exprs[0]).and_then(|p| p.single()).map(str::to_string) else {
            return false;
        };
        let mut variants = Vec::new();
        for x in &exprs[1..] {
            let p = match x {
                IrExpr::Path(p, _) => p,
                IrExpr::Call { func, .. } => match &**func {
                    IrExpr::Path(p, _) => p,
                    _ => continue,
                },
                IrExpr::StructLit(p, _) => p,
                _ => continue,
            };
            if let Some(last) = p.segments.last() {
                variants.push(last.name);
            }
        }
        // Whether a block or expression calls `wanted` (a path's last segment or a method).
        let calls = |wanted: &'static str| {
            move |y: &IrExpr| match y {
                IrExpr::Call { func, .. } => matches!(&**func, IrExpr::Path(p, _)
                    if p.segments.last().is_some_and(|s| s.name == wanted)),
                IrExpr::MethodCall { method, .. } => method.as_str() == wanted,
                _ => false,
            }
        };
        let (multi, current) = ("new_multi_thread", "new_current_thread");
        let multi_when_matched =
            if then.any(&mut calls(multi)) && otherwise.any(&mut calls(current)) {
                true
            } else if then.any(&mut calls(current)) && otherwise.any(&mut calls(multi)) {
                false
            } else {
                return false;
            };
        if variants.is_empty() {
            return false;
        }
        found = Some((subject, variants, multi_when_matched));
        true
    });
    found
}

/// The path under `&` and `*`, if the expression is one.
fn peel(e: &IrExpr) -> Option<&crate::ir::IrPath> {
    match e {
        IrExpr::Ref(i) | IrExpr::Deref(i) => peel(i),
        IrExpr::Path(p, _) => Some(p),
        _ => None,
    }
}

/// The edges into each async fn, as `item(calling body, call, edge marked init)`. Calls written in
/// test-support fns are not callers: such code holds no root, and its calls decide no thread
/// (here and in `graph::off_worker_only`).
pub(crate) fn async_fn_callers<T>(
    index: &Index,
    bodies: &[GraphBody],
    off: &OffWorker,
    item: impl Fn(usize, &crate::graph::EffectiveCall, bool) -> T,
) -> BTreeMap<FnId, Vec<T>> {
    let mut callers: BTreeMap<FnId, Vec<T>> = BTreeMap::new();
    for (bi, b) in bodies.iter().enumerate() {
        if off.test_support.contains(&b.owner) {
            continue;
        }
        for c in &b.calls {
            for e in &c.effects {
                if let Effect::Edge { callee, init, .. } = e {
                    if index.fns[*callee].ir.sig.is_async {
                        callers.entry(*callee).or_default().push(item(bi, c, *init));
                    }
                }
            }
        }
    }
    callers
}

/// Functions reachable by calls from the worker roots (roots not on a block_on thread), kept
/// between the rounds of [`mark_block_on_roots`]' fixpoint: there the block_on-thread bodies only
/// shrink, so the worker roots only grow, and each round continues the last one's walk from the
/// new roots instead of walking the whole graph again (deno: a walk over half a million call
/// edges per round). Should the roots ever lose one, the walk starts over, so the answer is
/// always the set reachable from this round's roots.
struct WorkerReach {
    /// Per function: reached by a call.
    seen: Vec<bool>,
    /// Per body: walked.
    visited: Vec<bool>,
    /// Per body: a root the walk started from.
    started: Vec<bool>,
}

impl WorkerReach {
    fn new(bodies: &[GraphBody], fn_body: &[Option<usize>]) -> WorkerReach {
        WorkerReach {
            seen: vec![false; fn_body.len()],
            visited: vec![false; bodies.len()],
            started: vec![false; bodies.len()],
        }
    }

    /// The functions reachable from the roots not in `on_thread`.
    fn update(
        &mut self,
        bodies: &[GraphBody],
        fn_body: &[Option<usize>],
        on_thread: &BTreeSet<usize>,
    ) -> &[bool] {
        if on_thread
            .iter()
            .any(|&b| self.started.get(b).copied().unwrap_or(false))
        {
            *self = WorkerReach::new(bodies, fn_body);
        }
        let mut stack: Vec<usize> = (0..bodies.len())
            .filter(|&b| bodies[b].root.is_some() && !on_thread.contains(&b))
            .filter(|&b| !std::mem::replace(&mut self.started[b], true))
            .collect();
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut self.visited[b], true) {
                continue;
            }
            for c in &bodies[b].calls {
                for e in &c.effects {
                    if let Effect::Edge { callee, .. } = e {
                        if !std::mem::replace(&mut self.seen[*callee], true) {
                            stack.extend(fn_body[*callee]);
                        }
                    }
                }
            }
        }
        &self.seen
    }
}

/// The block_on-thread bodies given the seeds and the async fns assumed to be polled there: the
/// async blocks they await or join, transitively.
fn closure(
    bodies: &[GraphBody],
    fn_body: &[Option<usize>],
    by_owner: &BTreeMap<FnId, Vec<usize>>,
    polling_of: &BTreeMap<FnId, Polling>,
    seeds: &BTreeSet<usize>,
    fns: &BTreeSet<FnId>,
) -> BTreeSet<usize> {
    let mut out: BTreeSet<usize> = seeds.clone();
    out.extend(fns.iter().filter_map(|f| fn_body[*f]));
    let mut stack: Vec<usize> = out.iter().copied().collect();
    while let Some(b) = stack.pop() {
        let owner = bodies[b].owner;
        let Some(p) = polling_of.get(&owner) else {
            continue;
        };
        let ctx = match bodies[b].kind {
            BodyKind::Fn => None,
            _ => Some(bodies[b].pos),
        };
        let Some(polled) = p.contexts.get(&ctx) else {
            continue;
        };
        for &bi in &by_owner[&owner] {
            let other = &bodies[bi];
            if matches!(other.kind, BodyKind::AsyncBlock | BodyKind::AsyncClosure)
                && other.root.is_some()
                && polled.blocks.contains(&other.pos)
                && out.insert(bi)
            {
                stack.push(bi);
            }
        }
    }
    out
}

/// Whether a body names `block_on` anywhere (a cheap filter before the scan), and whether it
/// builds a current-thread runtime (`Builder::new_current_thread()`), as a method or a path:
/// one walk, at lowering (`FnAttrs::names_block_on`, `FnAttrs::builds_current_thread`).
pub(crate) fn runtime_mentions(body: &IrBlock) -> (bool, bool) {
    let (mut block_on, mut current_thread) = (false, false);
    body.any(&mut |e| {
        let name = match e {
            IrExpr::MethodCall { method, .. } => Some(*method),
            IrExpr::Path(p, _) => p.segments.last().map(|s| s.name),
            _ => None,
        };
        if let Some(name) = name {
            block_on |= name == "block_on";
            current_thread |= name == "new_current_thread";
        }
        block_on && current_thread
    });
    (block_on, current_thread)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::graph::{Effect, EffectiveCall, GraphBody, RootKind};
    use crate::ir::Pos;
    use crate::resolve::{BodyKind, Confidence};
    use crate::testutil::analyze_files;

    /// A chain of bodies, one per function: `f` calls `f + 1` (the last calls none); `roots`
    /// are root bodies.
    fn chain(len: usize, roots: &[usize]) -> (Vec<GraphBody>, Vec<Option<usize>>) {
        let bodies = (0..len)
            .map(|f| GraphBody {
                owner: f,
                kind: BodyKind::Fn,
                pos: Pos::default(),
                root: roots.contains(&f).then_some(RootKind::AsyncFn),
                calls: (f + 1 < len)
                    .then(|| EffectiveCall {
                        pos: Pos::default(),
                        effects: vec![Effect::Edge {
                            callee: f + 1,
                            confidence: Confidence::High,
                            init: false,
                        }],
                        hold: Default::default(),
                        guard: None,
                        facts: None,
                    })
                    .into_iter()
                    .collect(),
            })
            .collect();
        (bodies, (0..len).map(Some).collect())
    }

    /// The walk kept between rounds answers as a walk started afresh, whether the bodies on the
    /// block_on thread shrink (it continues from the new roots) or not (it starts over).
    #[test]
    fn the_worker_walk_kept_between_rounds_reaches_what_a_fresh_walk_reaches() {
        let (bodies, fn_body) = chain(8, &[1, 3, 6]);
        let rounds: [&[usize]; 5] = [&[1, 3, 6], &[1, 3], &[3], &[1, 6], &[]];
        let mut kept = super::WorkerReach::new(&bodies, &fn_body);
        for on_thread in rounds {
            let on_thread: BTreeSet<usize> = on_thread.iter().copied().collect();
            let fresh = super::WorkerReach::new(&bodies, &fn_body)
                .update(&bodies, &fn_body, &on_thread)
                .to_vec();
            assert_eq!(
                kept.update(&bodies, &fn_body, &on_thread),
                fresh.as_slice(),
                "on the block_on thread: {on_thread:?}"
            );
        }
        // Roots 3 and 6 on the workers reach 4..8; with 3 back on the block_on thread, only 7.
        let only_six: BTreeSet<usize> = [1, 3].into();
        let reached = super::WorkerReach::new(&bodies, &fn_body)
            .update(&bodies, &fn_body, &only_six)
            .to_vec();
        assert_eq!(
            reached,
            [false, false, false, false, false, false, false, true]
        );
    }

    /// (line, finding kind, root kind) of every finding.
    fn kinds(src: &str) -> Vec<(u32, String, String)> {
        let r = analyze_files(&[("src/lib.rs", src)]);
        let mut out: Vec<_> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.kind.clone(), f.root.kind.clone()))
            .collect();
        out.sort();
        out
    }

    /// A dependency's async fn (no root of its own) awaited only by a block_on-thread body runs
    /// on that thread: its entries are block_on-thread findings (atuin's TUI loop in
    /// `eye_declare::driver_tokio::run_with`). Another dependency fn also awaited by a spawned
    /// task stays on the workers.
    #[test]
    fn a_dependency_async_fn_polled_only_by_the_block_on_thread_runs_there() {
        let dep = "pub async fn run_with<A>(a: A) { std::fs::read(\"tty\").ok(); }\n\
                   pub async fn shared() { std::fs::read(\"s\").ok(); }\n";
        let app = "#[tokio::main]\n\
                   async fn main() {\n\
                   \x20   tui::run_with(1u8).await;\n\
                   \x20   tui::shared().await;\n\
                   \x20   tokio::spawn(async { tui::shared().await });\n\
                   }\n";
        let r = crate::testutil::analyze_app_with_dependency("dep-block-on", app, "tui", dep);
        let mut kinds: Vec<(u32, String)> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.kind.clone()))
            .collect();
        kinds.sort();
        assert_eq!(
            kinds,
            [(1, "block_on".to_string()), (2, "worker".to_string())]
        );
    }

    /// A block_on-thread finding's message does not say it blocks a worker (the rules'
    /// summaries do: "thread sleep blocks the worker"); a worker finding's still does.
    #[test]
    fn a_block_on_thread_finding_says_which_thread_it_blocks() {
        let src = "#[tokio::main]\n\
                   async fn main() {\n\
                   \x20   std::thread::sleep(std::time::Duration::from_secs(1));\n\
                   \x20   tokio::spawn(async { std::thread::sleep(std::time::Duration::from_secs(1)) });\n\
                   }\n";
        let r = analyze_files(&[("src/main.rs", src)]);
        let messages: Vec<(&str, &str)> = r
            .findings
            .iter()
            .map(|f| (f.kind.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        for (kind, message) in messages {
            match kind {
                "block_on" => {
                    assert!(
                        message.starts_with("thread sleep blocks the thread:"),
                        "{message}"
                    );
                    assert!(message.contains("not the worker pool"), "{message}");
                }
                _ => assert!(
                    message.starts_with("thread sleep blocks the worker:"),
                    "{message}"
                ),
            }
        }
    }

    #[test]
    fn the_block_on_thread_and_what_only_it_polls_are_not_workers() {
        let src = "#[tokio::main]\n\
                   async fn main() {\n\
                   std::fs::read(\"a\");\n\
                   only_main().await;\n\
                   shared().await;\n\
                   tokio::spawn(async { std::fs::read(\"b\"); });\n\
                   tokio::spawn(shared());\n\
                   let f = stored();\n\
                   f.await;\n\
                   tokio::join!(joined(), async { std::fs::read(\"j\"); });\n\
                   }\n\
                   async fn only_main() { std::fs::read(\"c\"); }\n\
                   async fn shared() { std::fs::read(\"d\"); }\n\
                   async fn stored() { std::fs::read(\"e\"); }\n\
                   async fn joined() { std::fs::read(\"k\"); }\n\
                   #[tokio::main(flavor = \"current_thread\")]\n\
                   async fn single() { std::fs::read(\"f\"); }\n\
                   fn sync_main(rt: tokio::runtime::Runtime) {\n\
                   rt.block_on(async { std::fs::read(\"g\"); });\n\
                   rt.block_on(via_block_on());\n\
                   }\n\
                   async fn via_block_on() { std::fs::read(\"h\"); }\n\
                   fn sync_helper() { futures::executor::block_on(inner()); }\n\
                   async fn inner() { std::fs::read(\"i\"); }\n\
                   async fn handler() { sync_helper(); }\n";
        let b = |l: u32, root: &str| (l, "block_on".to_string(), root.to_string());
        let w = |l: u32, root: &str| (l, "worker".to_string(), root.to_string());
        // One finding per entry (v2): the awaits in `main` (lines 4, 5, 8, 10, 20) are callers
        // of the entries inside the awaited fns, not findings of their own.
        assert_eq!(
            kinds(src),
            [
                b(3, "block_on thread"),
                w(6, "async block"),
                b(10, "block_on thread"),
                b(12, "block_on thread"),
                w(13, "async fn"),
                w(14, "async fn"),
                b(15, "block_on thread"),
                w(17, "async fn"),
                b(19, "block_on thread"),
                b(22, "block_on thread"),
                w(24, "async fn"),
                w(25, "async fn"),
            ]
        );
        let r = analyze_files(&[("src/lib.rs", src)]);
        let callers_of = |line: u32| -> Vec<u32> {
            r.findings
                .iter()
                .find(|f| f.path[0].line == line)
                .map(|f| f.reached_from.iter().map(|c| c.line).collect())
                .unwrap_or_default()
        };
        assert_eq!(callers_of(12), [4]);
        // `rt.block_on(via_block_on())` is written in sync code: no async caller to list.
        assert_eq!(callers_of(22), Vec::<u32>::new());
    }

    /// A sync `main` that builds its runtime and calls `runtime.block_on(run(&opts))` (lychee,
    /// matrix-authentication-service) has no async block: it must still be scanned, or `run` and
    /// everything only it awaits would be taken for worker roots. `#[rocket::main]` is tokio's
    /// multi-thread `block_on` too. A fn that may build a current-thread runtime (atuin's client
    /// picks one at run time) keeps what it runs a worker root.
    #[test]
    fn a_sync_main_calling_block_on_and_rocket_main_start_block_on_threads() {
        let src = "pub struct Opts { threads: Option<usize> }\n\
                   fn main() -> std::io::Result<()> {\n\
                   let opts = Opts { threads: None };\n\
                   let runtime = match opts.threads { Some(t) => tokio::runtime::Builder::new_multi_thread().worker_threads(t).build()?, None => tokio::runtime::Runtime::new()? };\n\
                   match runtime.block_on(run(&opts)) { Err(e) => Err(e), res => res }\n\
                   }\n\
                   async fn run(_o: &Opts) -> std::io::Result<()> { std::fs::read(\"a\")?; startup().await; Ok(()) }\n\
                   async fn startup() { std::fs::read(\"b\"); }\n\
                   #[rocket::main]\n\
                   async fn rocket_main() { std::fs::read(\"c\"); check().await; }\n\
                   async fn check() { std::fs::read(\"d\"); }\n\
                   fn cli(multi: bool) {\n\
                   let mut b = if multi { tokio::runtime::Builder::new_multi_thread() } else { tokio::runtime::Builder::new_current_thread() };\n\
                   b.build().unwrap().block_on(command());\n\
                   }\n\
                   async fn command() { std::fs::read(\"e\"); }\n";
        let b = |l: u32, root: &str| (l, "block_on".to_string(), root.to_string());
        assert_eq!(
            kinds(src),
            [
                b(7, "block_on thread"),
                b(8, "block_on thread"),
                b(10, "block_on thread"),
                b(11, "block_on thread"),
                // A runtime that may be current-thread: its block_on thread is the worker.
                (16, "worker".to_string(), "async fn".to_string()),
            ]
        );
    }

    /// atuin's client: the runtime's flavor is chosen by the subcommand (`matches!(&self,
    /// Self::Ai(_))` builds the multi-thread one) and `block_on(self.run_inner())` matches on the
    /// same value. What the `Ai` arm awaits runs on the block_on thread; the other arms' on the
    /// current-thread runtime, whose thread is its only worker.
    #[test]
    fn a_flavor_chosen_by_a_variant_puts_that_arm_on_the_block_on_thread() {
        let src = "pub enum Cmd { Ai(u8), History(u8) }\n\
                   impl Cmd {\n\
                   \x20   pub fn run(self) {\n\
                   \x20       let mut b = if matches!(&self, Self::Ai(_)) { tokio::runtime::Builder::new_multi_thread() } else { tokio::runtime::Builder::new_current_thread() };\n\
                   \x20       b.build().unwrap().block_on(self.run_inner());\n\
                   \x20   }\n\
                   \x20   async fn run_inner(self) {\n\
                   \x20       match self {\n\
                   \x20           Self::Ai(_) => ai().await,\n\
                   \x20           Self::History(_) => history().await,\n\
                   \x20       }\n\
                   \x20   }\n\
                   }\n\
                   async fn ai() { std::fs::read(\"a\"); }\n\
                   async fn history() { std::fs::read(\"h\"); }\n";
        assert_eq!(
            kinds(src),
            [
                (14, "block_on".to_string(), "block_on thread".to_string()),
                (15, "worker".to_string(), "async fn".to_string()),
            ]
        );
    }

    /// A future the block_on thread polls in place polls what it was built from: async blocks
    /// and closures handed to stream and join combinators (`for_each_concurrent`, `join_all` over
    /// `map`), and async fn calls returned by such closures. What a spawner's arguments build
    /// runs as a task, even when the `JoinHandle` is awaited in place.
    #[test]
    fn combinators_polled_in_place_stay_on_the_block_on_thread_and_spawned_tasks_do_not() {
        let src = "#[tokio::main]\n\
                   async fn main() {\n\
                   tokio::spawn(async { std::fs::read(\"a\"); }).await;\n\
                   stream().for_each_concurrent(2, |_x| async move { std::fs::read(\"b\"); }).await;\n\
                   futures::future::join_all([1, 2].iter().map(|_x| async { std::fs::read(\"c\"); })).await;\n\
                   futures::future::join_all([1, 2].iter().map(|_x| check())).await;\n\
                   futures::future::join_all([1, 2].iter().map(|_x| tokio::spawn(async { std::fs::read(\"d\"); }))).await;\n\
                   stream().for_each(async |_x| { std::fs::read(\"f\"); }).await;\n\
                   }\n\
                   async fn check() { std::fs::read(\"e\"); }\n\
                   fn stream() -> Stream { Stream }\n\
                   pub struct Stream;\n";
        let b = |l: u32, root: &str| (l, "block_on".to_string(), root.to_string());
        let w = |l: u32, root: &str| (l, "worker".to_string(), root.to_string());
        assert_eq!(
            kinds(src),
            [
                w(3, "async block"),
                b(4, "block_on thread"),
                b(5, "block_on thread"),
                w(7, "async block"),
                b(8, "block_on thread"),
                b(10, "block_on thread"),
            ]
        );
    }

    /// Async fns handed over as values are polled where the closure they stand for would be:
    /// mas' `try_join_all(keys.iter().map(KeyConfig::json_web_key))` and lychee's `let function =
    /// match self { .. }; function(url).await`, both under `#[tokio::main]`. Handed to a spawner,
    /// the same fn item runs as a task.
    #[test]
    fn fn_items_handed_over_as_values_are_polled_where_they_are_handed() {
        let src = "#[tokio::main]\n\
                   async fn main() {\n\
                   futures::future::join_all([1, 2].iter().map(check)).await;\n\
                   let function = if cheap() { check } else { other };\n\
                   function(&1).await;\n\
                   tokio::spawn(background);\n\
                   }\n\
                   async fn check(_x: &i32) { std::fs::read(\"e\"); }\n\
                   async fn other(_x: &i32) { std::fs::read(\"o\"); }\n\
                   async fn background() { std::fs::read(\"b\"); }\n\
                   fn cheap() -> bool { true }\n";
        let b = |l: u32, root: &str| (l, "block_on".to_string(), root.to_string());
        let w = |l: u32, root: &str| (l, "worker".to_string(), root.to_string());
        assert_eq!(
            kinds(src),
            [
                b(8, "block_on thread"),
                b(9, "block_on thread"),
                w(10, "async fn"),
            ]
        );
    }

    /// lemmy's `build_db_pool`: awaited by `main` (through `start_server`) and by the test helper
    /// `build_db_pool_for_tests`, which holds no root (`roots::is_test_support`): its call decides
    /// nothing, so the pool is built on the block_on thread, although `init_test_context` (a
    /// root of its own, named like production code) awaits the test helper. An ordinary async fn
    /// awaiting `connect` (`reconnect`) keeps `connect` a worker root.
    #[test]
    fn calls_from_test_support_do_not_decide_where_an_async_fn_runs() {
        let src = "#[tokio::main]\n\
                   async fn main() { start_server().await; }\n\
                   async fn start_server() { build_db_pool().await; connect().await; }\n\
                   pub async fn build_db_pool() { std::fs::read(\"schema\"); }\n\
                   pub async fn build_db_pool_for_tests() { build_db_pool().await; }\n\
                   pub async fn connect() { std::fs::read(\"c\"); }\n\
                   pub async fn reconnect() { connect().await; }\n\
                   pub async fn init_test_context() { build_db_pool_for_tests().await; }\n";
        assert_eq!(
            kinds(src),
            [
                (4, "block_on".to_string(), "block_on thread".to_string()),
                (6, "worker".to_string(), "async fn".to_string()),
            ]
        );
    }

    /// pingap's `new_access_logger` (and deno's web workers): a thread with its own runtime
    /// awaits `new_async_logger` in the async block it drives, which is no root; what only such
    /// bodies poll runs on that thread too, and is no root either, through awaited fns. An async
    /// fn a worker root also awaits (`shared`, from `handler`) stays a worker root.
    #[test]
    fn async_fns_polled_only_by_bodies_on_their_own_thread_are_not_roots() {
        let src = "pub fn new_access_logger(path: String) {\n\
                   std::thread::spawn(move || {\n\
                   let rt = tokio::runtime::Runtime::new().unwrap();\n\
                   let send = async move { new_async_logger(&path).await; shared().await; };\n\
                   rt.block_on(send);\n\
                   });\n\
                   }\n\
                   async fn new_async_logger(_p: &str) { std::fs::create_dir_all(\"logs\"); inner().await; }\n\
                   async fn inner() { std::fs::read(\"i\"); }\n\
                   async fn shared() { std::fs::read(\"s\"); }\n\
                   pub async fn handler() { shared().await; }\n";
        assert_eq!(
            kinds(src),
            [(10, "worker".to_string(), "async fn".to_string())]
        );
    }
}

//! Stage 5, *propagate*: where async code enters the sync code that blocks, and which async
//! contexts reach that entry.
//!
//! The reporting unit is the **entry**: a call written in an async context (an async fn, async
//! block or async closure, a poll fn, a configured root: code that runs as part of polling a
//! future on a runtime worker) whose callee is a sync function that reaches a blocking API, or the
//! API itself. One finding per (entry call, API). An async fn's body runs on its caller's worker,
//! so an async caller that awaits it reaches the same blocking call; it is not reported again but
//! listed on the finding as an *ancestor* (`reached_from`). The entry is the last async context on
//! the path, which may be an async fn of a dependency: every async caller in the workspace then
//! shares the one finding.
//!
//! Three steps, all sequential and deterministic (`BTreeMap`/`BTreeSet`, id order):
//! 1. *sync summaries*: for each function reachable from a root, the APIs it reaches through
//!    calls into sync functions only, each with its best witness, to a fixpoint. A call into an
//!    async context ends the summary there: that context has entries of its own.
//! 2. *entries*: for each async context reachable from a root, its calls' APIs (directly, or
//!    through a sync callee's summary), best witness per (call, API).
//! 3. *ancestors*: for each entry's context, the roots that reach it through calls (a reverse
//!    breadth-first search over call edges), each with the call that starts its shortest path.
//!
//! "Best" is the order (path length, then confidence, then the first step's position and callee):
//! a total order, so the result does not depend on iteration order, and a strictly improving
//! update cannot repeat, so recursion and mutual recursion terminate.
//!
//! Suppressions arrive as [`Cuts`]: functions and source lines that no path of a rule may use.
//! They are applied here, while paths are built, so a suppressed helper several calls below the
//! entry removes every path through it, and a path that avoids it is still found.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rayon::prelude::*;

use crate::graph::{ApiKey, CallGraph, Effect, EffectiveCall, RootKind};
use crate::index::{FileId, FnId, Index};
use crate::ir::Pos;
use crate::resolve::{BodyKind, Confidence};
use crate::values::{callee_ctx, excluded, Ctx, Fact};

/// The first step of a witness: the call in this function and what it calls.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Next {
    Api,
    Fn(FnId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub len: u32,
    pub confidence: Confidence,
    pub pos: Pos,
    pub next: Next,
    /// The summary node the path continues in ([`Summaries`]): the callee, or the callee in
    /// the context the call fixes. Unused for [`Next::Api`].
    pub via: usize,
}

impl Witness {
    fn key(&self) -> (u32, std::cmp::Reverse<Confidence>, Pos, &Next) {
        (
            self.len,
            std::cmp::Reverse(self.confidence),
            self.pos,
            &self.next,
        )
    }
    fn better_than(&self, other: &Witness) -> bool {
        self.key().cmp(&other.key()) == Ordering::Less
    }
}

pub type Summary = BTreeMap<ApiKey, Witness>;

/// The most contexts ([`crate::values`]) summarised beside the functions themselves. Past it a
/// call reads the callee's summary in no context: more APIs, never fewer, so nothing is lost.
const MAX_CONTEXTS: usize = 100_000;

/// Summaries by node: nodes `0..fn_count` are the functions in no context, later nodes a
/// function in a context some call fixes.
struct Summaries {
    of: Vec<Summary>,
    node_fn: Vec<FnId>,
    /// Per context node (from `fn_count` on): its context.
    node_ctx: Vec<Ctx>,
    ctx_nodes: BTreeMap<(FnId, Ctx), usize>,
    /// Per function: the parameter slots a context may fix ([`Propagator::relevant_slots`]).
    relevant: Vec<Vec<u32>>,
}

impl Summaries {
    /// The context a call fixes for `callee`, from a caller in context `ctx`: `None` when the
    /// call carries no fact `callee` depends on.
    fn ctx_for(
        &self,
        index: &Index,
        call: &EffectiveCall,
        callee: FnId,
        ctx: &[(u32, crate::ir::Name)],
    ) -> Option<Ctx> {
        let facts = call.facts.as_ref()?;
        if self.relevant[callee].is_empty() {
            return None;
        }
        let has_self = index.fns[callee].ir.sig.has_self;
        let k = callee_ctx(facts, has_self, ctx, &self.relevant[callee]);
        (!k.is_empty()).then_some(k)
    }

    /// The node a call into `callee` continues in, from a caller in context `ctx`.
    fn callee_node(
        &self,
        index: &Index,
        call: &EffectiveCall,
        callee: FnId,
        ctx: &[(u32, crate::ir::Name)],
    ) -> usize {
        self.ctx_for(index, call, callee, ctx)
            .and_then(|k| self.ctx_nodes.get(&(callee, k)).copied())
            .unwrap_or(callee)
    }

    /// Adds the context nodes a call from a caller in context `ctx` needs; returns the new ones.
    fn new_contexts(
        &mut self,
        index: &Index,
        call: &EffectiveCall,
        ctx: &[(u32, crate::ir::Name)],
        summarised: &dyn Fn(FnId) -> bool,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for e in &call.effects {
            let Effect::Edge { callee, .. } = e else {
                continue;
            };
            if !summarised(*callee) || self.node_ctx.len() >= MAX_CONTEXTS {
                continue;
            }
            let Some(k) = self.ctx_for(index, call, *callee, ctx) else {
                continue;
            };
            let key = (*callee, k);
            if self.ctx_nodes.contains_key(&key) {
                continue;
            }
            let n = self.node_fn.len();
            self.node_fn.push(*callee);
            self.node_ctx.push(key.1.clone());
            self.ctx_nodes.insert(key, n);
            out.push(n);
        }
        out
    }
}

/// A path step for reporting: the function the call is written in, where, and what it calls.
#[derive(Clone, Debug)]
pub struct RawStep {
    pub function: FnId,
    pub pos: Pos,
    pub callee: Next,
}

/// A root that reaches an entry's async context: the root body and the call in it that starts
/// its shortest path there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ancestor {
    pub body: usize,
    pub pos: Pos,
}

#[derive(Clone, Debug)]
pub struct RawFinding {
    /// The async context the entry call is written in.
    pub body: usize,
    /// Its kind (an async fn of a dependency is a context without being a root).
    pub root: RootKind,
    pub api: ApiKey,
    pub confidence: Confidence,
    /// `steps[0]` is the entry call; the last step's callee is the API.
    pub steps: Vec<RawStep>,
    /// Every root that reaches `body` through calls (`body` itself when it recurses), sorted by
    /// body and position. Shared by the findings of one context and rule.
    pub reached_from: Arc<[Ancestor]>,
}

impl RawFinding {
    /// What makes a finding the same finding in two runs over one graph.
    pub fn key(&self) -> (usize, Pos, &ApiKey) {
        (self.body, self.steps[0].pos, &self.api)
    }
}

/// Suppressions in the graph's terms: where paths of a rule may not go. Each cut carries the tag
/// of what made it (a directive's index), returned in [`Propagated::used`] when the cut stopped a
/// path, so directives that stop nothing can be reported.
#[derive(Clone, Debug, Default)]
pub struct Cuts {
    /// (function, rule index) → tag: no path of the rule enters, leaves or starts in the function.
    pub fns: BTreeMap<(FnId, usize), usize>,
    /// (file, line, rule index) → tag: no call written on the line continues a path of the rule,
    /// and an async block or closure starting on it has no entry of the rule.
    pub lines: BTreeMap<(FileId, u32, usize), usize>,
}

impl Cuts {
    pub fn is_empty(&self) -> bool {
        self.fns.is_empty() && self.lines.is_empty()
    }

    fn rules(&self) -> BTreeSet<usize> {
        self.fns
            .keys()
            .map(|k| k.1)
            .chain(self.lines.keys().map(|k| k.2))
            .collect()
    }
}

/// The result of propagation: findings, the findings the cuts removed, and the cuts that stopped
/// a path.
#[derive(Debug, Default)]
pub struct Propagated {
    pub findings: Vec<RawFinding>,
    /// Findings that exist without the cuts and not with them.
    pub suppressed: Vec<RawFinding>,
    /// Tags of the cuts that stopped at least one path.
    pub used: BTreeSet<usize>,
}

/// Findings at entries, with suppressions applied (see the module docs).
///
/// In a workspace of several binaries ([`crate::link`]), the entries are propagated once per
/// set of units their paths may enter (entries whose binaries link the same units share a run),
/// so a path never crosses into a crate no binary of its entry links. Each entry belongs to one
/// run; the findings are merged back in entry order, as one run would list them.
pub fn run(graph: &CallGraph, index: &Index, cuts: &Cuts) -> Propagated {
    let reach = Reach::new(graph, index);
    let Some(links) = &graph.links else {
        return run_scoped(graph, index, &reach, cuts, None);
    };
    let by_set = crate::link::group_by_set(
        (0..graph.bodies.len()).map(|b| (links.of_fn(index, graph.bodies[b].owner).clone(), b)),
    );
    let mut by_allowed: BTreeMap<Option<Vec<bool>>, Vec<usize>> = BTreeMap::new();
    for (set, bodies) in by_set {
        by_allowed
            .entry(links.allowed_units(&set))
            .or_default()
            .extend(bodies);
    }
    // The scopes are independent runs over the same graph: in parallel (deno: 18 scopes), their
    // parts merged in scope order, so the output does not depend on the thread count.
    let parts: Vec<Propagated> = by_allowed
        .into_iter()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(allowed, bodies)| {
            let mut only = vec![false; graph.bodies.len()];
            for b in bodies {
                only[b] = true;
            }
            let scope = Scope {
                allowed_units: allowed,
                entry_bodies: only,
            };
            run_scoped(graph, index, &reach, cuts, Some(&scope))
        })
        .collect();
    let mut out = Propagated::default();
    for part in parts {
        out.findings.extend(part.findings);
        out.suppressed.extend(part.suppressed);
        out.used.extend(part.used);
    }
    // Stable: within an entry body the run's own order is kept.
    out.findings.sort_by_key(|f| f.body);
    out.suppressed.sort_by_key(|f| f.body);
    out
}

/// Where one propagation run may go: the units its paths may enter (`None`: any) and the
/// bodies whose entries it reports.
struct Scope {
    allowed_units: Option<Vec<bool>>,
    entry_bodies: Vec<bool>,
}

fn run_scoped(
    graph: &CallGraph,
    index: &Index,
    reach: &Reach,
    cuts: &Cuts,
    scope: Option<&Scope>,
) -> Propagated {
    let cut = Propagator::new(graph, index, reach, cuts, scope);
    let findings = cut.entries();
    let used = cut.used.into_inner();
    if cuts.is_empty() {
        return Propagated {
            findings,
            suppressed: Vec::new(),
            used,
        };
    }
    // What the cuts removed: the findings of the same graph without them, minus those left.
    let kept: BTreeSet<(usize, Pos, &ApiKey)> = findings.iter().map(RawFinding::key).collect();
    let suppressed = Propagator::new(graph, index, reach, &Cuts::default(), scope)
        .entries()
        .into_iter()
        .filter(|f| !kept.contains(&f.key()))
        .collect();
    Propagated {
        findings,
        suppressed,
        used,
    }
}

/// A finding as the v1 contract reported it: one per (root call site, API), where every root
/// follows calls into async fns too. Only for mapping v1 fingerprints to today's findings.
#[derive(Clone, Debug)]
pub struct V1Finding {
    pub finding: RawFinding,
    /// The entry this path goes through today: its async context and call position (the last
    /// async context on the v1 path).
    pub entry: (usize, Pos),
}

/// The v1 findings of the graph, without suppressions, each with the entry it became.
pub fn v1_findings(graph: &CallGraph, index: &Index) -> Vec<V1Finding> {
    let cuts = Cuts::default();
    let reach = Reach::new(graph, index);
    let p = Propagator::new(graph, index, &reach, &cuts, None);
    let summary = p.summaries(Follow::AllCalls);
    let summary = &summary;
    let mut out = Vec::new();
    for (bi, body) in graph.bodies.iter().enumerate() {
        let Some(root) = body.root else { continue };
        for ((_, api), w) in p.best_calls(bi, summary, Follow::AllCalls) {
            let steps = witness_path(body.owner, &w, &api, summary);
            // The last step written in an async context: the first step, or a step in a later
            // async fn (whose Fn body is the context).
            let entry = steps
                .iter()
                .enumerate()
                .rev()
                .find(|(i, s)| *i == 0 || p.reach.context[s.function])
                .map(|(i, s)| {
                    let context = if i == 0 {
                        bi
                    } else {
                        graph.fn_body[s.function].unwrap_or(bi)
                    };
                    (context, s.pos)
                })
                .unwrap_or((bi, w.pos));
            out.push(V1Finding {
                finding: RawFinding {
                    body: bi,
                    root,
                    api,
                    confidence: w.confidence,
                    steps,
                    reached_from: Arc::from(Vec::new()),
                },
                entry,
            });
        }
    }
    out
}

/// Which calls a summary follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Follow {
    /// Calls into sync functions only: what a call from async code reaches before the path
    /// enters another async context (which has entries of its own).
    SyncCalls,
    /// Every call, into async fns too: the v1 reporting unit.
    AllCalls,
}

/// What propagation reads of the graph alone, whatever the cuts and the scope: computed once
/// per report and shared by its runs ([`run`] makes one per link scope, twice with cuts).
struct Reach {
    /// Per function: an async context (async fn, poll fn, configured root), where entries are.
    context: Vec<bool>,
    /// Per function: reachable from a root body by calls.
    reachable: Vec<bool>,
    /// Per function: the file its bodies are written in.
    file: Vec<FileId>,
    /// Per callee: the reachable bodies calling it, with the call's position.
    callers: Vec<Vec<(usize, Pos)>>,
    /// Per [`Follow`] (as index), per function: summarised under it and reaching an API through
    /// calls it follows, in the graph without cuts or scope. Only such functions can get a
    /// non-empty summary in any run (cuts and scopes only remove paths), so the fixpoint and its
    /// contexts skip the others: on deno one link scope's summaries went from a pass over all
    /// 213 000 functions to one over the few thousand that reach an API, for each of 18 scopes.
    live: [Vec<bool>; 2],
    /// [`Reach::live`] as lists of function ids, ascending.
    live_list: [Vec<FnId>; 2],
    /// The calls of reached bodies that carry facts, the only ones that may fix a context
    /// ([`Summaries::ctx_for`]): (body, call index), in body and call order.
    fact_calls: Vec<(usize, usize)>,
}

impl Reach {
    fn new(graph: &CallGraph, index: &Index) -> Reach {
        let fn_count = index.fns.len();
        let context: Vec<bool> = (0..fn_count)
            .map(|f| {
                crate::graph::root_kind(index, f, BodyKind::Fn).is_some()
                    || graph.fn_body[f].is_some_and(|b| graph.bodies[b].root.is_some())
            })
            .collect();
        let (reachable, reached_bodies) = reachable_from_roots(graph, fn_count);
        let mut callers: Vec<Vec<(usize, Pos)>> = vec![Vec::new(); fn_count];
        for (b, body) in graph.bodies.iter().enumerate() {
            if !reached_bodies[b] {
                continue;
            }
            for call in &body.calls {
                for e in &call.effects {
                    if let Effect::Edge { callee, .. } = e {
                        callers[*callee].push((b, call.pos));
                    }
                }
            }
        }
        for c in &mut callers {
            c.sort();
            c.dedup();
        }
        let live = [Follow::SyncCalls, Follow::AllCalls]
            .map(|follow| live_fns(graph, &context, &reachable, &callers, follow));
        let live_list = live
            .each_ref()
            .map(|l| (0..l.len()).filter(|&f| l[f]).collect());
        let fact_calls = (0..graph.bodies.len())
            .filter(|&b| reached_bodies[b])
            .flat_map(|b| {
                let calls = &graph.bodies[b].calls;
                (0..calls.len())
                    .filter(|&c| calls[c].facts.is_some())
                    .map(move |c| (b, c))
            })
            .collect();
        Reach {
            fact_calls,
            context,
            reachable,
            file: index.fns.iter().map(|f| f.file).collect(),
            callers,
            live,
            live_list,
        }
    }

    /// Whether function `f` gets a summary under `follow`.
    fn summarised(&self, f: FnId, follow: Follow) -> bool {
        summarised(&self.reachable, &self.context, f, follow)
    }

    /// [`Reach::live`] under `follow`.
    fn live(&self, follow: Follow) -> &[bool] {
        &self.live[follow as usize]
    }

    /// [`Reach::live_list`] under `follow`.
    fn live_list(&self, follow: Follow) -> &[FnId] {
        &self.live_list[follow as usize]
    }
}

/// Whether function `f` gets a summary under `follow`: reachable from a root, and, when only
/// sync calls are followed, not an async context (whose calls are entries).
fn summarised(reachable: &[bool], context: &[bool], f: FnId, follow: Follow) -> bool {
    reachable[f] && (follow == Follow::AllCalls || !context[f])
}

/// The functions summarised under `follow` that reach an API through calls into summarised
/// functions: those whose own calls hit an API, then their summarised callers, backwards.
fn live_fns(
    graph: &CallGraph,
    context: &[bool],
    reachable: &[bool],
    callers: &[Vec<(usize, Pos)>],
    follow: Follow,
) -> Vec<bool> {
    let summarised = |f: FnId| summarised(reachable, context, f, follow);
    let mut live = vec![false; context.len()];
    let mut stack: Vec<FnId> = Vec::new();
    for (f, b) in graph.fn_body.iter().enumerate() {
        let Some(b) = b else { continue };
        let hits_api = graph.bodies[*b]
            .calls
            .iter()
            .any(|c| c.effects.iter().any(|e| matches!(e, Effect::Api { .. })));
        if hits_api && summarised(f) {
            live[f] = true;
            stack.push(f);
        }
    }
    while let Some(f) = stack.pop() {
        for &(cb, _) in &callers[f] {
            let body = &graph.bodies[cb];
            let g = body.owner;
            if body.kind == BodyKind::Fn
                && graph.fn_body[g] == Some(cb)
                && summarised(g)
                && !std::mem::replace(&mut live[g], true)
            {
                stack.push(g);
            }
        }
    }
    live
}

struct Propagator<'a> {
    graph: &'a CallGraph,
    index: &'a Index,
    cuts: &'a Cuts,
    /// Rules that some cut names: ancestors of other rules are shared across rules.
    cut_rules: BTreeSet<usize>,
    reach: &'a Reach,
    marks: RefCell<Marks>,
    used: RefCell<BTreeSet<usize>>,
    scope: Option<&'a Scope>,
}

impl<'a> Propagator<'a> {
    /// Whether paths of this run may enter function `f` ([`Scope::allowed_units`]).
    fn linked(&self, f: FnId) -> bool {
        match self.scope.and_then(|s| s.allowed_units.as_ref()) {
            Some(units) => units[self.index.fns[f].unit],
            None => true,
        }
    }

    /// Whether this run reports body `b`'s entries.
    fn reports(&self, b: usize) -> bool {
        self.scope.is_none_or(|s| s.entry_bodies[b])
    }

    fn new(
        graph: &'a CallGraph,
        index: &'a Index,
        reach: &'a Reach,
        cuts: &'a Cuts,
        scope: Option<&'a Scope>,
    ) -> Propagator<'a> {
        Propagator {
            graph,
            index,
            cuts,
            cut_rules: cuts.rules(),
            reach,
            marks: RefCell::new(Marks {
                stamp: 0,
                fn_seen: vec![0; index.fns.len()],
                body_found: vec![(0, 0); graph.bodies.len()],
            }),
            used: RefCell::new(BTreeSet::new()),
            scope,
        }
    }

    /// Whether calls on `line` of the file of `f`'s bodies are cut for `rule` (and notes the use).
    fn line_cut(&self, f: FnId, line: u32, rule: usize) -> bool {
        self.note(self.cuts.lines.get(&(self.reach.file[f], line, rule)))
    }

    /// Whether function `f` is cut for `rule` (and notes the use).
    fn fn_cut(&self, f: FnId, rule: usize) -> bool {
        !self.linked(f) || self.note(self.cuts.fns.get(&(f, rule)))
    }

    /// Whether a path of `rule` may not pass through body `b`: its function is cut, or it is an
    /// async block or closure starting on a cut line.
    fn body_cut(&self, b: usize, rule: usize) -> bool {
        let body = &self.graph.bodies[b];
        match body.kind {
            BodyKind::Fn => self.fn_cut(body.owner, rule),
            _ => self.line_cut(body.owner, body.pos.line, rule),
        }
    }

    fn note(&self, tag: Option<&usize>) -> bool {
        match tag {
            Some(t) => {
                self.used.borrow_mut().insert(*t);
                true
            }
            None => false,
        }
    }

    /// Per function, the APIs it reaches and the best witness of each, to a fixpoint. With
    /// [`Follow::SyncCalls`] only sync functions get a summary (async contexts' calls are
    /// entries, read by [`Self::best_calls`]), and only through calls into sync functions.
    ///
    /// A function is summarised once more in each *context* its callers fix (a parameter some
    /// `match` arm depends on, handed a constant variant: [`crate::values`]): that summary skips
    /// the arms the context rules out. Contexts are nodes of the same fixpoint, after the
    /// functions' own (node `f` is function `f` in no context).
    ///
    /// Two passes: the functions alone first, then, when some arm condition guards a call that
    /// reaches an API, again with the contexts such conditions make relevant. Conditions whose
    /// arms reach nothing make no context (deno: 35 000 contexts without this filter, most of
    /// them on `if let Some(..)` arms that block nowhere).
    fn summaries(&self, follow: Follow) -> Summaries {
        let fn_count = self.reach.context.len();
        let plain = self.summaries_in(follow, vec![Vec::new(); fn_count]);
        let relevant = self.relevant_slots(follow, &plain.of);
        if relevant.iter().all(Vec::is_empty) {
            return plain;
        }
        self.summaries_in(follow, relevant)
    }

    /// [`Self::summaries`] with the contexts on `relevant` slots.
    fn summaries_in(&self, follow: Follow, relevant: Vec<Vec<u32>>) -> Summaries {
        let graph = self.graph;
        let fn_count = self.reach.context.len();
        let summarised = |f: FnId| self.reach.summarised(f, follow);
        let live = self.reach.live(follow);
        let is_live = |f: FnId| live[f];
        let any_relevant = relevant.iter().any(|r| !r.is_empty());
        let mut nodes = Summaries {
            of: Vec::new(),
            node_fn: (0..fn_count).collect(),
            node_ctx: Vec::new(),
            ctx_nodes: BTreeMap::new(),
            relevant,
        };
        // Contexts, from every reached body's calls (an async context's too: its entries read
        // the callee's summary in the context the call fixes), then from each new context's.
        let mut queue: Vec<usize> = Vec::new();
        // No slot is relevant (the first pass): no call makes a context.
        let fact_calls = if any_relevant {
            &self.reach.fact_calls[..]
        } else {
            &[]
        };
        for &(b, c) in fact_calls {
            let body = &graph.bodies[b];
            let owner_summarised = body.kind == BodyKind::Fn && summarised(body.owner);
            if !owner_summarised && body.kind == BodyKind::Fn && follow == Follow::AllCalls {
                continue;
            }
            for g in nodes.new_contexts(self.index, &body.calls[c], &[], &is_live) {
                queue.push(g);
            }
        }
        while let Some(n) = queue.pop() {
            let f = nodes.node_fn[n];
            let Some(b) = graph.fn_body[f] else { continue };
            let ctx = nodes.node_ctx[n - fn_count].clone();
            for call in &graph.bodies[b].calls {
                if call.guard.as_deref().is_some_and(|g| excluded(g, &ctx)) {
                    continue;
                }
                queue.extend(nodes.new_contexts(self.index, call, &ctx, &is_live));
            }
        }
        let node_count = nodes.node_fn.len();
        let mut summary: Vec<Summary> = vec![BTreeMap::new(); node_count];
        // Reverse edges of summarised nodes: callee node → (caller node, call position,
        // confidence, whether the edge is a one-time initialiser's: what it reaches is marked
        // `init`).
        let mut callers: Vec<Vec<(usize, Pos, Confidence, bool)>> = vec![Vec::new(); node_count];
        let mut work = BTreeSet::new();
        // The live functions in no context, then every context node (contexts are made for
        // live callees only, [`Summaries::new_contexts`]): node order, as the fixpoint's
        // worklist pops them.
        let live_nodes = self.reach.live_list(follow).iter().copied();
        for n in live_nodes.chain(fn_count..node_count) {
            let f = nodes.node_fn[n];
            let Some(b) = graph.fn_body[f] else { continue };
            let ctx: &[(u32, crate::ir::Name)] = if n < fn_count {
                &[]
            } else {
                &nodes.node_ctx[n - fn_count]
            };
            for call in &graph.bodies[b].calls {
                if call.guard.as_deref().is_some_and(|g| excluded(g, ctx)) {
                    continue;
                }
                for e in &call.effects {
                    match e {
                        Effect::Api { api, confidence } => {
                            if self.line_cut(f, call.pos.line, api.rule) {
                                continue;
                            }
                            let w = Witness {
                                len: 1,
                                confidence: *confidence,
                                pos: call.pos,
                                next: Next::Api,
                                via: usize::MAX,
                            };
                            if self.update(&mut summary[n], f, api, w) {
                                work.insert(n);
                            }
                        }
                        Effect::Edge {
                            callee,
                            confidence,
                            init,
                        } => {
                            if live[*callee] {
                                let to = nodes.callee_node(self.index, call, *callee, ctx);
                                callers[to].push((n, call.pos, *confidence, *init))
                            }
                        }
                    }
                }
            }
        }
        while let Some(g) = work.pop_first() {
            let entries: Vec<(ApiKey, Witness)> = summary[g]
                .iter()
                .map(|(k, w)| (k.clone(), w.clone()))
                .collect();
            let g_fn = nodes.node_fn[g];
            for &(n, pos, conf, init) in &callers[g] {
                let f = nodes.node_fn[n];
                let mut changed = false;
                for (api, w) in &entries {
                    if self.line_cut(f, pos.line, api.rule) {
                        continue;
                    }
                    let api = &if init { api.as_init() } else { api.clone() };
                    let cand = Witness {
                        len: w.len + 1,
                        confidence: conf.min(w.confidence),
                        pos,
                        next: Next::Fn(g_fn),
                        via: g,
                    };
                    changed |= self.update(&mut summary[n], f, api, cand);
                }
                if changed {
                    work.insert(n);
                }
            }
        }
        nodes.of = summary;
        nodes
    }

    /// Per function, the parameter slots some `match` arm of its body depends on, directly or
    /// in a callee it passes the parameter on to unchanged ([`crate::values`]), to a fixpoint.
    /// Only arms with a call that reaches an API in `plain` (the summaries in no context) count.
    fn relevant_slots(&self, follow: Follow, plain: &[Summary]) -> Vec<Vec<u32>> {
        let graph = self.graph;
        let fn_count = self.reach.context.len();
        // A function reaching no API has no arm that matters, nor passes a slot to one that has.
        let live = self.reach.live(follow);
        let mut relevant: Vec<Vec<u32>> = vec![Vec::new(); fn_count];
        // Parameters passed on unchanged: (caller, its slot, callee, the callee's slot), read
        // in the same pass, then iterated to a fixpoint (each round adds a slot or ends).
        let mut passed: Vec<(FnId, u32, FnId, u32)> = Vec::new();
        for (f, b) in graph.fn_body.iter().enumerate() {
            let Some(b) = b else { continue };
            if !live[f] {
                continue;
            }
            for call in &graph.bodies[*b].calls {
                if let Some(guard) = &call.guard {
                    let reaches = call.effects.iter().any(|e| match e {
                        Effect::Api { .. } => true,
                        Effect::Edge { callee, .. } => !plain[*callee].is_empty(),
                    });
                    for c in guard.iter().filter(|_| reaches) {
                        if !relevant[f].contains(&c.slot) {
                            relevant[f].push(c.slot);
                        }
                    }
                }
                let Some(facts) = &call.facts else { continue };
                for e in &call.effects {
                    let Effect::Edge { callee, .. } = e else {
                        continue;
                    };
                    let has_self = self.index.fns[*callee].ir.sig.has_self;
                    for (slot, fact) in facts.by_callee_slot(has_self) {
                        if let Fact::Param(p) = fact {
                            passed.push((f, p, *callee, slot));
                        }
                    }
                }
            }
        }
        loop {
            let mut changed = false;
            for &(f, p, callee, slot) in &passed {
                if relevant[callee].contains(&slot) && !relevant[f].contains(&p) {
                    relevant[f].push(p);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for r in &mut relevant {
            r.sort_unstable();
        }
        relevant
    }

    /// Records `cand` in `f`'s summary when it is better than what is there and `f` is not cut
    /// for the API's rule.
    fn update(&self, s: &mut Summary, f: FnId, api: &ApiKey, cand: Witness) -> bool {
        match s.get(api) {
            Some(cur) if !cand.better_than(cur) => false,
            _ => {
                if self.fn_cut(f, api.rule) {
                    return false;
                }
                s.insert(api.clone(), cand);
                true
            }
        }
    }

    /// The best witness per (call position, API) of body `b`'s calls, without the cut ones.
    fn best_calls(
        &self,
        b: usize,
        summary: &Summaries,
        follow: Follow,
    ) -> BTreeMap<(Pos, ApiKey), Witness> {
        let body = &self.graph.bodies[b];
        let mut best: BTreeMap<(Pos, ApiKey), Witness> = BTreeMap::new();
        for call in &body.calls {
            for e in &call.effects {
                let cands: Vec<(ApiKey, Witness)> = match e {
                    Effect::Api { api, confidence } => vec![(
                        api.clone(),
                        Witness {
                            len: 1,
                            confidence: *confidence,
                            pos: call.pos,
                            next: Next::Api,
                            via: usize::MAX,
                        },
                    )],
                    Effect::Edge { callee, .. }
                        if follow == Follow::SyncCalls && self.reach.context[*callee] =>
                    {
                        Vec::new()
                    }
                    Effect::Edge {
                        callee,
                        confidence,
                        init,
                    } => {
                        let via = summary.callee_node(self.index, call, *callee, &[]);
                        summary.of[via]
                            .iter()
                            .map(|(api, w)| {
                                let cand = Witness {
                                    len: w.len + 1,
                                    confidence: (*confidence).min(w.confidence),
                                    pos: call.pos,
                                    next: Next::Fn(*callee),
                                    via,
                                };
                                let api = if *init { api.as_init() } else { api.clone() };
                                (api, cand)
                            })
                            .collect()
                    }
                };
                for (api, w) in cands {
                    if self.line_cut(body.owner, call.pos.line, api.rule)
                        || self.body_cut(b, api.rule)
                    {
                        continue;
                    }
                    let key = (call.pos, api);
                    match best.get(&key) {
                        Some(cur) if !w.better_than(cur) => {}
                        _ => {
                            best.insert(key, w);
                        }
                    }
                }
            }
        }
        best
    }

    /// One finding per (entry call, API) of every async context reachable from a root that is
    /// itself a root or reached by one.
    fn entries(&self) -> Vec<RawFinding> {
        let graph = self.graph;
        let summary = self.summaries(Follow::SyncCalls);
        let mut ancestors: BTreeMap<(usize, Option<usize>), Arc<[Ancestor]>> = BTreeMap::new();
        let mut out = Vec::new();
        for (bi, body) in graph.bodies.iter().enumerate() {
            if !self.reports(bi) {
                continue;
            }
            let kind = match body.root {
                Some(kind) => kind,
                None if body.kind == BodyKind::Fn
                    && self.reach.context[body.owner]
                    && self.reach.reachable[body.owner] =>
                {
                    match crate::graph::root_kind(self.index, body.owner, BodyKind::Fn) {
                        Some(kind) => kind,
                        None => continue,
                    }
                }
                None => continue,
            };
            for ((_, api), w) in self.best_calls(bi, &summary, Follow::SyncCalls) {
                // Without cuts, the ancestors are the same for every rule.
                let rule_key = self.cut_rules.contains(&api.rule).then_some(api.rule);
                let reached_from = ancestors
                    .entry((bi, rule_key))
                    .or_insert_with(|| self.ancestors(bi, api.rule).into())
                    .clone();
                // A context that is not a root exists in the report only through its roots.
                if body.root.is_none() && reached_from.is_empty() {
                    continue;
                }
                let steps = witness_path(body.owner, &w, &api, &summary);
                out.push(RawFinding {
                    body: bi,
                    root: kind,
                    api,
                    confidence: w.confidence,
                    steps,
                    reached_from,
                });
            }
        }
        out
    }

    /// The roots that reach body `b` through calls not cut for `rule`, each with the call that
    /// starts its shortest path (the smallest position among equally short ones), sorted.
    fn ancestors(&self, b: usize, rule: usize) -> Vec<Ancestor> {
        let graph = self.graph;
        let body = &graph.bodies[b];
        // Async blocks and closures are not called: they run where they are written.
        if body.kind != BodyKind::Fn {
            return Vec::new();
        }
        let mut marks = self.marks.borrow_mut();
        let marks = &mut *marks;
        marks.stamp += 1;
        let stamp = marks.stamp;
        let mut found: Vec<Ancestor> = Vec::new();
        marks.fn_seen[body.owner] = stamp;
        let mut frontier = vec![body.owner];
        while !frontier.is_empty() {
            let layer_start = found.len();
            let mut next = Vec::new();
            for &g in &frontier {
                for &(cb, pos) in &self.reach.callers[g] {
                    let caller = &graph.bodies[cb];
                    if self.line_cut(caller.owner, pos.line, rule) || self.body_cut(cb, rule) {
                        continue;
                    }
                    if caller.root.is_some() {
                        let (seen, slot) = marks.body_found[cb];
                        if seen != stamp {
                            marks.body_found[cb] = (stamp, found.len());
                            found.push(Ancestor { body: cb, pos });
                        } else if slot >= layer_start {
                            // Found again in the same layer: an equally short path.
                            found[slot].pos = found[slot].pos.min(pos);
                        }
                    }
                    if caller.kind == BodyKind::Fn && marks.fn_seen[caller.owner] != stamp {
                        marks.fn_seen[caller.owner] = stamp;
                        next.push(caller.owner);
                    }
                }
            }
            frontier = next;
        }
        found.sort_unstable();
        found
    }
}

/// Visit marks of [`Propagator::ancestors`], reused across searches: a search marks with a stamp
/// of its own instead of clearing (or allocating) a set the size of the graph. On a chain of
/// 2 000 awaited async fns, each over a blocking helper, every entry has up to 2 000 ancestors.
struct Marks {
    stamp: u32,
    /// Per function: the stamp of the last search that queued it.
    fn_seen: Vec<u32>,
    /// Per body: the stamp of the last search that found it as an ancestor, and where.
    body_found: Vec<(u32, usize)>,
}

/// Functions and bodies reachable from a root body. Only they need a summary: a function's
/// summary depends only on its callees, and everything a reachable function calls is reachable,
/// so restricting the fixpoint to them changes no finding. On a large graph with few async
/// contexts (gtk4 as the root: 37 000 functions, 3 async contexts) this is most of the
/// propagation time.
fn reachable_from_roots(graph: &CallGraph, fn_count: usize) -> (Vec<bool>, Vec<bool>) {
    let mut seen = vec![false; fn_count];
    let mut stack: Vec<usize> = (0..graph.bodies.len())
        .filter(|&b| graph.bodies[b].root.is_some())
        .collect();
    let mut visited_body = vec![false; graph.bodies.len()];
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut visited_body[b], true) {
            continue;
        }
        seen[graph.bodies[b].owner] = true;
        for call in &graph.bodies[b].calls {
            for e in &call.effects {
                if let Effect::Edge { callee, .. } = e {
                    if !seen[*callee] {
                        seen[*callee] = true;
                        if let Some(cb) = graph.fn_body[*callee] {
                            stack.push(cb);
                        }
                    }
                }
            }
        }
    }
    (seen, visited_body)
}

fn witness_path(root_fn: FnId, first: &Witness, api: &ApiKey, summary: &Summaries) -> Vec<RawStep> {
    let mut steps = vec![RawStep {
        function: root_fn,
        pos: first.pos,
        callee: first.next.clone(),
    }];
    let mut next = first.next.clone();
    let mut via = first.via;
    // Each witness's successor has a strictly shorter length, so this walk is bounded by `len`.
    for _ in 0..first.len {
        let Next::Fn(f) = next else { break };
        let node = &summary.of[via];
        // Past a one-time initialiser's edge the callee holds the API unmarked.
        let Some(w) = node.get(api).or_else(|| {
            api.init
                .then(|| {
                    node.get(&ApiKey {
                        init: false,
                        ..api.clone()
                    })
                })
                .flatten()
        }) else {
            break;
        };
        via = w.via;
        steps.push(RawStep {
            function: f,
            pos: w.pos,
            callee: w.next.clone(),
        });
        next = w.next.clone();
    }
    steps
}

#[cfg(test)]
mod tests {
    use crate::report::Finding;
    use crate::testutil::{analyze_files, scratch_workspace, sites};

    /// The functions the fixpoint summarises ([`super::Reach::live`]): those whose calls reach
    /// an API through sync calls, and no others, so skipping the rest loses nothing.
    #[test]
    fn only_functions_reaching_an_api_are_live() {
        let src = "fn leaf() { std::fs::read(\"x\"); }\n\
                   fn mid() { leaf(); }\n\
                   fn quiet() { let _ = 1 + 1; }\n\
                   fn calls_quiet() { quiet(); }\n\
                   fn recursive(n: u32) { if n > 0 { recursive(n - 1); } mid(); }\n\
                   pub async fn handler() { mid(); calls_quiet(); recursive(3); inner().await; }\n\
                   async fn inner() { leaf(); }\n";
        let (ws, _scratch) =
            scratch_workspace("live", src, crate::discover::SourceKind::Workspace, false);
        let load = crate::load::load_unit(&ws, 0);
        let index = crate::index::Index::build(&ws, vec![load.loaded]);
        let rules = crate::RuleDb::builtin();
        let roots = crate::roots::candidates(&ws, &index, &[]);
        let resolved = crate::resolve::resolve_reachable(&index, &rules, &roots);
        let graph = crate::graph::build(&ws, &index, &rules, &[], resolved.bodies);
        let reach = super::Reach::new(&graph, &index);
        let live_names = |follow: super::Follow| -> Vec<String> {
            let mut names: Vec<String> = reach
                .live_list(follow)
                .iter()
                .map(|&f| index.fns[f].ir.name.to_string())
                .collect();
            names.sort();
            names
        };
        // Async fns are contexts: summarised only when following every call.
        assert_eq!(
            live_names(super::Follow::SyncCalls),
            ["leaf", "mid", "recursive"]
        );
        assert_eq!(
            live_names(super::Follow::AllCalls),
            ["handler", "inner", "leaf", "mid", "recursive"]
        );
        for follow in [super::Follow::SyncCalls, super::Follow::AllCalls] {
            let live = reach.live(follow);
            assert_eq!(
                reach.live_list(follow),
                (0..live.len()).filter(|&f| live[f]).collect::<Vec<_>>()
            );
        }
    }

    fn callers(f: &Finding) -> Vec<(&str, u32)> {
        f.reached_from
            .iter()
            .map(|r| (r.function.as_str(), r.line))
            .collect()
    }

    /// kanidm's shape: the cache layer always hands `IdList::Partial` to the db layer, whose
    /// `get_identry` passes it on to `get_identry_raw`, which scans the whole table only in the
    /// `AllIds` arm (a `thread::sleep` here) and reads by id in the other (`std::fs::read`).
    /// The path must go through the arm the constant selects; a caller passing its own
    /// unknown value still reaches both arms, and a constant naming the blocking arm still
    /// reports it.
    const ARMS: &str = "pub enum IdList { AllIds, Partial(Vec<u64>), Indexed(Vec<u64>) }\n\
                        pub struct Db;\n\
                        impl Db {\n\
                        fn get_identry(&self, idl: &IdList) { self.get_identry_raw(idl); }\n\
                        fn get_identry_raw(&self, idl: &IdList) {\n\
                        match idl {\n\
                        IdList::AllIds => { std::thread::sleep(d()); }\n\
                        IdList::Partial(ids) | IdList::Indexed(ids) => { std::fs::read(\"x\"); }\n\
                        }\n\
                        }\n\
                        }\n\
                        fn d() -> std::time::Duration { todo!() }\n";

    #[test]
    fn a_constant_variant_argument_selects_the_match_arm_it_reaches() {
        let src = format!(
            "{ARMS}pub async fn cached(db: &Db, ids: Vec<u64>) {{\n db.get_identry(&IdList::Partial(ids));\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        // Only the Partial arm's API: the AllIds arm's sleep is not reached with Partial.
        assert_eq!(sites(&r), [(14, "NB0101".into())]);
        let last = r.findings[0].path.last().unwrap();
        assert_eq!((last.callee.as_str(), last.line), ("std::fs::read", 8));
    }

    #[test]
    fn an_unknown_or_blocking_variant_keeps_every_arm_it_may_take() {
        let src = format!(
            "{ARMS}pub async fn any(db: &Db, idl: IdList) {{\n db.get_identry(&idl);\n}}\n\
             pub async fn all(db: &Db) {{\n db.get_identry(&IdList::AllIds);\n}}\n\
             pub async fn let_bound(db: &Db) {{\n let idl = IdList::AllIds;\n Db::get_identry(db, &idl);\n}}\n"
        );
        let r = analyze_files(&[("src/lib.rs", &src)]);
        assert_eq!(
            sites(&r),
            [
                (14, "NB0101".into()),
                (14, "NB0201".into()),
                (17, "NB0201".into()),
                (21, "NB0101".into()),
                (21, "NB0201".into()),
            ]
        );
    }

    #[test]
    fn if_let_on_a_parameter_is_skipped_for_the_other_variant() {
        // deno's `preload_modules(.., resolver: None)`: `if let Some(r) = resolver { r.load() }`.
        let src = "pub struct R;\nimpl R { fn load(&self) { std::fs::read(\"m\"); } }\n\
                   fn preload(resolver: Option<&R>) { if let Some(r) = resolver { r.load(); } }\n\
                   pub async fn none() {\n preload(None);\n}\n\
                   pub async fn some(r: &R) {\n preload(Some(r));\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(8, "NB0101".into())]);
    }

    #[test]
    fn a_constant_bool_argument_selects_the_branch_of_a_flag_test() {
        // `open(path, create)`: `if create { create_dir_all }`; `if !quiet { .. } else { sleep }`.
        let src = "fn open(create: bool) { if create { std::fs::create_dir_all(\"d\"); } }\n\
                   fn wait(quiet: bool) { if !quiet { } else { std::thread::sleep(d()); } }\n\
                   fn d() -> std::time::Duration { todo!() }\n\
                   pub async fn read_only() {\n open(false);\n wait(false);\n}\n\
                   pub async fn creating(flag: bool) {\n open(true);\n wait(true);\n open(flag);\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(
            sites(&r),
            [
                (9, "NB0101".into()),
                (10, "NB0201".into()),
                (11, "NB0101".into()),
            ]
        );
    }

    #[test]
    fn recursion_terminates_and_reports_the_shortest_path_once() {
        let src = "fn even(n: u32) { if n > 0 { odd(n - 1) } else { std::fs::read(\"x\"); } }\n\
                   fn odd(n: u32) { even(n); odd(n); }\n\
                   fn rec(n: u32) { rec(n); std::thread::sleep(d()); }\n\
                   async fn a() {\n odd(3);\n rec(1);\n}\nfn d() -> std::time::Duration { todo!() }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(5, "NB0101".into()), (6, "NB0201".into())]);
        let names: Vec<&str> = r.findings[0]
            .path
            .iter()
            .map(|s| s.function.as_str())
            .collect();
        assert_eq!(names, ["app::a", "app::odd", "app::even"]);
        assert_eq!(r.findings[0].path.last().unwrap().callee, "std::fs::read");
    }

    #[test]
    fn a_chain_of_async_fns_is_one_finding_at_the_entry_with_its_callers() {
        let src = "fn helper() { std::fs::read(\"x\"); }\n\
                   pub async fn c() {\n helper();\n}\n\
                   pub async fn b() {\n c().await;\n}\n\
                   pub async fn a() {\n b().await;\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(3, "NB0101".into())]);
        let f = &r.findings[0];
        assert_eq!(
            (f.root.function.as_str(), f.root.kind.as_str()),
            ("app::c", "async fn")
        );
        assert_eq!(callers(f), [("app::b", 6), ("app::a", 9)]);
        assert_eq!(f.reached_from_count, 2);
        assert!(f.reached_from.iter().all(|c| c.kind == "async fn"));
    }

    #[test]
    fn each_sync_entry_of_an_async_fn_is_a_finding() {
        let src = "fn load() { std::fs::read(\"x\"); }\nfn reload() { load(); }\n\
                   pub async fn a() {\n load();\n reload();\n}\n\
                   pub async fn b() { a().await; }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(4, "NB0101".into()), (5, "NB0101".into())]);
        for f in &r.findings {
            assert_eq!(callers(f), [("app::b", 7)]);
        }
    }

    #[test]
    fn an_async_fn_awaiting_another_is_not_an_entry_but_its_own_sync_calls_are() {
        let src = "fn helper() { std::thread::sleep(d()); }\n\
                   pub async fn inner() { helper(); }\n\
                   pub async fn outer() {\n inner().await;\n helper();\n}\n\
                   fn d() -> std::time::Duration { todo!() }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(2, "NB0201".into()), (5, "NB0201".into())]);
        assert_eq!(callers(&r.findings[0]), [("app::outer", 4)]);
        assert!(r.findings[1].reached_from.is_empty());
    }

    #[test]
    fn a_recursive_async_fn_reaches_its_own_entry() {
        let src = "pub async fn countdown(n: u32) {\n\
                   std::thread::sleep(d());\n\
                   if n > 0 { Box::pin(countdown(n - 1)).await; }\n}\n\
                   fn d() -> std::time::Duration { todo!() }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(2, "NB0201".into())]);
        assert_eq!(callers(&r.findings[0]), [("app::countdown", 3)]);
    }

    #[test]
    fn async_blocks_are_contexts_of_their_own_and_nobody_calls_them() {
        let src = "fn helper() { std::fs::read(\"x\"); }\n\
                   pub async fn a() {\n let f = async {\n helper();\n };\n f.await;\n helper();\n}\n\
                   pub async fn b() { a().await; }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(4, "NB0101".into()), (7, "NB0101".into())]);
        assert_eq!(r.findings[0].root.function, "app::a::{async block}");
        assert!(r.findings[0].reached_from.is_empty());
        assert_eq!(callers(&r.findings[1]), [("app::b", 9)]);
    }

    #[test]
    fn ancestors_are_listed_once_with_the_call_of_their_shortest_path() {
        // `a` reaches `c` directly (line 5) and through `b` (line 4): the direct call is listed.
        let src = "fn helper() { std::fs::read(\"x\"); }\n\
                   pub async fn c() { helper(); }\n\
                   pub async fn b() { c().await; }\n\
                   pub async fn a() {\n b().await;\n c().await;\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(2, "NB0101".into())]);
        assert_eq!(callers(&r.findings[0]), [("app::b", 3), ("app::a", 6)]);
    }

    #[test]
    fn option_closures_run_only_on_the_side_the_caller_leaves_open() {
        // sentry's shape: `with_client` passes `Some(client)`, so `new_internal`'s
        // `unwrap_or_else` closure (which loads certificates) runs only for `new`'s `None`.
        let src = "pub struct Client;\n\
                   fn build() -> Client { std::fs::read(\"certs\").ok(); Client }\n\
                   fn new_internal(c: Option<Client>) -> Client { c.unwrap_or_else(|| build()) }\n\
                   pub fn with_client(c: Client) -> Client { new_internal(Some(c)) }\n\
                   pub fn fresh() -> Client { new_internal(None) }\n\
                   fn each(o: Option<u8>) { o.map(|_| std::thread::sleep(std::time::Duration::from_secs(1))); }\n\
                   pub async fn given(c: Client) { with_client(c); each(None); }\n\
                   pub async fn made() {\n fresh();\n each(Some(1));\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(9, "NB0101".into()), (10, "NB0201".into())]);
    }

    #[test]
    fn only_functions_reachable_from_roots_take_part() {
        let src = "fn used() { std::fs::read(\"x\"); }\nfn unused() { std::fs::read(\"y\"); }\n\
                   fn unused_caller() { unused(); }\nasync fn a() {\n used();\n}\n";
        assert_eq!(crate::testutil::lib_rs_sites(src), [(5, "NB0101".into())]);
    }
}

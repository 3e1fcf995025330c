//! Stage 5, *propagate*: each function's summary — the blocking APIs it may reach, each with its
//! best witness — computed to a fixpoint, then one finding per (root call site, API).
//!
//! "Best" is the order (path length, then confidence, then the first step's position and callee):
//! a total order, so the result does not depend on iteration order, and a strictly improving
//! update cannot repeat, so recursion and mutual recursion terminate. The worklist is a
//! `BTreeSet` popped in id order: the computation is sequential and deterministic.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use crate::graph::{ApiKey, CallGraph, Effect, RootKind};
use crate::index::FnId;
use crate::ir::Pos;
use crate::resolve::Confidence;

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

/// A path step for reporting: the function the call is written in, where, and what it calls.
#[derive(Clone, Debug)]
pub struct RawStep {
    pub function: FnId,
    pub pos: Pos,
    pub callee: Next,
}

#[derive(Clone, Debug)]
pub struct RawFinding {
    pub body: usize,
    pub root: RootKind,
    pub api: ApiKey,
    pub confidence: Confidence,
    /// `steps[0]` is the call in the root body; the last step's callee is the API.
    pub steps: Vec<RawStep>,
}

/// Functions reachable from a root body. Only they need a summary: a function's summary depends
/// only on its callees, and everything a reachable function calls is reachable, so restricting
/// the fixpoint to them changes no finding. On a large graph with few async contexts (gtk4 as
/// the root: 37 000 functions, 3 async contexts) this is most of the propagation time.
fn reachable_from_roots(graph: &CallGraph, fn_count: usize) -> Vec<bool> {
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
    seen
}

pub fn summaries(graph: &CallGraph, fn_count: usize) -> Vec<Summary> {
    let mut summary: Vec<Summary> = vec![BTreeMap::new(); fn_count];
    let reachable = reachable_from_roots(graph, fn_count);
    // Reverse edges of Fn bodies: callee → (caller, call position, edge confidence, whether the
    // edge is a one-time initialiser's).
    let mut callers: Vec<Vec<(FnId, Pos, Confidence, bool)>> = vec![Vec::new(); fn_count];
    let mut work = BTreeSet::new();
    for (f, body) in graph.fn_body.iter().enumerate() {
        let Some(b) = body else { continue };
        if !reachable[f] {
            continue;
        }
        for call in &graph.bodies[*b].calls {
            for e in &call.effects {
                match e {
                    Effect::Api { api, confidence } => {
                        let w = Witness {
                            len: 1,
                            confidence: *confidence,
                            pos: call.pos,
                            next: Next::Api,
                        };
                        update(&mut summary[f], api, w);
                        work.insert(f);
                    }
                    Effect::Edge {
                        callee,
                        confidence,
                        init,
                    } => callers[*callee].push((f, call.pos, *confidence, *init)),
                }
            }
        }
    }
    while let Some(g) = work.pop_first() {
        let entries: Vec<(ApiKey, Witness)> = summary[g]
            .iter()
            .map(|(k, w)| (k.clone(), w.clone()))
            .collect();
        for &(f, pos, conf, init) in &callers[g] {
            let mut changed = false;
            for (api, w) in &entries {
                let cand = Witness {
                    len: w.len + 1,
                    confidence: conf.min(w.confidence),
                    pos,
                    next: Next::Fn(g),
                };
                let api = if init { api.as_init() } else { api.clone() };
                changed |= update(&mut summary[f], &api, cand);
            }
            if changed {
                work.insert(f);
            }
        }
    }
    summary
}

fn update(s: &mut Summary, api: &ApiKey, cand: Witness) -> bool {
    match s.get(api) {
        Some(cur) if !cand.better_than(cur) => false,
        _ => {
            s.insert(api.clone(), cand);
            true
        }
    }
}

/// One finding per (root body, call site, API), with its best path.
pub fn findings(graph: &CallGraph, summary: &[Summary]) -> Vec<RawFinding> {
    let mut out = Vec::new();
    for (bi, body) in graph.bodies.iter().enumerate() {
        let Some(root) = body.root else { continue };
        let mut best: BTreeMap<(Pos, ApiKey), Witness> = BTreeMap::new();
        for call in &body.calls {
            for e in &call.effects {
                let cands: Vec<(ApiKey, Witness)> = match e {
                    Effect::Api { api, confidence } => {
                        vec![(
                            api.clone(),
                            Witness {
                                len: 1,
                                confidence: *confidence,
                                pos: call.pos,
                                next: Next::Api,
                            },
                        )]
                    }
                    Effect::Edge {
                        callee,
                        confidence,
                        init,
                    } => summary[*callee]
                        .iter()
                        .map(|(api, w)| {
                            let api = if *init { api.as_init() } else { api.clone() };
                            let cand = Witness {
                                len: w.len + 1,
                                confidence: confidence.min(&w.confidence).to_owned(),
                                pos: call.pos,
                                next: Next::Fn(*callee),
                            };
                            (api, cand)
                        })
                        .collect(),
                };
                for (api, w) in cands {
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
        for ((_, api), w) in best {
            let steps = witness_path(body.owner, &w, &api, summary);
            out.push(RawFinding {
                body: bi,
                root,
                api,
                confidence: w.confidence,
                steps,
            });
        }
    }
    out
}

fn witness_path(root_fn: FnId, first: &Witness, api: &ApiKey, summary: &[Summary]) -> Vec<RawStep> {
    let mut steps = vec![RawStep {
        function: root_fn,
        pos: first.pos,
        callee: first.next.clone(),
    }];
    let mut next = first.next.clone();
    // Each witness's successor has a strictly shorter length, so this walk is bounded by `len`.
    for _ in 0..first.len {
        let Next::Fn(f) = next else { break };
        // Past a one-time initialiser's edge the callee holds the API unmarked.
        let Some(w) = summary[f].get(api).or_else(|| {
            api.init
                .then(|| {
                    summary[f].get(&ApiKey {
                        init: false,
                        ..api.clone()
                    })
                })
                .flatten()
        }) else {
            break;
        };
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
    use crate::testutil::{analyze_files, sites};

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
    fn calls_into_async_fns_continue_and_each_root_reports() {
        let src =
            "async fn inner() { std::fs::read(\"x\"); }\nasync fn outer() { inner().await; }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(1, "NB0101".into()), (2, "NB0101".into())]);
    }

    #[test]
    fn only_functions_reachable_from_roots_get_summaries() {
        let src = "fn used() { std::fs::read(\"x\"); }\nfn unused() { std::fs::read(\"y\"); }\n\
                   fn unused_caller() { unused(); }\nasync fn a() {\n used();\n}\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(sites(&r), [(5, "NB0101".into())]);
        // The same through the stages, to look at the summaries themselves.
        let (ws, _scratch) = crate::testutil::scratch_workspace(
            "reachable",
            src,
            crate::discover::SourceKind::Workspace,
            false,
        );
        let load = crate::load::load_unit(&ws, 0);
        let index = crate::index::Index::build(&ws, vec![load.loaded]);
        let rules = crate::RuleDb::builtin();
        let roots = crate::roots::candidates(&ws, &index, &[]);
        let resolved = crate::resolve::resolve_reachable(&index, &rules, &roots);
        let graph = crate::graph::build(&ws, &index, &rules, &[], resolved.bodies);
        let summaries = super::summaries(&graph, index.fns.len());
        let with_summary: Vec<&str> = (0..index.fns.len())
            .filter(|&f| !summaries[f].is_empty())
            .map(|f| index.fns[f].ir.name.as_str())
            .collect();
        assert_eq!(with_summary, ["used", "a"]);
    }
}

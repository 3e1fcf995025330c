//! Part of stage 4, *graph*: the parameters a function stores in the value it returns.
//!
//! Combinators in analysed crates do not call the closure they are given: futures-util's
//! `StreamExt::for_each_concurrent(self, limit, f)` returns `ForEachConcurrent::new(self, limit,
//! f)`, a struct whose `poll` calls `f` later; `Map::new(stream, f)` the same. The closure's calls
//! run wherever that value is polled or iterated, which is, nearly always, the body that built it
//! (`stream.for_each_concurrent(4, |x| handle(x)).await`). Without this, such a closure's calls
//! had no caller at all: a blocking call inside was lost, and an async fn it returns looked like
//! an uncalled root.
//!
//! A parameter is *returned* when the function's tail expression (through blocks, `if`/`match`
//! arms, struct literals, tuples and arrays) names it, or passes it to a call whose target
//! returns that argument, to a fixpoint (`assert_future(ForEachConcurrent::new(self, limit,
//! f))`). `graph::runs_closure_arg` then treats a closure handed to such a parameter like one the
//! callee calls. Values only stored in a field of `self` or sent elsewhere are not followed.

use std::collections::{BTreeMap, BTreeSet};

use crate::index::Index;
use crate::ir::{IrBlock, IrExpr, IrStmt, Pos};
use crate::resolve::{Body, Target};

/// Fixpoint rounds: a chain of wrappers deeper than this is cut (each round follows one more
/// level of `a(b(c(f)))` across functions).
const MAX_ROUNDS: usize = 16;

/// For every function, the indices of the parameters (`self` excluded, as in
/// [`crate::resolve::CallSite::param_args`]) whose value flows into its return value.
pub(crate) fn returned_params(index: &Index, resolved: &[Vec<Body>]) -> Vec<BTreeSet<usize>> {
    let mut returned: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); resolved.len()];
    // Only functions with a parameter and a tail expression naming one can return one:
    // resolution kept those tails ([`Body::tail`]).
    let candidates: Vec<(usize, &IrExpr, CallTargets)> = resolved
        .iter()
        .enumerate()
        .filter_map(|(f, bodies)| {
            // An unresolved function (no root reaches it) has no body here.
            let body = crate::graph::fn_body_of(bodies)?;
            let tail = body.tail.as_deref()?;
            // The analysed functions each call position resolves to.
            let mut targets = CallTargets::new();
            for c in &body.calls {
                for t in &c.targets {
                    let callee = match t {
                        Target::Fn(g, _) => Callee::Fn(*g),
                        Target::External(p, _) if crate::graph::is_storing_constructor(p) => {
                            Callee::Stores
                        }
                        _ => continue,
                    };
                    targets.entry(c.pos).or_default().push(callee);
                }
            }
            Some((f, tail, targets))
        })
        .collect();
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for (f, tail, targets) in &candidates {
            let params = &index.fns[*f].ir.sig.params;
            let flow = Flow {
                params,
                targets,
                returned: &returned,
            };
            let mut found = BTreeSet::new();
            flow.expr(tail, &mut found);
            if !found.is_subset(&returned[*f]) {
                returned[*f].extend(found);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    returned
}

/// Whether the tail expression of a function's body names one of its parameters: only such a
/// function can return a parameter ([`returned_params`]). Computed at lowering
/// (`FnAttrs::tail_names_param`).
pub(crate) fn tail_names_param(
    body: &IrBlock,
    params: &[(Option<crate::ir::Name>, crate::ir::IrType)],
) -> bool {
    tail(body).is_some_and(|t| {
        t.any(&mut |e| {
            matches!(e, IrExpr::Path(p, _) if p.single().is_some_and(|n| {
                params.iter().any(|(name, _)| name.as_deref() == Some(n))
            }))
        })
    })
}

/// The value of a block: its last statement when that is an expression.
fn tail(b: &IrBlock) -> Option<&IrExpr> {
    match b.stmts.last()? {
        IrStmt::Expr(e) => Some(e),
        _ => None,
    }
}

/// The callees each call position of a body resolves to.
type CallTargets = BTreeMap<Pos, Vec<Callee>>;

/// What a call does with its arguments, as far as the flow into the return value goes.
enum Callee {
    /// An analysed function: returns the arguments `returned` lists for it.
    Fn(usize),
    /// A std constructor that keeps its argument (`Box::new`, `Arc::new`, `Box::pin`).
    Stores,
}

struct Flow<'a> {
    params: &'a [(Option<crate::ir::Name>, crate::ir::IrType)],
    targets: &'a CallTargets,
    returned: &'a [BTreeSet<usize>],
}

impl Flow<'_> {
    /// Adds to `out` the parameters whose value may be (part of) the value of `e`.
    fn expr(&self, e: &IrExpr, out: &mut BTreeSet<usize>) {
        match e {
            IrExpr::Path(p, _) => {
                if let Some(name) = p.single() {
                    if let Some(i) = self
                        .params
                        .iter()
                        .position(|(n, _)| n.as_deref() == Some(name))
                    {
                        out.insert(i);
                    }
                }
            }
            IrExpr::StructLit(_, fields) => {
                for (_, x) in fields {
                    self.expr(x, out);
                }
            }
            // A tuple struct or enum variant (`Some(f)`, `Wrapper(f)`) holds its arguments.
            IrExpr::Call { func, args, .. }
                if matches!(&**func, IrExpr::Path(p, _)
                    if p.segments.last().is_some_and(|s| s.name.starts_with(char::is_uppercase))) =>
            {
                for a in args {
                    self.expr(a, out);
                }
            }
            IrExpr::Call { args, pos, .. } | IrExpr::MethodCall { args, pos, .. } => {
                let Some(callees) = self.targets.get(pos) else {
                    return;
                };
                for (i, a) in args.iter().enumerate() {
                    let kept = callees.iter().any(|c| match c {
                        Callee::Fn(g) => self.returned[*g].contains(&i),
                        Callee::Stores => true,
                    });
                    if kept {
                        self.expr(a, out);
                    }
                }
            }
            IrExpr::Block(b) => {
                if let Some(t) = tail(b) {
                    self.expr(t, out);
                }
            }
            IrExpr::If {
                then, otherwise, ..
            } => {
                if let Some(t) = tail(then) {
                    self.expr(t, out);
                }
                if let Some(o) = otherwise {
                    self.expr(o, out);
                }
            }
            IrExpr::Match { arms, .. } => {
                for (_, arm) in arms {
                    self.expr(arm, out);
                }
            }
            // Tuples, arrays and other composite values lower to `Other`.
            IrExpr::Other(children)
            | IrExpr::Tuple(children)
            | IrExpr::Array(children)
            | IrExpr::Index {
                exprs: children, ..
            }
            | IrExpr::Arith(children) => {
                for c in children {
                    self.expr(c, out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::analyze_files;

    /// A combinator in analysed source that returns its closure inside a struct (futures-util's
    /// `for_each_concurrent` → `assert_future(ForEachConcurrent::new(self, limit, f))`): the
    /// closure's calls run where the value is polled, so the blocking call inside is reported at
    /// the async caller. A closure only registered for later (`Registry::on`) is not.
    #[test]
    fn closures_returned_inside_a_combinator_run_where_it_is_polled() {
        let src = "pub struct ForEach<S, F> { s: S, f: F }\n\
                   impl<S, F> ForEach<S, F> { fn new(s: S, f: F) -> Self { ForEach { s, f } } }\n\
                   fn assert_future<F>(fut: F) -> F { fut }\n\
                   pub fn for_each<S, F: FnMut(u32)>(s: S, f: F) -> ForEach<S, F> {\n\
                   assert_future(ForEach::new(s, f))\n\
                   }\n\
                   pub fn pick<F: FnMut(u32)>(fast: bool, f: F) -> Option<F> { if fast { None } else { Some(f) } }\n\
                   pub struct Registry { handlers: Vec<Box<dyn FnMut(u32)>> }\n\
                   impl Registry { pub fn on(&mut self, f: Box<dyn FnMut(u32)>) { self.handlers.push(f); } }\n\
                   pub async fn handler(reg: &mut Registry) {\n\
                   for_each(0u32, |_x| { std::fs::read(\"a\"); });\n\
                   reg.on(Box::new(|_x| { std::fs::read(\"b\"); }));\n\
                   pick(false, |_x| { std::thread::sleep(std::time::Duration::ZERO); });\n\
                   }\n";
        let r = analyze_files(&[("src/lib.rs", src)]);
        let mut sites: Vec<(u32, &str)> = r
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.rule.as_str()))
            .collect();
        sites.sort();
        assert_eq!(sites, [(11, "NB0101"), (13, "NB0201")]);
    }
}

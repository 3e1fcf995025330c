//! Value facts that decide which arm of a `match` a call takes: a constant enum variant handed
//! as an argument, and the arms whose calls need the matched parameter to be some variant.
//!
//! Why: a helper that matches on its parameter and blocks in one arm only is reported from
//! every caller, also from callers that always pass another variant. kanidm's entry cache calls
//! `db.get_identry(&IdList::Partial(ids))`, whose `get_identry_raw` scans the whole table only
//! in the `IdList::AllIds` arm: without these facts, every finding through the cache named that
//! dead arm (scripts/apps/review-s9-added.toml). Resolution records the facts on call sites
//! (`resolve`), the graph keeps them on effective calls, and propagation summarises a function
//! once more per *context* (a set of parameters fixed to a variant) where a caller fixes one
//! ([`crate::propagate`]).
//!
//! What counts as a variant: a path whose last segment is UpperCamelCase (`IdList::AllIds`,
//! `Mode::Fast(..)`, `Kind::A { .. }`, `None`). SCREAMING_CASE paths are constants whose value is
//! not known here, so they are never facts: `f(DOMAIN_TGT_LEVEL)` against arms `DOMAIN_LEVEL_14`
//! and `DOMAIN_LEVEL_1_11` must keep both arms. Variants are compared by name: the arms of one
//! `match` name variants of one enum.
//!
//! Soundness: a fact only removes calls written in an arm that cannot match it; a pattern that
//! is not a list of variants (a binding, `_`, a literal, a guard-less wildcard) constrains
//! nothing. A parameter reassigned before the `match` (`x = Kind::A;`) is not tracked (the IR
//! keeps no assignments); such code is rare and would only hide that arm's calls for callers
//! that pass a constant.

use std::sync::Arc;

use crate::ir::{IrExpr, Name};

/// The slot of the receiver (`self`) of a method; other parameters are numbered from 0 in
/// declaration order, `self` excluded (as [`crate::ir::IrSig::params`]).
pub const SELF_SLOT: u32 = u32::MAX;

/// A call's arm condition: the enclosing function's parameter `slot` is one of `any_of`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Cond {
    pub slot: u32,
    pub any_of: Arc<[Name]>,
}

/// What a call's argument is known to be.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Fact {
    /// A constant enum variant (its name).
    Variant(Name),
    /// The calling function's own parameter, unchanged: a fact the caller has about it flows on.
    Param(u32),
}

/// The facts about one call's arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArgFacts {
    /// Written as a method call (`recv.m(a)`): `receiver` is the callee's `self`, `args[i]` its
    /// parameter `i`. Otherwise (`T::m(a, b)`, `f(a)`) the arguments are the callee's parameters
    /// in order, `self` first when the callee has one.
    pub method_syntax: bool,
    pub receiver: Option<Fact>,
    /// (argument index, fact), the receiver not counted.
    pub args: Vec<(u32, Fact)>,
}

impl ArgFacts {
    pub fn is_empty(&self) -> bool {
        self.receiver.is_none() && self.args.is_empty()
    }

    /// The facts in the callee's slots: (callee slot, fact).
    pub fn by_callee_slot(&self, callee_has_self: bool) -> Vec<(u32, Fact)> {
        let mut out = Vec::new();
        if self.method_syntax {
            if let Some(r) = self.receiver {
                out.push((SELF_SLOT, r));
            }
            out.extend(self.args.iter().copied());
        } else {
            for &(i, f) in &self.args {
                match (callee_has_self, i) {
                    (true, 0) => out.push((SELF_SLOT, f)),
                    (true, i) => out.push((i - 1, f)),
                    (false, i) => out.push((i, f)),
                }
            }
        }
        out
    }
}

/// A set of parameters fixed to a variant, sorted by slot: the context a function is summarised
/// in when a caller fixes them.
pub type Ctx = Vec<(u32, Name)>;

/// The context a call's callee runs in, given the caller's own context: constant arguments, and
/// the caller's parameters passed on unchanged. Only slots in `relevant` (the callee's
/// parameters some arm condition depends on, directly or further down) are kept, so a constant
/// nobody matches on creates no context.
pub fn callee_ctx(
    facts: &ArgFacts,
    callee_has_self: bool,
    caller_ctx: &[(u32, Name)],
    relevant: &[u32],
) -> Ctx {
    let mut ctx: Ctx = facts
        .by_callee_slot(callee_has_self)
        .into_iter()
        .filter(|(slot, _)| relevant.contains(slot))
        .filter_map(|(slot, fact)| match fact {
            Fact::Variant(v) => Some((slot, v)),
            Fact::Param(p) => caller_ctx
                .iter()
                .find(|(s, _)| *s == p)
                .map(|&(_, v)| (slot, v)),
        })
        .collect();
    ctx.sort();
    ctx.dedup_by_key(|(s, _)| *s);
    ctx
}

/// Whether a call guarded by `guard` cannot run in context `ctx`: some condition's parameter is
/// fixed to a variant outside the condition's arm.
pub fn excluded(guard: &[Cond], ctx: &[(u32, Name)]) -> bool {
    guard.iter().any(|c| {
        ctx.iter()
            .any(|(slot, v)| *slot == c.slot && !c.any_of.contains(v))
    })
}

/// Whether a path's last segment names an enum variant (or a unit/tuple struct) by Rust's
/// naming convention: UpperCamelCase, i.e. an uppercase first letter and some lowercase letter.
/// `DOMAIN_LEVEL_14` (a constant) is not; neither is `X` (a single uppercase letter reads as a
/// constant or a generic parameter as often as a variant).
pub fn is_variant_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.any(|c| c.is_ascii_lowercase())
}

/// The variant an argument expression is, when it is written as one: `Kind::A`, `&Kind::A`,
/// `IdList::Partial(ids)`, `Kind::B { .. }`, `None`.
pub fn variant_of(e: &IrExpr) -> Option<Name> {
    match e {
        IrExpr::Ref(inner) => variant_of(inner),
        IrExpr::Path(p, _) if p.qself.is_none() => {
            let last = p.segments.last()?.name;
            (is_variant_name(&last) || p.segments.len() == 1 && is_bool(&last)).then_some(last)
        }
        IrExpr::Call { func, .. } => match &**func {
            IrExpr::Path(p, _) if p.qself.is_none() => {
                let last = p.segments.last()?.name;
                (is_variant_name(&last) && p.segments.len() >= 2 || is_std_variant(&last))
                    .then_some(last)
            }
            _ => None,
        },
        IrExpr::StructLit(p, _) => {
            let last = p.segments.last()?.name;
            is_variant_name(&last).then_some(last)
        }
        _ => None,
    }
}

/// `true` and `false` are facts like variants (`open(path, false)` against `if create { .. }`),
/// named by their text: the lowering keeps bool literals as these one-segment paths.
/// The fact "this argument is an IP address with a port" (an `IP:port` literal, a `SocketAddr`,
/// an `(IpAddr, port)` tuple), as a variant no source name can spell. A dns-only API called on a
/// parameter (`addrs.to_socket_addrs()` inside actix's `HttpServer::bind<A: ToSocketAddrs>`) is
/// guarded by [`host_name_variant`], so a caller passing an address excludes it, as a constant
/// variant excludes a `match` arm: lemmy's `.bind((SETTINGS.bind, SETTINGS.port))` resolves no
/// name.
pub fn ip_address_variant() -> Name {
    crate::ir::name("{ip address}")
}

/// The arm a dns-only call is written in: its address is something other than an IP address.
pub fn host_name_variant() -> Name {
    crate::ir::name("{host name}")
}

pub fn bool_name(value: bool) -> Name {
    crate::ir::name(if value { "true" } else { "false" })
}

/// The prelude's variants, written without their enum: `Some(x)`, `Ok(x)`, `Err(e)`. A
/// single-segment call of another UpperCamel name may be a tuple struct's constructor, which is
/// just as good a fact, but is kept out until a real case asks for it.
fn is_bool(name: &str) -> bool {
    matches!(name, "true" | "false")
}

fn is_std_variant(name: &str) -> bool {
    matches!(name, "Some" | "Ok" | "Err")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::name;

    fn cond(slot: u32, any_of: &[&str]) -> Cond {
        Cond {
            slot,
            any_of: any_of.iter().map(|s| name(s)).collect(),
        }
    }

    #[test]
    fn variant_names_follow_the_naming_convention() {
        assert!(is_variant_name("AllIds"));
        assert!(is_variant_name("None"));
        assert!(!is_variant_name("DOMAIN_LEVEL_14"));
        assert!(!is_variant_name("X"));
        assert!(!is_variant_name("new"));
    }

    #[test]
    fn a_call_outside_the_fixed_variants_arm_is_excluded() {
        let g = [cond(1, &["AllIds"])];
        assert!(excluded(&g, &[(1, name("Partial"))]));
        assert!(!excluded(&g, &[(1, name("AllIds"))]));
        // Another parameter fixed, or nothing fixed: the call may run.
        assert!(!excluded(&g, &[(0, name("Partial"))]));
        assert!(!excluded(&g, &[]));
    }

    #[test]
    fn callee_contexts_take_constants_and_pass_fixed_parameters_on() {
        // `self.get_identry_raw(idl)`: the caller's slot 0 flows to the callee's slot 0.
        let passed = ArgFacts {
            method_syntax: true,
            receiver: Some(Fact::Param(SELF_SLOT)),
            args: vec![(0, Fact::Param(0))],
        };
        let ctx = callee_ctx(&passed, true, &[(0, name("Partial"))], &[0]);
        assert_eq!(ctx, vec![(0, name("Partial"))]);
        // A slot no arm depends on makes no context.
        assert!(callee_ctx(&passed, true, &[(0, name("Partial"))], &[]).is_empty());
        // `Db::get(&db, Kind::A)`: path syntax, the callee has `self`: argument 1 is slot 0.
        let path_call = ArgFacts {
            method_syntax: false,
            receiver: None,
            args: vec![(1, Fact::Variant(name("A")))],
        };
        assert_eq!(
            callee_ctx(&path_call, true, &[], &[0]),
            vec![(0, name("A"))]
        );
        assert_eq!(
            callee_ctx(&path_call, false, &[], &[1]),
            vec![(1, name("A"))]
        );
    }
}

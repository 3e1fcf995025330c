//! A small unification core for the types the resolver sees (`ty::Ty`): binds generic
//! parameters by matching a declared type against a known one, and substitutes the bindings.
//!
//! Why: a call's result type decides how the next call in a chain resolves, and most result
//! types of real code mention generics. `impl<T> Wrapper<T> { fn get(&self) -> &T }` called on a
//! `Wrapper<File>` yields `&File`; a blanket impl's `Self` (`impl<D: Update> Digest for D {
//! fn new() -> Self }`) is the receiver itself; `fn first<T>(v: Vec<T>) -> T` called with a
//! `Vec<Conn>` yields `Conn`. Matching is one-sided (only the declared side has parameters),
//! first binding wins (unless it names a parameter and a later one does not), and an unknown
//! type binds nothing, so the result never invents a type.

use std::collections::BTreeMap;

use crate::ty::{Ty, TyCon};

/// Generic parameter name → the type bound to it.
pub type Subst = BTreeMap<String, Ty>;

/// Binds the parameters of `declared` by matching it against `actual`. Mismatched shapes bind
/// nothing (a reference on one side only is looked through: auto-ref and auto-deref).
pub fn unify(declared: &Ty, actual: &Ty, subst: &mut Subst) {
    match (declared, actual) {
        (_, Ty::Unknown) => {}
        // A parameter matched against itself (a generic body calling its own generics).
        (Ty::Param { name, .. }, Ty::Param { name: n, .. }) if n == name => {}
        (Ty::Param { name, .. }, _) => match subst.get_mut(name) {
            None => {
                subst.insert(name.clone(), actual.clone());
            }
            // A binding that still names a parameter (of another body: an unresolved
            // `make::<T>()` argument) gives way to a later argument's concrete type (deno's
            // `LibMainWorkerFactory::new(.., node_resolver, .., sys)` binds `TSys` by `sys`).
            Some(bound) if has_param(bound) && !has_param(actual) => *bound = actual.clone(),
            Some(_) => {}
        },
        (Ty::Ref(d), Ty::Ref(a)) => unify(d, a, subst),
        (Ty::Ref(d), a) => unify(d, a, subst),
        (d, Ty::Ref(a)) => unify(d, a, subst),
        (Ty::Adt(dc, dargs), Ty::Adt(ac, aargs)) if same_constructor(dc, ac) => {
            for (d, a) in dargs.iter().zip(aargs) {
                unify(d, a, subst);
            }
        }
        (Ty::Tuple(ds), Ty::Tuple(as_)) if ds.len() == as_.len() => {
            for (d, a) in ds.iter().zip(as_) {
                unify(d, a, subst);
            }
        }
        (Ty::Slice(d), Ty::Slice(a)) => unify(d, a, subst),
        _ => {}
    }
}

fn same_constructor(a: &TyCon, b: &TyCon) -> bool {
    a == b
}

/// `t` with every bound parameter replaced by its binding.
pub fn apply(t: &Ty, subst: &Subst) -> Ty {
    if subst.is_empty() {
        return t.clone();
    }
    match t {
        Ty::Param { name, .. } => subst.get(name).cloned().unwrap_or_else(|| t.clone()),
        Ty::Adt(c, args) => Ty::Adt(c.clone(), args.iter().map(|a| apply(a, subst)).collect()),
        Ty::Ref(inner) => Ty::Ref(Box::new(apply(inner, subst))),
        Ty::Slice(inner) => Ty::Slice(Box::new(apply(inner, subst))),
        Ty::Tuple(elems) => Ty::Tuple(elems.iter().map(|e| apply(e, subst)).collect()),
        Ty::Dyn(_) | Ty::Str | Ty::Unknown => t.clone(),
    }
}

/// Whether a generic parameter is left in `t`: such a type says nothing a call can use, and
/// the resolver treats it as unknown rather than dispatching on a parameter of another body.
pub fn has_param(t: &Ty) -> bool {
    match t {
        Ty::Param { .. } => true,
        Ty::Adt(_, args) => args.iter().any(has_param),
        Ty::Ref(inner) | Ty::Slice(inner) => has_param(inner),
        Ty::Tuple(elems) => elems.iter().any(has_param),
        Ty::Dyn(_) | Ty::Str | Ty::Unknown => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(n: &str) -> Ty {
        Ty::Param {
            name: n.into(),
            bounds: Vec::new(),
            bound_args: Vec::new(),
        }
    }

    #[test]
    fn binds_through_constructors_refs_and_tuples() {
        let file = Ty::external("std::fs::File", vec![]);
        let wrapper = |t: Ty| Ty::Adt(TyCon::Local(3), vec![t]);
        let mut s = Subst::new();
        unify(
            &wrapper(param("T")),
            &Ty::Ref(Box::new(wrapper(file.clone()))),
            &mut s,
        );
        assert_eq!(s.get("T"), Some(&file));
        assert_eq!(
            apply(&Ty::Ref(Box::new(param("T"))), &s),
            Ty::Ref(Box::new(file.clone()))
        );
        let mut s = Subst::new();
        unify(
            &Ty::Tuple(vec![param("A"), param("B")]),
            &Ty::Tuple(vec![Ty::Str, file.clone()]),
            &mut s,
        );
        assert_eq!((s.get("A"), s.get("B")), (Some(&Ty::Str), Some(&file)));
    }

    #[test]
    fn mismatches_and_unknowns_bind_nothing_and_first_binding_wins() {
        let mut s = Subst::new();
        unify(
            &Ty::Adt(TyCon::Local(1), vec![param("T")]),
            &Ty::Adt(TyCon::Local(2), vec![Ty::Str]),
            &mut s,
        );
        unify(&param("U"), &Ty::Unknown, &mut s);
        assert!(s.is_empty());
        unify(&param("T"), &Ty::Str, &mut s);
        unify(&param("T"), &Ty::external("std::fs::File", vec![]), &mut s);
        assert_eq!(s.get("T"), Some(&Ty::Str));
        assert!(has_param(&Ty::Ref(Box::new(param("X")))));
        assert!(!has_param(&apply(&param("T"), &s)));
    }

    #[test]
    fn a_binding_naming_a_parameter_gives_way_to_a_concrete_one() {
        // `Factory::new(make_wrap(), sys)`: the first argument's type names `make_wrap`'s own
        // unresolved `T`; the second binds `TSys` to a type.
        let wrap = |t: Ty| Ty::Adt(TyCon::Local(1), vec![t]);
        let sys = Ty::Adt(TyCon::Local(2), vec![]);
        let mut s = Subst::new();
        unify(&wrap(param("TSys")), &wrap(param("T")), &mut s);
        assert_eq!(s.get("TSys"), Some(&param("T")));
        unify(&param("TSys"), &sys, &mut s);
        assert_eq!(s.get("TSys"), Some(&sys));
        // A concrete binding stays.
        unify(&param("TSys"), &param("U"), &mut s);
        assert_eq!(s.get("TSys"), Some(&sys));
    }
}

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

/// What an expression's context says its type must be (checked mode of bidirectional typing):
/// a `let` annotation, the fn's return type at its tail, a struct literal field's type, the
/// payload under `Ok(..)`/`Some(..)` (`Is`); or the payload of the `Result`/`Option` the
/// expression must be, under `?`, `.unwrap()`, `.map_err(..)` or a `match` whose arm `Ok(v) =>
/// v` is its value (`Payload`).
///
/// Why: a generic parameter named only by the callee's return type is bound by nothing else.
/// tokio-postgres' `Row::get<I, T>(&self, idx: I) -> T` dispatches `T::from_sql` to every
/// `FromSql` impl of the graph unless `let id: Uuid = row.get("id")` binds `T`; chrono's
/// `DateTime<Local>` impl then reads the system time zone from disk on every `row.get`.
/// Synthesis stays the resolver's main mode: an expectation only binds parameters a call's
/// receiver and arguments left unbound, it never overrides a type they give.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    Is(Ty),
    Payload(Ty),
}

impl Expected {
    /// The expectation of a type the context names, when it says something.
    pub fn is(t: Ty) -> Option<Expected> {
        (!t.is_unknown() && !has_param(&t)).then_some(Expected::Is(t))
    }

    /// Binds the parameters of `declared` (a callee's return type) from the expectation.
    pub fn unify_return(&self, declared: &Ty, subst: &mut Subst) {
        match self {
            Expected::Is(t) => unify(declared, t, subst),
            Expected::Payload(t) => {
                if let Some(payload) = result_payload(declared) {
                    unify(payload, t, subst);
                }
            }
        }
    }

    /// The expectation on `e` in `e?` / `e.unwrap()` / a `match e` whose arm yields the payload.
    pub fn payload_of(&self) -> Option<Expected> {
        match self {
            Expected::Is(t) => Some(Expected::Payload(t.clone())),
            Expected::Payload(_) => None,
        }
    }

    /// The expectation on `e` in `e.map_err(..)` (and other calls that keep the payload).
    pub fn same_payload(&self) -> Option<Expected> {
        match self {
            Expected::Is(t) => result_payload(t).map(|p| Expected::Payload(p.clone())),
            Expected::Payload(t) => Some(Expected::Payload(t.clone())),
        }
    }

    /// The expectation on `e` in `Ok(e)` / `Some(e)`.
    pub fn inside(&self) -> Option<Expected> {
        match self {
            Expected::Is(t) => result_payload(t).and_then(|p| Expected::is(p.clone())),
            Expected::Payload(_) => None,
        }
    }
}

/// `T` of `Result<T, E>`, `Option<T>` and `Result` aliases of other crates.
fn result_payload(t: &Ty) -> Option<&Ty> {
    match t {
        Ty::Adt(TyCon::External(p), args) if crate::ty::is_option_or_result(p) => args.first(),
        _ => None,
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

    #[test]
    fn expectations_bind_return_types_and_follow_payloads() {
        let uuid = Ty::Adt(TyCon::Local(3), vec![]);
        let err = Ty::Adt(TyCon::Local(4), vec![]);
        let result = |t: Ty| Ty::external("std::result::Result", vec![t, err.clone()]);
        // `let id: Uuid = row.get(0)` with `fn get<T>(..) -> T`.
        let mut s = Subst::new();
        Expected::Is(uuid.clone()).unify_return(&param("T"), &mut s);
        assert_eq!(s.get("T"), Some(&uuid));
        // `let id: Uuid = row.try_get(0)?` with `fn try_get<T>(..) -> Result<T, Error>`.
        let under_try = Expected::Is(uuid.clone()).payload_of().expect("a payload");
        let mut s = Subst::new();
        under_try.unify_return(&result(param("T")), &mut s);
        assert_eq!(s.get("T"), Some(&uuid));
        // A payload expectation says nothing of a return type that is no Result/Option.
        let mut s = Subst::new();
        under_try.unify_return(&param("T"), &mut s);
        assert!(s.is_empty());
        // `?` under `?` and `Ok(..)` under a payload: not followed.
        assert_eq!(under_try.payload_of(), None);
        assert_eq!(under_try.inside(), None);
        // `Ok(row.get(0))` where a `Result<Uuid, Error>` is expected; `x.map_err(f)` keeps it.
        let is_result = Expected::Is(result(uuid.clone()));
        assert_eq!(is_result.inside(), Some(Expected::Is(uuid.clone())));
        assert_eq!(
            is_result.same_payload(),
            Some(Expected::Payload(uuid.clone()))
        );
        // Unknown or generic types expect nothing.
        assert_eq!(Expected::is(Ty::Unknown), None);
        assert_eq!(Expected::is(result(param("T"))), None);
    }
}

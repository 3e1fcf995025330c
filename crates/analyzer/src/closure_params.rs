//! Closure parameters typed from the callee's `Fn*` bound: `self.slot(id, |slot| slot.source())`
//! with `fn slot<F, T>(&self, id: FileId, f: F) -> T where F: FnOnce(&mut FileSlot) -> T` binds
//! `slot: &mut FileSlot`, as rustc's closure signature deduction does from the expected type.
//! The bound is read from the callee's own generics (inline or `where`) or from an `impl FnOnce(..)`
//! parameter; its inputs are lowered as one tuple argument (`FnOnce<(&mut FileSlot,)>`, see
//! `lower::lower_path`).

use crate::ir::{IrGeneric, IrPath, IrSig, IrType};

/// The written input types of the `Fn`/`FnMut`/`FnOnce` bound of parameter `param` (not counting
/// `self`) of a fn with signature `sig`; `extra` holds the enclosing impl's generics. `None` when
/// the parameter is not a closure-typed generic or `impl Fn*`.
pub fn bound_inputs<'a>(
    sig: &'a IrSig,
    extra: &'a [IrGeneric],
    param: usize,
) -> Option<&'a [IrType]> {
    let (_, ty) = sig.params.get(param)?;
    match ty {
        IrType::ImplTrait(bounds) => bounds.iter().find_map(fn_inputs),
        IrType::Path(p) => {
            let name = p.single()?;
            // The fn's own generics shadow the impl's.
            let g = sig.generics.iter().chain(extra).find(|g| g.name == name)?;
            g.bounds.iter().find_map(fn_inputs)
        }
        _ => None,
    }
}

fn fn_inputs(bound: &IrPath) -> Option<&[IrType]> {
    let last = bound.segments.last()?;
    if !matches!(last.name.as_str(), "Fn" | "FnMut" | "FnOnce") {
        return None;
    }
    match last.generics.as_slice() {
        [IrType::Tuple(inputs)] => Some(inputs),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig_of(src: &str) -> (IrSig, Vec<IrGeneric>) {
        let file = syn::parse_file(src).unwrap();
        let cfg = crate::cfg::CfgSet::default();
        let mut macros = crate::lower::ItemMacros::default();
        let mut m = crate::ir::IrModule::default();
        crate::lower::Lowerer::new(&cfg, "demo", &mut macros).lower_items(file.items, &mut m);
        (m.fns[0].sig.clone(), Vec::new())
    }

    fn names(inputs: Option<&[IrType]>) -> Vec<String> {
        inputs
            .unwrap_or_default()
            .iter()
            .map(|t| match t {
                IrType::Ref(inner) => match &**inner {
                    IrType::Path(p) => format!("&{}", p.names().join("::")),
                    _ => "&?".into(),
                },
                IrType::Path(p) => p.names().join("::"),
                _ => "?".into(),
            })
            .collect()
    }

    #[test]
    fn fn_bounds_inline_in_where_clauses_and_impl_trait_give_the_closure_inputs() {
        let (s, e) = sig_of(
            "fn slot<F, T>(id: u32, f: F) -> T where F: FnOnce(&mut FileSlot) -> T { f(todo!()) }",
        );
        assert_eq!(names(bound_inputs(&s, &e, 1)), ["&FileSlot"]);
        // `id` is no closure.
        assert!(bound_inputs(&s, &e, 0).is_none());
        let (s, e) = sig_of("fn each<F: FnMut(a::Key, Value) + Send>(f: F) {}");
        assert_eq!(names(bound_inputs(&s, &e, 0)), ["a::Key", "Value"]);
        let (s, e) = sig_of("fn run(f: impl Fn(&Conn) -> u8) {}");
        assert_eq!(names(bound_inputs(&s, &e, 0)), ["&Conn"]);
    }

    #[test]
    fn other_bounds_and_types_give_nothing() {
        // A non-Fn trait with parenthesis-free generics, a plain type, a fn pointer.
        let (s, e) = sig_of("fn a<F: Into<String>>(f: F, g: Vec<u8>, h: fn(u8)) {}");
        assert!(bound_inputs(&s, &e, 0).is_none());
        assert!(bound_inputs(&s, &e, 1).is_none());
        assert!(bound_inputs(&s, &e, 2).is_none());
        // A parameter named like a generic of another fn is not bound here.
        let (s, e) = sig_of("fn b(f: F) {}");
        assert!(bound_inputs(&s, &e, 0).is_none());
    }
}

//! Part of stage 3b, *resolve*: the fn items a struct's constructors store in a field, for calls
//! of that field through a value of the struct (`(self.on_event)(e)`).
//!
//! A callback kept in a field is set where the struct is built and called elsewhere:
//!
//! ```ignore
//! impl Store {
//!     pub fn new() -> Self { Store { persist: write_to_disk } }
//!     pub fn save(&self, v: &[u8]) { (self.persist)(v) }
//! }
//! ```
//!
//! The walker sees the literal and the call in different bodies, so it cannot carry the value
//! from one to the other (a literal bound to a local in the same body is:
//! `Local::field_fn_items`). Instead, the first call through `Store::persist` collects, once per
//! (type, field), the fn items written as that field's value in the struct literals of the
//! bodies that build such values by convention: the type's inherent and trait-impl methods and
//! the free functions of its module. Flow-insensitive (every constructor's value counts, as a
//! trait call dispatches to every impl) and read from the IR only, so the answer does not depend
//! on which bodies were resolved first: the resolved set stays independent of the thread count.
//! A value that is not a fn item (a parameter passed to `new`, a closure) is not followed: such a
//! call stays unresolved (`fn_pointer`).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use crate::index::{FnId, FnOwner, Index, Res, TypeId};
use crate::ir::{FnBody, IrExpr};
use crate::ty::{Ty, TyCon};

/// Bodies searched per type at most: a type with a huge impl (generated code) is not worth
/// decoding every method of for one field.
const MAX_BODIES: usize = 256;

/// (struct, field) → the fn items stored there.
type Memo = Mutex<HashMap<(TypeId, String), Arc<Vec<FnId>>>>;

/// The memo, shared by the walkers of one resolution.
#[derive(Debug, Default)]
pub(crate) struct FieldFns {
    memo: Memo,
}

impl FieldFns {
    /// The fn items stored in field `field` of struct `tid` by its constructors, sorted.
    pub(crate) fn get(&self, index: &Index, tid: TypeId, field: &str) -> Arc<Vec<FnId>> {
        let key = (tid, field.to_string());
        if let Some(found) = self.memo.lock().expect("field fns lock").get(&key) {
            return found.clone();
        }
        // Computed outside the lock (decoding bodies); two threads may both compute it, with
        // the same result.
        let found = Arc::new(stored_fn_items(index, tid, field));
        self.memo
            .lock()
            .expect("field fns lock")
            .entry(key)
            .or_insert(found)
            .clone()
    }
}

fn stored_fn_items(index: &Index, tid: TypeId, field: &str) -> Vec<FnId> {
    let def = &index.types[tid];
    let crate::index::TypeKind::Struct { fields, .. } = &def.kind else {
        return Vec::new();
    };
    if !fields.iter().any(|(n, _)| n == field) {
        return Vec::new();
    }
    let mut builders: Vec<FnId> = def.inherent.values().flatten().copied().collect();
    for &iid in &def.trait_impls {
        builders.extend(index.impls[iid].fns.values().copied());
    }
    for res in index.modules[def.module].items.values().flatten() {
        if let Res::Fn(f) = res {
            builders.push(*f);
        }
    }
    // A body without a struct literal stores nothing: not counted towards the limit, so a
    // function added beside the type (a member's edit) does not change which bodies are read.
    builders.retain(|&f| index.fns[f].ir.attrs.struct_literal);
    builders.sort_unstable();
    builders.dedup();
    builders.truncate(MAX_BODIES);
    let mut out = BTreeSet::new();
    for f in builders {
        let fdef = &index.fns[f];
        let Some(block) = fdef.ir.body.as_ref().map(FnBody::block) else {
            continue;
        };
        let is_self = |name: &str| {
            name == "Self"
                && matches!(fdef.owner, FnOwner::Impl(i)
                    if matches!(index.impls[i].self_ty, Ty::Adt(TyCon::Local(t), _) if t == tid))
        };
        let params: Vec<&str> = fdef
            .ir
            .sig
            .params
            .iter()
            .filter_map(|(n, _)| n.as_ref().map(|n| n.as_str()))
            .collect();
        block.any(&mut |e| {
            let IrExpr::StructLit(path, values) = e else {
                return false;
            };
            let names: Vec<&str> = path.segments.iter().map(|s| s.name.as_str()).collect();
            let names_tid = match names.as_slice() {
                [single] if is_self(single) => true,
                _ => index
                    .resolve_path_in(fdef.module, &names, path.leading_colon, 0)
                    .iter()
                    .any(|r| matches!(r, Res::Type(t) if *t == tid)),
            };
            if !names_tid {
                return false;
            }
            for (name, value) in values.iter() {
                let IrExpr::Path(p, _) = value else {
                    continue;
                };
                if name.as_str() != field || p.single().is_some_and(|n| params.contains(&n)) {
                    continue;
                }
                let segs: Vec<&str> = p.segments.iter().map(|s| s.name.as_str()).collect();
                for r in index.resolve_path_in(fdef.module, &segs, p.leading_colon, 0) {
                    if let Res::Fn(g) = r {
                        out.insert(g);
                    }
                }
            }
            false
        });
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    /// Constructors in an inherent method (by type name and by `Self`), a trait impl
    /// (`Default`) and a free fn of the module each store a fn item; a call through the field
    /// elsewhere reaches the items stored for that type only. A parameter stored by a
    /// constructor is not followed.
    #[test]
    fn calls_through_a_field_reach_the_fn_items_its_constructors_store() {
        let src = "fn flush(p: &str) { let _ = std::fs::write(p, b\"\"); }\n\
                   fn nap(_p: &str) { std::thread::sleep(std::time::Duration::from_millis(1)); }\n\
                   fn note(p: &str) -> usize { p.len() }\n\
                   pub struct Disk { persist: fn(&str) }\n\
                   impl Disk { pub fn new() -> Self { Disk { persist: flush } }\n\
                               pub fn save(&self, p: &str) { (self.persist)(p) } }\n\
                   pub struct Mem { persist: fn(&str) -> usize }\n\
                   impl Mem { pub fn new() -> Self { Self { persist: note } }\n\
                              pub fn save(&self, p: &str) -> usize { (self.persist)(p) } }\n\
                   pub struct Slow { run: fn(&str) }\n\
                   impl Default for Slow { fn default() -> Self { Slow { run: nap } } }\n\
                   pub fn slow_with(run: fn(&str)) -> Slow { Slow { run } }\n\
                   pub struct Given { run: fn(&str) }\n\
                   impl Given { pub fn new(run: fn(&str)) -> Self { Given { run } } }\n\
                   pub async fn a(d: &Disk, p: &str) { d.save(p); }\n\
                   pub async fn b(m: &Mem, p: &str) -> usize { m.save(p) }\n\
                   pub async fn c(s: &Slow, p: &str) { (s.run)(p); }\n\
                   pub async fn d(g: &Given, p: &str) { (g.run)(p); }\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        assert_eq!(crate::testutil::site_lines(&report), [15, 17]);
        // `Given`'s callback comes from a parameter: not followed.
        assert_eq!(
            report.stats.unresolved_by_reason.get("fn_pointer"),
            Some(&1)
        );
    }
}

//! Which traits a module can call methods of: rustc resolves `x.m()` to a trait's method only
//! when that trait is in scope at the call (imported, glob-imported, defined there, or imported
//! `as _`). Two traits with the same method name (`diesel::RunQueryDsl::execute` and
//! `diesel_async::RunQueryDsl::execute`) are told apart only this way: lemmy's async diesel
//! calls were all reported as sync diesel before.
//!
//! A name a module defines or imports explicitly shadows the same name from its glob imports,
//! and a shadowed trait is not in scope: `use diesel::prelude::*; use diesel_async::RunQueryDsl;`
//! (diesel_async's documented set-up) calls the async trait only. `use Trait as _` binds no name
//! and shadows nothing.
//!
//! Computed per module on first use and cached (`OnceLock` per module: resolution runs in
//! parallel). Visibility (`pub`) is not tracked: a name a module can see through a glob is
//! taken to be public, which over-approximates the scope.

use std::collections::BTreeSet;

use crate::discover::DepTarget;
use crate::index::{Index, ModId, Res, TypeId, TypeKind, UnitId};

/// How deep glob chains are followed (`use a::*` where `a` re-exports `b::*`, ...).
const MAX_GLOB_DEPTH: usize = 16;

impl Index {
    /// The analysed graph's traits whose methods calls written in `module` may name.
    pub fn traits_in_scope(&self, module: ModId) -> &BTreeSet<TypeId> {
        self.trait_scopes[module].get_or_init(|| {
            let mut traits = BTreeSet::new();
            let mut visited = BTreeSet::new();
            self.collect_traits(module, &BTreeSet::new(), 0, &mut visited, &mut traits);
            traits
        })
    }

    /// The traits `module` names, except those behind a name in `shadowed` (bound by an
    /// importing module), then those of its glob imports, which its own names shadow.
    /// Whether code of `unit` can name items of `other`: the same crate, or one of its
    /// dependencies, transitively (a trait re-exported by a direct dependency lives in a
    /// transitive one: `sqlx::Executor` in sqlx-core).
    pub fn unit_sees(&self, unit: UnitId, other: UnitId) -> bool {
        unit == other
            || self.unit_deps[unit]
                .get_or_init(|| {
                    let mut seen = BTreeSet::new();
                    let mut stack = vec![unit];
                    while let Some(u) = stack.pop() {
                        for d in self.units[u].extern_names.values() {
                            if let DepTarget::Unit(d) = d {
                                if seen.insert(*d) {
                                    stack.push(*d);
                                }
                            }
                        }
                    }
                    seen
                })
                .contains(&other)
    }

    fn collect_traits(
        &self,
        module: ModId,
        shadowed: &BTreeSet<&str>,
        depth: usize,
        visited: &mut BTreeSet<ModId>,
        traits: &mut BTreeSet<TypeId>,
    ) {
        if !visited.insert(module) || depth > MAX_GLOB_DEPTH {
            return;
        }
        let m = &self.modules[module];
        for (name, res) in m.items.iter().chain(m.imports.iter()) {
            if shadowed.contains(name.as_str()) {
                continue;
            }
            for r in res {
                if let Res::Type(t) = r {
                    if matches!(self.types[*t].kind, TypeKind::Trait { .. }) {
                        traits.insert(*t);
                    }
                }
            }
        }
        if !m.globs.iter().any(|g| matches!(g, Res::Module(_))) {
            return;
        }
        let mut inner = shadowed.clone();
        inner.extend(
            m.items
                .keys()
                .chain(m.imports.keys())
                .map(String::as_str)
                .filter(|n| *n != "_"),
        );
        for g in &m.globs {
            if let Res::Module(gm) = g {
                self.collect_traits(*gm, &inner, depth + 1, visited, traits);
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::index::{Index, TypeKind};
    use crate::testutil::{index_of, module_named};

    fn trait_names(index: &Index, module: usize) -> Vec<String> {
        index
            .traits_in_scope(module)
            .iter()
            .map(|t| index.types[*t].name.clone())
            .collect()
    }

    #[test]
    fn imported_globbed_underscore_and_local_traits_are_in_scope_others_not() {
        let src = "pub mod sync_dsl { pub trait RunQueryDsl { fn execute(self) {} } }\n\
                   pub mod async_dsl { pub trait RunQueryDsl { fn execute(self) {} } }\n\
                   pub mod prelude { pub use super::other::Helper; }\n\
                   pub mod other { pub trait Helper {} pub trait Hidden {} }\n\
                   mod uses_async { use crate::async_dsl::RunQueryDsl; }\n\
                   mod uses_sync_anon { use crate::sync_dsl::RunQueryDsl as _; }\n\
                   mod uses_prelude { use crate::prelude::*; trait Local {} }\n\
                   pub mod sync_prelude { pub use crate::sync_dsl::RunQueryDsl; }\n\
                   mod shadows { use crate::sync_prelude::*; use crate::async_dsl::RunQueryDsl; }\n";
        let index = index_of("scope-traits", src);
        let module = |name: &str| module_named(&index, name);
        let owner = |t: &usize| index.modules[index.types[*t].module].path.join("::");
        let scope = index.traits_in_scope(module("uses_async"));
        assert_eq!(scope.len(), 1);
        assert_eq!(owner(scope.iter().next().unwrap()), "async_dsl");
        let scope = index.traits_in_scope(module("uses_sync_anon"));
        assert_eq!(scope.len(), 1);
        assert_eq!(owner(scope.iter().next().unwrap()), "sync_dsl");
        assert_eq!(
            trait_names(&index, module("uses_prelude")),
            vec!["Helper".to_string(), "Local".to_string()]
        );
        // The explicit import shadows the glob's trait of the same name.
        let scope = index.traits_in_scope(module("shadows"));
        assert_eq!(scope.len(), 1);
        assert_eq!(owner(scope.iter().next().unwrap()), "async_dsl");
        assert!(index
            .types
            .iter()
            .any(|t| t.name == "Hidden" && matches!(t.kind, TypeKind::Trait { .. })));
    }
}

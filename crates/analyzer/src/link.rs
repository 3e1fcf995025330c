//! Which of the workspace's binaries link which crates: a path is feasible only inside one
//! binary.
//!
//! Why: a trait method called on a type parameter or a `dyn` object dispatches to every impl of
//! the graph, and a workspace with several binaries holds impls that never meet. deno's CLI and
//! its `denort` runtime share the `sys_traits` generic code; `denort`'s `DenoRtSys` impls are
//! linked only into `denort`, yet paths from the CLI's handlers went through them (round 7's
//! wrong-impl class; 614 of deno's 3 405 findings ran through `denort` from other roots). No
//! process runs code from crates its binary does not link, so a path from an entry in crate X may
//! use a function of crate C only if some binary links both.
//!
//! The *binaries* are the workspace members' bin targets. A unit's *link set* is the binaries
//! that depend on it (transitively, or are it). An entry's link set is its own unit's; a path
//! from it (and the callers that reach it, listed as its ancestors) may enter a function whose
//! link set meets it. Units no member binary links (a library workspace, a crate only tests use)
//! have an empty set: an entry there is not restricted, and a path may always enter them, as
//! before this filter (the tool cannot know what links them). Computed per unit, from the
//! dependency graph alone.

use std::collections::BTreeMap;

use crate::discover::{UnitKind, Workspace};
use crate::index::{FnId, Index};

/// A set of binaries, as a bit set over their indices.
pub type LinkSet = Vec<u64>;

#[derive(Debug, Clone)]
pub struct Links {
    /// Per unit: the binaries that link it.
    of_unit: Vec<LinkSet>,
}

impl Links {
    /// `None` when the workspace has fewer than two member binaries: every path is inside the
    /// one binary (or nothing says which binaries exist).
    pub fn compute(ws: &Workspace, index: &Index) -> Option<Links> {
        let bins: Vec<usize> = (0..index.units.len())
            .filter(|&u| {
                ws.units
                    .get(u)
                    .is_some_and(|w| w.kind == UnitKind::Bin && ws.packages[w.package].is_member)
            })
            .collect();
        if bins.len() < 2 {
            return None;
        }
        let words = bins.len().div_ceil(64);
        let mut of_unit = vec![vec![0u64; words]; index.units.len()];
        for (i, &b) in bins.iter().enumerate() {
            for (u, set) in of_unit.iter_mut().enumerate() {
                if index.unit_sees(b, u) {
                    set[i / 64] |= 1 << (i % 64);
                }
            }
        }
        Some(Links { of_unit })
    }

    /// The link set of the unit function `f` is written in.
    pub fn of_fn(&self, index: &Index, f: FnId) -> &LinkSet {
        &self.of_unit[index.fns[f].unit]
    }

    /// Per distinct entry link set: for each unit, whether a path from such an entry may enter
    /// it: some binary links both, or no member binary links the unit (a library for others, a
    /// test kit: what links it is unknown, so it is not excluded). An empty entry set restricts
    /// nothing (`None`).
    pub fn allowed_units(&self, entry: &LinkSet) -> Option<Vec<bool>> {
        if is_empty(entry) {
            return None;
        }
        Some(
            self.of_unit
                .iter()
                .map(|s| is_empty(s) || meets(s, entry))
                .collect(),
        )
    }
}

/// Groups items by their link set, in the sets' order: deterministic whatever the input order.
pub fn group_by_set<T>(items: impl IntoIterator<Item = (LinkSet, T)>) -> BTreeMap<LinkSet, Vec<T>> {
    let mut out: BTreeMap<LinkSet, Vec<T>> = BTreeMap::new();
    for (set, item) in items {
        out.entry(set).or_default().push(item);
    }
    out
}

fn is_empty(s: &LinkSet) -> bool {
    s.iter().all(|w| *w == 0)
}

fn meets(a: &LinkSet, b: &LinkSet) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_meet_when_they_share_a_binary() {
        assert!(meets(&vec![0b011], &vec![0b010]));
        assert!(!meets(&vec![0b001], &vec![0b010]));
        assert!(is_empty(&vec![0, 0]));
        let grouped = group_by_set([(vec![2], 'b'), (vec![1], 'a'), (vec![2], 'c')]);
        assert_eq!(
            grouped.into_iter().collect::<Vec<_>>(),
            [(vec![1], vec!['a']), (vec![2], vec!['b', 'c'])]
        );
    }

    #[test]
    fn units_no_binary_links_are_never_excluded() {
        // Units: 0 linked by binary 0, 1 by binary 1, 2 by none, 3 by both.
        let links = Links {
            of_unit: vec![vec![0b01], vec![0b10], vec![0b00], vec![0b11]],
        };
        assert_eq!(
            links.allowed_units(&vec![0b01]),
            Some(vec![true, false, true, true])
        );
        assert_eq!(links.allowed_units(&vec![0b00]), None);
    }
}

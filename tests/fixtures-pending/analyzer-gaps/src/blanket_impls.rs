//! Blanket impls are not dispatched. RustCrypto's `Digest` is implemented for every
//! `D: FixedOutput + Default + Update + HashMarker` by `impl<D: ..> Digest for D`; the index
//! collects such impls (`Index::blanket_impls`) but method and path resolution never consult
//! them, so the one-shot `Sha256::digest(..)` stays unresolved (`Sha256::new()` followed by
//! `update` is reported: see tests/fixtures/cpu-crates). Needed: when a type's own and trait
//! impls have no such method, try the blanket impls whose trait is in scope, and let a rule
//! pattern naming a trait method (`digest::Digest::digest`) match the blanket impl's fn.

use sha2::{Digest, Sha256};

pub async fn one_shot(data: &[u8]) {
    let d = Sha256::digest(data); // expect: NB1106
}

pub async fn text_query(conn: &mut mysql::Conn) {
    use mysql::prelude::TextQuery;
    // `impl<Q: AsRef<str>> TextQuery for Q`: a blanket impl over every string.
    "DELETE FROM t".run(conn); // expect: NB0503
}

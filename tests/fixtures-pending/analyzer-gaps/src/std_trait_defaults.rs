//! Default methods of std traits are not dispatched to a dependency type's impl. `GzDecoder<R>`
//! implements `std::io::Read` (only `read`); `read_to_end` is `Read`'s default method, which
//! calls `read`. Method lookup on a local type looks at inherent methods, trait impls and the
//! default methods of *local* traits only (resolve.rs `local_methods`), so `read_to_end` on the
//! decoder is `Unresolved(UnknownMethod)`. Needed: for an external trait's default method
//! (`Read::read_to_end`, `read_exact`, `Write::write_all`, ...) on a type implementing that trait,
//! target the impl's required method (`read` / `write`) as a medium-confidence edge.

use std::io::{Read, Write};

pub async fn gunzip(compressed: &[u8]) {
    let mut d = flate2::read::GzDecoder::new(compressed);
    let mut out = Vec::new();
    d.read_to_end(&mut out); // expect: NB1107
}

pub async fn gzip(body: &[u8]) {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(body); // expect: NB1107
}

//! `for` loops are not calls. `for x in expr { .. }` is lowered to `IrExpr::For`, whose resolver
//! binds the element type but records no call to `IntoIterator::into_iter(expr)` and
//! `Iterator::next` (resolve.rs, `IrExpr::For`). A walk or glob iterated with `for` (the usual
//! way) therefore never reaches `walkdir::IntoIter::next` / `glob::Paths::next`. Needed: record
//! `into_iter` on the iterated expression and `next` on its result at the loop's position.

pub async fn walk(dir: &str) {
    for entry in walkdir::WalkDir::new(dir) { // expect: NB0103
        let e = entry;
    }
}

pub async fn expand(paths: glob::Paths) {
    for p in paths { // expect: NB0104
        let q = p;
    }
}

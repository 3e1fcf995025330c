// Deliberately not Rust: the analyzer reports a parse error for this file and goes on.
pub fn broken( {
    let x = ;
}

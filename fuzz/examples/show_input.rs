//! Prints the workspace a `module_tree` input describes, file by file, so a crash artifact can
//! be turned into a readable regression test:
//! `cargo +nightly run --example show_input -- artifacts/module_tree/crash-...`
use arbitrary::{Arbitrary, Unstructured};
use nonblock_fuzz::Tree;

fn main() {
    let path = std::env::args().nth(1).expect("usage: show_input FILE");
    let data = std::fs::read(&path).expect("readable input");
    let tree = Tree::arbitrary_take_rest(Unstructured::new(&data)).expect("a tree");
    for c in tree.render() {
        for (file, text) in &c.files {
            println!("==> {}/{file} (member: {})", c.name, c.member);
            println!("{}", String::from_utf8_lossy(text));
        }
    }
}

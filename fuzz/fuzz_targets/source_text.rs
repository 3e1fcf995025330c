//! Arbitrary bytes as source text: the crate root, and after the first 0xFF byte a module file it
//! declares, so both the root and a followed `mod` see hostile text (non-UTF-8 included).
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonblock_analyzer::synthetic::SyntheticCrate;
use nonblock_fuzz::check;

fuzz_target!(|data: &[u8]| {
    let (root, module) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let mut lib = b"mod m;\n".to_vec();
    lib.extend_from_slice(root);
    check(&[SyntheticCrate {
        name: "app".into(),
        member: true,
        files: vec![
            ("src/lib.rs".into(), lib),
            ("src/m.rs".into(), module.to_vec()),
        ],
    }]);
});

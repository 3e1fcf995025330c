//! Pure-data array literals of large files, blanked before the file is tokenized.
//!
//! Why: syn needs a file's whole token stream before its first item parses, and proc-macro2
//! allocates every token. Generated data files are large: `chrono-tz`'s 7 MB
//! `prebuilt/timezones.rs` (in vaultwarden's and mas' graphs) is one `impl` whose 597 match
//! arms each hold a `const REST: &[(i64, FixedTimespan)] = &[(-1830383032, FixedTimespan { .. }),
//! ..]` table; its tokens alone took about 170 MB while the file was parsed, the largest share
//! of those apps' peak memory. The analyzer reads nothing from such tables: they hold no call.
//!
//! So in a file of at least [`LARGE_FILE`] bytes, the contents of every `[ .. ]` of at least
//! [`MIN_BLANKED`] bytes that hold only data are replaced by spaces before tokenizing. *Only data*
//! means literals, `true`/`false`, names starting with an upper-case letter (types, constants,
//! variants, tuple-struct and variant constructors such as `Some("GMT")`), lower-case names only
//! where a `:` follows (a field name or a path segment), and the punctuation `, : - & ( ) { }
//! [ ]`. Anything else (a lower-case name used as a value or called, `.`, `!`, `|`, `=`, `;`,
//! `#`, `<`, a lifetime, ..) keeps the literal as written: a fn item in an array, a method call,
//! a macro or a closure might be a call the analysis must see.
//!
//! Positions do not move: each character of a blanked region becomes one space and line breaks
//! stay, so every later line and column (and every diagnostic) is the original file's.
//!
//! Lexing is `ra_ap_rustc_lexer`'s (rustc's own lexer as published by rust-analyzer): it
//! allocates nothing per token, and knows raw strings, nested comments and lifetimes.

use std::borrow::Cow;

use ra_ap_rustc_lexer::{tokenize, FrontmatterAllowed, TokenKind};

/// Files smaller than this are tokenized as written: their token streams are small.
pub const LARGE_FILE: usize = 1 << 20;

/// Shorter array literals are kept: blanking them saves little.
pub const MIN_BLANKED: usize = 256;

/// `text` with the contents of its pure-data array literals blanked, when it is a large file
/// that has some; else `text` itself. A file whose delimiters do not balance is returned as
/// written, for the parser to report.
pub fn blank_data_arrays(text: &str) -> Cow<'_, str> {
    if text.len() < LARGE_FILE {
        return Cow::Borrowed(text);
    }
    match data_regions(text) {
        Some(regions) if !regions.is_empty() => Cow::Owned(blank(text, &regions)),
        _ => Cow::Borrowed(text),
    }
}

/// An open delimiter: its kind, where its contents start, whether they are data so far.
struct Frame {
    bracket: bool,
    start: usize,
    pure: bool,
}

/// The byte ranges (contents of `[ .. ]`, outermost only, in order) to blank; `None` when the
/// delimiters do not balance.
fn data_regions(text: &str) -> Option<Vec<(usize, usize)>> {
    let mut frames: Vec<Frame> = Vec::new();
    let mut regions: Vec<(usize, usize)> = Vec::new();
    // A lower-case name inside a frame waits for the next token: data only before a `:`.
    let mut pending_name = false;
    let mut at = 0usize;
    for token in tokenize(text, FrontmatterAllowed::No) {
        let start = at;
        at += token.len as usize;
        let kind = token.kind;
        if matches!(
            kind,
            TokenKind::Whitespace | TokenKind::LineComment { .. } | TokenKind::BlockComment { .. }
        ) {
            continue;
        }
        if pending_name {
            pending_name = false;
            if kind != TokenKind::Colon {
                taint(&mut frames);
            }
        }
        match kind {
            TokenKind::OpenBracket | TokenKind::OpenParen | TokenKind::OpenBrace => {
                frames.push(Frame {
                    bracket: kind == TokenKind::OpenBracket,
                    start: at,
                    pure: true,
                });
            }
            TokenKind::CloseBracket | TokenKind::CloseParen | TokenKind::CloseBrace => {
                let frame = frames.pop()?;
                if frame.bracket != (kind == TokenKind::CloseBracket) {
                    return None;
                }
                if frame.bracket && frame.pure && start - frame.start >= MIN_BLANKED {
                    // Inner data arrays closed earlier lie inside this one.
                    while regions.last().is_some_and(|r| r.0 >= frame.start) {
                        regions.pop();
                    }
                    regions.push((frame.start, start));
                }
            }
            _ if frames.is_empty() => {}
            TokenKind::Literal { .. }
            | TokenKind::Comma
            | TokenKind::Colon
            | TokenKind::Minus
            | TokenKind::And => {}
            TokenKind::Ident => {
                let name = &text[start..at];
                let upper = name.starts_with(|c: char| c.is_uppercase());
                if !upper && name != "true" && name != "false" {
                    pending_name = true;
                }
            }
            _ => taint(&mut frames),
        }
    }
    frames.is_empty().then_some(regions)
}

/// Marks the open frames as holding more than data. A frame already marked has every frame
/// around it marked too (they were open when it was), so the walk stops there.
fn taint(frames: &mut [Frame]) {
    for frame in frames.iter_mut().rev() {
        if !frame.pure {
            break;
        }
        frame.pure = false;
    }
}

/// `text` with every character of `regions` but line breaks replaced by a space.
fn blank(text: &str, regions: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for &(start, end) in regions {
        out.push_str(&text[from..start]);
        out.extend(text[start..end].chars().map(|c| match c {
            '\n' | '\r' => c,
            _ => ' ',
        }));
        from = end;
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `body` repeated until the file is large, between `head` and `tail`.
    fn large(head: &str, body: &str, tail: &str) -> String {
        let mut s = String::from(head);
        while s.len() < LARGE_FILE {
            s.push_str(body);
        }
        s.push_str(tail);
        s
    }

    #[test]
    fn data_tables_are_blanked_and_positions_kept() {
        let row = "    (-1830383032, FixedTimespan { utc_offset: 0, dst_offset: 0, name: Some(\"GMT\") }),\n\
                   (1, Tz::Africa__Accra, 'x', b\"\\xff\", 2.5e-3, true, &[1, -2]),\n";
        let text = large(
            "fn f() {\n const REST: &[(i64, FixedTimespan)] = &[\n",
            row,
            " ];\n call_me();\n}\n",
        );
        let out = blank_data_arrays(&text);
        assert_eq!(out.len(), text.len());
        assert_eq!(out.lines().count(), text.lines().count());
        assert!(!out.contains("FixedTimespan {"));
        assert!(out.contains("const REST: &[(i64, FixedTimespan)] = &["));
        // The code after the table is where it was.
        let at = |s: &str| s.find("call_me();").unwrap();
        assert_eq!(at(&out), at(&text));
        assert!(syn::parse_file(&out).is_ok());
    }

    #[test]
    fn arrays_that_may_call_are_kept() {
        for row in [
            "    handler_a,\n",            // a fn item used as a value
            "    Foo::new(1),\n",          // a call
            "    x.len(),\n",              // a method call
            "    vec![1],\n",              // a macro
            "    Box::new(|| 1),\n",       // a closure
            "    A { f: read_config },\n", // a fn item in a field
            "    1 + 2,\n",                // an operator (may be overloaded)
        ] {
            let text = large("static T: &[X] = &[\n", row, "];\n");
            assert!(
                matches!(blank_data_arrays(&text), Cow::Borrowed(_)),
                "blanked an array of {row:?}"
            );
        }
    }

    #[test]
    fn small_files_and_unbalanced_ones_are_left_alone() {
        let small = "const T: &[u8] = &[1, 2, 3];\n";
        assert!(matches!(blank_data_arrays(small), Cow::Borrowed(_)));
        let unbalanced = large("const T: &[u8] = &[\n", "1, 2, 3,\n", "\n");
        assert!(matches!(blank_data_arrays(&unbalanced), Cow::Borrowed(_)));
    }

    #[test]
    fn brackets_inside_strings_and_comments_do_not_count() {
        let text = large(
            "const T: &[&str] = &[\n",
            "    \"]\", r#\"[\"#, /* ] */ \"x\", // ]\n",
            "];\nfn g() { h(); }\n",
        );
        let out = blank_data_arrays(&text);
        assert!(matches!(out, Cow::Owned(_)));
        assert!(out.ends_with("];\nfn g() { h(); }\n"));
        assert!(syn::parse_file(&out).is_ok());
    }
}

//! Kernel templates as text: what a backend needs to cut one item out of its own template
//! (the adaptive-rule probes of the CUDA and wgpu backends run the rule exactly as their
//! walk templates write it).

/// The item of `source` that starts at the first `head`, through the brace that closes its
/// body; `None` when `head` is absent or its body is not closed.
pub fn braced_item<'a>(source: &'a str, head: &str) -> Option<&'a str> {
    let start = source.find(head)?;
    let mut depth = 0usize;
    for (i, c) in source[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => return Some(&source[start..start + i + 1]),
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::braced_item;

    #[test]
    fn an_item_ends_at_the_brace_that_closes_its_body() {
        let src = "int a;\nstruct S { int x; };\nfn f(x: u32) -> u32 { if (x > 1u) { return 2u; } return x; }\nfn g() {}";
        assert_eq!(braced_item(src, "struct S"), Some("struct S { int x; }"));
        assert_eq!(braced_item(src, "fn f("), Some("fn f(x: u32) -> u32 { if (x > 1u) { return 2u; } return x; }"));
        assert_eq!(braced_item(src, "fn h("), None);
        assert_eq!(braced_item("fn f() { {", "fn f("), None);
    }
}

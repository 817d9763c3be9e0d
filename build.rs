//! Generates the walk library's registry from `walks/`: every `walks/<name>.rs` holding one
//! `#[walk]` item becomes the library walk `<name>` (underscores read as dashes on the command
//! line). Adding a walk is adding a file; its parameters, defaults, checks and help text are
//! read from the file by the compiler at run time.

use std::fmt::Write as _;
use std::path::Path;

/// `ppr_stop` -> `PprStop` (what `#[walk]` names a function-form walk's params struct).
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|p| {
            let mut c = p.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The identifier that starts `text`.
fn ident(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// The params struct and, for the impl form, the state struct of the file's `#[walk]` item.
fn walk_types(file: &str, text: &str) -> (String, Option<String>) {
    let at = text.find("#[walk").unwrap_or_else(|| panic!("walks/{file}: no `#[walk]` item (each file in walks/ holds one)"));
    // Skip the attribute: brackets balance (defaults hold arrays).
    let mut depth = 0usize;
    let mut end = at + 1;
    for (i, c) in text[at + 1..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    end = at + 1 + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    let rest = text[end..].trim_start();
    let rest = rest.strip_prefix("pub ").unwrap_or(rest).trim_start();
    if let Some(f) = rest.strip_prefix("fn ") {
        (camel(ident(f.trim_start())), None)
    } else if let Some(i) = rest.strip_prefix("impl ") {
        let name = ident(i.trim_start()).to_string();
        let state = text.contains(&format!("{name}State")).then(|| format!("{name}State"));
        (name, state)
    } else {
        panic!("walks/{file}: `#[walk]` must stand on a `fn` or an `impl`")
    }
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("walks");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("walks/ holds the library")
        .map(|e| e.expect("walks/ is readable").file_name().into_string().expect("walk file names are UTF-8"))
        .filter(|f| f.ends_with(".rs"))
        .collect();
    files.sort();
    let mut out = String::from("library! {\n");
    for file in &files {
        let path = dir.join(file);
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("walk files are readable");
        let module = file.trim_end_matches(".rs");
        let (ty, state) = walk_types(file, &text);
        let doc = text.lines().map(str::trim).find_map(|l| l.strip_prefix("///")).unwrap_or("").trim().replace('"', "\\\"");
        let state = state.map_or(String::new(), |s| format!(", {s}"));
        let _ = writeln!(out, "    #[doc = \"{doc}\"] {module} \"{file}\" \"{}\" => {ty}{state};", module.replace('_', "-"));
    }
    out.push_str("}\n");
    let target = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("library.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}

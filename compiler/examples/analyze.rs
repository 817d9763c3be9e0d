//! Prints the IR and the analysis of a `#[walk]` file: `cargo run -p wayfarer-compiler --example analyze -- walk.rs`
fn main() {
    let path = std::env::args().nth(1).expect("usage: analyze <walk.rs>");
    let src = std::fs::read_to_string(&path).expect("readable file");
    let f = match wayfarer_compiler::lower_source(&src) {
        Ok(f) => f,
        Err(e) => {
            eprint!("{}", e.render(&src, &path));
            std::process::exit(1);
        }
    };
    print!("{}", wayfarer_compiler::print::listing(&f));
    let info = wayfarer_compiler::analyze(&f);
    print!("{}", wayfarer_compiler::print::analysis(&f, &info));
}

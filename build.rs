//! Rebuild when a template or a vendored crate changes: both are embedded with include_dir, which
//! cargo cannot see through on its own. (A directory makes cargo scan everything under it.)
fn main() {
    println!("cargo:rerun-if-changed=templates");
    for (links, crate_dir) in [
        ("embedded-runtime", "runtime"),
        ("embedded-testing", "testing"),
    ] {
        println!("cargo:rerun-if-changed={links}");
        // The files behind the links, in a checkout of the repository (a packaged operator-rs
        // holds them in the links' folders themselves). Only what the links bring: the crates'
        // tests/ are not embedded.
        if std::path::Path::new(crate_dir).is_dir() {
            for part in ["src", "Cargo.toml", "README.md", "rustfmt.toml"] {
                println!("cargo:rerun-if-changed={crate_dir}/{part}");
            }
        }
    }
}

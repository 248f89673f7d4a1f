//! Rebuild when a template or the runtime crate changes: both are embedded with include_dir,
//! which cargo cannot see through on its own. (A directory makes cargo scan everything under it.)
fn main() {
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=runtime/src");
    println!("cargo:rerun-if-changed=runtime/Cargo.toml");
    println!("cargo:rerun-if-changed=runtime/README.md");
}

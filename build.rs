//! Rebuild when a template or the runtime crate changes: both are embedded with include_dir,
//! which cargo cannot see through on its own. (A directory makes cargo scan everything under it.)
fn main() {
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=embedded-runtime");
    // The files behind embedded-runtime/'s links, in a checkout of the repository (a packaged
    // operator-rs holds them in embedded-runtime/ itself).
    if std::path::Path::new("runtime").is_dir() {
        println!("cargo:rerun-if-changed=runtime");
    }
}

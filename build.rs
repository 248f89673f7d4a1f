//! Rebuild when a template changes: the templates are embedded with include_dir, which cargo
//! cannot see through on its own. (A directory makes cargo scan everything under it.)
fn main() {
    println!("cargo:rerun-if-changed=templates");
}

{{ rust_header }}//! The manifests in `config/` are up to date with the code: run `make manifests` after changing
//! the API types, the RBAC rules of a controller, or the webhooks.

#[test]
fn config_is_up_to_date() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Err(problem) = {{ crate_name }}::manifests().check(root) {
        panic!("{problem}");
    }
}

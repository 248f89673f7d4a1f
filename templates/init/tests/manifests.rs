{{ rust_header }}//! The manifests in `config/` are up to date with the code.
//!
//! If this fails, run `make manifests` and commit the changed files.

use std::path::Path;

use {{ crate_name }}::manifests::{self, CRD_DIR};

#[test]
fn manifests_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifests = manifests::render().unwrap_or_else(|error| panic!("{error}"));

    for manifest in &manifests {
        let on_disk = std::fs::read_to_string(root.join(&manifest.path)).unwrap_or_default();
        assert!(
            on_disk == manifest.contents,
            "{} is out of date with the code: run `make manifests`",
            manifest.path
        );
    }

    let Ok(entries) = std::fs::read_dir(root.join(CRD_DIR)) else {
        return; // No CRD folder: nothing stale in it.
    };
    for entry in entries {
        let name = entry.unwrap().file_name();
        let path = format!("{CRD_DIR}/{}", name.display());
        assert!(
            !path.ends_with(".yaml") || manifests.iter().any(|m| m.path == path),
            "{path} belongs to no API in the code: run `make manifests` to delete it"
        );
    }
}

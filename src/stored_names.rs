//! The one file operator-rs writes under a name that its own package cannot hold.
//!
//! `cargo package` (and so a `cargo install operator-rs` from a registry) leaves out every folder
//! that holds a `Cargo.toml`, taking it for another package: `templates/init/` and the vendored
//! crates would be missing from the published operator-rs, which embeds them. The manifests it
//! writes are therefore stored as [`STORED_MANIFEST`] (`templates/init/Cargo.toml.in`, and
//! `embedded-runtime/Cargo.toml.in` and `embedded-testing/Cargo.toml.in`, links to
//! `runtime/Cargo.toml` and `testing/Cargo.toml`) and written as `Cargo.toml`.

/// The name a `Cargo.toml` that operator-rs writes is stored under.
pub const STORED_MANIFEST: &str = "Cargo.toml.in";

/// The path (`/`-separated) that the stored file `stored` is written to: a [`STORED_MANIFEST`]
/// gets back its name `Cargo.toml`, every other path is unchanged.
pub fn written_path(stored: &str) -> &str {
    let name = stored.rsplit('/').next().unwrap_or(stored);
    match stored.strip_suffix(".in") {
        Some(written) if name == STORED_MANIFEST => written,
        _ => stored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_manifests_are_written_as_cargo_toml() {
        assert_eq!(written_path("Cargo.toml.in"), "Cargo.toml");
        assert_eq!(
            written_path("operator-rs-runtime/Cargo.toml.in"),
            "operator-rs-runtime/Cargo.toml"
        );
        assert_eq!(written_path("init/Cargo.toml.in"), "init/Cargo.toml");
    }

    #[test]
    fn other_paths_are_unchanged() {
        for path in [
            "Cargo.lock",
            "src/main.rs",
            "docs/Cargo.toml.in.md",
            "xCargo.toml.in",
            "src/{{ kind }}.rs",
        ] {
            assert_eq!(written_path(path), path);
        }
    }
}

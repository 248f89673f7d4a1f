# Sourced by hack/test-generated, hack/test-examples and hack/test-tutorial (needs $root): builds
# operator-rs and sets up the environment in which they build generated projects.
#
# operator-rs builds first, with the caller's environment, where the workspace builds (hack/test
# has just built it there for its own tests): built under the settings below it would compile
# operator-rs and its dependencies a second time, two minutes for nothing.
cargo build --quiet --manifest-path "$root/Cargo.toml" --bin operator-rs
workspace_target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
operator_rs_bin="$workspace_target_dir/debug/operator-rs"

# All projects build in one target dir, by default the workspace's: kube and the rest of the
# runtime's dependencies compile once per run, and the builds hack/test made for the runtime's own
# tests and lints serve the projects' (same features: see hack/test); the runtime crate of the
# projects compiles once too (hack/share-runtime-build).
export CARGO_TARGET_DIR="${GENERATED_TARGET_DIR:-$workspace_target_dir}"
# Year in license headers: fixed, so reruns produce the same trees.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1790000000}"
# Tens of projects' incremental caches and full debug info take tens of GB in one target dir and
# buy nothing here (every project is built a handful of times): keep the disk footprint small.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

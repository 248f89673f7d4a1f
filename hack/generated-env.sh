# Sourced by hack/test-generated, hack/test-examples and hack/test-tutorial (needs $root): builds
# operator-rs and sets up the environment in which they build generated projects.
#
# The environment of every build of a run first (hack/build-env.sh), so that operator-rs builds
# as hack/test built it for its own tests, and the projects' dependencies as hack/test built the
# runtime's.
# shellcheck source=hack/build-env.sh
source "$root/hack/build-env.sh"
cargo build --quiet --manifest-path "$root/Cargo.toml" --bin operator-rs
workspace_target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
operator_rs_bin="$workspace_target_dir/debug/operator-rs"

# All projects build in one target dir, by default the workspace's: kube and the rest of the
# runtime's dependencies compile once per run, and the builds hack/test made for the runtime's own
# tests and lints serve the projects' (same features: see hack/test); the runtime crate of the
# projects compiles once too (hack/share-runtime-build).
export CARGO_TARGET_DIR="${GENERATED_TARGET_DIR:-$workspace_target_dir}"

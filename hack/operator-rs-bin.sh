# Sourced by the scripts that generate a project to measure or read (hack/memcached-project,
# hack/count-lines, hack/update-project-lock; needs $root): builds this repository's operator-rs
# in its own target dir, whatever CARGO_TARGET_DIR the caller builds projects in (a stale
# operator-rs of another target dir would write the projects), with the environment of hack/test's
# builds (hack/build-env.sh, in a subshell: the caller's own builds keep theirs), so that it
# reuses their build; and names it $operator_rs_bin.
(
  # shellcheck source=hack/build-env.sh
  source "$root/hack/build-env.sh"
  CARGO_TARGET_DIR="$root/target" cargo build --quiet --manifest-path "$root/Cargo.toml" -p operator-rs
)
operator_rs_bin="$root/target/debug/operator-rs"

# Sourced by hack/test and hack/generated-env.sh: the environment of every cargo build in a test
# run, the same for the workspace's builds and the generated projects'. A variable that a build
# tracks and that differs between two builds makes cargo rebuild what depends on it each time it
# flips: psm's build script (under pest, which tera and kube's jsonpath-rust use) reruns when
# SOURCE_DATE_EPOCH changes, and with it pest, kube, the runtime and every project above them.
# When only the project builds had it set, each later rebuild of operator-rs and each tutorial
# rebuilt that chain, twice per tutorial (about 60 s each time).

# Year in license headers: fixed, so reruns produce the same trees.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1790000000}"
# Tens of projects' incremental caches and debug info take tens of GB in one target dir and buy
# nothing here: each crate is built a handful of times, from scratch, and never debugged. Without
# debug info a generated project's library compiles in about 70% of the time it takes with line
# tables alone (14 s against 20 s for hack/test-generated's fleet); a panic still names its file
# and line, a backtrace its functions. (Dependencies have no debug info in any case: the
# manifests' `[profile.dev.package."*"]`.)
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-false}"
# envtest's binaries (etcd, kube-apiserver) for the tests that run against a real API server:
# those of KUBEBUILDER_ASSETS, else those of a control plane built into ~/k8s-local/bin
# (CONTRIBUTING.md says how). Read by the tests when they run, by no build. Without them, the
# envtest tests and the cluster checks say that they were skipped.
if [ -z "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$HOME/k8s-local/bin/kube-apiserver" ]; then
  export KUBEBUILDER_ASSETS="$HOME/k8s-local/bin"
fi

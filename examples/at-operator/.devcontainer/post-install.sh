#!/usr/bin/env bash
# The tools the Makefile uses, beside the Rust toolchain of the image: kubectl (with kustomize),
# kind for `make test-e2e`, and operator-rs for `operator-rs create …` and `make bundle`.
set -euo pipefail

arch="$(dpkg --print-architecture)"

# The toolchain the project builds with (rust-version in Cargo.toml), with rustfmt and clippy.
rustup component add rustfmt clippy

# kubectl, the latest stable release.
kubectl_version="$(curl -fsSL https://dl.k8s.io/release/stable.txt)"
curl -fsSLo /tmp/kubectl "https://dl.k8s.io/release/${kubectl_version}/bin/linux/${arch}/kubectl"
sudo install -m 0755 /tmp/kubectl /usr/local/bin/kubectl

# kind, for the end-to-end tests.
curl -fsSLo /tmp/kind "https://kind.sigs.k8s.io/dl/latest/kind-linux-${arch}"
sudo install -m 0755 /tmp/kind /usr/local/bin/kind

# operator-rs, the version that scaffolded the project (`cliVersion` in PROJECT).
operator_rs_version="$(sed -n 's/^cliVersion: //p' PROJECT)"
cargo install --locked operator-rs --version "${operator_rs_version}" ||
  echo "operator-rs ${operator_rs_version} is not on crates.io: install it from its repository"

kubectl version --client
kind version

#!/usr/bin/env bash
# The operator-rs commands that scaffold this example, as docs/tutorial-at.md types them, run in
# an empty folder. Everything else in this folder that they do not write is the user's code;
# hack/test-examples lists those files and checks that the rest is exactly what these commands
# write with the current operator-rs.
#
# `make manifests` (which `create api` runs by default) is left for after the types are written:
# the CRD in config/crd/bases/ is rendered from them.
set -euo pipefail
operator-rs init --domain example.com --owner "The operator-rs authors"
operator-rs create api --group at --version v1alpha1 --kind At --make=false

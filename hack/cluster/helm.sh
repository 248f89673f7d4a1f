# Sourced by hack/cluster/lib.sh: the Helm chart against the cluster is hack/check-helm-cluster's
# (helm install with non-default values, upgrade, rollback and uninstall of a fresh project's chart
# and of one made from kubebuilder's project-v4 manifests, the server's objects checked after each
# step and nothing left behind); this check runs it with the operator-rs that build_tools built.

check_helm() {
  command -v helm >/dev/null || fail "helm is not installed (hack/install-helm installs it)"
  local started
  started=$(now_ms)
  OPERATOR_RS="$operator_rs_bin" "$root/hack/check-helm-cluster" | sed 's/^/  /'
  [[ "${PIPESTATUS[0]}" -eq 0 ]] || fail "hack/check-helm-cluster failed"
  figure "install, upgrade, rollback, uninstall" "$(($(now_ms) - started)) ms"
}

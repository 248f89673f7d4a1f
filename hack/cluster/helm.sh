# Sourced by hack/cluster/lib.sh: the Helm chart against the cluster is hack/check-helm-cluster's
# (helm install, upgrade, rollback and uninstall of a generated project's chart, leaving nothing
# behind); this check runs it when the tree has it.

check_helm() {
  local script="$root/hack/check-helm-cluster"
  [[ -x "$script" ]] || skip "hack/check-helm-cluster is not in this tree yet"
  "$script"
}

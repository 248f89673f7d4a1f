# Sourced by hack/cluster/lib.sh: an API server restarted while a manager works through a backlog.
# The shared control plane cannot be restarted (others use it): hack/cluster/apiserver-restart.rs
# starts a private one with operator-rs-testing's envtest (etcd and kube-apiserver of
# KUBEBUILDER_ASSETS, default $HOME/k8s-local/bin), runs the tutorial's Memcached manager (release)
# against a backlog, restarts the API server once a third of the Deployments exist, and times the
# convergence after.

restart_objects=150

check_apiserver_restart() {
  export KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$HOME/k8s-local/bin}"
  [[ -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]] ||
    skip "no kube-apiserver and etcd in KUBEBUILDER_ASSETS ($KUBEBUILDER_ASSETS)"
  build_memcached
  (cd "$project" && "$restart_driver" "$restart_objects" "$memcached_release") | sed 's/^/    /'
}

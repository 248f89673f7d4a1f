# Sourced by hack/cluster/lib.sh: sharding and leader election against the cluster, with the
# tutorial's Memcached manager (hack/memcached-project) in a release build, as hack/bench-sharding
# builds it.

# The backlog and replicas of the sharding check: small, the figures are what a real API server
# changes, not what scale costs (hack/bench-sharding measures that on the fake).
sharding_objects=40
sharding_replicas=3
memcached_crd=memcacheds.cache.example.com

memcached_generate() {
  "$root/hack/memcached-project" . --sharding
  mkdir -p examples
  cp "$root/hack/bench-sharding.rs" examples/bench.rs
  cp "$root/hack/cluster/kubelet-standin.rs" examples/kubelet-standin.rs
  cp "$root/hack/cluster/apiserver-restart.rs" examples/apiserver-restart.rs
}

# Generates the Memcached project and builds its release manager in hack/bench-sharding's target
# dir (the binary its figures are of), and in the debug build that `make run` shares, the
# programs of hack/test-cluster: the bench driver, the kubelet stand-in and the API server restart
# driver (with operator-rs-testing's envtest feature), whose own speed does not matter; writes its
# manifests. Sets $project, $memcached_release (the manager), $bench, $kubelet_standin and
# $restart_driver.
build_memcached() {
  generate_project memcached-operator memcached_generate
  local release_dir="$root/target/release-size"
  (cd "$project" && CARGO_TARGET_DIR="$release_dir" cargo build --quiet --locked --release --bin manager &&
    cargo run --quiet --locked --bin manifests >/dev/null &&
    cargo build --quiet --locked --features operator-rs-testing/envtest \
      --example bench --example kubelet-standin --example apiserver-restart)
  mkdir -p "$state/bin"
  cp "$release_dir/release/manager" "$state/bin/memcached-manager"
  local program
  for program in bench kubelet-standin apiserver-restart; do
    cp "$CARGO_TARGET_DIR/debug/examples/$program" "$state/bin/$program"
  done
  memcached_release="$state/bin/memcached-manager" bench="$state/bin/bench"
  kubelet_standin="$state/bin/kubelet-standin" restart_driver="$state/bin/apiserver-restart"
}

check_sharding() {
  build_memcached
  # The driver makes its own namespace, CRD (if missing) and stand-in kubelet, and removes them.
  # The elected replica killed: the worst case, whose share and new objects once waited for a
  # new leader.
  (cd "$project" && "$bench" "$sharding_objects" "$sharding_replicas" "$memcached_release" --cluster --kill-leader) |
    sed 's/^/    /' | tee "$work/bench"
  [[ "${PIPESTATUS[0]}" -eq 0 ]] || fail "the bench driver failed"
  grep -q 'converged after kill' "$work/bench" || fail "no time after the kill"
  # The objects created right after the kill: Available within the Lease duration and 10 s.
  local created
  created="$(sed -n 's/.*created after the kill: .* Available \([0-9.]*\)s after the kill.*/\1/p' "$work/bench")"
  [[ -n "$created" ]] || fail "no time for the objects created after the kill"
  awk -v t="$created" -v bound=$((lease_duration + 10)) 'BEGIN { exit !(t <= bound) }' ||
    fail "the objects created after the kill took ${created}s (bound: $((lease_duration + 10))s)"
}

# The Lease duration of the manager's default (--leader-election-lease-duration), and the slack a
# take-over may need beyond it: the standby's next try (every 2 s) and its start.
lease_duration=15
takeover_slack=5

# Whether the manager with metrics on PORT leads.
leads() { [[ "$(metric "$1" 'leader_election_master_status[{]')" == 1 ]]; }

check_failover() {
  build_memcached
  local namespace=tc-failover installed=""
  ensure_namespace "$namespace"
  on_exit "kubectl delete namespace $namespace --wait=false"
  if ! kubectl get crd "$memcached_crd" >/dev/null 2>&1; then
    (cd "$project" && kubectl kustomize config/crd | kubectl apply -f - >/dev/null)
    installed=1
    on_exit "kubectl delete crd $memcached_crd"
  fi
  kubectl wait --for=condition=Established "crd/$memcached_crd" --timeout=60s >/dev/null
  local ports=() pids=() i
  for i in 0 1; do
    ports[i]="$(free_port)"
    start_process "$work/replica-$i.log" env WATCH_NAMESPACE="$namespace" HOSTNAME="replica-$i" \
      "$memcached_release" --leader-elect --leader-election-namespace="$namespace" \
      --health-probe-bind-address=0 --metrics-bind-address="127.0.0.1:${ports[i]}" --metrics-secure=false
    pids[i]=$pid
  done
  either_leads() { leads "${ports[0]}" || leads "${ports[1]}"; }
  wait_until 60 "one replica leads" either_leads
  local leader=0
  leads "${ports[0]}" || leader=1
  local other=$((1 - leader)) killed
  leads "${ports[other]}" && fail "both replicas lead"
  killed=$(now_ms)
  stop_process "${pids[leader]}" KILL || true
  wait_until $((lease_duration + takeover_slack)) "replica-$other takes over (Lease ${lease_duration}s + ${takeover_slack}s)" leads "${ports[other]}"
  figure "leader killed (SIGKILL)" "replica-$leader"
  figure "taken over by replica-$other after" "$(($(now_ms) - killed)) ms (Lease duration ${lease_duration} s, bound $((lease_duration + takeover_slack)) s)"
  [[ -n "$installed" ]] && figure "CRD" "installed for the check, removed after"
  true
}

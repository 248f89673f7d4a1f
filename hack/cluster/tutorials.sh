# Sourced by hack/cluster/lib.sh: the cluster parts of the three tutorials (docs/tutorial-*.md),
# step by step as a reader runs them: `make install run`, the samples, then each step's outcome
# waited for and timed. Each in a namespace of its own, which the manager alone watches
# (WATCH_NAMESPACE: others' objects of the same kinds are not touched); pods are marked ready by
# operator-rs-testing's stand-in for the kubelet (hack/cluster/kubelet-standin.rs). The CRDs go at
# the end unless they were there before (someone else's).

check_tutorials() {
  build_memcached
  tutorial_memcached
  tutorial_webserver
  tutorial_at
}

# A copy of an example of examples/ in $state, its links to the runtime and testing crates made
# absolute; sets $project.
example_project() {
  local name="$1"
  copy_example() {
    cp -a "$root/examples/$name/." .
    ln -sfn "$root/runtime" operator-rs-runtime
    ln -sfn "$root/testing" operator-rs-testing
  }
  generate_project "$name" copy_example
}

# In $project: installs the CRDs (`make install`), starts the kubelet stand-in for NAMESPACE and
# `make install run` (but for its lints: hack/test-examples runs them), reconciling NAMESPACE only;
# waits until the manager is ready. Registers the clean-up (the finalizers of what is left, the
# namespace, the CRD unless it was there before).
tutorial_start() {
  local namespace="$1" crd="$2" health metrics
  ensure_namespace "$namespace"
  if ! kubectl get crd "$crd" >/dev/null 2>&1; then
    on_exit "kubectl delete crd $crd --ignore-not-found --wait=false"
  fi
  on_exit "kubectl delete namespace $namespace --wait=false"
  # First, if the check ends before the manager has run the finalizers.
  on_exit "remove_finalizers $crd $namespace"
  start_process "$work/$namespace-kubelet.log" "$kubelet_standin" "$namespace"
  health="$(free_port)" metrics="$(free_port)"
  start_process "$work/$namespace-manager.log" env WATCH_NAMESPACE="$namespace" \
    make -C "$project" -o fmt -o vet install run \
    RUN_ARGS="--health-probe-bind-address=127.0.0.1:$health --metrics-bind-address=127.0.0.1:$metrics --metrics-secure=false"
  tutorial_manager=$pid
  wait_until 300 "make install run is ready" curl -fsS "http://127.0.0.1:$health/readyz"
}

# Stops `make run` with SIGINT (Ctrl-C), which must end it with status 0.
tutorial_stop() {
  local status=0
  stop_process "$tutorial_manager" INT || status=$?
  ((status == 0 || status == 130)) || fail "make run ended with status $status: $(tail -3 "$work/$1-manager.log")"
}

# Waits up to TIMEOUT seconds until `command...` succeeds and prints how long it took as WHAT.
step() {
  local what="$1" timeout="$2" start; shift 2
  start=$(now_ms)
  wait_until "$timeout" "$what" "$@"
  figure "$what" "$(($(now_ms) - start)) ms"
}

# The value of JSONPATH of OBJECT in the tutorial's namespace ($ns).
field() { kubectl get -n "$ns" "$1" -o jsonpath="$2" 2>/dev/null; }
equals() { [[ "$(field "$1" "$2")" == "$3" ]]; }
# Whether the Deployment NAME has REPLICAS replicas, all available and up to date.
deployment_has() {
  equals "deployment/$1" '{.spec.replicas}/{.status.availableReplicas}/{.status.updatedReplicas}' "$2/$2/$2"
}
absent() { ! kubectl get -n "$ns" "$1" >/dev/null 2>&1; }
# "<type> <reason>" of each Event of KIND/NAME, one a line, as many times as it happened (a repeat
# is a series of the first Event, not a new one).
event_reasons() {
  kubectl get events.v1.events.k8s.io -n "$ns" \
    --field-selector "regarding.kind=$1,regarding.name=$2" \
    -o jsonpath='{range .items[*]}{.type} {.reason} {.series.count}{"\n"}{end}' |
    awk '{ for (i = 0; i < ($3 == "" ? 1 : $3); i++) print $1, $2 }'
}
# Checks that the Events of KIND/NAME include each of REASON (Normal) at least COUNT times.
expect_events() {
  local kind="$1" name="$2" reasons reason count; shift 2
  reasons="$(event_reasons "$kind" "$name")"
  figure "Events of $kind/$name" "$(sort <<<"$reasons" | uniq -c | awk '{printf "%s%s %s x%s", sep, $2, $3, $1; sep=", "}')"
  for expected in "$@"; do
    reason="${expected%%=*}" count="${expected#*=}"
    (($(grep -c "^Normal $reason\$" <<<"$reasons") >= count)) || fail "fewer than $count $reason Events"
  done
  ! grep -q '^Warning' <<<"$reasons" || fail "Warning Events: $(grep '^Warning' <<<"$reasons" | tr '\n' ' ')"
}

tutorial_memcached() {
  say "Memcached (docs/tutorial-memcached.md)"
  project="$state/memcached-operator"
  ns=tc-tutorial-memcached
  tutorial_start "$ns" "$memcached_crd"
  # Named with its group: another project's Memcached kind (the webhook checks') may be installed.
  local m=memcacheds.cache.example.com/memcached-sample
  (cd "$project" && kubectl apply -n "$ns" -k config/samples/ >/dev/null)
  step "sample Available" 120 equals "$m" '{.status.conditions[?(@.type=="Available")].status}' True
  deployment_has memcached-sample 1 || fail "the Deployment does not have 1 available replica"
  kubectl patch -n "$ns" "$m" --type merge -p '{"spec":{"size":3}}' >/dev/null
  step "resized to 3, all available" 120 deployment_has memcached-sample 3
  local refused
  refused="$(kubectl patch -n "$ns" "$m" --type merge -p '{"spec":{"size":-1}}' 2>&1)" && fail "size -1 was accepted"
  grep -q 'spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0' <<<"$refused" ||
    fail "size -1 refused otherwise: $refused"
  figure "size -1" "refused: ${refused#*: }"
  kubectl scale -n "$ns" deployment memcached-sample --replicas=1 >/dev/null
  step "kubectl scale undone" 60 deployment_has memcached-sample 3
  local uid
  uid="$(field deployment/memcached-sample '{.metadata.uid}')"
  kubectl delete -n "$ns" deployment memcached-sample >/dev/null
  step "deleted Deployment recreated" 60 bash -c "[[ \"\$(kubectl get -n $ns deployment/memcached-sample -o jsonpath='{.metadata.uid}' 2>/dev/null)\" =~ ^.+\$ && \"\$(kubectl get -n $ns deployment/memcached-sample -o jsonpath='{.metadata.uid}')\" != $uid ]]"
  step "recreated Deployment available" 120 deployment_has memcached-sample 3
  figure "status" "$(field "$m" '{.status.conditions[?(@.type=="Available")].message}')"
  figure "Deployment owner" "$(field deployment/memcached-sample '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')"
  equals deployment/memcached-sample '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' Memcached/memcached-sample ||
    fail "the Deployment is not owned by the Memcached"
  expect_events Memcached memcached-sample Created=2 Scaled=2
  (cd "$project" && kubectl delete -n "$ns" -k config/samples/ >/dev/null)
  step "deleted, Deployment gone" 60 absent deployment/memcached-sample
  tutorial_stop "$ns"
}

tutorial_webserver() {
  say "WebServer (docs/tutorial-webserver.md)"
  example_project webserver-operator
  ns=tc-tutorial-webserver
  tutorial_start "$ns" webservers.web.example.com
  local w=webservers.web.example.com/webserver-sample
  (cd "$project" && kubectl apply -n "$ns" -k config/samples/ >/dev/null)
  step "sample Available" 120 equals "$w" '{.status.conditions[?(@.type=="Available")].status}' True
  deployment_has webserver-sample 3 || fail "the Deployment does not have 3 available replicas"
  equals service/webserver-sample-service '{.spec.type}' NodePort || fail "no NodePort Service"
  kubectl patch -n "$ns" "$w" --type merge -p '{"spec":{"replicas":4}}' >/dev/null
  step "scaled to 4, all available" 120 deployment_has webserver-sample 4
  kubectl patch -n "$ns" "$w" --type merge -p '{"spec":{"image":"nginx:1.27.4"}}' >/dev/null
  step "rolled over to nginx:1.27.4" 120 kubectl rollout status -n "$ns" deployment webserver-sample --timeout=2s
  equals deployment/webserver-sample '{.spec.template.spec.containers[0].image}' nginx:1.27.4 || fail "the image did not change"
  local uid
  uid="$(field service/webserver-sample-service '{.metadata.uid}')"
  kubectl delete -n "$ns" service webserver-sample-service >/dev/null
  step "deleted Service recreated" 60 bash -c "u=\$(kubectl get -n $ns service/webserver-sample-service -o jsonpath='{.metadata.uid}' 2>/dev/null) && [[ -n \$u && \$u != $uid ]]"
  kubectl scale -n "$ns" deployment webserver-sample --replicas=1 >/dev/null
  step "kubectl scale undone" 60 deployment_has webserver-sample 4
  kubectl create configmap -n "$ns" page --from-literal=index.html='<title>Hello from a ConfigMap</title>' >/dev/null
  kubectl patch -n "$ns" "$w" --type merge -p '{"spec":{"configMap":"page"}}' >/dev/null
  step "rolled over to the ConfigMap's page" 120 bash -c "[[ -n \"\$(kubectl get -n $ns deployment/webserver-sample -o jsonpath='{.spec.template.metadata.annotations.web\.example\.com/content-hash}')\" ]] && kubectl rollout status -n $ns deployment webserver-sample --timeout=2s"
  local hash
  hash="$(field deployment/webserver-sample '{.spec.template.metadata.annotations.web\.example\.com/content-hash}')"
  kubectl create configmap -n "$ns" page --from-literal=index.html='<title>Hello again</title>' \
    --dry-run=client -o yaml | kubectl apply -f - >/dev/null 2>&1
  step "rolled over to the changed page" 120 bash -c "h=\$(kubectl get -n $ns deployment/webserver-sample -o jsonpath='{.spec.template.metadata.annotations.web\.example\.com/content-hash}') && [[ \$h != $hash ]] && kubectl rollout status -n $ns deployment webserver-sample --timeout=2s"
  expect_events WebServer webserver-sample Created=3 Scaled=2 Upgraded=1
  (cd "$project" && kubectl delete -n "$ns" -k config/samples/ >/dev/null)
  step "deleted, Deployment and Service gone" 60 bash -c "! kubectl get -n $ns deployment/webserver-sample service/webserver-sample-service >/dev/null 2>&1"
  tutorial_stop "$ns"
}

tutorial_at() {
  say "At (docs/tutorial-at.md)"
  example_project at-operator
  ns=tc-tutorial-at
  tutorial_start "$ns" ats.at.example.com
  # Due in 10 seconds (the tutorial waits two minutes).
  kubectl apply -n "$ns" -f - >/dev/null <<EOF2
apiVersion: at.example.com/v1alpha1
kind: At
metadata:
  name: at-later
spec:
  schedule: "$(date -u -d '+10 seconds' +%Y-%m-%dT%H:%M:%SZ)"
  command: echo "Hello from At"
EOF2
  step "PENDING" 30 equals ats.at.example.com/at-later '{.status.phase}' PENDING
  absent pod/at-later-pod || fail "the Pod was created before its time"
  step "DONE, after its schedule" 60 equals ats.at.example.com/at-later '{.status.phase}' DONE
  figure "Pod" "$(field pod/at-later-pod '{.status.phase} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')"
  equals pod/at-later-pod '{.status.phase} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' \
    'Succeeded At/at-later' || fail "the Pod did not succeed, owned by the At"
  expect_events At at-later Scheduled=1 Started=1 Finished=1
  (cd "$project" && kubectl apply -n "$ns" -k config/samples/ >/dev/null)
  step "the sample (due already) DONE" 60 equals ats.at.example.com/at-sample '{.status.phase}' DONE
  kubectl delete -n "$ns" ats.at.example.com at-later at-sample >/dev/null
  step "deleted, Pods gone" 60 bash -c "! kubectl get -n $ns pod/at-later-pod >/dev/null 2>&1 && ! kubectl get -n $ns pod/at-sample-pod >/dev/null 2>&1"
  tutorial_stop "$ns"
}

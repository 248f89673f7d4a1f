# Sourced by hack/cluster/lib.sh: the checks of the webhooks (make-run, self-signed, rotation,
# migration) on one generated project, tc-webhooks: a deploy-image Memcached whose v1alpha1 is the
# conversion hub and storage version and v1 a spoke, with defaulting and validating webhooks on
# v1alpha1, in the self-signed certificate mode (create webhook's default). Its calls come from
# hack/cluster/webhook-calls.rs, built as an example of the project.

tc_crd=memcacheds.cache.cluster-check.example.com
# The kind in its storage version: lists in the preferred version (v1) need the conversion webhook,
# which nobody may serve when a check cleans up.
tc_resource=memcacheds.v1alpha1.cache.cluster-check.example.com
tc_calls_namespace=tc-webhook-calls
# What the self-signed checks applied (webhook_setup), kept between the checks of a run.
tc_setup="$state/tc-webhooks-setup"

tc_webhooks_generate() {
  local image=memcached:1.6.26-alpine3.19
  "$operator_rs_bin" init --domain cluster-check.example.com
  "$operator_rs_bin" create api --group cache --version v1alpha1 --kind Memcached --image=$image \
    --image-container-port=11211 --make=false
  "$operator_rs_bin" create api --group cache --version v1 --kind Memcached --image=$image \
    --image-container-port=11211 --controller=false --make=false
  "$operator_rs_bin" create webhook --group cache --version v1alpha1 --kind Memcached --defaulting \
    --programmatic-validation --make=false
  "$operator_rs_bin" create webhook --group cache --version v1alpha1 --kind Memcached --conversion \
    --spoke v1 --make=false
  mkdir -p examples
  cp "$root/hack/cluster/webhook-calls.rs" examples/webhook-calls.rs
}

# Generates and builds tc-webhooks (its manifests written); sets $project, $tc_manager and
# $tc_calls (copies of the binaries: other projects' builds overwrite the shared target dir's).
build_tc_webhooks() {
  generate_project tc-webhooks tc_webhooks_generate
  # The binaries apart from the example, whose dev-dependencies would give the runtime its test
  # features: `make run` builds the manager as this does, and finds it built.
  (cd "$project" && cargo build --quiet --locked --bin manager --bin manifests &&
    "$CARGO_TARGET_DIR/debug/manifests" >/dev/null &&
    cargo build --quiet --locked --example webhook-calls)
  mkdir -p "$state/bin"
  cp "$CARGO_TARGET_DIR/debug/manager" "$state/bin/tc-webhooks-manager"
  cp "$CARGO_TARGET_DIR/debug/examples/webhook-calls" "$state/bin/webhook-calls"
  tc_manager="$state/bin/tc-webhooks-manager" tc_calls="$state/bin/webhook-calls"
}

# Calls through the webhooks for SECONDS at RATE a second (as the user of KUBECONFIG), in the
# calls' namespace; prints what it counted.
webhook_calls() {
  "$tc_calls" "$tc_calls_namespace" "$1" "$2" | sed 's/^/    /'
}

# The requests each webhook path of the manager (metrics on PORT) answered, by code:
# "<path> <code> <count>" lines (the runtime writes the labels in that order).
webhook_requests() {
  curl -fsS "http://127.0.0.1:$1/metrics" |
    sed -n 's/^controller_runtime_webhook_requests_total{webhook="\([^"]*\)",code="\([^"]*\)"} \(.*\)$/\1 \2 \3/p'
}

# The requests of PATH answered 200 in LISTING (of webhook_requests).
answered() { awk -v p="$1" '$1 == p && $2 == 200 { n = $3 } END { printf "%d\n", n }' <<<"$2"; }

# Checks that the manager on PORT answered every webhook (mutate, validate, convert) since BEFORE
# (a webhook_requests listing), with 200 only; prints the counts.
check_webhooks_answered() {
  local port="$1" before="$2" after path kind count errors
  after="$(webhook_requests "$port")"
  for kind in mutate validate convert; do
    path="$(awk -v k="/$kind" 'index($1, k) == 1 { print $1; exit }' <<<"$after")"
    [[ -n "$path" ]] || fail "the manager serves no /$kind... webhook"
    count=$(($(answered "$path" "$after") - $(answered "$path" "$before")))
    errors="$(awk -v p="$path" '$1 == p && $2 != 200 && $3 > 0 { print $2 ": " $3 }' <<<"$after")"
    figure "answered by $path" "$count (200)${errors:+, errors: $errors}"
    ((count > 0)) || fail "no call reached $path"
    [[ -z "$errors" ]] || fail "$path answered errors: $errors"
  done
}

# ---- the deployed self-signed mode, on this machine

# Applies config/default without the manager's Deployment, the webhook Service's Endpoints at this
# machine's address (the port in $tc_setup/webhook-port), and writes a kubeconfig of the manager's
# ServiceAccount; once per run (again if an earlier check tore it down).
webhook_setup() {
  build_tc_webhooks
  if [[ -f "$tc_setup/ready" ]] && kubectl get namespace "$(cat "$tc_setup/namespace")" >/dev/null 2>&1; then
    return
  fi
  webhook_teardown
  mkdir -p "$tc_setup"
  local port
  port="$(free_port)"
  (cd "$project" && kubectl kustomize config/default) >"$tc_setup/rendered.yaml"
  python3 "$root/hack/cluster/without-manager.py" "$tc_setup/rendered.yaml" "$host_ip" "$port" "$tc_setup"
  echo "$port" >"$tc_setup/webhook-port"
  # What an earlier run or check deleted must be gone, or the apply would change it as it goes.
  wait_until 120 "namespace $(cat "$tc_setup/namespace") is not terminating" \
    namespace_not_terminating "$(cat "$tc_setup/namespace")"
  wait_until 120 "CRD $tc_crd is not terminating" crd_not_terminating "$tc_crd"
  kubectl apply -f "$tc_setup/objects.yaml" >/dev/null
  kubectl wait --for=condition=Established "crd/$tc_crd" --timeout=60s >/dev/null
  ensure_namespace "$tc_calls_namespace"
  service_account_kubeconfig "$(cat "$tc_setup/namespace")" "$(cat "$tc_setup/service-account")" \
    "$tc_setup/kubeconfig"
  touch "$tc_setup/ready"
}

# Sets the conversion of tc-webhooks' CRD to None, for the clean-ups after its manager is gone: an
# object stored in v1 (the migration check stores some) is read in v1alpha1 through the conversion
# webhook, so without it neither its finalizers nor the CRD's deletion (whose clean-up reads every
# object) could get past the webhook nobody serves, and the CRD and its namespaces would stay
# Terminating.
without_conversion() {
  kubectl patch crd "$tc_crd" --type merge -p '{"spec":{"conversion":{"strategy":"None","webhook":null}}}' \
    >/dev/null 2>&1 || true
}

# Removes what webhook_setup applied and the Memcacheds the checks made: the webhook
# configurations first (the manager that served them is gone, and they would refuse the patches
# below), then the Memcacheds' finalizers, then the CRD with them, and only then their namespaces,
# whose deletion would otherwise list them in v1 through a conversion webhook nobody serves.
webhook_teardown() {
  [[ -f "$tc_setup/objects.yaml" ]] || return 0
  kubectl get -f "$tc_setup/objects.yaml" --ignore-not-found -o name 2>/dev/null |
    grep 'webhookconfiguration' | xargs -r kubectl delete --ignore-not-found >/dev/null 2>&1 || true
  without_conversion
  local namespace
  for namespace in "$tc_calls_namespace" tc-migration; do
    remove_finalizers "$tc_resource" "$namespace"
  done
  kubectl delete crd "$tc_crd" --ignore-not-found --timeout=120s >/dev/null 2>&1 || true
  kubectl delete namespace "$tc_calls_namespace" tc-migration --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete -f "$tc_setup/objects.yaml" --ignore-not-found --timeout=120s >/dev/null 2>&1 || true
  rm -rf "$tc_setup"
}

# Starts the manager as deployed, on this machine, as NAME (its HOSTNAME, and its log
# $work/NAME.log): the rendered args, with the metrics (plain HTTP) and health probes on free
# local ports, the webhook server on WEBHOOK_PORT, and EXTRA args; as the rendered ServiceAccount.
# It reconciles only the calls' namespace (WATCH_NAMESPACE), not others' Memcacheds. Sets $pid,
# $metrics_port and $health_port; does not wait (manager_ready does).
launch_deployed_manager() {
  local name="$1" webhook_port="$2"; shift 2
  local args=() environment=()
  metrics_port="$(free_port)" health_port="$(free_port)"
  mapfile -t args < <(grep -v -e '^--metrics-bind-address=' -e '^--health-probe-bind-address=' \
    -e '^--metrics-secure' -e '^--webhook-port=' "$tc_setup/args")
  mapfile -t environment <"$tc_setup/env"
  start_process "$work/$name.log" env "${environment[@]}" KUBECONFIG="$tc_setup/kubeconfig" \
    POD_NAMESPACE="$(cat "$tc_setup/namespace")" HOSTNAME="$name" WATCH_NAMESPACE="$tc_calls_namespace" \
    "$tc_manager" "${args[@]}" --metrics-bind-address="127.0.0.1:$metrics_port" --metrics-secure=false \
    --health-probe-bind-address="127.0.0.1:$health_port" --webhook-port="$webhook_port" \
    --log-format=json "$@"
}

# Waits until the manager NAME listens on WEBHOOK_PORT and is ready (health probes on HEALTH_PORT).
manager_ready() {
  local name="$1" webhook_port="$2" health="$3"
  wait_until 60 "$name listens for webhooks" bash -c "echo >/dev/tcp/127.0.0.1/$webhook_port"
  wait_until 60 "$name is ready" curl -fsS "http://127.0.0.1:$health/readyz"
}

# launch_deployed_manager, then manager_ready.
start_deployed_manager() {
  launch_deployed_manager "$@"
  manager_ready "$1" "$2" "$health_port"
}

# The caBundles of the mutating and validating configurations and of the CRD's conversion, one a
# line, as they are now.
ca_bundles() {
  local kind name
  for kind in mutating validating; do
    name="$(sed -n "s/^--webhook-$kind-configuration=//p" "$tc_setup/args")"
    kubectl get "${kind}webhookconfiguration" "$name" \
      -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}'
  done
  kubectl get crd "$tc_crd" -o jsonpath='{.spec.conversion.webhook.clientConfig.caBundle}{"\n"}'
}

# The manager's Secret's field KEY (ca.crt, tls.crt), base64 as stored.
secret_field() {
  local secret
  secret="$(sed -n 's/^--webhook-cert-secret=//p' "$tc_setup/args")"
  kubectl get secret -n "$(cat "$tc_setup/namespace")" "$secret" -o jsonpath="{.data.${1//./\\.}}"
}

# Whether all three caBundles (every webhook of both configurations, and the CRD) are the Secret's
# CA bundle.
ca_bundles_are_the_secrets() {
  local bundle
  bundle="$(secret_field ca.crt 2>/dev/null)" || return 1
  [[ -n "$bundle" ]] || return 1
  [[ "$(ca_bundles | sort -u)" == "$bundle" ]]
}

check_self_signed() {
  webhook_setup
  local port start
  port="$(cat "$tc_setup/webhook-port")"
  figure "webhook Endpoints" "$host_ip:$port (Service $(cat "$tc_setup/namespace")/$(cat "$tc_setup/service"))"
  figure "manager runs as" "system:serviceaccount:$(cat "$tc_setup/namespace"):$(cat "$tc_setup/service-account")"
  start=$(now_ms)
  start_deployed_manager manager-0 "$port"
  wait_until 60 "the three caBundles carry the Secret's CA" ca_bundles_are_the_secrets
  figure "caBundles set" "$(ca_bundles | grep -c .) of $(ca_bundles | wc -l) (2 webhooks, 1 CRD), $(($(now_ms) - start)) ms after the start"
  local before
  before="$(webhook_requests "$metrics_port")"
  webhook_calls 5 10
  check_webhooks_answered "$metrics_port" "$before"
  grep -q '"level":"ERROR"' "$work/manager-0.log" && fail "the manager logged errors: $(grep '"level":"ERROR"' "$work/manager-0.log" | head -3)"
  true
}

# A certificate rotation and a CA rotation in under a minute: the serving certificate is renewed
# 15 s after it is made, the CA enters its window 20 s after it is made (then 10 s of trust
# delay before it signs).
rotation_flags=(--webhook-cert-validity=30s --webhook-cert-rotation-window=15s
  --webhook-ca-validity=60s --webhook-ca-rotation-window=40s)
# The most certificate passes a second while a new CA waits to be trusted, and the most requests a
# second the manager may send during the rotation (its controller and Lease included): a pass
# reads the Secret and the three targets, so a pass loop shows as tens of passes and hundreds of
# requests a second.
max_passes_per_second=5
max_requests_per_second=30

check_rotation() {
  webhook_setup
  local port namespace secret
  port="$(cat "$tc_setup/webhook-port")" namespace="$(cat "$tc_setup/namespace")"
  secret="$(sed -n 's/^--webhook-cert-secret=//p' "$tc_setup/args")"
  # From a new CA, made with the short validities.
  kubectl delete secret -n "$namespace" "$secret" --ignore-not-found >/dev/null
  start_deployed_manager manager-0 "$port" "${rotation_flags[@]}"
  local manager=$pid
  figure "validities" "${rotation_flags[*]}"
  wait_until 60 "the three caBundles carry the Secret's CA" ca_bundles_are_the_secrets
  # The manager's requests, every second, while the calls run.
  start_process "$work/requests" bash -c "$(declare -f metric); while sleep 1; do echo \"\$(date +%s%3N) \$(metric $metrics_port 'rest_client_requests_total[{]')\"; done"
  webhook_calls 50 10
  kill -0 "$manager" 2>/dev/null || fail "the manager exited: $(tail -3 "$work/manager-0.log")"
  python3 "$root/hack/cluster/rotation-figures.py" "$work/manager-0.log" "$work/requests" \
    "$max_passes_per_second" "$max_requests_per_second"
  stop_process "$manager"
  check_two_replicas_agree
}

# Two replicas started together, with no Secret: both serve the one Secret that ends up stored.
check_two_replicas_agree() {
  local namespace secret first second stored served
  namespace="$(cat "$tc_setup/namespace")"
  secret="$(sed -n 's/^--webhook-cert-secret=//p' "$tc_setup/args")"
  kubectl delete secret -n "$namespace" "$secret" --ignore-not-found >/dev/null
  first="$(cat "$tc_setup/webhook-port")" second="$(free_port)"
  launch_deployed_manager replica-a "$first"
  local health_a=$health_port
  launch_deployed_manager replica-b "$second"
  manager_ready replica-a "$first" "$health_a"
  manager_ready replica-b "$second" "$health_port"
  wait_until 30 "the caBundles carry the Secret's CA" ca_bundles_are_the_secrets
  stored="$(secret_field tls.crt | base64 -d | openssl x509 -noout -fingerprint -sha256)"
  for port in "$first" "$second"; do
    served="$(openssl s_client -connect "127.0.0.1:$port" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256)"
    [[ "$served" == "$stored" ]] || fail "the replica on port $port serves $served, the Secret holds $stored"
  done
  local writers
  writers="$(grep -l '"written":true' "$work/replica-a.log" "$work/replica-b.log" | wc -l)"
  figure "two replicas started together" "both serve the Secret's certificate (${stored#*=}); $writers of them wrote it"
}

# ---- make run WEBHOOK_URL=...

# The webhook configurations that a manager under `make run` registered (the runtime's label).
make_run_configurations() {
  kubectl get mutatingwebhookconfiguration,validatingwebhookconfiguration \
    -l app.kubernetes.io/managed-by=operator-rs-runtime -o name | grep '/make-run-.*\.cluster-check\.example\.com$' || true
}

check_make_run() {
  build_tc_webhooks
  # The deployed mode's configurations would call a Service nobody serves now.
  webhook_teardown
  ensure_namespace "$tc_calls_namespace"
  wait_until 120 "CRD $tc_crd is not terminating" crd_not_terminating "$tc_crd"
  on_exit "kubectl delete crd $tc_crd --ignore-not-found --timeout=60s"
  on_exit "remove_finalizers $tc_resource $tc_calls_namespace"
  on_exit without_conversion
  (cd "$project" && make install >"$work/make-install.log" 2>&1) || fail "make install: $(tail -3 "$work/make-install.log")"
  kubectl wait --for=condition=Established "crd/$tc_crd" --timeout=60s >/dev/null
  local conversion_before port metrics health
  conversion_before="$(kubectl get crd "$tc_crd" -o jsonpath='{.spec.conversion}')"
  port="$(free_port)" metrics="$(free_port)" health="$(free_port)"
  # `make run` as the tutorial has it, but for its lints (fmt, vet: hack/test-generated runs them on
  # every project), with the metrics and probes on free local ports, reconciling only the calls'
  # namespace.
  start_process "$work/make-run.log" env WATCH_NAMESPACE="$tc_calls_namespace" \
    make -C "$project" -o fmt -o vet run WEBHOOK_URL="https://$host_ip:$port" \
    RUN_ARGS="--health-probe-bind-address=127.0.0.1:$health --metrics-bind-address=127.0.0.1:$metrics --metrics-secure=false --webhook-port=$port"
  local make=$pid
  wait_until 180 "make run is ready" curl -fsS "http://127.0.0.1:$health/readyz"
  both_registered() { (($(make_run_configurations | wc -l) == 2)); }
  wait_until 30 "its two configurations are registered" both_registered
  figure "registered" "$(make_run_configurations | tr '\n' ' ')"
  figure "CRD conversion" "$(kubectl get crd "$tc_crd" -o jsonpath='{.spec.conversion.webhook.clientConfig.url}')"
  local before
  before="$(webhook_requests "$metrics")"
  webhook_calls 5 10
  check_webhooks_answered "$metrics" "$before"
  local stopping status
  stopping=$(now_ms)
  stop_process "$make" INT && status=0 || status=$?
  figure "exit after SIGINT" "status $status, $(($(now_ms) - stopping)) ms"
  [[ -z "$(make_run_configurations)" ]] || fail "left registered: $(make_run_configurations | tr '\n' ' ')"
  local conversion_after annotation
  conversion_after="$(kubectl get crd "$tc_crd" -o jsonpath='{.spec.conversion}')"
  annotation="$(kubectl get crd "$tc_crd" -o jsonpath='{.metadata.annotations.operator-rs-runtime/conversion-before-webhook-url}')"
  [[ "$conversion_after" == "$conversion_before" && -z "$annotation" ]] ||
    fail "the CRD's conversion is not restored: $conversion_after (before: $conversion_before), annotation '$annotation'"
  figure "after exit" "no make-run registration left; the CRD's conversion restored"
  remove_finalizers "$tc_resource" "$tc_calls_namespace"
  (cd "$project" && make uninstall >"$work/make-uninstall.log" 2>&1) || fail "make uninstall: $(tail -3 "$work/make-uninstall.log")"
}

# ---- storage version migration

# The objects the migration rewrites: 6 s at the default --storage-migration-qps of 10, time to
# see it midway and kill it.
migration_objects=60

# The storage version of the CRD becomes VERSION, the other served version not stored (a replace of
# what the API server holds, so the caBundle the manager set stays).
set_storage_version() {
  kubectl get crd "$tc_crd" -o json |
    jq --arg v "$1" '.spec.versions |= map(.storage = (.name == $v))' | kubectl replace -f - >/dev/null
}

# "<apiVersion> <count>" of the Memcacheds of the migration's namespace, as etcd holds them.
migration_stored() {
  stored_versions "/registry/cache.cluster-check.example.com/memcacheds/tc-migration/"
}
stored_in() {
  migration_stored | awk -v v="cache.cluster-check.example.com/$1" '$1 == v { n = $2 } END { print n + 0 }'
}
stored_versions_are() {
  local now
  now="$(kubectl get crd "$tc_crd" -o jsonpath='{.status.storedVersions}')"
  [[ "$now" == "$1" ]] || { echo "status.storedVersions: $now"; false; }
}
quarter_migrated() {
  (($(stored_in v1alpha1) >= migration_objects / 4)) || { echo "stored: $(migration_stored | tr '\n' ' ')"; false; }
}

check_migration() {
  webhook_setup
  curl -fsS --max-time 5 "$etcd_url/version" >/dev/null || skip "no etcd at $etcd_url (ETCD_URL) to read the stored versions from"
  local port
  port="$(cat "$tc_setup/webhook-port")"
  ensure_namespace tc-migration
  # The webhooks (admission, conversion) must answer while the objects are written in v1.
  start_deployed_manager manager-0 "$port"
  set_storage_version v1
  local i
  for ((i = 0; i < migration_objects; i++)); do
    printf -- '---\napiVersion: cache.cluster-check.example.com/v1\nkind: Memcached\nmetadata: {name: migrated-%d}\nspec: {size: 1}\n' "$i"
  done | kubectl apply -n tc-migration -f - >/dev/null
  set_storage_version v1alpha1
  stop_process "$pid"
  figure "stored before" "$(migration_stored | tr '\n' ' ')"
  [[ "$(stored_in v1)" -eq "$migration_objects" ]] || fail "the objects are not all stored in v1"
  figure "status.storedVersions before" "$(kubectl get crd "$tc_crd" -o jsonpath='{.status.storedVersions}')"

  local start
  start=$(now_ms)
  start_deployed_manager manager-1 "$port"
  wait_until 60 "the migration has written a quarter of the objects" quarter_migrated
  stop_process "$pid" KILL || true
  figure "killed (SIGKILL) mid-way" "$(($(now_ms) - start)) ms after the start, stored: $(migration_stored | tr '\n' ' ')"
  [[ "$(stored_in v1)" -gt 0 ]] || fail "the migration finished before the kill: nothing left to resume"
  [[ "$(kubectl get crd "$tc_crd" -o jsonpath='{.status.storedVersions}')" == *v1\"* ]] ||
    fail "status.storedVersions was trimmed before the migration finished"

  start=$(now_ms)
  start_deployed_manager manager-2 "$port"
  wait_until 120 "status.storedVersions is trimmed to v1alpha1" stored_versions_are '["v1alpha1"]'
  figure "restarted, finished" "$(($(now_ms) - start)) ms after the restart (the Lease of the killed leader expires first)"
  figure "stored after" "$(migration_stored | tr '\n' ' ')"
  figure "status.storedVersions after" "$(kubectl get crd "$tc_crd" -o jsonpath='{.status.storedVersions}')"
  figure "objects written by the second run" "$(metric "$metrics_port" 'storage_migrator_core_migrator_migrated_objects_total[{]')"
  [[ "$(stored_in v1alpha1)" -eq "$migration_objects" && "$(stored_in v1)" -eq 0 ]] ||
    fail "not every object is stored in v1alpha1: $(migration_stored | tr '\n' ' ')"
  kubectl delete namespace tc-migration --wait=false >/dev/null
}

# Sourced by hack/cluster/lib.sh: an API server restarted while a manager works through a backlog.
# The shared control plane cannot be restarted (others use it), so the check starts a private one,
# as envtest does: etcd and kube-apiserver from KUBEBUILDER_ASSETS (default $HOME/k8s-local/bin,
# laid out as setup-envtest lays them out) on free ports, with a CA and serving certificate of its
# own and a token file, no controller manager. The tutorial's Memcached manager (release) runs
# against it; the API server is stopped once a third of the Deployments exist and started again on
# the same port and etcd, and the manager must finish the backlog after.

restart_objects=150

# kubectl against the private control plane.
pk() { kubectl --kubeconfig "$cp/kubeconfig" "$@"; }

# Makes the private control plane's files in $cp: its CA, a serving certificate for 127.0.0.1, a
# service account key pair, an administrator's token and a kubeconfig with them; picks its ports.
private_control_plane_files() {
  mkdir -p "$cp/pki"
  local pki="$cp/pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=test-cluster-ca \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=kube-apiserver \
    -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
    -keyout "$pki/apiserver.key" -out "$pki/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  token="$(openssl rand -hex 16)"
  echo "$token,admin,admin,system:masters" >"$pki/tokens.csv"
  etcd_port="$(free_port)" etcd_peer_port="$(free_port)" api_port="$(free_port)"
  cat >"$cp/kubeconfig" <<EOF2
apiVersion: v1
kind: Config
clusters: [{name: private, cluster: {server: "https://127.0.0.1:$api_port", certificate-authority-data: "$(base64 -w0 <"$pki/ca.crt")"}}]
users: [{name: admin, user: {token: "$token"}}]
contexts: [{name: private, context: {cluster: private, user: admin}}]
current-context: private
EOF2
}

start_private_etcd() {
  start_process "$cp/etcd.log" "$assets/etcd" --name default --data-dir "$cp/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "default=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync
  etcd=$pid
}

# The flags of $HOME/k8s-local/start.sh, but for the aggregator's (no front proxy here).
start_private_apiserver() {
  local pki="$cp/pki"
  start_process "$cp/kube-apiserver.log" "$assets/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type=none
  apiserver=$pid
}

private_apiserver_ready() {
  [[ "$(curl -fsS --max-time 3 --cacert "$cp/pki/ca.crt" -H "Authorization: Bearer $token" \
    "https://127.0.0.1:$api_port/readyz" 2>/dev/null)" == ok ]]
}

# How many Memcacheds of the backlog have their Deployment, and how many report an Available
# condition (with no controller manager no pod ever runs: the condition is False, but reported).
backlog_progress() {
  echo "$(pk get deployments -n backlog --no-headers 2>/dev/null | wc -l)" \
    "$(pk get memcacheds -n backlog -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Available")].type}{"\n"}{end}' 2>/dev/null | grep -c Available)"
}
deployments_at_least() { (($(backlog_progress | cut -d' ' -f1) >= $1)); }
backlog_converged() { [[ "$(backlog_progress)" == "$restart_objects $restart_objects" ]]; }

check_apiserver_restart() {
  assets="${KUBEBUILDER_ASSETS:-$HOME/k8s-local/bin}"
  [[ -x "$assets/kube-apiserver" && -x "$assets/etcd" ]] ||
    skip "no kube-apiserver and etcd in KUBEBUILDER_ASSETS ($assets)"
  build_memcached
  (cd "$project" && cargo run --quiet --locked --bin manifests >/dev/null)
  cp="$work/control-plane"
  private_control_plane_files
  local start
  start=$(now_ms)
  start_private_etcd
  start_private_apiserver
  wait_until 60 "the private API server is ready" private_apiserver_ready
  figure "private control plane" "etcd :$etcd_port, kube-apiserver :$api_port, ready in $(($(now_ms) - start)) ms"
  (cd "$project" && kubectl kustomize config/crd) | pk apply -f - >/dev/null
  pk wait --for=condition=Established crd/memcacheds.cache.example.com --timeout=60s >/dev/null
  pk create namespace backlog >/dev/null
  local i
  for ((i = 0; i < restart_objects; i++)); do
    printf -- '---\napiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata: {name: backlog-%d}\nspec: {size: 1}\n' "$i"
  done | pk apply -n backlog -f - >/dev/null

  local health metrics manager
  health="$(free_port)" metrics="$(free_port)"
  start=$(now_ms)
  start_process "$work/manager.log" env KUBECONFIG="$cp/kubeconfig" "$memcached_release" \
    --health-probe-bind-address="127.0.0.1:$health" --metrics-bind-address="127.0.0.1:$metrics" --metrics-secure=false
  manager=$pid
  wait_until 120 "a third of the Deployments exist" deployments_at_least $((restart_objects / 3))
  local progress stopped
  progress="$(backlog_progress)"
  stopped=$(now_ms)
  stop_process "$apiserver" TERM || true
  figure "API server stopped" "$(($(now_ms) - start)) ms after the manager's start, at ${progress% *} of $restart_objects Deployments"
  sleep 3
  start_private_apiserver
  wait_until 60 "the private API server is ready again" private_apiserver_ready
  figure "API server back" "after $(($(now_ms) - stopped)) ms"
  local back
  back=$(now_ms)
  wait_until 180 "every Memcached has its Deployment and reports its status" backlog_converged
  figure "backlog converged" "$(($(now_ms) - back)) ms after the API server was back, $(($(now_ms) - start)) ms after the manager's start"
  kill -0 "$manager" 2>/dev/null || fail "the manager exited: $(tail -3 "$work/manager.log")"
  figure "manager's failed requests" "$(metric "$metrics" 'rest_client_requests_total[{]code="<error>"')"
}

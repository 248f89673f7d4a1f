# Sourced by hack/test-cluster (needs $root): what its checks share. Each check is a function
# check_<name> in one of the files sourced at the end, run in a subshell by run_check: the processes
# it starts (start_process) and the clean-ups it registers (on_exit) end with it, whether it passes
# or fails.

# The state kept between runs: generated projects (synced, so that unchanged files keep their
# times and cargo rebuilds only what changed) and their builds.
state="${TEST_CLUSTER_DIR:-$root/target/test-cluster}"
mkdir -p "$state"
# shellcheck source=hack/build-env.sh
source "$root/hack/build-env.sh"
# The address at which the API server reaches this machine: webhook Endpoints and URLs.
host_ip="${HOST_IP:-$(ip -4 -o addr show scope global 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')}"
etcd_url="${ETCD_URL:-http://127.0.0.1:2379}"

# ---- output

# A figure a check measured: `figure "calls" 316`.
figure() { printf '    %-40s %s\n' "$1:" "$2"; }
# A line of a check's progress.
say() { echo "  $*"; }
# Fails the check with a message.
fail() { echo "  FAILED: $*" >&2; exit 1; }
# Ends the check as skipped, saying why (hack/test-cluster prints it as neither ok nor FAILED).
skip() { echo "  skipped: $*"; exit 3; }

# ---- the check's subshell: processes and clean-ups

run_check() {
  set -euo pipefail
  cleanups=() processes=()
  trap 'end_check' EXIT
  work="$(mktemp -d "${TMPDIR:-/tmp}/test-cluster.XXXXXX")"
  "check_${1//-/_}"
}

# Registers a command to run when the check ends (the last registered runs first).
on_exit() { cleanups+=("$1"); }

end_check() {
  local status=$? pid i
  set +e
  for pid in "${processes[@]}"; do stop_process "$pid" TERM; done
  for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" >/dev/null 2>&1; done
  # The logs of a failed check stay, to look at.
  if ((status == 0 || status == 3)); then rm -rf "$work"; else echo "  its logs: $work"; fi
  exit "$status"
}

# Starts `command...` in the background in a session of its own (so that a signal reaches the
# whole of it, as Ctrl-C reaches `make run` and the manager under it), its output in LOG; sets
# $pid. It is stopped when the check ends.
start_process() {
  local log="$1"; shift
  setsid "$@" >"$log" 2>&1 </dev/null &
  pid=$!
  processes+=("$pid")
}

# Sends SIGNAL (default TERM) to the session of PID and waits up to 30 s for every process of it
# to end (then SIGKILL): `make run` may end before the manager under it has cleaned up. Returns
# PID's exit status.
stop_process() {
  local pid="$1" signal="${2:-TERM}" i
  {
    kill -s "$signal" -- "-$pid" || true
    for ((i = 0; i < 300; i++)); do
      kill -0 -- "-$pid" || break
      sleep 0.1
    done
    kill -s KILL -- "-$pid" || true
    wait "$pid"
  } 2>/dev/null
}

# ---- waiting

# Runs `command...` every half second until it succeeds; fails the check after TIMEOUT seconds,
# naming WHAT, with what the last try printed. (A condition with a `$(...)` is a function: the
# arguments are expanded once, before the first try.)
wait_until() {
  local timeout="$1" what="$2" out; shift 2
  local deadline=$((SECONDS + timeout))
  until out="$("$@" 2>&1)"; do
    ((SECONDS < deadline)) || fail "timed out after ${timeout}s waiting until $what${out:+ (last: ${out:0:400})}"
    sleep 0.5
  done
}

# Milliseconds since the epoch.
now_ms() { date +%s%3N; }

# ---- machine and cluster

# A TCP port free on this machine now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'; }

# The sum of the samples of the manager's /metrics (plain HTTP on PORT) whose line matches the
# extended regular expression PATTERN from its start: `metric 8080 'rest_client_requests_total[{]'`.
metric() {
  curl -fsS --max-time 5 "http://127.0.0.1:$1/metrics" 2>/dev/null |
    awk -v pattern="^$2" '$0 ~ pattern { sum += $NF } END { printf "%d\n", sum }'
}

# Writes to FILE a kubeconfig for the cluster of KUBECONFIG that authenticates as the ServiceAccount
# NAMESPACE/NAME, with a token from the TokenRequest API (`kubectl create token`): what a pod of
# that ServiceAccount has.
service_account_kubeconfig() {
  local namespace="$1" name="$2" file="$3" token server ca
  token="$(kubectl create token -n "$namespace" "$name" --duration=2h)"
  server="$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
  ca="$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
  if [[ -z "$ca" ]]; then
    ca="$(base64 -w0 <"$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')")"
  fi
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: cluster, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: $name, user: {token: "$token"}}]
contexts: [{name: $name, context: {cluster: cluster, user: $name, namespace: $namespace}}]
current-context: $name
EOF
}

# The apiVersions in which the objects under the etcd key PREFIX (/registry/<group>/<plural>/...)
# are stored, one "<apiVersion> <count>" line each: read from etcd's JSON gateway, since no client
# of the API server can see them.
stored_versions() {
  python3 - "$etcd_url" "$1" <<'PY'
import base64, collections, json, sys, urllib.request
url, prefix = sys.argv[1], sys.argv[2].encode()
end = prefix[:-1] + bytes([prefix[-1] + 1])
b64 = lambda b: base64.b64encode(b).decode()
request = urllib.request.Request(f"{url}/v3/kv/range", json.dumps({"key": b64(prefix), "range_end": b64(end)}).encode())
answer = json.load(urllib.request.urlopen(request, timeout=10))
counts = collections.Counter(json.loads(base64.b64decode(kv["value"]))["apiVersion"] for kv in answer.get("kvs", []))
for version, count in sorted(counts.items()):
    print(version, count)
PY
}

# Copies the tree SOURCE over DEST, writing only the files whose content differs and deleting
# what SOURCE does not have (but target/), so that cargo sees unchanged files as unchanged.
sync_tree() {
  python3 - "$1" "$2" <<'PY'
import filecmp, os, shutil, sys
source, dest = sys.argv[1], sys.argv[2]
for folder, dirs, files in os.walk(source):
    relative = os.path.relpath(folder, source)
    target = os.path.normpath(os.path.join(dest, relative))
    os.makedirs(target, exist_ok=True)
    # Links to folders are listed with the folders (and not followed).
    for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
        src, dst = os.path.join(folder, name), os.path.join(target, name)
        if os.path.islink(src):
            if os.path.islink(dst) and os.readlink(dst) == os.readlink(src):
                continue
            if os.path.isdir(dst) and not os.path.islink(dst):
                shutil.rmtree(dst)
            elif os.path.lexists(dst):
                os.remove(dst)
            os.symlink(os.readlink(src), dst)
        elif not os.path.isfile(dst) or not filecmp.cmp(src, dst, shallow=False):
            shutil.copy2(src, dst)
    for name in os.listdir(target):
        if relative == "." and name == "target":
            continue
        if not os.path.lexists(os.path.join(folder, name)):
            path = os.path.join(target, name)
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
PY
}

# ---- builds

# Builds operator-rs and sets CARGO_TARGET_DIR and $operator_rs_bin for the generated projects
# (hack/generated-env.sh).
build_tools() {
  # shellcheck source=hack/generated-env.sh
  source "$root/hack/generated-env.sh"
  export CARGO_TARGET_DIR
}

# Generates a project into $state/NAME with the function GENERATE (run in an empty folder), keeping
# the files that did not change; sets $project.
generate_project() {
  local name="$1" generate="$2" fresh
  fresh="$(mktemp -d "${TMPDIR:-/tmp}/test-cluster-gen.XXXXXX")"
  (cd "$fresh" && mkdir "$name" && cd "$name" && "$generate" >/dev/null)
  sync_tree "$fresh/$name" "$state/$name"
  rm -rf "$fresh"
  project="$state/$name"
}

# Creates the namespace NAME if it is not there (waiting out a deletion of an earlier run's).
ensure_namespace() {
  wait_until 120 "namespace $1 is not terminating" namespace_not_terminating "$1"
  kubectl get namespace "$1" >/dev/null 2>&1 || kubectl create namespace "$1" >/dev/null
}
namespace_not_terminating() {
  [[ "$(kubectl get namespace "$1" -o jsonpath='{.status.phase}' 2>/dev/null)" != Terminating ]]
}
crd_not_terminating() {
  [[ -z "$(kubectl get crd "$1" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ]]
}

# Removes the finalizers of every object of RESOURCE (plural.group, or plural.version.group) in
# NAMESPACE: for clean-ups after the manager that would remove them is gone.
remove_finalizers() {
  local resource="$1" namespace="$2" name
  # By name, not `-o name`, which drops the version of RESOURCE.
  for name in $(kubectl get "$resource" -n "$namespace" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
    kubectl patch "$resource" "$name" -n "$namespace" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
  done
}

# shellcheck source=hack/cluster/webhooks.sh
source "$root/hack/cluster/webhooks.sh"
# shellcheck source=hack/cluster/sharding.sh
source "$root/hack/cluster/sharding.sh"
# shellcheck source=hack/cluster/tutorials.sh
source "$root/hack/cluster/tutorials.sh"
# shellcheck source=hack/cluster/apiserver-restart.sh
source "$root/hack/cluster/apiserver-restart.sh"
# shellcheck source=hack/cluster/helm.sh
source "$root/hack/cluster/helm.sh"
# shellcheck source=hack/cluster/bench.sh
source "$root/hack/cluster/bench.sh"

# Sourced by hack/cluster/lib.sh: the cost of a controller at scale on a real API server is
# hack/bench-reconcile's (a cold backlog of 1,000 and of 10,000 Memcached objects through the
# deploy-image manager, beside the floor measured in the same run: a plain client doing one apply
# and one status patch per object); this check runs it once per size and keeps its figures and
# verdicts. It fails only when the bench does (a run that does not converge); the goals it prints as
# met or missed are issue 45's.

check_bench() {
  local sizes=(${BENCH_SIZES:-1000 10000})
  "$root/hack/bench-reconcile" --cluster --runs 1 "${sizes[@]}" 2>&1 | sed 's/^/  /'
  [[ "${PIPESTATUS[0]}" -eq 0 ]] || fail "hack/bench-reconcile --cluster failed"
}

# Shared by the sharding benchmarks (bench/sharding/scale_bench.sh, move_bench.sh); source it
# after bench/lib/controller_bench.sh. Reads at call time: $K (kubectl as admin), $lease (the
# replicas' --leader-elect-resource-name), rep_port and rep_id (each replica's metrics port and
# identity, by index), KCM_TESTBED_ADMIN_TOKEN.
# Provides: metric <port> <name> [<label>], shard_map, replica_identity <log>, wait_balanced <index...>,
# wait_gone_from_map <index>.

# metric <port> <name> [<label>]: the sum of a metric's samples on a replica's (or kube-scheduler's)
# /metrics, only those whose labels hold <label> (say method="PUT") when given ("" if none; also
# when the endpoint does not answer within 10 s).
metric() {
  curl -sk --max-time 10 -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" "https://127.0.0.1:$1/metrics" \
    2>/dev/null | awk -v name="$2" -v label="${3:-}" '
      ($1 == name || index($1, name "{") == 1) && (label == "" || index($1, label) > 0) {
        v += $NF; seen = 1
      }
      END {if (seen) printf "%d\n", v}'
}
# The shard map of the replicas' Lease, as JSON ("" while there is none).
shard_map() {
  $K -n kube-system get lease "$lease-shards" \
    -o 'jsonpath={.metadata.annotations.kube-controller-manager-cpp/shard-map}' 2>/dev/null || true
}
# replica_identity <log>: a replica's identity, from its log line "Sharding by namespace"
# identity="<identity>" (waits ≤ 10 s for it; "" if it never came).
replica_identity() {
  local id=""
  for _ in $(seq 100); do
    id=$(sed -n 's/.*"Sharding by namespace" identity="\([^"]*\)".*/\1/p; T; q' "$1")
    [ -n "$id" ] && break
    sleep 0.1
  done
  echo "$id"
}
# Waits (≤ 120 s) until each of the live replicas (indices given) sees them all as members and
# serves some namespaces, every namespace of the cluster is served, and no handoff is pending.
wait_balanced() {
  local all i m n sum ok map
  all=$($K get namespaces --no-headers | wc -l)
  for _ in $(seq 480); do
    ok=1 sum=0
    for i in "$@"; do
      m=$(metric "${rep_port[$i]}" controller_sharding_members)
      n=$(metric "${rep_port[$i]}" controller_sharding_namespaces)
      [ "${m:-0}" = $# ] && [ "${n:-0}" -gt 0 ] || ok=0
      sum=$((sum + ${n:-0}))
    done
    map=$(shard_map)
    [ "$ok" = 1 ] && [ "$sum" = "$all" ] && [[ $map != *'"next":"'[!\"]* ]] && return 0
    sleep 0.25
  done
  echo "  replicas ($*) not balanced after 120 s (served $sum of $all namespaces)" >&2
}
# Waits (≤ 60 s) until the shard map no longer names replica <index> as owner or next.
wait_gone_from_map() {
  for _ in $(seq 240); do
    [[ $(shard_map) != *"${rep_id[$1]}"* ]] && return 0
    sleep 0.25
  done
  echo "  replica $1 still in the shard map after 60 s" >&2
}

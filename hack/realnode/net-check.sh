#!/usr/bin/env bash
# The real nodes' network (net.sh) on its own, without Kubernetes: both node
# namespaces as e2e.sh makes them, an HTTP server in each at its node's
# address, a pod-like namespace behind node 0's CNI bridge (the Debian bridge
# plugin, with its masquerading), and a Service-like DNAT rule in node 0.
# Shows host -> node, node -> node, pod -> other node, host -> Service range
# through node 0, that the nodes have no route to the machine's interface
# addresses and that nothing listens on them, then tears it all down and
# shows that links, namespaces, routes, iptables/nftables rules and listeners
# are as before. Root. `hack/realnode/e2e.sh net-check` runs it.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=net.sh
source "$here/net.sh"
CNI_BIN="${CNI_BIN:-/usr/lib/cni}"
POD_NS=lmrn-checkpod
tmp="$(mktemp -d)"
fails=0

log() { echo "net-check: $*" >&2; }
check() { # check WHAT CMD...: CMD must succeed
	local what="$1"
	shift
	if "$@" >/dev/null 2>&1; then log "ok   $what"; else log "FAIL $what"; fails=$((fails + 1)); fi
}
refused() { # refused WHAT CMD...: CMD must fail
	local what="$1"
	shift
	if "$@" >/dev/null 2>&1; then log "FAIL $what"; fails=$((fails + 1)); else log "ok   $what"; fi
}
in_node() { local n="$1"; shift; nsenter "--net=$(node_netns "$n")" -- "$@"; }
get() { curl -sf --max-time 5 "$@"; }

# snapshot FILE: what a run must leave as it found it.
snapshot() {
	{
		echo "# links"; ip -o link show | awk -F': ' '{print $2}' | sort
		echo "# netns"; ip netns list
		echo "# routes"; ip -4 route show; ip -6 route show
		echo "# iptables"; iptables-save 2>/dev/null | sed '/^#/d; s/\[[0-9]*:[0-9]*\]//'
		echo "# ip6tables"; ip6tables-save 2>/dev/null | sed '/^#/d; s/\[[0-9]*:[0-9]*\]//'
		echo "# nftables"; nft list ruleset 2>/dev/null
		# Loopback listeners come and go with other tests on this machine.
		echo "# listeners"; ss -Htln | awk '{print $4}' | grep -Ev '^(127\.|\[::1\]:)' | sort
		echo "# mounts of /run/netns"; awk '$2 ~ "^/run/netns"' /proc/mounts
	} >"$1"
}

cni() { # cni ADD|DEL: the pod namespace on node 0's bridge, as containerd would
	CNI_COMMAND="$1" CNI_CONTAINERID=netcheck CNI_NETNS="/run/netns/$POD_NS" CNI_IFNAME=eth0 CNI_PATH="$CNI_BIN" \
		in_node 0 "$CNI_BIN/bridge" <<EOF
{"cniVersion": "1.0.0", "name": "realnode0", "type": "bridge", "bridge": "realnode0", "isGateway": true, "ipMasq": true,
 "ipam": {"type": "host-local", "dataDir": "$tmp/ipam", "ranges": [[{"subnet": "10.88.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}}
EOF
}

teardown() {
	[[ -e /run/netns/$POD_NS ]] && { cni DEL >/dev/null 2>&1 || true; ip netns del "$POD_NS"; }
	node_net_down 1
	node_net_down 0
}

[[ -x $CNI_BIN/bridge ]] || apt-get install -y containernetworking-plugins iptables >/dev/null
if ip link show "$RN_BRIDGE" >/dev/null 2>&1; then
	log "the nodes' network is in use (hack/realnode/e2e.sh down removes it)"
	rm -rf "$tmp"
	exit 1
fi
snapshot "$tmp/before"
trap 'teardown; rm -rf "$tmp"' EXIT

node_net_up 0 10.96.0.0/24
node_net_up 1 10.97.0.0/24
mkdir -p "$tmp/www" && echo realnode >"$tmp/www/index.html"
for n in 0 1; do
	in_node "$n" python3 -m http.server --bind "$(node_ip "$n")" --directory "$tmp/www" 8080 >"$tmp/http$n.log" 2>&1 &
done
ip netns add "$POD_NS"
cni ADD >"$tmp/cni.json"
pod_ip="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ips"][0]["address"].split("/")[0])' "$tmp/cni.json")"
# A Service-like rule: 10.96.0.10:80 is node 0's server, as kube-proxy would
# DNAT a ClusterIP to a pod.
in_node 0 iptables -t nat -A PREROUTING -d 10.96.0.10/32 -p tcp --dport 80 -j DNAT --to-destination "$(node_ip 0):8080"
for n in 0 1; do
	for _ in $(seq 50); do get "http://$(node_ip "$n"):8080/" >/dev/null && break; sleep 0.1; done
done

log "addresses: host $RN_HOST_IP ($RN_BRIDGE), node 0 $(node_ip 0), node 1 $(node_ip 1), pod on node 0 $pod_ip"
check "host -> node 0" get "http://$(node_ip 0):8080/"
check "host -> node 1" get "http://$(node_ip 1):8080/"
check "pod on node 0 -> node 1" ip netns exec "$POD_NS" curl -sf --max-time 5 "http://$(node_ip 1):8080/"
check "node 1 saw the pod as node 0 (masqueraded)" grep -q "^$(node_ip 0) " "$tmp/http1.log"
check "node 0 -> node 1" in_node 0 curl -sf --max-time 5 "http://$(node_ip 1):8080/"
check "node 1 -> node 0" in_node 1 curl -sf --max-time 5 "http://$(node_ip 0):8080/"
check "host -> Service range through node 0 (DNAT)" get "http://10.96.0.10/"
eth="$(ip -o addr show scope global | awk '$2 != "'"$RN_BRIDGE"'" {print $4}' | sed 's#/.*##')"
for a in $eth; do
	refused "node 0 has no route to the interface address $a" ip -n "$(node_ns 0)" route get "$a"
	refused "the pod has no route to $a beyond node 0" ip -n "$(node_ns 0)" route get "$a" from "$pod_ip" iif realnode0
	refused "no listener in the host namespace on $a" bash -c "ss -Htln | awk '{print \$4}' | grep -qF '$a:'"
done
for n in 0 1; do
	log "listeners in node $n: $(in_node "$n" ss -Htln | awk '{print $4}' | tr '\n' ' ')"
done
log "iptables nat rules in node 0: $(in_node 0 iptables-save -t nat | grep -c '^-A')"

trap - EXIT
teardown
snapshot "$tmp/after"
if diff -u "$tmp/before" "$tmp/after" >&2; then log "ok   links, namespaces, routes, iptables, nftables, listeners as before"; else
	log "FAIL the run left the differences above"
	fails=$((fails + 1))
fi
rm -rf "$tmp"
if [[ $fails != 0 ]]; then log "$fails check(s) failed"; exit 1; fi
log "all checks passed"

# shellcheck shell=bash
# Sourced by run.sh and e2e.sh: the network the real nodes live on. Tests
# here may talk only to loopback and to network namespaces they created, so
# each node's processes (containerd, etcd, kube-apiserver, the controllers,
# kube-proxy, the kubelet and with them the pods' CNI bridge and every
# iptables rule) run in a network namespace of their own, lm-realnode<N>.
# Its eth0 (RN_NET.1<N>/24) is one end of a veth pair whose other end,
# lmrn-n<N>, is a port of the bridge lmrn in the host's namespace; the
# bridge holds the host's address on that network (RN_NET.1). Nodes reach
# each other across the bridge, the host reaches every node directly, and
# nothing has a default route, so nothing reaches beyond these addresses.
# Deleting a node's namespace removes all that ran inside it; the bridge
# goes with the last node.

RN_NET="${RN_NET:-172.31.250}" # a /24 that nothing on this machine routes
RN_BRIDGE=lmrn
RN_HOST_IP="$RN_NET.1"

node_ip() { echo "$RN_NET.$((10 + $1))"; }
node_ns() { echo "lm-realnode$1"; }

# node_netns N: the path of node N's network namespace. Processes go in with
# `nsenter --net=PATH -- CMD` (which execs CMD: $! stays its PID) rather than
# `ip netns exec`, which would also give CMD a mount namespace of its own:
# containerd must see the kubelet's volume mounts, and the host must see
# both (to clean them up).
node_netns() { echo "/run/netns/$(node_ns "$1")"; }

# net_bridge_up: the host's end, once for all nodes. Refuses an RN_NET that
# something else on this machine routes (other than the default route).
net_bridge_up() {
	ip link show "$RN_BRIDGE" >/dev/null 2>&1 && return 0
	local other
	other="$(ip -4 route show to match "$RN_HOST_IP" | grep -v '^default' || true)"
	if [[ -n $other ]]; then
		echo "net.sh: $RN_NET.0/24 is already routed here ($other); set RN_NET to another /24" >&2
		return 1
	fi
	ip link add "$RN_BRIDGE" type bridge
	ip addr add "$RN_HOST_IP/24" dev "$RN_BRIDGE"
	ip link set "$RN_BRIDGE" up
}

# node_net_up N SERVICE_CIDR: node N's namespace and its link to the bridge.
# The Service range is routed on-link inside the node (its own processes'
# connections to Service IPs need a route before kube-proxy's DNAT rewrites
# them) and through the node from the host (the suite reads the operator's
# metrics through its ClusterIP).
node_net_up() {
	local n="$1" svc="$2" ns
	ns="$(node_ns "$n")"
	net_bridge_up
	ip netns add "$ns"
	ip link add "lmrn-n$n" type veth peer name eth0 netns "$ns"
	ip link set "lmrn-n$n" master "$RN_BRIDGE" up
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$(node_ip "$n")/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add "$svc" dev eth0
	ip route replace "$svc" via "$(node_ip "$n")" dev "$RN_BRIDGE"
}

# node_net_down N: kills what still runs in node N's namespace (only this
# script starts processes there), then removes the namespace and its link,
# and the bridge once no node is left.
node_net_down() {
	local n="$1" ns pids
	ns="$(node_ns "$n")"
	if [[ -e /run/netns/$ns ]]; then
		pids="$(ip netns pids "$ns" 2>/dev/null || true)"
		if [[ -n $pids ]]; then
			# shellcheck disable=SC2086
			kill -9 $pids 2>/dev/null || true
			for _ in $(seq 50); do [[ -z $(ip netns pids "$ns" 2>/dev/null) ]] && break; sleep 0.1; done
		fi
		ip netns del "$ns"
	fi
	ip link del "lmrn-n$n" 2>/dev/null || true
	if ! compgen -G "/run/netns/$(node_ns '*')" >/dev/null; then
		ip link del "$RN_BRIDGE" 2>/dev/null || true
		# `ip netns add` made /run/netns a mount point; undo that when it is empty.
		if [[ -d /run/netns && -z $(ls -A /run/netns) ]]; then umount /run/netns 2>/dev/null || true; rmdir /run/netns 2>/dev/null || true; fi
	fi
}

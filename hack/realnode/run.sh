#!/usr/bin/env bash
# Runs real pods on this machine: containerd + runc from Debian, a locally
# built pause image, a kubelet, kube-controller-manager, kube-scheduler and
# kube-proxy built from the Go module proxy, kube-apiserver + etcd from the
# envtest assets, a bridge CNI network. Then checks a hostNetwork pod, a pod
# with what the charts use (non-root, seccomp, read-only root, Secret volume,
# service-account token, probes) and a Deployment. Everything lives under
# $WORK (default /tmp/realnode/run-realnode$INSTANCE, binaries in
# /tmp/realnode/bin); every process started here is stopped, and what it left
# on the host removed, on exit unless KEEP=1.
#
#   hack/realnode/run.sh                      # set up, check the pods, tear down
#   KEEP=1 hack/realnode/run.sh               # leave it running; kubeconfig in $WORK
#   hack/realnode/run.sh stop                 # tear down (same INSTANCE)
#   INSTANCE=1 KEEP=1 PODS=0 hack/realnode/run.sh   # a second node beside the first, no test pods
#
# Knobs: INSTANCE (0, 1: ports, paths, ranges, kube-proxy mode), PODS=0,
# CNI=0 (host network only), CONTROL_PLANE=0 (no controller-manager,
# scheduler, kube-proxy), RESTRICT_OOM=false (reproduces the sandbox
# failure), RUNC / CONTAINERD / KUBELET (other binaries), POD_TIMEOUT,
# IMAGES (an OCI layout to import; default bin/images of `make images`),
# RN_NET (net.sh: the /24 of the nodes' addresses).
# Every process of the node runs in its own network namespace (net.sh), at
# $NODE_IP; nothing listens on or talks to the machine's own addresses.
# See docs/testing.md ("A real node on this machine").
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=net.sh
source "$here/net.sh"
OUT="${OUT:-/tmp/realnode}"
# INSTANCE=0,1,...: independent nodes side by side (own network namespace
# and address, ports, paths, pod and service ranges, cgroup root), e.g. a
# KCP and a runtime.
INSTANCE="${INSTANCE:-0}"
NODE="realnode$INSTANCE"
NODE_IP="$(node_ip "$INSTANCE")"
IN_NODE=(nsenter "--net=$(node_netns "$INSTANCE")" --)
WORK="${WORK:-$OUT/run-$NODE}"
P=$((20000 + INSTANCE * 1000))
BIN="$OUT/bin"
K8S_VERSION="${K8S_VERSION:-1.36.3}"
ASSETS="${ASSETS:-$HOME/.cache/lifecycle-manager/envtest/k8s-${K8S_VERSION}-etcd-3.6.5}"
CONTAINERD="${CONTAINERD:-/usr/bin/containerd}"
RUNC="${RUNC:-/usr/bin/runc}"
CTR="${CTR:-/usr/bin/ctr}"
KUBELET="${KUBELET:-$BIN/kubelet}"
POD_TIMEOUT="${POD_TIMEOUT:-120}"
TOKEN=realnode-admin-token
SOCK="$WORK/containerd.sock"
CNI="${CNI:-1}"
CNI_BIN="${CNI_BIN:-/usr/lib/cni}"
BRIDGE="$NODE"
POD_CIDR="${POD_CIDR:-10.$((88 + INSTANCE)).0.0/16}"
SERVICE_CIDR="${SERVICE_CIDR:-10.$((96 + INSTANCE)).0.0/24}"
# Each node's kube-proxy has the iptables of its own network namespace.
PROXY_MODE="${PROXY_MODE:-iptables}"

log() { echo "realnode: $(date -u +%H:%M:%S) $*" >&2; }
API=https://$NODE_IP:$((P + 6443))
api() { curl -sk -H "Authorization: Bearer $TOKEN" "$@"; }

stop() {
	# Pods first, while the kubelet runs, so that their sandboxes are torn down
	# (network namespaces, CNI DEL) rather than left behind.
	if [[ -f $WORK/kubelet.pid ]] && kill -0 "$(cat "$WORK/kubelet.pid")" 2>/dev/null; then
		for ns in $(api "$API/api/v1/namespaces" 2>/dev/null | python3 -c 'import json,sys; [print(i["metadata"]["name"]) for i in json.load(sys.stdin).get("items",[])]' 2>/dev/null); do
			api -X DELETE "$API/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
		done
		for _ in $(seq 60); do
			[[ -z $("$RUNC" --root "$WORK/runc-root/k8s.io" list -q 2>/dev/null) ]] && break
			sleep 0.5
		done
	fi
	for p in kubelet kube-proxy kube-scheduler kube-controller-manager kube-apiserver etcd containerd; do
		local f="$WORK/$p.pid"
		[[ -f $f ]] || continue
		local pid; pid="$(cat "$f")"
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
			kill -9 "$pid" 2>/dev/null || true
		fi
		rm -f "$f"
	done
	# Shims and containers of this containerd (its own namespace dir under $WORK).
	if [[ -d $WORK/runc-root ]]; then
		for c in $("$RUNC" --root "$WORK/runc-root/k8s.io" list -q 2>/dev/null); do
			"$RUNC" --root "$WORK/runc-root/k8s.io" kill "$c" KILL 2>/dev/null || true
			"$RUNC" --root "$WORK/runc-root/k8s.io" delete -f "$c" 2>/dev/null || true
		done
	fi
	for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $SOCK( |\$)" || true); do
		kill "$p" 2>/dev/null || true
		sleep 0.5
		kill -9 "$p" 2>/dev/null || true
	done
	# The kubelet's cgroup root (see cgroupRoot below), deepest first.
	for c in /sys/fs/cgroup/*/"$NODE"; do
		[[ -d $c ]] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	# Mounts left by containerd / kubelet under $WORK.
	for m in $(awk -v w="$WORK/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
	# Network namespaces of this containerd's sandboxes (from the specs the runc
	# wrapper kept) that the kubelet did not tear down.
	for n in $(grep -ho '"/var/run/netns/cni-[0-9a-f-]*"' "$WORK"/runc-logs/*.config.json 2>/dev/null | tr -d '"' | sort -u); do
		[[ -e $n ]] || continue
		umount "$n" 2>/dev/null || true
		rm -f "$n"
	done
	# CNI's cached results of this network; host-local's default dataDir.
	rm -rf "/var/lib/cni/networks/$NODE" /var/lib/cni/results/"$NODE"-*
	for id in $(awk '$2 ~ /^--root/ && / create / {print $NF}' "$WORK/runc-logs/calls.log" 2>/dev/null); do
		rm -f /var/lib/cni/results/cni-loopback-"$id"-*
	done
	rmdir /var/lib/cni/networks /var/lib/cni/results /var/lib/cni 2>/dev/null || true
	if ! ls "$OUT"/run-*/containerd.pid >/dev/null 2>&1; then
		rmdir /run/containerd/s /run/containerd 2>/dev/null || true # the shims' socket folder, if empty
	fi
	# The node's network namespace, with the CNI bridge, the kubelet's and
	# kube-proxy's chains and the masquerading rules inside it.
	node_net_down "$INSTANCE"
}

if [[ ${1:-} == stop ]]; then stop; exit 0; fi
if [[ $CNI == 1 && ! -x $CNI_BIN/bridge ]]; then
	log "installing containernetworking-plugins and iptables from Debian"
	apt-get install -y containernetworking-plugins iptables >/dev/null
fi

# --- 1. Binaries -----------------------------------------------------------
if ! [[ -x $CONTAINERD && -x $RUNC ]] && [[ $CONTAINERD == /usr/bin/containerd ]]; then
	log "installing containerd and runc from Debian"
	apt-get install -y containerd runc >/dev/null
fi
mkdir -p "$BIN"
if ! [[ -x $BIN/pause && -x $BIN/imagetool && -x $BIN/probe ]]; then
	log "building pause, probe and imagetool"
	(cd "$here" && GOWORK=off CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags "-s -w" -o "$BIN/" ./pause ./probe ./imagetool)
fi
# The node's Kubernetes binaries, from the Go module proxy with the go.mod of
# hack/envtest/kube-apiserver (the same k8s.io/kubernetes and staging pins).
# The kubelet alone: ~13 min on a busy 2-core machine; the other three after it
# ~6 min more. BUILD_CONTROL_PLANE=0 builds only the kubelet.
want=(kubelet)
[[ ${BUILD_CONTROL_PLANE:-1} == 1 ]] && want+=(kube-controller-manager kube-scheduler kube-proxy)
missing=()
for b in "${want[@]}"; do [[ -x $BIN/$b ]] || missing+=("$b"); done
if [[ $KUBELET != "$BIN/kubelet" ]]; then missing=("${missing[@]/kubelet/}"); fi
if [[ -n ${missing[*]// /} ]]; then
	log "building ${missing[*]} v${K8S_VERSION} from the Go module proxy (minutes)"
	mod="$OUT/kubelet-mod"
	mkdir -p "$mod"
	cp "$root/hack/envtest/kube-apiserver/go.mod" "$root/hack/envtest/kube-apiserver/go.sum" "$mod/"
	sed -i 's#^module .*#module realnode/kubelet#' "$mod/go.mod"
	pkgs=()
	{
		printf '//go:build tools\n\npackage tools\n\nimport (\n'
		for b in "${missing[@]}"; do
			[[ -n $b ]] || continue
			printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"
			pkgs+=("k8s.io/kubernetes/cmd/$b")
		done
		printf ')\n'
	} >"$mod/tools.go"
	ld="-s -w -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1"
	ld+=" -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
	(cd "$mod" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags "$ld" -o "$BIN/" "${pkgs[@]}")
fi
CONTROL_PLANE="${CONTROL_PLANE:-$([[ -x $BIN/kube-controller-manager && -x $BIN/kube-scheduler && -x $BIN/kube-proxy ]] && echo 1 || echo 0)}"
[[ -x $ASSETS/kube-apiserver ]] || ASSETS="$("$root/hack/envtest-assets.sh")"

"$CONTAINERD" --version >&2
"$RUNC" --version | head -1 >&2
"$KUBELET" --version >&2

# --- 2. containerd ---------------------------------------------------------
stop
rm -rf "$WORK"
mkdir -p "$WORK"/{containerd,kubelet,pki,runc-logs,manifests}
trap '[[ ${KEEP:-0} == 1 ]] || stop' EXIT
node_net_up "$INSTANCE" "$SERVICE_CIDR"

# runc wrapper: adds --debug and keeps a copy of each call's log, since the
# shim deletes the bundle (and its log.json) after a failed create.
cat >"$WORK/runc" <<EOF
#!/usr/bin/env bash
logf=""; bundle=""; prev=""
for a in "\$@"; do
	[[ \$prev == --log ]] && logf="\$a"
	[[ \$prev == --bundle || \$prev == -b ]] && bundle="\$a"
	prev="\$a"
done
n="\$(date +%s%N)"
echo "\$(date -u +%H:%M:%S.%N) \$*" >>"$WORK/runc-logs/calls.log"
[[ -n \$bundle && -f \$bundle/config.json ]] && cp "\$bundle/config.json" "$WORK/runc-logs/\$n.config.json"
"$RUNC" --debug "\$@"; rc=\$?
if [[ -n \$logf && -f \$logf ]]; then cp "\$logf" "$WORK/runc-logs/\$n.log.json"; fi
echo "  -> rc=\$rc" >>"$WORK/runc-logs/calls.log"
exit \$rc
EOF
chmod +x "$WORK/runc"

cat >"$WORK/containerd.toml" <<EOF
version = 2
root = "$WORK/containerd/root"
state = "$WORK/containerd/state"
[grpc]
  address = "$SOCK"
[debug]
  level = "debug"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/local/pause:1"
  enable_selinux = false
  # The machine's capability bounding set lacks CAP_SYS_RESOURCE, so no
  # process can lower oom_score_adj below its own; the kubelet asks -998 for
  # every sandbox and runc init dies on it ("can't get final child's PID from
  # pipe: EOF"). Clamp to containerd's own oom_score_adj instead.
  restrict_oom_score_adj = ${RESTRICT_OOM:-true}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$WORK/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$WORK/runc"
        Root = "$WORK/runc-root"
        SystemdCgroup = false
EOF
# Pod network: one bridge with masquerading (Debian containernetworking-plugins).
# Without a CNI configuration the runtime reports NetworkReady=false and the
# Node stays NotReady; hostNetwork pods run either way.
mkdir -p "$WORK/cni"
if [[ $CNI == 1 ]]; then
	cat >"$WORK/cni/10-realnode.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "$NODE", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$WORK/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "loopback"}]}
EOF
fi
log "starting containerd"
"${IN_NODE[@]}" "$CONTAINERD" --config "$WORK/containerd.toml" >"$WORK/containerd.log" 2>&1 &
echo $! >"$WORK/containerd.pid"
for _ in $(seq 50); do [[ -S $SOCK ]] && break; sleep 0.2; done
[[ -S $SOCK ]] || { log "containerd did not start"; tail -20 "$WORK/containerd.log"; exit 1; }

"$BIN/imagetool" -bin "$BIN/pause" -path /pause -tag docker.io/local/pause:1 -out "$WORK/pause.tar"
"$BIN/imagetool" -bin "$BIN/probe" -path /probe -tag docker.io/local/probe:1 -user 65532 -out "$WORK/probe.tar"
"$CTR" --address "$SOCK" -n k8s.io images import "$WORK/pause.tar" >&2
"$CTR" --address "$SOCK" -n k8s.io images import "$WORK/probe.tar" >&2

# The repository's images (`make images` writes an OCI layout to bin/images):
# imported by digest, then tagged docker.io/local/<ref.name>, e.g.
# docker.io/local/kcp-operator:dev.
IMAGES="${IMAGES:-$root/bin/images}"
if [[ -f $IMAGES/index.json ]]; then
	tar -C "$IMAGES" -cf "$WORK/images.tar" .
	"$CTR" --address "$SOCK" -n k8s.io images import --digests --base-name docker.io/local/lm "$WORK/images.tar" >/dev/null
	python3 -c 'import json,sys; [print(m["digest"], m["annotations"]["org.opencontainers.image.ref.name"]) for m in json.load(open(sys.argv[1]))["manifests"] if "org.opencontainers.image.ref.name" in m.get("annotations",{})]' "$IMAGES/index.json" |
		while read -r digest ref; do
			"$CTR" --address "$SOCK" -n k8s.io images tag --force "docker.io/local/lm@$digest" "docker.io/local/$ref" >&2
		done
fi

# --- 3. etcd + kube-apiserver ----------------------------------------------
log "starting etcd and kube-apiserver"
"${IN_NODE[@]}" "$ASSETS/etcd" --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:$((P + 3790)) \
	--advertise-client-urls http://127.0.0.1:$((P + 3790)) --listen-peer-urls http://127.0.0.1:$((P + 3800)) \
	--unsafe-no-fsync >"$WORK/etcd.log" 2>&1 &
echo $! >"$WORK/etcd.pid"
openssl genrsa -out "$WORK/pki/sa.key" 2048 2>/dev/null
echo "$TOKEN,admin,admin,system:masters" >"$WORK/pki/tokens.csv"
"${IN_NODE[@]}" "$ASSETS/kube-apiserver" --etcd-servers http://127.0.0.1:$((P + 3790)) --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port $((P + 6443)) \
	--cert-dir "$WORK/pki" --token-auth-file "$WORK/pki/tokens.csv" --authorization-mode RBAC \
	--service-account-issuer "$API" --service-account-key-file "$WORK/pki/sa.key" \
	--service-account-signing-key-file "$WORK/pki/sa.key" --service-cluster-ip-range "$SERVICE_CIDR" \
	--allow-privileged=true --kubelet-preferred-address-types InternalIP >"$WORK/kube-apiserver.log" 2>&1 &
echo $! >"$WORK/kube-apiserver.pid"
cat >"$WORK/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$API", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: "$TOKEN"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
EOF
for _ in $(seq 150); do [[ $(api $API/readyz 2>/dev/null) == ok ]] && break; sleep 0.2; done
[[ $(api $API/readyz) == ok ]] || { log "kube-apiserver not ready"; tail -20 "$WORK/kube-apiserver.log"; exit 1; }

# --- 3b. controller-manager, scheduler, kube-proxy (when built) ------------
# Built like the kubelet (see README.md here); without them: no Deployments,
# no kube-root-ca.crt ConfigMap, no default ServiceAccount, no Service IPs.
if [[ $CONTROL_PLANE == 1 ]]; then
	log "starting kube-controller-manager, kube-scheduler and kube-proxy"
	"${IN_NODE[@]}" "$BIN/kube-controller-manager" --kubeconfig "$WORK/kubeconfig" --leader-elect=false \
		--service-account-private-key-file "$WORK/pki/sa.key" --root-ca-file "$WORK/pki/apiserver.crt" \
		--use-service-account-credentials=false --secure-port $((P + 257)) --controllers '*' \
		>"$WORK/kube-controller-manager.log" 2>&1 &
	echo $! >"$WORK/kube-controller-manager.pid"
	"${IN_NODE[@]}" "$BIN/kube-scheduler" --kubeconfig "$WORK/kubeconfig" --leader-elect=false --secure-port $((P + 259)) \
		>"$WORK/kube-scheduler.log" 2>&1 &
	echo $! >"$WORK/kube-scheduler.pid"
	cat >"$WORK/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$WORK/kubeconfig"}
hostnameOverride: $NODE
mode: $PROXY_MODE
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:$((P + 256))
metricsBindAddress: 127.0.0.1:$((P + 249))
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
	"${IN_NODE[@]}" "$BIN/kube-proxy" --config "$WORK/kube-proxy.yaml" >"$WORK/kube-proxy.log" 2>&1 &
	echo $! >"$WORK/kube-proxy.pid"
fi

# --- 4. kubelet ------------------------------------------------------------
# No cluster DNS and no way out: the pods' resolver is their own loopback
# (the machine's resolver is beyond what the nodes may reach).
echo "nameserver 127.0.0.1" >"$WORK/resolv.conf"
cat >"$WORK/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$SOCK
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
port: $((P + 250))
readOnlyPort: 0
healthzPort: $((P + 248))
cgroupRoot: /$NODE
podLogsDir: $WORK/pod-logs
resolvConf: $WORK/resolv.conf
imageGCHighThresholdPercent: 100
evictionHard: {}
${KUBELET_EXTRA_CONFIG:-}
EOF
# Each instance's kubelet has its own cgroup root (two kubelets under one
# /kubepods would manage each other's pods); it must exist beforehand.
for c in /sys/fs/cgroup/*/; do
	[[ $c == */unified/ ]] && continue
	mkdir -p "$c$NODE"
	if [[ -f ${c}cpuset.cpus ]]; then
		cat "${c}cpuset.cpus" >"$c$NODE/cpuset.cpus"
		cat "${c}cpuset.mems" >"$c$NODE/cpuset.mems"
	fi
done
log "starting kubelet"
"${IN_NODE[@]}" "$KUBELET" --config "$WORK/kubelet.yaml" --kubeconfig "$WORK/kubeconfig" --root-dir "$WORK/kubelet" \
	--cert-dir "$WORK/kubelet/pki" --hostname-override "$NODE" --node-ip "$NODE_IP" --v "${KUBELET_V:-2}" >"$WORK/kubelet.log" 2>&1 &
echo $! >"$WORK/kubelet.pid"
isnode() { [[ $(api "$API/api/v1/nodes/$NODE") == *'"kind": "Node"'* ]]; }
for _ in $(seq 100); do isnode && break; sleep 0.3; done
isnode || { log "node not registered"; tail -30 "$WORK/kubelet.log"; exit 1; }
log "node $NODE registered"
if [[ ${PODS:-1} == 0 ]]; then
	log "node up in ${SECONDS}s (PODS=0: no test pods)"
	exit 0
fi

# --- 5. pods ----------------------------------------------------------------
# "hello": the pause image on the host network. "probe": on the pod network,
# with what the charts' Deployments use (non-root, RuntimeDefault seccomp,
# read-only root filesystem, no capabilities, a Secret volume, an emptyDir
# with a size limit, the projected service account token, HTTP probes,
# Guaranteed resources, whose oom_score_adj is negative).
post() { api -X POST -H 'Content-Type: application/json' "$API/$1" -d @- >>"$WORK/create.log"; echo >>"$WORK/create.log"; }
if [[ $CONTROL_PLANE == 1 ]]; then
	for _ in $(seq 100); do
		[[ $(api "$API/api/v1/namespaces/default/serviceaccounts/default") == *'"kind": "ServiceAccount"'* &&
			$(api "$API/api/v1/namespaces/default/configmaps/kube-root-ca.crt") == *'"kind": "ConfigMap"'* ]] && break
		sleep 0.3
	done
else
	# No kube-controller-manager: create what it would create.
	post api/v1/namespaces/default/serviceaccounts <<<'{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}'
	python3 -c 'import json,sys; print(json.dumps({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kube-root-ca.crt"},"data":{"ca.crt":open(sys.argv[1]).read()}}))' "$WORK/pki/apiserver.crt" |
		post api/v1/namespaces/default/configmaps
fi
post api/v1/namespaces/default/secrets <<<'{"apiVersion":"v1","kind":"Secret","metadata":{"name":"probe-secret"},"stringData":{"value":"from-a-secret"}}'
post api/v1/namespaces/default/pods <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"hello"},
 "spec":{"nodeName":"$NODE","hostNetwork":true,"restartPolicy":"Never",
  "tolerations":[{"operator":"Exists"}],
  "containers":[{"name":"c","image":"docker.io/local/pause:1","imagePullPolicy":"Never"}]}}
EOF
[[ $CNI == 1 ]] && post api/v1/namespaces/default/pods <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe"},
 "spec":{"nodeName":"$NODE","restartPolicy":"Never","tolerations":[{"operator":"Exists"}],
  "securityContext":{"runAsNonRoot":true,"runAsUser":65532,"runAsGroup":65532,"fsGroup":65532,"seccompProfile":{"type":"RuntimeDefault"}},
  "containers":[{"name":"probe","image":"docker.io/local/probe:1","imagePullPolicy":"Never",
    "args":["-print","/etc/secret/value,/var/run/secrets/kubernetes.io/serviceaccount/namespace","-direct","$NODE_IP:$((P + 6443))"],
    "ports":[{"name":"health","containerPort":8080}],
    "livenessProbe":{"httpGet":{"path":"/healthz","port":"health"},"periodSeconds":5},
    "readinessProbe":{"httpGet":{"path":"/healthz","port":"health"},"periodSeconds":2},
    "resources":{"requests":{"cpu":"50m","memory":"32Mi"},"limits":{"cpu":"50m","memory":"32Mi"}},
    "securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"runAsNonRoot":true,"capabilities":{"drop":["ALL"]}},
    "volumeMounts":[{"name":"secret","mountPath":"/etc/secret","readOnly":true},{"name":"tmp","mountPath":"/tmp"}]}],
  "volumes":[{"name":"secret","secret":{"secretName":"probe-secret"}},{"name":"tmp","emptyDir":{"sizeLimit":"64Mi"}}]}}
EOF
# The probe's service account may read pods (its call must then return 200).
post apis/rbac.authorization.k8s.io/v1/clusterrolebindings <<<'{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"realnode-probe"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},"subjects":[{"kind":"ServiceAccount","name":"default","namespace":"default"}]}'
pods=(hello)
[[ $CNI == 1 ]] && pods+=(probe)
if [[ $CNI == 1 && $CONTROL_PLANE == 1 ]]; then
	# A Deployment: the scheduler picks the node, the controllers make the pod.
	post apis/apps/v1/namespaces/default/deployments <<EOF
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
 "spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},
   "spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":65532,"seccompProfile":{"type":"RuntimeDefault"}},
    "containers":[{"name":"web","image":"docker.io/local/probe:1","imagePullPolicy":"Never",
      "readinessProbe":{"httpGet":{"path":"/healthz","port":8080},"periodSeconds":2}}]}}}}
EOF
fi
podstate() {
	api "$API/api/v1/namespaces/default/pods/$1" | python3 -c '
import json,sys
p=json.load(sys.stdin); s=p.get("status",{})
ready=[c["status"] for c in s.get("conditions",[]) if c["type"]=="Ready"]
print(s.get("phase","?")+"/ready="+(ready[0] if ready else "?")+"/ip="+str(s.get("podIP")))'
}
log "pods created; waiting up to ${POD_TIMEOUT}s for ${pods[*]} to be Running and Ready"
ok=0
end=$((SECONDS + POD_TIMEOUT))
while ((SECONDS < end)); do
	ok=1
	for p in "${pods[@]}"; do [[ $(podstate "$p") == Running/ready=True/* ]] || ok=0; done
	if [[ $CNI == 1 && $CONTROL_PLANE == 1 ]]; then
		[[ $(api "$API/apis/apps/v1/namespaces/default/deployments/web" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("status",{}).get("availableReplicas",0))') == 1 ]] || ok=0
	fi
	[[ $ok == 1 ]] && break
	sleep 1
done
for p in "${pods[@]}"; do log "pod $p: $(podstate "$p")"; done
if [[ $CNI == 1 && $CONTROL_PLANE == 1 ]]; then
	log "deployment web: $(api "$API/apis/apps/v1/namespaces/default/deployments/web" | python3 -c 'import json,sys; s=json.load(sys.stdin).get("status",{}); print("available", s.get("availableReplicas",0), "of", s.get("replicas",0))')"
fi
api "$API/api/v1/nodes/$NODE" | python3 -c 'import json,sys; print("realnode: node Ready:", [c["status"]+" "+c.get("message","") for c in json.load(sys.stdin)["status"]["conditions"] if c["type"]=="Ready"])' >&2
if [[ $CNI == 1 ]]; then
	log "probe's log (through the API server and the kubelet):"
	api "$API/api/v1/namespaces/default/pods/probe/log" >&2 || true
fi
api "$API/api/v1/namespaces/default/events" | python3 -c '
import json,sys
for e in json.load(sys.stdin)["items"]:
    if e["type"]!="Normal": print("realnode: event", e["involvedObject"]["name"], e["reason"], e["message"][:300])' >&2 || true
grep -h '"level":"\(error\|fatal\)"' "$WORK"/runc-logs/*.log.json 2>/dev/null | tail -5 >&2 || true
log "done in ${SECONDS}s"
[[ $ok == 1 ]]

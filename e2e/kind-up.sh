#!/usr/bin/env bash
# Two kind clusters for the e2e suite's clusters mode and for trying
# Lifecycle Manager by hand: a KCP with cert-manager, Istio and
# charts/kcp-operator, and a runtime (SKR) that the operator manages through
# a kubeconfig Secret. Needs Docker and Go; kind and helm are installed with
# `go install` when they are not on PATH, kubectl is optional.
#
#   e2e/kind-up.sh            create or update everything, then print the e2e environment
#   e2e/kind-up.sh env        print the e2e environment of existing clusters
#   e2e/kind-up.sh down       delete both clusters and the registry
#
# stdout carries only `export E2E_…=…` lines (eval "$(e2e/kind-up.sh)");
# progress goes to stderr. Settings (environment, with defaults):
#   KCP_CLUSTER=lm-kcp SKR_CLUSTER=lm-skr KYMA_NAME=kyma-sample
#   KCP_NAMESPACE=kcp-system CERT_BACKEND=builtin (or cert-manager)
#   IMAGE_TAG=dev
# Not run in CI: Docker is not available there. See charts/kcp-operator/README.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

KCP_CLUSTER="${KCP_CLUSTER:-lm-kcp}"
SKR_CLUSTER="${SKR_CLUSTER:-lm-skr}"
KYMA_NAME="${KYMA_NAME:-kyma-sample}"
KCP_NAMESPACE="${KCP_NAMESPACE:-kcp-system}"
CERT_BACKEND="${CERT_BACKEND:-builtin}"
IMAGE_TAG="${IMAGE_TAG:-dev}"
WORK_DIR="${KIND_WORK_DIR:-${ROOT}/e2e/.run/kind}"

# Pinned versions, checked together with the Go modules of this repository.
KIND_VERSION=v0.33.0
HELM_VERSION=v3.22.0
CERT_MANAGER_VERSION=v1.21.2
ISTIO_VERSION=1.31.1
REGISTRY_IMAGE=registry:2.8.3

ISTIO_REPO=https://istio-release.storage.googleapis.com/charts
JETSTACK_REPO=https://charts.jetstack.io
# The Istio ingress gateway's HTTPS node port: agents in the runtime reach
# the KCP at <KCP node IP>:GATEWAY_NODE_PORT over the kind Docker network.
GATEWAY_NODE_PORT=30443
REGISTRY_NAME=lm-registry
OPERATOR_IMAGE=lifecycle-manager.local/kcp-operator:${IMAGE_TAG}
AGENT_IMAGE=lifecycle-manager.local/skr-agent:${IMAGE_TAG}

KCP_KUBECONFIG="${WORK_DIR}/${KCP_CLUSTER}.kubeconfig"
SKR_KUBECONFIG="${WORK_DIR}/${SKR_CLUSTER}.kubeconfig"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'kind-up: %s\n' "$*" >&2; exit 1; }

# tool NAME VERSION MODULE: the tool on PATH, else one installed into WORK_DIR/bin.
tool() {
	local name=$1 version=$2 module=$3
	if command -v "${name}" >/dev/null 2>&1; then
		command -v "${name}"
		return
	fi
	local bin="${WORK_DIR}/bin/${name}-${version}"
	if [[ ! -x "${bin}" ]]; then
		log "installing ${name} ${version} with go install"
		mkdir -p "${WORK_DIR}/bin"
		GOBIN="${WORK_DIR}/bin" go install "${module}@${version}" >&2
		mv "${WORK_DIR}/bin/${name}" "${bin}"
	fi
	printf '%s\n' "${bin}"
}

# kctl CLUSTER ARGS...: kubectl against a cluster; without kubectl on PATH,
# the one inside the cluster's node container (manifests come on stdin).
kctl() {
	local cluster=$1
	shift
	if command -v kubectl >/dev/null 2>&1; then
		kubectl --kubeconfig "${WORK_DIR}/${cluster}.kubeconfig" "$@"
	else
		docker exec -i "${cluster}-control-plane" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"
	fi
}

# node_ip CONTAINER: its address on the kind Docker network.
node_ip() {
	docker inspect -f '{{ with index .NetworkSettings.Networks "kind" }}{{ .IPAddress }}{{ end }}' "$1"
}

preflight() {
	command -v docker >/dev/null 2>&1 || die "docker is not installed"
	docker info >/dev/null 2>&1 || die "Docker is not running (docker info failed)"
	command -v go >/dev/null 2>&1 || die "go is not installed (it installs kind and helm when they are missing)"
	mkdir -p "${WORK_DIR}"
	KIND="$(tool kind "${KIND_VERSION}" sigs.k8s.io/kind)"
	HELM="$(tool helm "${HELM_VERSION}" helm.sh/helm/v3/cmd/helm)"
	case "${CERT_BACKEND}" in
	builtin | cert-manager) ;;
	*) die "CERT_BACKEND must be builtin or cert-manager, not ${CERT_BACKEND}" ;;
	esac
}

# create_cluster NAME: creates the cluster unless it exists; writes its kubeconfig.
create_cluster() {
	local name=$1
	if "${KIND}" get clusters 2>/dev/null | grep -qx "${name}"; then
		log "cluster ${name} exists"
	else
		log "creating cluster ${name}"
		"${KIND}" create cluster --name "${name}" --kubeconfig "${WORK_DIR}/${name}.kubeconfig" --wait 180s >&2
	fi
	"${KIND}" get kubeconfig --name "${name}" >"${WORK_DIR}/${name}.kubeconfig"
}

# A registry on the kind network for module images: the operator pulls
# module layers from it (plain HTTP, listed in --insecure-registries).
start_registry() {
	if [[ "$(docker inspect -f '{{ .State.Running }}' "${REGISTRY_NAME}" 2>/dev/null || true)" != "true" ]]; then
		log "starting the module registry ${REGISTRY_NAME}"
		docker rm -f "${REGISTRY_NAME}" >/dev/null 2>&1 || true
		docker run -d --restart=always --name "${REGISTRY_NAME}" --network kind \
			-p 127.0.0.1:5001:5000 "${REGISTRY_IMAGE}" >/dev/null
	fi
	REGISTRY_ADDR="$(node_ip "${REGISTRY_NAME}"):5000"
}

install_cert_manager() {
	log "installing cert-manager ${CERT_MANAGER_VERSION} into ${KCP_CLUSTER}"
	"${HELM}" upgrade --install cert-manager cert-manager --repo "${JETSTACK_REPO}" --version "${CERT_MANAGER_VERSION}" \
		--kubeconfig "${KCP_KUBECONFIG}" --namespace cert-manager --create-namespace \
		--set crds.enabled=true --wait --timeout 5m >&2
}

install_istio() {
	log "installing Istio ${ISTIO_VERSION} into ${KCP_CLUSTER}"
	local common=(--repo "${ISTIO_REPO}" --version "${ISTIO_VERSION}" --kubeconfig "${KCP_KUBECONFIG}" --namespace istio-system --wait --timeout 5m)
	"${HELM}" upgrade --install istio-base base "${common[@]}" --create-namespace --set defaultRevision=default >&2
	"${HELM}" upgrade --install istiod istiod "${common[@]}" >&2
	# The release name gives the pods the label istio=ingressgateway, which
	# the operator's Gateway selects.
	"${HELM}" upgrade --install istio-ingressgateway gateway "${common[@]}" -f - >&2 <<-YAML
		service:
		  type: NodePort
		  ports:
		    - name: status-port
		      port: 15021
		      protocol: TCP
		      targetPort: 15021
		    - name: https
		      port: 443
		      protocol: TCP
		      targetPort: 443
		      nodePort: ${GATEWAY_NODE_PORT}
	YAML
}

build_images() {
	local archive="${WORK_DIR}/images.tar"
	log "building ${OPERATOR_IMAGE} and ${AGENT_IMAGE} (e2e/cmd/images, no Docker build)"
	(cd "${ROOT}/e2e" && go run ./cmd/images --layout "" --archive "${archive}" \
		--repository lifecycle-manager.local --tag "${IMAGE_TAG}") >&2
	log "loading the images into both clusters"
	"${KIND}" load image-archive "${archive}" --name "${KCP_CLUSTER}" >&2
	"${KIND}" load image-archive "${archive}" --name "${SKR_CLUSTER}" >&2
	rm -f "${archive}"
}

install_operator() {
	local kcp_addr=$1
	log "installing charts/kcp-operator into ${KCP_CLUSTER}/${KCP_NAMESPACE} (agents send events to ${kcp_addr})"
	kctl "${KCP_CLUSTER}" apply -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: Namespace
		metadata:
		  name: ${KCP_NAMESPACE}
	YAML
	"${HELM}" upgrade --install kcp-operator "${ROOT}/charts/kcp-operator" \
		--kubeconfig "${KCP_KUBECONFIG}" --namespace "${KCP_NAMESPACE}" \
		--set-json "namespaces=[\"${KCP_NAMESPACE}\"]" \
		--set image.repository="${OPERATOR_IMAGE%:*}" --set image.tag="${IMAGE_TAG}" \
		--set agent.image.repository="${AGENT_IMAGE%:*}" --set agent.image.tag="${IMAGE_TAG}" \
		--set agent.kcpAddress="${kcp_addr}" \
		--set certificates.backend="${CERT_BACKEND}" \
		--set-json "operator.insecureRegistries=[\"${REGISTRY_ADDR}\"]" \
		--wait --timeout 5m >&2
}

# runtime_secret: the SKR's kubeconfig in the KCP, with the SKR API server's
# address on the kind network (the one its pods reach), labelled for the Kyma.
runtime_secret() {
	local skr_ip config
	skr_ip="$(node_ip "${SKR_CLUSTER}-control-plane")"
	[[ -n "${skr_ip}" ]] || die "no address of ${SKR_CLUSTER}-control-plane on the kind network"
	# The API server's certificate names the node's address (kubeadm's advertise address).
	config="$("${KIND}" get kubeconfig --name "${SKR_CLUSTER}" --internal |
		sed -E "s#server: https://[^[:space:]]+#server: https://${skr_ip}:6443#")"
	log "runtime Secret ${KCP_NAMESPACE}/kubeconfig-${KYMA_NAME} for Kyma ${KYMA_NAME} (SKR API server ${skr_ip}:6443)"
	kctl "${KCP_CLUSTER}" apply -f - >/dev/null <<-YAML
		apiVersion: v1
		kind: Secret
		metadata:
		  name: kubeconfig-${KYMA_NAME}
		  namespace: ${KCP_NAMESPACE}
		  labels:
		    operator.kyma-project.io/kyma-name: ${KYMA_NAME}
		type: Opaque
		data:
		  config: $(printf '%s\n' "${config}" | base64 | tr -d '\n')
	YAML
}

print_env() {
	local kcp_ip
	kcp_ip="$(node_ip "${KCP_CLUSTER}-control-plane")"
	[[ -f "${KCP_KUBECONFIG}" && -f "${SKR_KUBECONFIG}" ]] || die "no kubeconfigs in ${WORK_DIR}: run e2e/kind-up.sh first"
	cat <<-ENV
		export E2E_KCP_KUBECONFIG=${KCP_KUBECONFIG}
		export E2E_SKR_KUBECONFIG=${SKR_KUBECONFIG}
		export E2E_KYMA_NAME=${KYMA_NAME}
		export E2E_KCP_NAMESPACE=${KCP_NAMESPACE}
		export E2E_KCP_EVENTS_ADDR=${kcp_ip}:${GATEWAY_NODE_PORT}
		export E2E_REGISTRY=$(node_ip "${REGISTRY_NAME}"):5000
		# The operator's metrics Service is not reachable from the host: run
		# kubectl --kubeconfig ${KCP_KUBECONFIG} -n ${KCP_NAMESPACE} port-forward svc/kcp-operator-metrics 18080:8080 &
		export E2E_KCP_METRICS_ADDR=127.0.0.1:18080
	ENV
}

up() {
	preflight
	create_cluster "${KCP_CLUSTER}"
	create_cluster "${SKR_CLUSTER}"
	start_registry
	install_cert_manager
	install_istio
	build_images
	local kcp_ip
	kcp_ip="$(node_ip "${KCP_CLUSTER}-control-plane")"
	[[ -n "${kcp_ip}" ]] || die "no address of ${KCP_CLUSTER}-control-plane on the kind network"
	install_operator "${kcp_ip}:${GATEWAY_NODE_PORT}"
	runtime_secret
	log "ready; create a Kyma named ${KYMA_NAME} in ${KCP_NAMESPACE} (charts/kcp-operator/README.md, Try it on kind)"
	print_env
}

down() {
	preflight
	for name in "${KCP_CLUSTER}" "${SKR_CLUSTER}"; do
		log "deleting cluster ${name}"
		"${KIND}" delete cluster --name "${name}" >&2
		rm -f "${WORK_DIR}/${name}.kubeconfig"
	done
	docker rm -f "${REGISTRY_NAME}" >/dev/null 2>&1 || true
}

case "${1:-up}" in
up) up ;;
env) print_env ;;
down) down ;;
-h | --help | help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
*) die "unknown command $1 (up, env, down)" ;;
esac

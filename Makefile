# Lifecycle Manager. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Every Go module of the workspace, in dependency order.
MODULES := api certs listener skr-agent kcp-operator e2e

K8S_VERSION  ?= 1.36.3
ETCD_VERSION ?= 3.6.5
export K8S_VERSION ETCD_VERSION

CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
GOLANGCI_LINT_VERSION := v2.15.0
GOTESTSUM_VERSION := v1.13.0

BIN := $(CURDIR)/bin
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
GOTESTSUM := $(BIN)/gotestsum-$(GOTESTSUM_VERSION)

# Test knobs: TEST_FLAGS for go test, FUZZTIME per fuzz target (a count of
# inputs, "Nx": a duration budget can stall Go 1.26's fuzz coordinator at its
# deadline, go.dev/issue/75804).
TEST_FLAGS ?= -race -count=1 -timeout=20m
FUZZTIME ?= 20000x
export FUZZTIME

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z0-9-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Build and test

.PHONY: demo
demo: ## Run the demo: a KCP and a runtime on this machine, a module installed, the push path shown; Ctrl-C stops it.
	@assets="$${KUBEBUILDER_ASSETS:-$$(hack/envtest-assets.sh)}"; \
	export KUBEBUILDER_ASSETS="$$assets"; \
	cd e2e && go run ./cmd/demo --run-dir $(CURDIR)/e2e/.run/demo $(DEMO_FLAGS)

.PHONY: e2e
e2e: $(GOTESTSUM) ## Run the two-cluster end-to-end suite (local mode unless E2E_KCP_KUBECONFIG and E2E_SKR_KUBECONFIG are set).
	@assets="$${KUBEBUILDER_ASSETS:-$$(hack/envtest-assets.sh)}"; \
	export KUBEBUILDER_ASSETS="$$assets"; \
	istiod="$${ISTIOD_BIN:-$$(hack/istiod.sh)}"; export ISTIOD_BIN="$$istiod"; \
	cd e2e && $(GOTESTSUM) --format testname -- -count=1 -timeout=30m -v ./suite/...

.PHONY: e2e-node
e2e-node: $(GOTESTSUM) ## Run the e2e suite against two real nodes on this machine (kubelet, containerd; root): both charts' pods really run. KEEP=1 leaves them up.
	@hack/realnode/e2e.sh

.PHONY: scale
scale: ## Measure the operator at scale (1,000 Kymas; SCALE_FLAGS="--kymas=10000" for more; SHARDS=3 for three shards); report in e2e/.run/scale-report.
	@assets="$${KUBEBUILDER_ASSETS:-$$(hack/envtest-assets.sh)}"; \
	export KUBEBUILDER_ASSETS="$$assets"; \
	cd e2e && go run ./cmd/scale --run-dir $(CURDIR)/e2e/.run/scale --out $(CURDIR)/e2e/.run/scale-report $(if $(SHARDS),--shards=$(SHARDS)) $(SCALE_FLAGS)

SCALE_RUNS ?= 5

.PHONY: scale-runs
scale-runs: ## Run make scale SCALE_RUNS times (5) with the same SCALE_FLAGS and compare each convergence with its full bound: the median decides on a machine whose speed drifts; reports in e2e/.run/scale-runs/<n>.
	@rm -rf e2e/.run/scale-runs && mkdir -p e2e/.run/scale-runs
	@for i in $$(seq 1 $(SCALE_RUNS)); do \
		$(MAKE) --no-print-directory scale SCALE_FLAGS='$(SCALE_FLAGS)' > e2e/.run/scale-runs/$$i.log 2>&1 || { tail -20 e2e/.run/scale-runs/$$i.log; exit 1; }; \
		cp -r e2e/.run/scale-report e2e/.run/scale-runs/$$i; \
	done
	@cd e2e && go run ./cmd/scale pairs $$(ls -d $(CURDIR)/e2e/.run/scale-runs/*/)

# Image knobs: IMAGE_TAG, and IMAGE_REPOSITORY to name (and push) them there.
IMAGE_TAG ?= dev
IMAGE_REPOSITORY ?=

.PHONY: images
images: ## Build the kcp-operator and skr-agent images without Docker into bin/images (OCI layout); IMAGE_REPOSITORY=host/path pushes them.
	@cd e2e && go run ./cmd/images --layout $(BIN)/images --tag $(IMAGE_TAG) \
		$(if $(IMAGE_REPOSITORY),--repository $(IMAGE_REPOSITORY) --push)

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver and etcd for tests (cached by version); print KUBEBUILDER_ASSETS.
	@hack/envtest-assets.sh

.PHONY: istiod
istiod: ## Build istiod (pilot-discovery) for the e2e suite's Istio scenario (cached by version); print its path (ISTIOD_BIN).
	@hack/istiod.sh

.PHONY: cert-manager
cert-manager: ## Build the cert-manager controllers the tests run (cached by version); print the binary.
	@hack/cert-manager.sh

.PHONY: test
test: check-tree test-go fuzz ## Run every test of every module against real API servers, then the fuzz targets.

.PHONY: test-go
test-go: $(GOTESTSUM) ## Run the Go tests of every module (unit and envtest) with -race.
	@assets="$${KUBEBUILDER_ASSETS:-$$(hack/envtest-assets.sh)}"; \
	export KUBEBUILDER_ASSETS="$$assets"; \
	echo "KUBEBUILDER_ASSETS=$$assets"; \
	istiod="$${ISTIOD_BIN:-$$(hack/istiod.sh)}"; export ISTIOD_BIN="$$istiod"; \
	certmanager="$$(hack/cert-manager.sh)"; echo "cert-manager controllers: $$certmanager"; \
	failed=""; \
	for m in $(MODULES); do \
		echo "=== module $$m"; \
		(cd $$m && $(GOTESTSUM) --format testname --hide-summary=skipped -- $(TEST_FLAGS) ./...) || failed="$$failed $$m"; \
	done; \
	if [[ -n "$$failed" ]]; then echo "tests failed in:$$failed"; exit 1; fi

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME inputs (default 20000x).
	@hack/fuzz.sh

.PHONY: bench
bench: ## Run the benchmarks of every module.
	@assets="$${KUBEBUILDER_ASSETS:-$$(hack/envtest-assets.sh)}"; \
	export KUBEBUILDER_ASSETS="$$assets"; \
	for m in $(MODULES); do \
		echo "=== module $$m"; \
		(cd $$m && go test -run '^$$' -bench . -benchmem -count=1 ./...); \
	done

##@ Code

.PHONY: generate
generate: ## Generate deepcopy functions and CRD YAML of the API; copy the CRDs into the operator's chart and the agent chart into the operator; then make docs.
	cd api && $(CONTROLLER_GEN) object paths=./shared/... paths=./v1beta1/... paths=./v1beta2/... \
		crd:crdVersions=v1 output:crd:artifacts:config=config/crd/bases
	cp api/config/crd/bases/*.yaml charts/kcp-operator/crds/
	hack/sync-agent-chart.sh
	@$(MAKE) --no-print-directory docs

.PHONY: docs
docs: ## Generate docs/reference (the operator's flags, metrics, Events and conditions) from its code.
	@assets="$${KUBEBUILDER_ASSETS:-$$(hack/envtest-assets.sh)}"; \
	export KUBEBUILDER_ASSETS="$$assets"; \
	cd kcp-operator && go run ./internal/docgen/cmd/docgen -module . -out $(CURDIR)/docs/reference

GENERATED := api charts/kcp-operator/crds kcp-operator/internal/agent/chart docs/reference

.PHONY: verify-generated
verify-generated: generate ## Fail when generated code, CRDs or reference docs are stale.
	@if [[ -n "$$(git status --porcelain -- $(GENERATED))" ]]; then \
		git status --porcelain -- $(GENERATED); \
		git --no-pager diff --stat -- $(GENERATED); \
		echo "generated files are stale: run 'make generate' and commit the result"; exit 1; \
	fi

.PHONY: check-tree
check-tree: ## Fail when git tracks a built binary or a file over 1 MiB.
	@hack/check-tree.sh

.PHONY: lint
lint: check-tree $(GOLANGCI_LINT) ## Run gofmt, go vet and golangci-lint on every module, and check the tree holds sources only.
	@unformatted="$$(gofmt -l $(MODULES))"; \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	@for m in $(MODULES); do echo "=== lint $$m"; (cd $$m && go vet ./... && $(GOLANGCI_LINT) run --allow-parallel-runners ./...); done

.PHONY: tidy
tidy: ## Run go mod tidy in every module.
	@for m in $(MODULES); do (cd $$m && go mod tidy); done

$(GOLANGCI_LINT):
	@mkdir -p $(BIN)
	GOBIN=$(BIN)/.golangci GOWORK=off go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/.golangci/golangci-lint $@

$(GOTESTSUM):
	@mkdir -p $(BIN)
	GOBIN=$(BIN)/.gotestsum GOWORK=off go install gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
	mv $(BIN)/.gotestsum/gotestsum $@

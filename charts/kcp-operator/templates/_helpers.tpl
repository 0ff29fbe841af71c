{{/* Name of the chart, for labels. */}}
{{- define "kcp-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the resources. */}}
{{- define "kcp-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels that select the operator's pods. */}}
{{- define "kcp-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kcp-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "kcp-operator.labels" -}}
{{ include "kcp-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: lifecycle-manager
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* An image reference from a dict with repository, tag and digest. */}}
{{- define "kcp-operator.imageRef" -}}
{{- if .image.digest }}
{{- printf "%s@%s" .image.repository .image.digest }}
{{- else }}
{{- printf "%s:%s" .image.repository (default .appVersion .image.tag) }}
{{- end }}
{{- end }}

{{- define "kcp-operator.image" -}}
{{- include "kcp-operator.imageRef" (dict "image" .Values.image "appVersion" .Chart.AppVersion) }}
{{- end }}

{{- define "kcp-operator.agentImage" -}}
{{- include "kcp-operator.imageRef" (dict "image" .Values.agent.image "appVersion" .Chart.AppVersion) }}
{{- end }}

{{- define "kcp-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kcp-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Service agents' events reach through the gateway. */}}
{{- define "kcp-operator.listenerServiceName" -}}
{{- printf "%s-events" (include "kcp-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The Service the API server calls the conversion webhook through. */}}
{{- define "kcp-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "kcp-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* --webhook-service: the same for the operator and the CRD upgrade hook. */}}
{{- define "kcp-operator.webhookTarget" -}}
--webhook-service={{ .Release.Namespace }}/{{ include "kcp-operator.webhookServiceName" . }}
{{- end }}

{{- define "kcp-operator.firstNamespace" -}}
{{- first .Values.namespaces }}
{{- end }}

{{/* Whether the operator keeps Watchers' VirtualServices: "true" or "". */}}
{{- define "kcp-operator.gatewayMode" -}}
{{- if eq .Values.listener.mode "gateway" }}true{{ end }}
{{- end }}

{{- define "kcp-operator.certNamespace" -}}
{{- default (include "kcp-operator.firstNamespace" .) .Values.certificates.namespace }}
{{- end }}

{{- define "kcp-operator.caSecretNamespace" -}}
{{- default (include "kcp-operator.certNamespace" .) .Values.certificates.caSecret.namespace }}
{{- end }}

{{/* --feature-gates as Name=bool,… in name order; empty without gates. */}}
{{- define "kcp-operator.featureGates" -}}
{{- $gates := list }}
{{- range $name, $on := .Values.operator.featureGates }}
{{- $gates = append $gates (printf "%s=%t" $name $on) }}
{{- end }}
{{- join "," $gates }}
{{- end }}

{{- define "kcp-operator.endpointNamespace" -}}
{{- if .Values.certificates.endpoint.namespace }}
{{- .Values.certificates.endpoint.namespace }}
{{- else if eq .Values.listener.mode "direct" }}
{{- .Release.Namespace }}
{{- else }}
{{- .Values.istio.ingressNamespace }}
{{- end }}
{{- end }}

{{/* The host of an address: host[:port] or [ipv6][:port]. */}}
{{- define "kcp-operator.hostOf" -}}
{{- regexReplaceAll "^\\[?([^\\]]+?)\\]?(:[0-9]+)?$" . "${1}" }}
{{- end }}

{{/* DNS names and IPs of the event endpoint certificate, comma-separated. */}}
{{- define "kcp-operator.endpointDNSNames" -}}
{{- if .Values.shards }}
{{- include "kcp-operator.shardsEndpointDNSNames" . }}
{{- else if .Values.certificates.endpoint.dnsNames }}
{{- join "," .Values.certificates.endpoint.dnsNames }}
{{- else if .Values.agent.kcpAddress }}
{{- include "kcp-operator.hostOf" .Values.agent.kcpAddress }}
{{- end }}
{{- end }}

{{/* Whether the chart creates the cert-manager CA chain: "true" or "". */}}
{{- define "kcp-operator.createsCA" -}}
{{- if and (eq .Values.certificates.backend "cert-manager") (not .Values.certificates.certManager.issuerRef.name) }}true{{ end }}
{{- end }}

{{/* The issuer the operator's cert-manager Certificates name: name, kind, group. */}}
{{- define "kcp-operator.issuer" -}}
{{- if include "kcp-operator.createsCA" . }}
{{- dict "name" (printf "%s-ca" (include "kcp-operator.fullname" .)) "kind" "Issuer" "group" "cert-manager.io" | toJson }}
{{- else }}
{{- .Values.certificates.certManager.issuerRef | toJson }}
{{- end }}
{{- end }}

{{/*
The command line of a shard's operator (dict root, shard, first: whether it
is the first shard, which owns the singletons).
*/}}
{{- define "kcp-operator.args" -}}
{{- $root := .root }}
{{- $v := $root.Values }}
- --namespaces={{ join "," $v.namespaces }}
{{- with .shard.name }}
- --shard={{ . }}
{{- end }}
- --leader-election-lease-duration={{ $v.leaderElection.leaseDuration }}
- --metrics-bind-address=:{{ $v.metrics.port }}
- --health-probe-bind-address=:{{ $v.health.port }}
{{- with include "kcp-operator.featureGates" $root }}
- --feature-gates={{ . }}
{{- end }}
- --listener-bind-address=:{{ $v.listener.port }}
- --listener-mode={{ $v.listener.mode }}
{{- /* The leader keeps the Service's endpoints: only it consumes events. */}}
- --listener-service={{ $root.Release.Namespace }}/{{ include "kcp-operator.shardListenerService" . }}
{{- if include "kcp-operator.gatewayMode" $root }}
{{- with $v.listener.trustedProxies }}
- --listener-trusted-proxies={{ join "," . }}
{{- end }}
{{- /* Empty: the Gateway is someone else's (or another shard's). */}}
- --istio-gateway-name={{ ternary $v.istio.gateway.name "" (and $v.istio.gateway.managed .first) }}
{{- end }}
{{- if $v.agent.install }}
- --agent-kcp-address={{ include "kcp-operator.shardKCPAddress" . }}
- --agent-image={{ include "kcp-operator.agentImage" $root }}
{{- end }}
{{- with $v.operator.skrImagePullSecret }}
- --skr-image-pull-secret={{ . }}
{{- end }}
{{- with $v.operator.insecureRegistries }}
- --insecure-registries={{ join "," . }}
{{- end }}
{{- with $v.operator.ociRegistryHost }}
- --oci-registry-host={{ . }}
{{- end }}
{{- with $v.operator.ociRegistryCredSecret }}
- --oci-registry-cred-secret={{ . }}
{{- end }}
{{- with $v.operator.modulesRepositorySubpath }}
- --modules-repository-subpath={{ . }}
{{- end }}
{{- if $v.maintenancePolicy.configMap }}
- --maintenance-policy=/etc/lifecycle-manager/maintenance/{{ $v.maintenancePolicy.key }}
{{- end }}
- --module-signature-policy={{ $v.moduleSignatures.policy }}
{{- with include "kcp-operator.trustSecret" $root }}
- --module-trust-secret={{ . }}
{{- end }}
{{- if and $v.conversionWebhook.enabled .first }}
- --webhook-bind-address=:{{ $v.conversionWebhook.port }}
- {{ include "kcp-operator.webhookTarget" $root }}
{{- end }}
- --cert-namespace={{ include "kcp-operator.certNamespace" $root }}
- --cert-ca-secret={{ include "kcp-operator.caSecretNamespace" $root }}/{{ $v.certificates.caSecret.name }}
- --cert-endpoint-namespace={{ include "kcp-operator.endpointNamespace" $root }}
{{- with include "kcp-operator.endpointDNSNames" $root }}
- --cert-endpoint-dns-names={{ . }}
{{- end }}
{{- if eq $v.certificates.backend "cert-manager" }}
{{- $issuer := include "kcp-operator.issuer" $root | fromJson }}
- --cert-issuer={{ $issuer.group }}/{{ $issuer.kind }}/{{ $issuer.name }}
{{- end }}
- --zap-log-level={{ $v.operator.logLevel }}
{{- range $v.operator.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/* The module trust Secret as namespace/name; empty without one. */}}
{{- define "kcp-operator.trustSecret" -}}
{{- with .Values.moduleSignatures.trustSecret }}
{{- if contains "/" . }}{{ . }}{{ else }}{{ $.Release.Namespace }}/{{ . }}{{ end }}
{{- end }}
{{- end }}

{{/* Checks across values that the schema cannot express. */}}
{{- define "kcp-operator.validate" -}}
{{- if and (eq .Values.moduleSignatures.policy "enforce") (not .Values.moduleSignatures.trustSecret) }}
{{- fail "moduleSignatures.policy=enforce needs moduleSignatures.trustSecret: nothing could verify" }}
{{- end }}
{{- if and .Values.conversionWebhook.enabled (not .Values.crdUpgrade.enabled) }}
{{- fail "conversionWebhook.enabled needs crdUpgrade.enabled: the CRD upgrade hook points the CRDs' conversion at the webhook and serves v1beta1 (or set conversionWebhook.enabled=false)" }}
{{- end }}
{{- include "kcp-operator.validateShards" . }}
{{- if and .Values.agent.install (not .Values.shards) (not .Values.agent.kcpAddress) }}
{{- fail "agent.kcpAddress (host[:port] that agents in runtimes send events to: the Istio gateway's public address) is required while agent.install is true" }}
{{- end }}
{{- if and (eq .Values.certificates.backend "cert-manager") .Values.certificates.certManager.issuerRef.name (not .Values.certificates.caSecret.name) }}
{{- fail "certificates.caSecret.name (the Secret of the CA that certificates.certManager.issuerRef signs with) is required with an issuerRef" }}
{{- end }}
{{- if and (include "kcp-operator.createsCA" .) .Values.certificates.caSecret.namespace (ne .Values.certificates.caSecret.namespace (include "kcp-operator.certNamespace" .)) }}
{{- fail "certificates.caSecret.namespace must be empty or certificates.namespace when the chart creates the CA: it lives beside its Issuer" }}
{{- end }}
{{- end }}

{{/* The metrics Service; a ServiceMonitor makes it the job label of the series. */}}
{{- define "kcp-operator.metricsServiceName" -}}
{{- printf "%s-metrics" (include "kcp-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

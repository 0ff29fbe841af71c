{{- /*
Shards: each entry of .Values.shards is one operator instance (--shard) with
its own Deployment, listener Service and agent address. Without shards the
chart renders one unsharded instance, {name: ""}, under the names it always
had. The helpers below take a dict: root (the chart's context) and shard
(one entry; name "" for the unsharded instance).
*/}}

{{/* The label that selects a shard's pods (and the operator's Kymas). */}}
{{- define "kcp-operator.shardLabel" -}}
operator.kyma-project.io/shard
{{- end }}

{{/* Name of the shard's Deployment (and its PodDisruptionBudget). */}}
{{- define "kcp-operator.shardFullname" -}}
{{- $base := include "kcp-operator.fullname" .root }}
{{- if .shard.name }}{{ printf "%s-%s" $base .shard.name }}{{ else }}{{ $base }}{{ end }}
{{- end }}

{{/* Name of the shard's listener Service. */}}
{{- define "kcp-operator.shardListenerService" -}}
{{- $base := include "kcp-operator.listenerServiceName" .root }}
{{- if .shard.name }}{{ printf "%s-%s" $base .shard.name }}{{ else }}{{ $base }}{{ end }}
{{- end }}

{{/* Labels that select the shard's pods. */}}
{{- define "kcp-operator.shardSelectorLabels" -}}
{{ include "kcp-operator.selectorLabels" .root }}
{{- with .shard.name }}
{{ include "kcp-operator.shardLabel" $ }}: {{ . }}
{{- end }}
{{- end }}

{{/* The address the shard's agents send events to (--agent-kcp-address). */}}
{{- define "kcp-operator.shardKCPAddress" -}}
{{- default .root.Values.agent.kcpAddress .shard.agentKCPAddress }}
{{- end }}

{{/* The shard that owns the singletons: the first of the list ("" unsharded). */}}
{{- define "kcp-operator.firstShard" -}}
{{- with .Values.shards }}{{ (first .).name }}{{ end }}
{{- end }}

{{/* The listener Service of the first shard: where the default Watcher routes. */}}
{{- define "kcp-operator.firstListenerService" -}}
{{- include "kcp-operator.shardListenerService" (dict "root" . "shard" (dict "name" (include "kcp-operator.firstShard" .))) }}
{{- end }}

{{/* Checks of the shard list: names, uniqueness, lengths, own agent addresses, leader election, node ports. */}}
{{- define "kcp-operator.validateShards" -}}
{{- $seen := dict }}
{{- $ports := dict }}
{{- $routes := dict }}
{{- range $i, $s := .Values.shards }}
{{- $name := toString $s.name }}
{{- if not (and (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $name) (le (len $name) 40)) }}
{{- fail (printf "shards[%d].name %q is not a valid shard name: a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit) of at most 40 characters" $i $name) }}
{{- end }}
{{- if hasKey $seen $name }}
{{- fail (printf "shards[%d].name %q is given twice: shard names must be unique" $i $name) }}
{{- end }}
{{- $_ := set $seen $name true }}
{{- $ctx := dict "root" $ "shard" $s }}
{{- range list (include "kcp-operator.shardFullname" $ctx) (include "kcp-operator.shardListenerService" $ctx) }}
{{- if gt (len .) 63 }}
{{- fail (printf "shards[%d].name %q makes the name %q longer than 63 characters: shorten the shard name or fullnameOverride" $i $name .) }}
{{- end }}
{{- end }}
{{- if $.Values.agent.install }}
{{- $address := include "kcp-operator.shardKCPAddress" $ctx }}
{{- if not $address }}
{{- fail (printf "shards[%d] (%s) has no agent address: set shards[%d].agentKCPAddress or agent.kcpAddress" $i $name $i) }}
{{- end }}
{{- /* Gateway mode routes a shard's events by the host of its address; direct mode by the address. */}}
{{- $route := ternary (include "kcp-operator.hostOf" $address) $address (eq $.Values.listener.mode "gateway") }}
{{- if hasKey $routes $route }}
{{- fail (printf "shards[%d] (%s) has the agent address of shard %s (%s): each shard's agents need their own, set shards[%d].agentKCPAddress" $i $name (get $routes $route) $route $i) }}
{{- end }}
{{- $_ := set $routes $route $name }}
{{- end }}
{{- with default $.Values.listener.service.nodePort $s.nodePort }}
{{- if and (eq $.Values.listener.service.type "NodePort") (hasKey $ports (toString .)) }}
{{- fail (printf "shards[%d] (%s): node port %v is taken by shard %s; give each shard its own shards[].nodePort" $i $name . (get $ports (toString .))) }}
{{- end }}
{{- $_ := set $ports (toString .) $name }}
{{- end }}
{{- end }}
{{- if and .Values.shards (regexMatch "^(0+(\\.0+)?(ns|us|µs|ms|s|m|h))+$" .Values.leaderElection.leaseDuration) }}
{{- fail "shards need leader election: leaderElection.leaseDuration must be above 0" }}
{{- end }}
{{- end }}

{{/*
DNS names of the endpoint certificate and the Gateway's hosts with shards:
certificates.endpoint.dnsNames, else the hosts of agent.kcpAddress and of
every shard's agentKCPAddress. Every shard gets the same list, so that they
agree on the one endpoint certificate.
*/}}
{{- define "kcp-operator.shardsEndpointDNSNames" -}}
{{- if .Values.certificates.endpoint.dnsNames }}
{{- join "," .Values.certificates.endpoint.dnsNames }}
{{- else }}
{{- $hosts := list }}
{{- with .Values.agent.kcpAddress }}
{{- $hosts = append $hosts (include "kcp-operator.hostOf" .) }}
{{- end }}
{{- range .Values.shards }}
{{- with .agentKCPAddress }}
{{- $hosts = append $hosts (include "kcp-operator.hostOf" .) }}
{{- end }}
{{- end }}
{{- $hosts | uniq | join "," }}
{{- end }}
{{- end }}

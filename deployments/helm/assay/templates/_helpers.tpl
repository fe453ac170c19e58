{{/* Names: <release>-assay-<component>, shortened to 63 characters. */}}
{{- define "assay.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "assay.name" -}}
{{- printf "%s-%s" (include "assay.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "assay.selectorLabels" -}}
app.kubernetes.io/name: assay
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "assay.labels" -}}
{{ include "assay.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/*
A service's image: its own image.repository and image.tag when set, else
<image.registry>/<image.prefix><service>:<image.tag or appVersion>, the
name `make images` tags (deployments/helm/cluster_test.go checks both).
*/}}
{{- define "assay.image" -}}
{{- $i := .root.Values.image -}}
{{- $own := (index .root.Values .component).image | default dict -}}
{{- $repo := printf "%s%s" $i.prefix .component -}}
{{- if $i.registry }}{{ $repo = printf "%s/%s" $i.registry $repo }}{{ end -}}
{{- printf "%s:%s" ($own.repository | default $repo) ($own.tag | default $i.tag | default .root.Chart.AppVersion) -}}
{{- end -}}

{{/*
"true" when the pods get a preStop sleep: the cluster runs the sleep action
(Kubernetes 1.30 and later) and there is a delay (a 0-second sleep is
refused before 1.32). The kubelet then waits shutdownDelaySeconds before
SIGTERM and the app's own delay is 0; else the app waits (values.yaml,
shutdownDelaySeconds).
*/}}
{{- define "assay.preStopSleeps" -}}
{{- if and (gt (int .Values.shutdownDelaySeconds) 0) (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version) }}true{{ end -}}
{{- end -}}

{{- define "assay.secretName" -}}
{{- default (printf "%s-secrets" (include "assay.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The components: name, HTTP port (/health, /ready), metrics port (/metrics, answered on no other port: <SERVICE>_METRICS_ADDR) and whether enabled. */}}
{{- define "assay.components" -}}
gateway: {port: 8080, metricsPort: 8086, enabled: true}
registry: {port: 8081, metricsPort: 8087, enabled: true}
runtime: {port: 8082, metricsPort: 8088, enabled: true}
tracing: {port: 8083, metricsPort: 8089, enabled: true}
writer: {port: 8084, metricsPort: 8090, enabled: true}
console: {port: {{ .Values.console.port }}, metricsPort: 8091, enabled: {{ .Values.console.enabled }}}
{{- end -}}

{{- define "assay.url" -}}
{{- printf "http://%s:%d" (include "assay.name" (dict "root" .root "component" .component)) (int .port) -}}
{{- end -}}

{{/*
The service-to-service calls, caller first. Each pair has its own token,
which only the Secrets of its two services hold: the caller's as
token-to-<callee>, the callee's as token-from-<caller>.
*/}}
{{- define "assay.pairs" -}}
- [gateway, registry]
- [gateway, runtime]
- [gateway, tracing]
- [runtime, registry]
- [runtime, tracing]
- [tracing, registry]
- [registry, tracing]
{{- end -}}

{{/* The Secret of one service's own secrets (tokens, admin or vault key). */}}
{{- define "assay.ownSecretName" -}}
{{- if .root.Values.secrets.existingSecret -}}
{{- printf "%s-%s" .root.Values.secrets.existingSecret .component -}}
{{- else -}}
{{- printf "%s-secrets" (include "assay.name" .) -}}
{{- end -}}
{{- end -}}

{{/* One variable from the service's own Secret. */}}
{{- define "assay.ownSecretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "assay.ownSecretName" . }}
      key: {{ .key }}
{{- end -}}

{{- define "assay.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "assay.secretName" .root }}
      key: {{ .key }}
{{- end -}}

{{/*
Each service's environment. docker-compose.yml sets the same variable
names (deployments/helm/compose_test.go checks it).
*/}}
{{- define "assay.env" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $c := .component -}}
{{- $P := upper $c -}}
{{- $registry := include "assay.url" (dict "root" $root "component" "registry" "port" 8081) -}}
{{- $runtime := include "assay.url" (dict "root" $root "component" "runtime" "port" 8082) -}}
{{- $tracing := include "assay.url" (dict "root" $root "component" "tracing" "port" 8083) -}}
- name: {{ $P }}_ADDR
  value: "0.0.0.0:{{ .port }}"
- name: {{ $P }}_METRICS_ADDR
  value: "0.0.0.0:{{ .metricsPort }}"
- name: {{ $P }}_LOG_LEVEL
  value: {{ $v.logLevel | quote }}
- name: {{ $P }}_SHUTDOWN_DELAY
  value: "{{ if include "assay.preStopSleeps" $root }}0{{ else }}{{ $v.shutdownDelaySeconds }}{{ end }}s"
{{- range $pair := fromYamlArray (include "assay.pairs" $root) }}
{{- $caller := index $pair 0 }}{{ $callee := index $pair 1 }}
{{- if eq $c $caller }}
{{ include "assay.ownSecretEnv" (dict "root" $root "component" $c "name" (printf "%s_TOKEN_TO_%s" $P (upper $callee)) "key" (printf "token-to-%s" $callee)) }}
{{- else if eq $c $callee }}
{{ include "assay.ownSecretEnv" (dict "root" $root "component" $c "name" (printf "%s_TOKEN_FROM_%s" $P (upper $caller)) "key" (printf "token-from-%s" $caller)) }}
{{- end }}
{{- end }}
{{- if has $c (list "gateway" "registry" "tracing") }}
{{ include "assay.storeEnv" (dict "root" $root "name" (printf "%s_POSTGRES_URL" $P) "key" "postgres-url") }}
{{- end }}
{{- if has $c (list "gateway" "registry") }}
{{ include "assay.storeEnv" (dict "root" $root "name" (printf "%s_POSTGRES_MIGRATE_URL" $P) "key" "postgres-migrate-url") }}
- name: {{ $P }}_POSTGRES_MIGRATE
  value: {{ $v.migrations.postgres | quote }}
- name: {{ $P }}_POSTGRES_MAX_CONNS
  value: {{ $v.postgres.maxConns | quote }}
{{- end }}
{{- if has $c (list "registry" "runtime" "tracing" "writer") }}
- name: {{ $P }}_NATS_URL
  value: {{ $v.nats.url | quote }}
- name: {{ $P }}_NATS_USER
  value: {{ $c | quote }}
{{ include "assay.storeEnv" (dict "root" $root "name" (printf "%s_NATS_PASSWORD" $P) "key" (printf "nats-%s-password" $c)) }}
{{- end }}
{{- if has $c (list "tracing" "writer") }}
- name: {{ $P }}_STREAM_REPLICAS
  value: {{ $v.nats.streamReplicas | quote }}
- name: {{ $P }}_STREAM_MAX_BYTES
  value: {{ $v.nats.streamMaxBytes | int64 | quote }}
{{- end }}
{{- if has $c (list "tracing" "writer") }}
{{ include "assay.storeEnv" (dict "root" $root "name" (printf "%s_CLICKHOUSE_URL" $P) "key" (printf "clickhouse-%s-url" $c)) }}
{{- if eq $c "tracing" }}
{{ include "assay.storeEnv" (dict "root" $root "name" "TRACING_CLICKHOUSE_READ_URL" "key" "clickhouse-reader-url") }}
{{- end }}
- name: {{ $P }}_CLICKHOUSE_MIGRATE
  value: {{ $v.migrations.clickhouse | quote }}
{{- with $v.clickhouse.cluster }}
- name: {{ $P }}_CLICKHOUSE_CLUSTER
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- if eq $c "gateway" }}
{{ include "assay.ownSecretEnv" (dict "root" $root "component" $c "name" "GATEWAY_ADMIN_KEY" "key" "admin-key") }}
- name: GATEWAY_REGISTRY_URL
  value: {{ $registry }}
- name: GATEWAY_RUNTIME_URL
  value: {{ $runtime }}
- name: GATEWAY_TRACING_URL
  value: {{ $tracing }}
- name: GATEWAY_CONSOLE_URL
  value: {{ if $v.console.enabled }}{{ include "assay.url" (dict "root" $root "component" "console" "port" $v.console.port) }}{{ else }}""{{ end }}
{{- else if eq $c "registry" }}
{{ include "assay.ownSecretEnv" (dict "root" $root "component" $c "name" "REGISTRY_VAULT_KEY" "key" "vault-key") }}
- name: REGISTRY_TRACING_URL
  value: {{ $tracing }}
- name: REGISTRY_SERVICES_URL
  value: {{ printf "%s/services" (trimSuffix "/" $v.publicURL) | quote }}
- name: REGISTRY_EVALS_REPLICAS
  value: {{ $v.nats.streamReplicas | quote }}
{{- else if eq $c "runtime" }}
- name: RUNTIME_REGISTRY_URL
  value: {{ $registry }}
- name: RUNTIME_TRACING_URL
  value: {{ $tracing }}
- name: RUNTIME_EGRESS_ALLOW
  value: {{ $v.runtime.egressAllow | default "" | quote }}
- name: RUNTIME_EVAL_REPLICAS
  value: {{ $v.nats.streamReplicas | quote }}
{{- else if eq $c "tracing" }}
- name: TRACING_REGISTRY_URL
  value: {{ $registry }}
- name: TRACING_OTLP_GRPC_ADDR
  value: "0.0.0.0:4317"
- name: TRACING_OTLP_HTTP_ADDR
  value: "0.0.0.0:4318"
{{- end }}
{{- end -}}

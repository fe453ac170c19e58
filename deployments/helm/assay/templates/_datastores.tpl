{{/*
The data-store credentials that come from Secrets the operator keeps
(values postgres.host, clickhouse.host, nats.passwordSecrets), as JSON by
the key of the shared Secret they replace: for a URL, the variable that
reads the password (secretKeyRef) and the URL that Kubernetes assembles
from it ($(VAR) expands a variable defined earlier in the container's
env); for a NATS password, the Secret and key. A key not listed here is
the chart's (or secrets.existingSecret's) as before. Refuses values that
mix the two ways or lack a Secret, naming the value at fault.
*/}}
{{- define "assay.storeCreds" -}}
{{- $v := .Values -}}
{{- $out := dict -}}
{{- $stores := list
  (dict "store" "postgres" "scheme" "postgres" "group" "roles" "superuser" "postgres" "urls" (list "url" "migrateUrl") "roles" (list
    (dict "role" "app" "key" "postgres-url" "var" "ASSAY_PG_APP_PASSWORD")
    (dict "role" "owner" "key" "postgres-migrate-url" "var" "ASSAY_PG_OWNER_PASSWORD")))
  (dict "store" "clickhouse" "scheme" "clickhouse" "group" "users" "superuser" "default" "urls" (list "writerUrl" "tracingUrl" "readerUrl") "roles" (list
    (dict "role" "writer" "key" "clickhouse-writer-url" "var" "ASSAY_CH_WRITER_PASSWORD")
    (dict "role" "tracing" "key" "clickhouse-tracing-url" "var" "ASSAY_CH_TRACING_PASSWORD")
    (dict "role" "reader" "key" "clickhouse-reader-url" "var" "ASSAY_CH_READER_PASSWORD")))
-}}
{{- range $s := $stores }}
{{- $sv := index $v $s.store }}
{{- if $sv.host }}
{{- range $u := $s.urls }}
{{- if index $sv $u }}{{ fail (printf "%s.%s: leave it empty when %s.host is set (the URLs are built from host, port, database and %s)" $s.store $u $s.store $s.group) }}{{ end }}
{{- end }}
{{- range $r := $s.roles }}
{{- $at := printf "%s.%s.%s" $s.store $s.group $r.role }}
{{- $role := index (index $sv $s.group | default dict) $r.role | default dict }}
{{- $ps := $role.passwordSecret | default dict }}
{{- if not $role.user }}{{ fail (printf "%s.user is required when %s.host is set" $at $s.store) }}{{ end }}
{{- if eq $role.user $s.superuser }}{{ fail (printf "%s.user is %s, the superuser; use the services' own role or user (deployments/postgres/roles.sql, deployments/clickhouse/users.sh)" $at $s.superuser) }}{{ end }}
{{- if not (and $ps.name $ps.key) }}{{ fail (printf "%s.passwordSecret: name and key of the existing Secret holding %s's password are required when %s.host is set" $at $role.user $s.store) }}{{ end }}
{{- $url := printf "%s://%s:$(%s)@%s:%d/%s" $s.scheme $role.user $r.var $sv.host (int $sv.port) $sv.database }}
{{- with $sv.params }}{{ $url = printf "%s?%s" $url . }}{{ end }}
{{- $_ := set $out $r.key (dict "var" $r.var "name" $ps.name "key" $ps.key "url" $url) }}
{{- end }}
{{- else }}
{{- range $r := $s.roles }}
{{- $role := index (index $sv $s.group | default dict) $r.role | default dict }}
{{- if ($role.passwordSecret | default dict).name }}{{ fail (printf "%s.%s.%s.passwordSecret is used only with %s.host: set the host too" $s.store $s.group $r.role $s.store) }}{{ end }}
{{- end }}
{{- end }}
{{- end }}
{{- range $svc := list "registry" "runtime" "tracing" "writer" }}
{{- $ps := index ($v.nats.passwordSecrets | default dict) $svc | default dict }}
{{- if $ps.name }}
{{- if not $ps.key }}{{ fail (printf "nats.passwordSecrets.%s.key: the key of Secret %s holding the %s user's password is required" $svc $ps.name $svc) }}{{ end }}
{{- if index ($v.nats.passwords | default dict) $svc }}{{ fail (printf "nats.passwords.%s: leave it empty when nats.passwordSecrets.%s names a Secret" $svc $svc) }}{{ end }}
{{- $_ := set $out (printf "nats-%s-password" $svc) (dict "name" $ps.name "key" $ps.key) }}
{{- end }}
{{- end }}
{{- $out | toJson }}
{{- end -}}

{{/*
A data-store credential variable: from the Secret the operator names
(assay.storeCreds), else from the shared Secret's key.
*/}}
{{- define "assay.storeEnv" -}}
{{- $ext := index (include "assay.storeCreds" .root | fromJson) .key -}}
{{- if not $ext -}}
{{ include "assay.secretEnv" . }}
{{- else if $ext.url -}}
- name: {{ $ext.var }}
  valueFrom:
    secretKeyRef:
      name: {{ $ext.name }}
      key: {{ $ext.key }}
- name: {{ .name }}
  value: {{ $ext.url | quote }}
{{- else -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ext.name }}
      key: {{ $ext.key }}
{{- end -}}
{{- end -}}

{{/*
Every value of the chart's Secrets, as JSON: "shared" (the data stores'
URLs and the NATS passwords, for <release>-secrets), "own" (each service's
tokens and keys, for <release>-<service>-secrets), "natsAuth" (auth.conf).
Given values win; else the value the cluster already holds (lookup: the
service's Secret, else the shared Secret of earlier chart versions, which
held admin-key and vault-key for everyone); else a generated one.

Computed once per render and kept in .Values: secret.yaml and the pods'
checksum/secret both include this, and generating twice would give the
pods the checksum of values no Secret holds (deployments/helm/gitops_test.go).
`helm template` cannot look anything up, so each of its runs generates
anew: GitOps users set secrets.existingSecret.
*/}}
{{- define "assay.secretValues" -}}
{{- if not (hasKey .Values "__assaySecretValues") }}
{{- $name := include "assay.secretName" . }}
{{- $old := (lookup "v1" "Secret" .Release.Namespace $name).data | default dict }}
{{- $s := .Values.secrets }}
{{- /* Credentials from the operator's own Secrets are neither held nor generated here. */}}
{{- $ext := include "assay.storeCreds" . | fromJson }}
{{- $nats := dict }}
{{- range $svc := list "registry" "runtime" "tracing" "writer" }}
{{- if not (hasKey $ext (printf "nats-%s-password" $svc)) }}
{{- $v := index $.Values.nats.passwords $svc }}
{{- $_ := set $nats $svc (ternary $v (index $old (printf "nats-%s-password" $svc) | default (randAlphaNum 40 | b64enc) | b64dec) (ne $v "")) }}
{{- end }}
{{- end }}
{{- $shared := dict }}
{{- /* The data stores: a URL per role, each carrying its password. */}}
{{- range $key, $u := dict "postgres.url" .Values.postgres.url "postgres.migrateUrl" .Values.postgres.migrateUrl "clickhouse.writerUrl" .Values.clickhouse.writerUrl "clickhouse.tracingUrl" .Values.clickhouse.tracingUrl "clickhouse.readerUrl" .Values.clickhouse.readerUrl }}
{{- $skey := index (dict "postgres.url" "postgres-url" "postgres.migrateUrl" "postgres-migrate-url" "clickhouse.writerUrl" "clickhouse-writer-url" "clickhouse.tracingUrl" "clickhouse-tracing-url" "clickhouse.readerUrl" "clickhouse-reader-url") $key }}
{{- if not (hasKey $ext $skey) }}
{{- $u := $u | required (printf "%s (or postgres.host / clickhouse.host with Secrets, or secrets.existingSecret) is required" $key) }}
{{- if not (regexMatch "^[a-z]+://[^:/@]+:[^@]+@" $u) }}{{ fail (printf "%s must carry a user and its password (scheme://user:password@host)" $key) }}{{ end }}
{{- if regexMatch "^[a-z]+://(postgres|default):" $u }}{{ fail (printf "%s signs in as the superuser; use the services' own role or user (deployments/postgres/roles.sql, deployments/clickhouse/users.sh)" $key) }}{{ end }}
{{- $_ := set $shared $skey ($u | b64enc) }}
{{- end }}
{{- end }}
{{- range $svc, $pw := $nats }}
{{- $_ := set $shared (printf "nats-%s-password" $svc) ($pw | b64enc) }}
{{- end }}
{{- /* The token of each pair is generated once here, so caller and callee get the same value. */}}
{{- $root := . }}
{{- $own := dict "gateway" (dict) "registry" (dict) "runtime" (dict) "tracing" (dict) }}
{{- range $pair := fromYamlArray (include "assay.pairs" .) }}
{{- $caller := index $pair 0 }}
{{- $callee := index $pair 1 }}
{{- $prev := (lookup "v1" "Secret" $root.Release.Namespace (include "assay.ownSecretName" (dict "root" $root "component" $callee))).data | default dict }}
{{- $tok := "" }}
{{- with index ($s.pairTokens | default dict) (printf "%s-%s" $caller $callee) }}
{{- $tok = b64enc . }}
{{- else }}
{{- $tok = index $prev (printf "token-from-%s" $caller) | default (randAlphaNum 40 | b64enc) }}
{{- end }}
{{- $_ := set (index $own $caller) (printf "token-to-%s" $callee) $tok }}
{{- $_ := set (index $own $callee) (printf "token-from-%s" $caller) $tok }}
{{- end }}
{{- $gw := (lookup "v1" "Secret" .Release.Namespace (include "assay.ownSecretName" (dict "root" . "component" "gateway"))).data | default dict }}
{{- $_ := set (index $own "gateway") "admin-key" (ternary ($s.adminKey | b64enc) (index $gw "admin-key" | default (index $old "admin-key") | default (randAlphaNum 40 | b64enc)) (ne $s.adminKey "")) }}
{{- $reg := (lookup "v1" "Secret" .Release.Namespace (include "assay.ownSecretName" (dict "root" . "component" "registry"))).data | default dict }}
{{- $_ := set (index $own "registry") "vault-key" (ternary ($s.vaultKey | b64enc) (index $reg "vault-key" | default (index $old "vault-key") | default (randBytes 32 | b64enc)) (ne $s.vaultKey "")) }}
{{- /* The NATS server's users: deployments/nats/auth.conf with the passwords above; none when some password is the operator's (the chart does not know it). */}}
{{- $natsAuth := "" }}
{{- if eq (len $nats) 4 }}
{{- $conf := .Files.Get "files/nats-auth.conf" }}
{{- range $svc, $pw := $nats }}
{{- $conf = replace (printf "$%s_NATS_PASSWORD" (upper $svc)) (printf "%q" $pw) $conf }}
{{- end }}
{{- $natsAuth = $conf | b64enc }}
{{- end }}
{{- $_ := set .Values "__assaySecretValues" (dict "shared" $shared "own" $own "natsAuth" $natsAuth) }}
{{- end }}
{{- index .Values "__assaySecretValues" | toJson }}
{{- end -}}

{{/*
The keys each Secret holds, as JSON: the shared Secret's ("shared") and
each service's own ("gateway", "registry", "runtime", "tracing"). NOTES.txt
lists them for those who bring their own Secrets (secrets.existingSecret).
*/}}
{{- define "assay.secretKeys" -}}
{{- $ext := include "assay.storeCreds" . | fromJson }}
{{- $shared := list }}
{{- range $k := list "postgres-url" "postgres-migrate-url" "clickhouse-writer-url" "clickhouse-tracing-url" "clickhouse-reader-url" "nats-registry-password" "nats-runtime-password" "nats-tracing-password" "nats-writer-password" }}
{{- if not (hasKey $ext $k) }}{{ $shared = append $shared $k }}{{ end }}
{{- end }}
{{- $keys := dict "shared" $shared "gateway" (list "admin-key") "registry" (list "vault-key") "runtime" (list) "tracing" (list) }}
{{- range $pair := fromYamlArray (include "assay.pairs" .) }}
{{- $caller := index $pair 0 }}
{{- $callee := index $pair 1 }}
{{- $_ := set $keys $caller (append (index $keys $caller) (printf "token-to-%s" $callee)) }}
{{- $_ := set $keys $callee (append (index $keys $callee) (printf "token-from-%s" $caller)) }}
{{- end }}
{{- $keys | toJson }}
{{- end -}}

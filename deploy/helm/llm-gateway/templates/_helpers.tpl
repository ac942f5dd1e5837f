{{/* The chart's name, and the release's full name (at most 63 characters). */}}
{{- define "llm-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "llm-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "llm-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llm-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "llm-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "llm-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "llm-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "llm-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether more than one pod may run. */}}
{{- define "llm-gateway.several" -}}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}

{{/* The ConfigMap holding gateway.config.ts, if any. */}}
{{- define "llm-gateway.configMapName" -}}
{{- if .Values.config.existingConfigMap -}}
{{- .Values.config.existingConfigMap -}}
{{- else if .Values.config.gatewayConfigTs -}}
{{- printf "%s-config" (include "llm-gateway.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* How long the gateway lets requests in flight finish after SIGTERM (GATEWAY_SHUTDOWN_GRACE_MS). */}}
{{- define "llm-gateway.shutdownGraceMs" -}}
{{- $seconds := sub (sub (int .Values.terminationGracePeriodSeconds) (int .Values.preStopSleepSeconds)) (int .Values.drainMarginSeconds) -}}
{{- if le (int $seconds) 0 -}}
{{- fail "terminationGracePeriodSeconds must exceed preStopSleepSeconds + drainMarginSeconds: the gateway needs time to drain" -}}
{{- end -}}
{{- mul $seconds 1000 -}}
{{- end -}}

{{/* Refuses settings that cannot work: several pods each need the same shared state and keys. */}}
{{- define "llm-gateway.validate" -}}
{{- if include "llm-gateway.several" . -}}
{{- if not (and .Values.redis.enabled .Values.redis.existingSecret) -}}
{{- fail "more than one pod (replicaCount > 1 or autoscaling) needs shared state: set redis.enabled and redis.existingSecret" -}}
{{- end -}}
{{- if not .Values.secrets.masterKey.name -}}
{{- fail "more than one pod needs one master key: set secrets.masterKey.name" -}}
{{- end -}}
{{- if not .Values.secrets.accountKey.name -}}
{{- fail "more than one pod needs one account key: set secrets.accountKey.name" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.redis.enabled (not .Values.redis.existingSecret) -}}
{{- fail "redis.enabled needs redis.existingSecret: a Secret holding REDIS_URL" -}}
{{- end -}}
{{- if and .Values.postgresql.enabled (not .Values.postgresql.existingSecret) -}}
{{- fail "postgresql.enabled needs postgresql.existingSecret: a Secret holding DATABASE_URL" -}}
{{- end -}}
{{- end -}}

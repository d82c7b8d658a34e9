{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "serval.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<chart>, or the release name alone when it already contains the chart name. */}}
{{- define "serval.fullname" -}}
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

{{- define "serval.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "serval.labels" -}}
helm.sh/chart: {{ include "serval.chart" . }}
{{ include "serval.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the pods (immutable once installed). */}}
{{- define "serval.selectorLabels" -}}
app.kubernetes.io/name: {{ include "serval.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "serval.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "serval.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding SERVAL_API_TOKEN, or nothing when no token is configured. */}}
{{- define "serval.apiTokenSecret" -}}
{{- if .Values.apiToken.existingSecret }}
{{- .Values.apiToken.existingSecret }}
{{- else if .Values.apiToken.value }}
{{- printf "%s-api-token" (include "serval.fullname" .) }}
{{- end }}
{{- end }}

{{/* The deployments file, as mounted at /etc/serval/deployments.yaml. */}}
{{- define "serval.deploymentsFile" -}}
{{ dict "deployments" .Values.serval.deployments | toYaml }}
{{- end }}

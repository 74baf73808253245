{{/* The chart name, overridable. */}}
{{- define "landscaper-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects. */}}
{{- define "landscaper-agent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "landscaper-agent.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "landscaper-agent.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The environment name. */}}
{{- define "landscaper-agent.environment" -}}
{{- default .Release.Name .Values.agent.name }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "landscaper-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "landscaper-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
landscaper.gardener.cloud/component: landscaper-agent
{{- end }}

{{/* Labels that select the agent's pod. */}}
{{- define "landscaper-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "landscaper-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The agent's ServiceAccount. */}}
{{- define "landscaper-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "landscaper-agent.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding the landscaper cluster's kubeconfig. */}}
{{- define "landscaper-agent.landscaperKubeconfigSecret" -}}
{{- $kubeconfig := .Values.agent.landscaperClusterKubeconfig }}
{{- if and $kubeconfig.secretRef $kubeconfig.kubeconfig }}
{{- fail "agent.landscaperClusterKubeconfig: set either secretRef.name or kubeconfig, not both" }}
{{- else if $kubeconfig.kubeconfig }}
{{- printf "%s-landscaper-cluster" (include "landscaper-agent.fullname" .) }}
{{- else if and $kubeconfig.secretRef $kubeconfig.secretRef.name }}
{{- $kubeconfig.secretRef.name }}
{{- else }}
{{- fail "agent.landscaperClusterKubeconfig: set secretRef.name or kubeconfig: the agent must reach the landscaper cluster" }}
{{- end }}
{{- end }}

{{/* The ClusterRole and binding of the agent itself in this (host) cluster: one per agent,
never shared. `:host` keeps them apart from the agent's RBAC in the landscaper cluster
(`landscaper:agent:<env>:landscaper`) when both clusters are one. */}}
{{- define "landscaper-agent.rbacName" -}}
{{- printf "landscaper:agent:%s:host" (include "landscaper-agent.environment" .) }}
{{- end }}

{{/* The image. */}}
{{- define "landscaper-agent.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

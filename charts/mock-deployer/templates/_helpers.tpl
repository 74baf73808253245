{{/* The chart name, overridable. */}}
{{- define "mock-deployer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects. */}}
{{- define "mock-deployer.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "mock-deployer.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "mock-deployer.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "mock-deployer.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mock-deployer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
landscaper.gardener.cloud/component: mock-deployer
{{- end }}

{{/* Labels that select the deployer's pod. */}}
{{- define "mock-deployer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mock-deployer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The Secret holding the landscaper cluster's kubeconfig. */}}
{{- define "mock-deployer.landscaperKubeconfigSecret" -}}
{{- $kubeconfig := .Values.deployer.landscaperClusterKubeconfig }}
{{- if and $kubeconfig.secretRef $kubeconfig.kubeconfig }}
{{- fail "deployer.landscaperClusterKubeconfig: set either secretRef.name or kubeconfig, not both" }}
{{- else if $kubeconfig.kubeconfig }}
{{- printf "%s-landscaper-cluster" (include "mock-deployer.fullname" .) }}
{{- else if and $kubeconfig.secretRef $kubeconfig.secretRef.name }}
{{- $kubeconfig.secretRef.name }}
{{- else }}
{{- fail "deployer.landscaperClusterKubeconfig: set secretRef.name or kubeconfig: the deployer must reach the landscaper cluster" }}
{{- end }}
{{- end }}

{{/* The deployer's Configuration. */}}
{{- define "mock-deployer.config" -}}
apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
kind: Configuration
identity: {{ default .Release.Name .Values.deployer.identity | quote }}
{{- with .Values.deployer.targetSelector }}
targetSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
controller:
  workers: {{ .Values.deployer.controller.workers | int }}
{{- with .Values.deployer.progressingTimeout }}
deployItemTimeouts:
  progressingDefault: {{ . | quote }}
{{- end }}
{{- end }}

{{/* The image. */}}
{{- define "mock-deployer.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

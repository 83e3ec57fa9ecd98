{{/* Labels every object of the release carries. */}}
{{- define "aroHcp.labels" -}}
app.kubernetes.io/name: aro-hcp-identity-status
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
aro-hcp.azure.com/region: {{ .Values.region }}
{{- end }}

{{/* The pod's security context: non-root, no privilege, the runtime's seccomp profile. */}}
{{- define "aroHcp.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The container's: a read-only root filesystem (scratch is an emptyDir), no capabilities. */}}
{{- define "aroHcp.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end }}

{{/* What the shard and verdict containers share: the region, the backend, the secrets and scratch. */}}
{{- define "aroHcp.environment" -}}
- name: ARO_HCP_REGION
  value: {{ .Values.region | quote }}
- name: PULUMI_BACKEND_URL
  value: {{ .Values.state.backendUrl | quote }}
- name: PULUMI_CONFIG_PASSPHRASE_FILE
  value: /mnt/secrets/pulumi-config-passphrase
- name: ARO_HCP_SETTINGS_FILE
  value: /etc/aro-hcp/settings.json
- name: ARO_HCP_SCRATCH_DIRECTORY
  value: /scratch
- name: HOME
  value: /scratch
- name: TMPDIR
  value: /scratch
- name: AZURE_TOKEN_CREDENTIALS
  value: prod
{{- end }}

{{- define "aroHcp.volumeMounts" -}}
- name: scratch
  mountPath: /scratch
- name: secrets
  mountPath: /mnt/secrets
  readOnly: true
- name: settings
  mountPath: /etc/aro-hcp
  readOnly: true
{{- end }}

{{- define "aroHcp.volumes" -}}
- name: scratch
  emptyDir:
    sizeLimit: {{ .Values.scratchSizeLimit }}
- name: secrets
  csi:
    driver: secrets-store.csi.k8s.io
    readOnly: true
    volumeAttributes:
      secretProviderClass: {{ .Release.Name }}
- name: settings
  configMap:
    name: {{ .Release.Name }}-settings
{{- end }}

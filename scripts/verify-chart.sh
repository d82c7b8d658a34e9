#!/usr/bin/env bash
# Verifies the Helm chart in helm/serval, in three stages:
#   1. helm lint --strict, plus values the schema or the templates must refuse;
#   2. helm template (several value sets) validated by kubeconform -strict against offline Kubernetes schemas;
#   3. helm install into a real kube-apiserver with kube-controller-manager, kube-scheduler and a kwok fake node,
#      all started here on 127.0.0.1: the Deployment rolls out, the HPA is accepted and acted on, and an
#      upgrade that changes the deployments config rolls the pods to a new ReplicaSet.
# kwok fakes the kubelet: pods become "Running" without running a container, so stage 3 proves that the
# objects are valid for a real API server and behave under the real controllers -- not that Serval runs in
# them (the container tests in platform-it do that with the same settings).
# Tools come from scripts/k8s-tools.sh (Go module proxy, PyPI, Debian), cached in ~/.cache/serval-k8s.
# Usage: scripts/verify-chart.sh            (exit 0 = every check passed)
#   SERVAL_K8S_WORK   scratch directory for the cluster (default /tmp/serval-k8s-verify); logs stay there
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHART="$ROOT/helm/serval"
WORK=${SERVAL_K8S_WORK:-/tmp/serval-k8s-verify}
K8S_MINOR=1.36
ETCD_PORT=22379; ETCD_PEER=22380; API_PORT=26443; KCM_PORT=20257; SCHED_PORT=20259
NS=serval-verify; RELEASE=serval

step() { printf '\n[verify-chart %4ss] == %s\n' "$SECONDS" "$*"; }
ok() { printf '[verify-chart %4ss]    ok: %s\n' "$SECONDS" "$*"; }
die() { printf '[verify-chart %4ss] FAILED: %s\n' "$SECONDS" "$*" >&2; exit 1; }

step "tools (scripts/k8s-tools.sh)"
CACHE=$(bash "$ROOT/scripts/k8s-tools.sh")
BIN="$CACHE/bin"
SCHEMAS="$CACHE/schemas/v$K8S_MINOR-strict"
HELM="$BIN/helm"
ok "tools in $BIN"

# --- 1. lint -----------------------------------------------------------------------------------------------------
step "helm lint --strict"
"$HELM" lint --strict "$CHART" | grep -v '^$'
"$HELM" lint --strict "$CHART" --set autoscaling.enabled=true --set autoscaling.servingMetric.enabled=true \
  --set serviceMonitor.enabled=true --set apiToken.value=secret | grep -v '^$'
ok "lint passes with the defaults and with every optional object enabled"
ERR=$(mktemp)
refuse() { # DESCRIPTION HELM-ARGS...: helm template must fail
  local what=$1; shift
  if "$HELM" template t "$CHART" --kube-version "$K8S_MINOR.0" "$@" >/dev/null 2>"$ERR"; then
    die "the chart accepted $what"
  fi
  ok "refuses $what: $(tr '\n' ' ' < "$ERR" | grep -o -E '(- at|must exceed).{0,100}' | head -n 1)"
}
refuse "an unknown top-level key" --set replicaCuont=3
refuse "a negative replicaCount" --set replicaCount=-1
refuse "an unknown pull policy" --set image.pullPolicy=Sometimes
refuse "a deployment without a model" --set 'serval.deployments[0].name=x' --set 'serval.deployments[0].model='
refuse "a grace period shorter than preStop + drain" --set shutdown.terminationGracePeriodSeconds=10

# --- 2. kubeconform --------------------------------------------------------------------------------------------
step "helm template | kubeconform -strict (Kubernetes $K8S_MINOR schemas, offline)"
conform() { "$BIN/kubeconform" -strict -summary -skip ServiceMonitor \
  -schema-location "$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$@"; }
# Self-check: a broken manifest and an unknown kind must fail, or kubeconform is not really validating.
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: two, selector: {}, template: {}}\n' \
  | conform - >/dev/null 2>&1 && die "kubeconform accepted an invalid Deployment: its schemas are not in use"
printf 'apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: x}\n' | conform - >/dev/null 2>&1 \
  && die "kubeconform passed a kind it has no schema for"
ok "kubeconform rejects an invalid Deployment and an unknown kind"
render() { "$HELM" template "$RELEASE" "$CHART" --namespace "$NS" --kube-version "$K8S_MINOR.0" "$@"; }
render | conform -
render --set autoscaling.enabled=true --set autoscaling.servingMetric.enabled=true --set serviceMonitor.enabled=true \
  --set apiToken.value=secret --set podDisruptionBudget.minAvailable=1 --set service.type=LoadBalancer \
  --set serval.stateDir=true --set serval.logJson=true | conform -
render --set apiToken.existingSecret=serval-token --set podDisruptionBudget.enabled=false \
  --set serviceAccount.create=false --set shutdown.preStopSleepSeconds=0 | conform -
kinds=$(render --set autoscaling.enabled=true --set serviceMonitor.enabled=true --set apiToken.value=s \
  | sed -n 's/^kind: //p' | sort | tr '\n' ' ')
[ "$kinds" = "ConfigMap Deployment HorizontalPodAutoscaler PodDisruptionBudget Secret Service ServiceAccount ServiceMonitor " ] \
  || die "unexpected kinds rendered: $kinds"
ok "three value sets valid; kinds: $kinds(ServiceMonitor is a CRD: no offline schema, skipped)"

# --- 3. a real API server with controllers and a fake node ------------------------------------------------------
step "kube-apiserver + kube-controller-manager + kube-scheduler + kwok on 127.0.0.1"
for port in $ETCD_PORT $ETCD_PEER $API_PORT $KCM_PORT $SCHED_PORT; do
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && die "port $port on 127.0.0.1 is in use (another verify-chart run?)"
done
rm -rf "$WORK"; mkdir -p "$WORK/certs"
PIDS=()
cleanup() {
  local p i
  for ((i=${#PIDS[@]}-1; i>=0; i--)); do   # newest first: the API server drains before etcd stops
    p=${PIDS[$i]}
    kill "$p" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
  done
}
trap cleanup EXIT
cd "$WORK"
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$TOKEN,admin,admin,system:masters" > tokens.csv
etcd --name verify --data-dir "$WORK/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
  --initial-cluster "verify=http://127.0.0.1:$ETCD_PEER" > etcd.log 2>&1 &
PIDS+=($!)
"$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" --cert-dir="$WORK/certs" \
  --token-auth-file="$WORK/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$WORK/sa.pub" \
  --service-account-signing-key-file="$WORK/sa.key" --service-cluster-ip-range=10.96.0.0/24 \
  --enable-priority-and-fairness=false > apiserver.log 2>&1 &
PIDS+=($!)
cat > kubeconfig <<K
apiVersion: v1
kind: Config
clusters:
- name: verify
  cluster: {server: "https://127.0.0.1:$API_PORT", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "$TOKEN"}
contexts:
- name: verify
  context: {cluster: verify, user: admin, namespace: $NS}
current-context: verify
K
export KUBECONFIG="$WORK/kubeconfig"

# The API, through curl (no kubectl needed): api METHOD PATH [JSON-BODY]
api() {
  curl -sk --max-time 10 -X "$1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    ${3:+--data "$3"} "https://127.0.0.1:$API_PORT$2"
}
# json FILTER: evaluates a Python expression over the JSON on stdin, bound to `o`.
json() { python3 -c "import json,sys; o=json.load(sys.stdin); print($1)"; }
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s
wait_for() {
  local limit=$1 what=$2; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || die "$what: not within ${limit}s (logs in $WORK)"
    sleep 0.5
  done
  ok "$what"
}
ready() { [ "$(api GET /readyz)" = ok ]; }
wait_for 90 "kube-apiserver ready ($("$BIN/kube-apiserver" --version))" ready

"$BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 --secure-port=$KCM_PORT --leader-elect=false \
  --service-account-private-key-file="$WORK/sa.key" --root-ca-file="$WORK/certs/apiserver.crt" \
  --use-service-account-credentials=false --horizontal-pod-autoscaler-sync-period=2s > kcm.log 2>&1 &
PIDS+=($!)
"$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --bind-address=127.0.0.1 --secure-port=$SCHED_PORT \
  --leader-elect=false > scheduler.log 2>&1 &
PIDS+=($!)
KWOK_CONFIG=()
for f in "$CACHE"/kwok-stages/*.yaml; do KWOK_CONFIG+=("--config=$f"); done
"$BIN/kwok" --kubeconfig="$KUBECONFIG" --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-ip=127.0.0.1 --cidr=10.244.0.1/24 "${KWOK_CONFIG[@]}" > kwok.log 2>&1 &
PIDS+=($!)
api POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"kwok-node-0",
  "annotations":{"node.alpha.kubernetes.io/ttl":"0","kwok.x-k8s.io/node":"fake"},
  "labels":{"type":"kwok","kubernetes.io/hostname":"kwok-node-0","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}}}' \
  | json 'o.get("metadata",{}).get("name") or sys.exit(str(o))' >/dev/null
node_ready() { api GET /api/v1/nodes/kwok-node-0 \
  | json '[c["status"] for c in o["status"].get("conditions",[]) if c["type"]=="Ready"] == ["True"] or sys.exit(1)'; }
wait_for 60 "fake node kwok-node-0 Ready" node_ready

DEPLOY="/apis/apps/v1/namespaces/$NS/deployments/$RELEASE"
# rolled_out N: the Deployment's current generation is fully rolled out to N available pods.
rolled_out() { api GET "$DEPLOY" | json "(lambda s, m: s.get('observedGeneration') == m['generation'] and \
  s.get('replicas') == s.get('updatedReplicas') == s.get('availableReplicas') == s.get('readyReplicas') == $1)\
  (o['status'], o['metadata']) or sys.exit(1)"; }
template_hash() { api GET "/apis/apps/v1/namespaces/$NS/replicasets?labelSelector=app.kubernetes.io/instance%3D$RELEASE" \
  | json "' '.join(sorted(r['metadata']['labels']['pod-template-hash'] for r in o['items'] if r['status'].get('replicas',0) > 0))"; }
running_pods() { api GET "/api/v1/namespaces/$NS/pods?labelSelector=app.kubernetes.io/instance%3D$RELEASE" \
  | json "sum(1 for p in o['items'] if p['status'].get('phase') == 'Running' and p['spec'].get('nodeName') == 'kwok-node-0' \
      and not p['metadata'].get('deletionTimestamp'))"; }

step "helm install (autoscaling with CPU and a serving metric, PDB, API token Secret)"
"$HELM" install "$RELEASE" "$CHART" --namespace "$NS" --create-namespace --wait --timeout 180s \
  --set autoscaling.enabled=true --set autoscaling.minReplicas=2 --set autoscaling.maxReplicas=4 \
  --set autoscaling.servingMetric.enabled=true --set apiToken.value=verify-token > helm-install.log \
  || { cat helm-install.log; die "helm install"; }
ok "helm install --wait succeeded"
for kind in configmaps/$RELEASE services/$RELEASE serviceaccounts/$RELEASE secrets/$RELEASE-api-token; do
  api GET "/api/v1/namespaces/$NS/$kind" | json "o['metadata']['name'] if o.get('kind') != 'Status' else sys.exit(str(o))" >/dev/null \
    || die "$kind missing"
done
pdb=$(api GET "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets/$RELEASE" | json "o['spec']['maxUnavailable']")
[ "$pdb" = 1 ] || die "PodDisruptionBudget missing or wrong (maxUnavailable: $pdb)"
ok "ConfigMap, Service, ServiceAccount, Secret and PodDisruptionBudget stored by the API server"
HPA="/apis/autoscaling/v2/namespaces/$NS/horizontalpodautoscalers/$RELEASE"
api GET "$HPA" | json "[m['type'] for m in o['spec']['metrics']] == ['Resource', 'Pods'] or sys.exit(str(o))" >/dev/null \
  || die "HorizontalPodAutoscaler not stored with its CPU and serving-metric targets"
ok "HorizontalPodAutoscaler accepted (CPU utilisation + Pods metric serval_queued_requests)"
# The chart leaves replicas to the HPA; the HPA controller raises the Deployment to minReplicas (2) by itself,
# and reports that it cannot read metrics (no metrics server or adapter here).
hpa_active() { api GET "$HPA" | json "o['status'].get('desiredReplicas') == 2 and \
  any(c['type'] == 'AbleToScale' for c in o['status'].get('conditions', [])) or sys.exit(1)"; }
wait_for 60 "the HPA controller took the HPA over (desiredReplicas 2, conditions reported)" hpa_active
wait_for 90 "Deployment rolled out: 2/2 pods available" rolled_out 2
two_running() { [ "$(running_pods)" = 2 ]; }
wait_for 30 "2 pods Running on kwok-node-0" two_running
before=$(template_hash)
checksum_before=$(api GET "$DEPLOY" | json "o['spec']['template']['metadata'].get('annotations', {}).get('checksum/config', 'none')")

step "helm upgrade with a changed deployments config (predictor_threads 2 -> 4)"
"$HELM" upgrade "$RELEASE" "$CHART" --namespace "$NS" --wait --timeout 180s --reuse-values \
  --set 'serval.deployments[0].name=all-minilm-l6-v2' --set 'serval.deployments[0].model=all-minilm-l6-v2' \
  --set 'serval.deployments[0].predictor_threads=4' --set 'serval.deployments[0].intra_op_threads=1' \
  > helm-upgrade.log || { cat helm-upgrade.log; die "helm upgrade"; }
ok "helm upgrade --wait succeeded"
file=$(api GET "/api/v1/namespaces/$NS/configmaps/$RELEASE" | json "o['data']['deployments.yaml']")
[[ "$file" == *"predictor_threads: 4"* ]] || die "the ConfigMap does not carry the new deployments file: $file"
checksum_after=$(api GET "$DEPLOY" | json "o['spec']['template']['metadata'].get('annotations', {}).get('checksum/config', 'none')")
[ "$checksum_after" != "$checksum_before" ] || die "the pod template's config checksum did not change"
wait_for 90 "Deployment rolled out again: 2/2 pods of the new template available" rolled_out 2
after=$(template_hash)
[ -n "$after" ] && [ "$after" != "$before" ] && [ "$(echo "$after" | wc -w)" = 1 ] \
  || die "expected one new ReplicaSet serving (before: $before, after: $after)"
ok "pods moved from ReplicaSet $before to $after (config checksum ${checksum_before:0:12} -> ${checksum_after:0:12})"
"$HELM" history "$RELEASE" --namespace "$NS" | tail -n +2 | awk '{print "    revision " $1 ": " $(NF-2) " " $(NF-1)}'

step "helm uninstall"
"$HELM" uninstall "$RELEASE" --namespace "$NS" --wait --timeout 60s >/dev/null
ok "uninstalled"
printf '\n[verify-chart %4ss] chart verified: lint, schema, kubeconform, install, HPA, rollout, upgrade\n' "$SECONDS"

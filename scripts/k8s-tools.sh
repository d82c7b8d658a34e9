#!/usr/bin/env bash
# Installs the tools that scripts/verify-chart.sh needs, each from a package registry, into a cache that
# survives between runs (nothing is rebuilt when its pinned version is already there):
#   helm, kubeconform                 Go module proxy (go install)
#   kube-apiserver, kube-controller-manager, kube-scheduler
#                                     Go module proxy: the k8s.io/kubernetes module, built from source
#                                     (no kubectl: verify-chart.sh talks to the API server with curl)
#   kwok (fake nodes)                 Go module proxy
#   Kubernetes JSON schemas           PyPI (kubernetes-validate), rewritten for offline kubeconform
#   etcd                              Debian (etcd-server)
# Usage: scripts/k8s-tools.sh            (prints the cache dir; binaries in $SERVAL_K8S_CACHE/bin)
# Cold on a 2-core machine this is the expensive part (~12-15 min, mostly compiling Kubernetes); warm < 1 s.
#   SERVAL_K8S_CACHE   where the tools live (default ~/.cache/serval-k8s); the Go caches are Go's own.
set -euo pipefail

CACHE=${SERVAL_K8S_CACHE:-$HOME/.cache/serval-k8s}
K8S_VERSION=${K8S_VERSION:-v1.36.3}
HELM_VERSION=${HELM_VERSION:-v3.22.0}
KUBECONFORM_VERSION=${KUBECONFORM_VERSION:-v0.7.0}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
KUBERNETES_VALIDATE_VERSION=${KUBERNETES_VALIDATE_VERSION:-1.37.0}
# The Kubernetes minor whose schemas kubeconform validates against (same minor as the API server built here).
SCHEMA_K8S=${SCHEMA_K8S:-1.36}

BIN="$CACHE/bin"
mkdir -p "$BIN" "$CACHE/stamps"
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local
log() { printf '[k8s-tools %5ss] %s\n' "$SECONDS" "$*" >&2; }

# done_for NAME VERSION: true when NAME was already installed at VERSION (and its binary is still there).
done_for() { [ -f "$CACHE/stamps/$1" ] && [ "$(cat "$CACHE/stamps/$1")" = "$2" ]; }
stamp() { echo "$2" > "$CACHE/stamps/$1"; }

# Go: the one on the PATH, else the usual install location (CI may run with a minimal PATH).
command -v go >/dev/null || { [ -x /usr/local/go/bin/go ] && export PATH="/usr/local/go/bin:$PATH"; }
command -v go >/dev/null || { echo "k8s-tools: Go >= 1.25 is needed to build the tools (https://go.dev/dl)" >&2; exit 1; }

# --- Debian: etcd ---------------------------------------------------------------------------------------------
if ! command -v etcd >/dev/null; then
  log "installing etcd-server (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
fi

# --- Go module proxy: helm, kubeconform, kwok, and the Kubernetes control plane ---------------------------------
# The builds run side by side: each is parallel while compiling but spends minutes in single-threaded phases
# (module downloads, linking), which the others fill. Each logs to $CACHE/logs/NAME.log, printed if it fails.
mkdir -p "$CACHE/logs"
JOBS=()
go_install() { # NAME VERSION PACKAGE
  done_for "$1" "$2" && [ -x "$BIN/$1" ] && return 0
  log "go install $3@$2"
  ( GOBIN="$BIN" go install "$3@$2" && stamp "$1" "$2" ) > "$CACHE/logs/$1.log" 2>&1 &
  JOBS+=("$!:$1")
}
go_install kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform
go_install kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok
go_install helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm

# The k8s.io/kubernetes module zip has no staging/ tree, so its "k8s.io/x => ./staging/src/k8s.io/x" replaces
# are pointed at the published k8s.io/x v0.<minor>.<patch> modules instead.
K8S_CMDS="kube-apiserver kube-controller-manager kube-scheduler"
need_k8s=false
for c in $K8S_CMDS; do done_for "$c" "$K8S_VERSION" && [ -x "$BIN/$c" ] || need_k8s=true; done
build_k8s() {
  local DIR SRC STAGING_VER MINOR
  DIR=$(cd /tmp && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  SRC="$CACHE/src/kubernetes-$K8S_VERSION"
  rm -rf "$SRC"; mkdir -p "$CACHE/src"; cp -r "$DIR" "$SRC"; chmod -R u+w "$SRC"
  STAGING_VER="v0.${K8S_VERSION#v1.}"
  MINOR=$(echo "${K8S_VERSION#v1.}" | cut -d. -f1)
  cd "$SRC"
  rm -rf vendor go.work go.work.sum
  sed -i -E "s#^(\s*)(k8s\.io/[a-z0-9-]+) => \./staging/src/k8s\.io/[a-z0-9-]+#\1\2 => \2 $STAGING_VER#" go.mod
  go mod download
  go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
    -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR" \
    -o "$BIN/" $(for c in $K8S_CMDS; do echo "./cmd/$c"; done)
  for c in $K8S_CMDS; do stamp "$c" "$K8S_VERSION"; done
  cd / && rm -rf "$SRC"
}
if $need_k8s; then
  log "building Kubernetes $K8S_VERSION ($K8S_CMDS) from the Go module proxy"
  ( build_k8s ) > "$CACHE/logs/kubernetes.log" 2>&1 &
  JOBS+=("$!:kubernetes")
fi
failed=""
for job in ${JOBS[@]+"${JOBS[@]}"}; do
  if wait "${job%%:*}"; then
    log "${job#*:} built"
  else
    echo "k8s-tools: building ${job#*:} failed; its log:" >&2; tail -n 40 "$CACHE/logs/${job#*:}.log" >&2
    failed="$failed ${job#*:}"
  fi
done
[ -z "$failed" ] || { echo "k8s-tools: failed:$failed" >&2; exit 1; }

# --- kwok's stage definitions (kwok >= 0.8 has no built-in stages; they ship in its module) ---------------------
if ! done_for kwok-stages "$KWOK_VERSION" || [ ! -d "$CACHE/kwok-stages" ]; then
  D=$(cd /tmp && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  rm -rf "$CACHE/kwok-stages"; mkdir -p "$CACHE/kwok-stages"
  cp "$D"/kustomize/stage/node/fast/node-initialize.yaml "$D"/kustomize/stage/node/heartbeat/node-heartbeat.yaml \
     "$D"/kustomize/stage/pod/fast/pod-ready.yaml "$D"/kustomize/stage/pod/fast/pod-complete.yaml \
     "$D"/kustomize/stage/pod/fast/pod-delete.yaml "$CACHE/kwok-stages/"
  stamp kwok-stages "$KWOK_VERSION"
fi

# --- PyPI: Kubernetes JSON schemas for kubeconform, offline -------------------------------------------------------
# kubernetes-validate bundles the OpenAPI-derived JSON schemas per Kubernetes minor. kubeconform wants one
# file per kind named <kind>-<group>-<version>.json; the bundled files carry an https $id and refer to a shared
# /api/_definitions.json, which kubeconform would try to fetch: $id is dropped and each $ref made relative to
# the schema directory.
SCHEMAS="$CACHE/schemas/v$SCHEMA_K8S-strict"
if ! done_for schemas "$KUBERNETES_VALIDATE_VERSION/$SCHEMA_K8S" || [ ! -d "$SCHEMAS" ]; then
  log "kubernetes-validate $KUBERNETES_VALIDATE_VERSION (PyPI): schemas for Kubernetes $SCHEMA_K8S"
  VENV="$CACHE/venv"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  rm -rf "$SCHEMAS"; mkdir -p "$SCHEMAS"
  "$VENV/bin/python" - "$SCHEMA_K8S" "$SCHEMAS" <<'PY'
import json, os, re, sys, importlib.resources as res
minor, out = sys.argv[1], sys.argv[2]
root = res.files("kubernetes_validate") / "kubernetes-json-schema"
src = None
for cand in (f"v{minor}.0-local-strict",):
    if (root / cand).is_dir():
        src = root / cand
        break
if src is None:
    sys.exit(f"no schemas for Kubernetes {minor} in kubernetes-validate: {sorted(p.name for p in root.iterdir())}")

def fix(node):
    if isinstance(node, dict):
        node.pop("$id", None)
        for k, v in list(node.items()):
            if k == "$ref" and isinstance(v, str) and not v.startswith("#"):
                path, _, frag = v.partition("#")
                node[k] = path.rsplit("/", 1)[-1] + ("#" + frag if frag else "")
            else:
                fix(v)
    elif isinstance(node, list):
        for v in node:
            fix(v)
    return node

n = 0
for f in src.iterdir():
    if f.name.endswith(".json"):
        doc = fix(json.loads(f.read_text()))
        with open(os.path.join(out, f.name), "w") as w:
            json.dump(doc, w)
        n += 1
print(f"{n} schemas from {src.name}", file=sys.stderr)
PY
  stamp schemas "$KUBERNETES_VALIDATE_VERSION/$SCHEMA_K8S"
fi

log "tools ready in $BIN"
echo "$CACHE"

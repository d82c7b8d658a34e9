#!/usr/bin/env bash
# Makes sure a Docker engine answers, starting one when none does. Idempotent: exits at once when `docker info`
# already works. Otherwise installs Debian's docker.io when dockerd is missing (as root, through apt-get) and
# starts dockerd in the background (log and pid in $SERVAL_DOCKER_WORK, default /tmp/serval-docker).
#   SERVAL_DOCKERD            the engine binary to start (default: dockerd on the PATH)
#   SERVAL_DOCKER_INSTALL     false: never install packages, fail instead
# Exit codes: 0 engine answers; 2 no engine could be started (the message says why).
# Stop an engine this script started: kill "$(cat /tmp/serval-docker/dockerd.pid)"
set -euo pipefail
WORK=${SERVAL_DOCKER_WORK:-/tmp/serval-docker}
mkdir -p "$WORK"
# dockerd, and the iptables it runs, live in sbin directories that a minimal PATH (CI) may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

fail() {
  echo "ERROR: no Docker engine can run here: $*" >&2
  echo "Serval's container tests need one (Debian: apt-get install docker.io; then start dockerd as root)." >&2
  exit 2
}

docker info >/dev/null 2>&1 && exit 0
command -v docker >/dev/null || [ "${SERVAL_DOCKER_INSTALL:-true}" != false ] || fail "no docker client on the PATH"

DOCKERD=${SERVAL_DOCKERD:-$(command -v dockerd || true)}
if [ -z "$DOCKERD" ] || ! command -v docker >/dev/null; then
  [ "${SERVAL_DOCKER_INSTALL:-true}" != false ] || fail "dockerd is not installed (SERVAL_DOCKER_INSTALL=false)"
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || fail "dockerd is not installed and this is not a root Debian machine"
  echo "docker-engine: installing docker.io (Debian)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null || fail "apt-get install docker.io failed"
  DOCKERD=${SERVAL_DOCKERD:-$(command -v dockerd)}
fi

echo "docker-engine: starting $DOCKERD (log: $WORK/dockerd.log)" >&2
setsid nohup "$DOCKERD" > "$WORK/dockerd.log" 2>&1 < /dev/null &
pid=$!
echo "$pid" > "$WORK/dockerd.pid"
for _ in $(seq 1 120); do
  docker info >/dev/null 2>&1 && { echo "docker-engine: up ($(docker version --format '{{.Server.Version}}'))" >&2; exit 0; }
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.25
done
err=$(docker info 2>&1 | grep -m1 -i -E 'cannot connect|error' || true)
rm -f "$WORK/dockerd.pid"
kill "$pid" 2>/dev/null || true
fail "${err:-docker info failed} (dockerd exited or did not answer in 30 s; last log lines:
$(tail -n 15 "$WORK/dockerd.log" 2>/dev/null))"

#!/usr/bin/env bash
# Builds Serval's container image (docker/Dockerfile) without any registry, and prints its name on stdout.
#   1. makes sure a Docker engine runs (scripts/docker-engine.sh: installs/starts dockerd when needed);
#   2. packages Serval (./mvnw package) when the fast-jar is missing or older than the sources;
#   3. builds, once, the local base images: serval/base (Debian 12 minbase by debootstrap, plus tini) and
#      serval/java (a jlink'd runtime from the build's JDK) -- skipped when `docker image inspect` finds them;
#   4. builds serval:<content hash> from platform-api/target/quarkus-app, so an image is rebuilt exactly when
#      the jar, the Dockerfile or the Java base changed, and tags it serval:latest.
# Usage: scripts/build-image.sh            -> prints e.g. serval:3f2a9c1d0b7e
#   SERVAL_IMAGE_NO_PACKAGE=true   never run Maven (the container tests set it: Maven has just packaged)
#   SERVAL_DEBIAN_MIRROR           debootstrap mirror (default http://deb.debian.org/debian)
# Costs on a 2-core machine: base images ~60 s once; the app image ~10 s when only the code changed.
# Exit codes: 2 no Docker engine, 3 a build step failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# debootstrap (and the chroot it runs) live in sbin directories that a minimal PATH (CI) may lack.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
WORK=${SERVAL_DOCKER_WORK:-/tmp/serval-docker}
mkdir -p "$WORK"
BASE_IMAGE=serval/base:bookworm-1
APP="$ROOT/platform-api/target/quarkus-app"
log() { printf '[build-image %4ss] %s\n' "$SECONDS" "$*" >&2; }
die() { echo "ERROR: $*" >&2; exit 3; }

bash "$ROOT/scripts/docker-engine.sh" || exit 2

# One build at a time on this machine (the base-image steps are not safe to run twice at once).
exec 9>"$WORK/build.lock"
flock 9

# --- 2. the fast-jar ----------------------------------------------------------------------------------------
. "$ROOT/scripts/java-home.sh"
if [ "${SERVAL_IMAGE_NO_PACKAGE:-false}" != true ]; then
  if [ ! -f "$APP/quarkus-run.jar" ] || [ -n "$(find pom.xml platform-spi/pom.xml platform-spi/src platform-core/pom.xml platform-core/src platform-api/pom.xml \
        platform-api/src -newer "$APP/quarkus-run.jar" -type f -print -quit)" ]; then
    log "packaging Serval (./mvnw package -pl platform-api -am -DskipTests)"
    ./mvnw -q -B -ntp -DskipTests package -pl platform-api -am >&2 || die "packaging Serval failed"
  fi
fi
[ -f "$APP/quarkus-run.jar" ] || die "no fast-jar at $APP (run ./mvnw package -pl platform-api -am first)"

# --- 3. base images -------------------------------------------------------------------------------------------
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  if ! command -v debootstrap >/dev/null; then
    [ "$(id -u)" = 0 ] || die "debootstrap is missing (apt-get install debootstrap)"
    log "installing debootstrap (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  log "building $BASE_IMAGE with debootstrap (~40 s)"
  R="$WORK/rootfs"; rm -rf "$R"
  debootstrap --variant=minbase --include=tini bookworm "$R" "${SERVAL_DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
    > "$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -rf "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/var/cache/apt/*.bin \
         "$R"/var/lib/apt/lists/* "$R"/var/log/*
  tar -C "$R" -c . | docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' - "$BASE_IMAGE" >/dev/null \
    || die "docker import of the base image failed"
  rm -rf "$R"
fi

JAVA_MAJOR=$(serval_java_major "$JAVA_HOME/bin/java")
JAVA_IMAGE="serval/java:${JAVA_MAJOR}-1"
# The modules Quarkus, Vert.x, Micrometer, DJL and ONNX Runtime use (jdk.unsupported: Unsafe and signals).
JLINK_MODULES=java.base,java.logging,java.naming,java.net.http,java.sql,java.management,java.xml,java.desktop,java.instrument,java.security.jgss,java.compiler,java.scripting,jdk.unsupported,jdk.crypto.ec,jdk.zipfs,jdk.management,jdk.jfr,jdk.localedata,jdk.naming.dns
if ! docker image inspect "$JAVA_IMAGE" >/dev/null 2>&1; then
  log "building $JAVA_IMAGE (jlink from $JAVA_HOME)"
  C="$WORK/javactx"; rm -rf "$C"; mkdir -p "$C"
  "$JAVA_HOME/bin/jlink" --add-modules "$JLINK_MODULES" --strip-debug --no-header-files --no-man-pages \
    --compress=zip-6 --output "$C/jre" >&2 || die "jlink failed"
  printf '%s\n' "FROM $BASE_IMAGE" "COPY jre /opt/java" \
    'ENV JAVA_HOME=/opt/java PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8' \
    > "$C/Dockerfile"
  docker build -q -t "$JAVA_IMAGE" "$C" >/dev/null 2>"$WORK/build.err" \
    || { cat "$WORK/build.err" >&2; die "building $JAVA_IMAGE failed"; }
  rm -rf "$C"
fi

# --- 4. the application image, named by content ---------------------------------------------------------------
java_id=$(docker image inspect --format '{{.Id}}' "$JAVA_IMAGE")
hash=$( { echo "$java_id"; sha256sum docker/Dockerfile;
          (cd "$APP" && find lib app quarkus quarkus-run.jar -type f -print0 | sort -z | xargs -0 sha256sum); } \
        | sha256sum | cut -c1-12)
IMAGE="serval:$hash"
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "$IMAGE is up to date"
else
  log "building $IMAGE from $APP"
  docker build -q -f docker/Dockerfile --build-arg "JAVA_IMAGE=$JAVA_IMAGE" \
    --build-arg "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)" -t "$IMAGE" "$APP" >/dev/null 2>"$WORK/build.err" \
    || { cat "$WORK/build.err" >&2; die "docker build of $IMAGE failed"; }
  # Keep the three newest content-named builds (another checkout on this machine may be about to run one);
  # older ones go, unless a container still uses them. `docker images` lists newest first.
  for old in $(docker images serval --format '{{.Tag}}' | grep -E '^[0-9a-f]{12}$' | tail -n +4 || true); do
    docker rmi "serval:$old" >/dev/null 2>&1 || true
  done
fi
docker tag "$IMAGE" serval:latest
echo "$IMAGE"

# Sourced by bin/serval and .ci/run: makes JAVA_HOME point at a JDK >= 21, or stops with a clear message.
# Order: $JAVA_HOME, the `java` on PATH, then the newest JDK found under /usr/lib/jvm, /opt and ~/.sdkman.

serval_java_major() {
  # Prints the feature version (17, 21, 25, ...) of the java binary $1, or nothing.
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

serval_pick_jdk() {
  local candidate major best="" best_major=0
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    major=$(serval_java_major "$JAVA_HOME/bin/java")
    if [ "${major:-0}" -ge 21 ]; then return 0; fi
  fi
  if command -v javac >/dev/null 2>&1; then
    candidate=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
    major=$(serval_java_major "$candidate/bin/java")
    if [ "${major:-0}" -ge 21 ]; then export JAVA_HOME="$candidate"; return 0; fi
  fi
  for candidate in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/*; do
    [ -x "$candidate/bin/javac" ] || continue
    major=$(serval_java_major "$candidate/bin/java")
    if [ "${major:-0}" -gt "$best_major" ]; then best="$candidate"; best_major="$major"; fi
  done
  if [ "$best_major" -ge 21 ]; then export JAVA_HOME="$best"; return 0; fi
  echo "Serval needs a JDK 21 or newer, and none was found (JAVA_HOME='${JAVA_HOME:-}', java on PATH:" \
       "$(command -v java || echo none), /usr/lib/jvm searched). Install one (e.g. Temurin 25) and set JAVA_HOME." >&2
  return 1
}

serval_pick_jdk || exit 1
export PATH="$JAVA_HOME/bin:$PATH"

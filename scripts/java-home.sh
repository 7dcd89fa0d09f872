# Sourced by ./toolhost, ./run-tests and .ci/run: sets JAVA_HOME to a JDK 21 or
# newer. Keeps JAVA_HOME when it already points at one; otherwise takes the
# newest under /usr/lib/jvm (or on the PATH). Fails with a clear message when
# none exists.

toolhost_java_major() {
  # Prints the feature version of the JDK at $1, or nothing when it is not a JDK.
  [ -x "$1/bin/javac" ] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 \
    | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p'
}

toolhost_find_jdk() {
  local candidate major best="" best_major=0
  if [ -n "${JAVA_HOME:-}" ]; then
    major=$(toolhost_java_major "$JAVA_HOME")
    if [ -n "$major" ] && [ "$major" -ge 21 ]; then
      echo "$JAVA_HOME"
      return 0
    fi
  fi
  local path_jdk=""
  if command -v javac >/dev/null 2>&1; then
    path_jdk=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
  fi
  for candidate in /usr/lib/jvm/* $path_jdk; do
    major=$(toolhost_java_major "$candidate")
    if [ -n "$major" ] && [ "$major" -ge 21 ] && [ "$major" -gt "$best_major" ]; then
      best="$candidate"
      best_major="$major"
    fi
  done
  [ -n "$best" ] && echo "$best"
}

if ! TOOLHOST_JDK=$(toolhost_find_jdk) || [ -z "$TOOLHOST_JDK" ]; then
  echo "Toolhost needs a JDK 21 or newer, and none was found (JAVA_HOME='${JAVA_HOME:-}', /usr/lib/jvm, PATH)." >&2
  echo "Install one (for example: apt-get install openjdk-21-jdk) or set JAVA_HOME to it." >&2
  exit 1
fi
export JAVA_HOME="$TOOLHOST_JDK"
export PATH="$JAVA_HOME/bin:$PATH"
# Maven 3.8's bundled Guava calls sun.misc.Unsafe, which JDK 24+ warns about on every run.
if [ "$(toolhost_java_major "$JAVA_HOME")" -ge 24 ]; then
  case " ${MAVEN_OPTS:-} " in
    *sun-misc-unsafe-memory-access*) ;;
    *) export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow" ;;
  esac
fi

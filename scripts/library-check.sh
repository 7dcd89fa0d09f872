#!/usr/bin/env bash
# Checks that depending on the library works as the README says: installs every module into a
# local repository of its own, offline, then builds a separate project (examples/library/pom.xml,
# with the README's first "Using the library" snippet as its source) against those artifacts,
# offline, and runs it. Run by ./run-tests after the test suite; needs the build's plugins cached
# (the suite's own run caches all but the install plugin, which this script fetches first).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/java-home.sh"
m2="${MAVEN_REPO:-$HOME/.m2/repository}"

for property in jackson.version opentelemetry.version mcp-sdk.version; do
  in_root=$(grep -o "<$property>[^<]*" "$root/pom.xml" | head -1)
  in_bom=$(grep -o "<$property>[^<]*" "$root/bom/pom.xml" | head -1)
  if [ "$in_root" != "$in_bom" ]; then
    echo "library-check: bom/pom.xml has ${in_bom#*>} for $property, the root pom ${in_root#*>}" >&2
    exit 1
  fi
done

mvn -B -ntp -q dependency:get -Dartifact=org.apache.maven.plugins:maven-install-plugin:3.1.4 >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The machine's repository, hard-linked (a copy in a second), less any Toolhost artifact, so that
# only what this install puts there can be found.
mkdir -p "$work/repo"
cp -al "$m2/." "$work/repo/"
rm -rf "$work/repo/dev/toolhost"

echo "library-check: installing the modules offline into a repository of their own" >&2
mvn -B -ntp -q -o -f "$root/pom.xml" install -DskipTests -Dspotless.check.skip=true \
  -Dmaven.repo.local="$work/repo"

mkdir -p "$work/app/src/main/java"
cp "$root/examples/library/pom.xml" "$work/app/pom.xml"
# The README's first Java block after "## Using the library", exactly as a reader copies it.
awk '/^## Using the library/{section=1} section && /^```java/{inside=1; next} inside && /^```/{exit} inside{print}' \
  "$root/README.md" > "$work/app/src/main/java/Weather.java"
if [ ! -s "$work/app/src/main/java/Weather.java" ]; then
  echo "library-check: README.md has no Java block under '## Using the library'" >&2
  exit 1
fi

echo "library-check: building the README's example against them, offline" >&2
mvn -B -ntp -q -o -f "$work/app/pom.xml" package dependency:build-classpath \
  -Dmdep.outputFile="$work/app/classpath.txt" -Dmaven.repo.local="$work/repo"
answer="$(java -cp "$work/app/target/classes:$(cat "$work/app/classpath.txt")" Weather)"
if [ "$answer" != "Sunny in Lyon" ]; then
  echo "library-check: the README's example printed '$answer', not 'Sunny in Lyon'" >&2
  exit 1
fi
echo "library-check: the README's example built against the installed artifacts and printed: $answer" >&2

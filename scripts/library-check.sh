#!/usr/bin/env bash
# Checks that depending on the library works as docs/library.md says: installs the modules with the
# page's command (every module but the benchmarks) into a local repository of its own, offline;
# builds a separate project whose pom is the page's first XML snippet, as a <project>'s body, with
# the page's first Java block as its source, against those artifacts, offline, and runs it; then
# compiles the page's LangChain4j and Spring AI examples with the dependencies of its second XML
# snippet, versions from the BOM alone. Run by ./run-tests after the test suite; needs the build's
# plugins cached (the suite's own run caches all but the install plugin, which this script fetches
# first).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/java-home.sh"
m2="${MAVEN_REPO:-$HOME/.m2/repository}"
page="$root/docs/library.md"

for property in jackson.version opentelemetry.version mcp-sdk.version langchain4j.version spring-ai.version; do
  in_root=$(grep -o "<$property>[^<]*" "$root/pom.xml" | head -1)
  in_bom=$(grep -o "<$property>[^<]*" "$root/bom/pom.xml" | head -1)
  if [ "$in_root" != "$in_bom" ]; then
    echo "library-check: bom/pom.xml has ${in_bom#*>} for $property, the root pom ${in_root#*>}" >&2
    exit 1
  fi
done

# The page's Nth block of a language, exactly as a reader copies it.
block() {
  awk -v lang="$1" -v n="$2" '
    inside && /^```/ { if (count == n) exit; inside = 0; next }
    inside { if (count == n) print; next }
    $0 == "```" lang { count++; inside = 1 }' "$page"
}

install_command="$(block sh 1)"
case "$install_command" in
  *"mvn -B -ntp -q install -DskipTests -pl '!benchmarks'"*) ;;
  *) echo "library-check: docs/library.md's install command is not the one this script runs: $install_command" >&2
     exit 1 ;;
esac

mvn -B -ntp -q dependency:get -Dartifact=org.apache.maven.plugins:maven-install-plugin:3.1.4 >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The machine's repository, hard-linked (a copy in a second), less any Toolhost artifact, so that
# only what this install puts there can be found.
mkdir -p "$work/repo"
cp -al "$m2/." "$work/repo/"
rm -rf "$work/repo/dev/toolhost"

echo "library-check: installing the modules offline, as docs/library.md says, into a repository of their own" >&2
mvn -B -ntp -q -o -f "$root/pom.xml" install -DskipTests -pl '!benchmarks' -Dspotless.check.skip=true \
  -Dmaven.repo.local="$work/repo"

# A project whose pom is the page's snippet. Only the plugins Maven 3.8 binds by default (and which
# the snippet need not name) are pinned to the versions the build cached, so that it runs offline.
project() {
  local dir="$1" extra="$2"
  mkdir -p "$dir/src/main/java"
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0">'
    echo '<modelVersion>4.0.0</modelVersion>'
    echo '<groupId>com.example</groupId><artifactId>weather</artifactId><version>1.0</version>'
    block xml 1 | awk -v extra="$extra" '
      { lines[NR] = $0 } /<\/dependencies>/ { last = NR }
      END {
        for (i = 1; i <= NR; i++) {
          if (i == last && extra != "") { while ((getline line < extra) > 0) print line }
          print lines[i]
          if (lines[i] == "<build>") {
            print "<pluginManagement><plugins>"
            print "<plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>"
            print "<plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.2</version></plugin>"
            print "<plugin><artifactId>maven-surefire-plugin</artifactId><version>3.5.4</version></plugin>"
            print "<plugin><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>"
            print "</plugins></pluginManagement>"
          }
        }
      }'
    echo '</project>'
  } > "$dir/pom.xml"
  block java 1 > "$dir/src/main/java/Weather.java"
  if [ ! -s "$dir/src/main/java/Weather.java" ]; then
    echo "library-check: docs/library.md has no Java block" >&2
    exit 1
  fi
}

project "$work/app" ""
echo "library-check: building docs/library.md's example with its pom snippet, offline" >&2
mvn -B -ntp -q -o -f "$work/app/pom.xml" package dependency:build-classpath \
  -Dmdep.outputFile="$work/app/classpath.txt" -Dmaven.repo.local="$work/repo"
answer="$(java -cp "$work/app/target/classes:$(cat "$work/app/classpath.txt")" Weather)"
if [ "$answer" != "Sunny in Lyon" ]; then
  echo "library-check: docs/library.md's example printed '$answer', not 'Sunny in Lyon'" >&2
  exit 1
fi
echo "library-check: docs/library.md's example built against the installed artifacts and printed: $answer" >&2

block xml 2 > "$work/adapters.xml"
project "$work/adapters" "$work/adapters.xml"
block java 2 > "$work/adapters/src/main/java/WeatherAssistant.java"
block java 3 > "$work/adapters/src/main/java/WeatherClient.java"
echo "library-check: compiling the LangChain4j and Spring AI examples, versions from the BOM, offline" >&2
mvn -B -ntp -q -o -f "$work/adapters/pom.xml" compile -Dmaven.repo.local="$work/repo"
echo "library-check: the LangChain4j and Spring AI examples compiled against the BOM's versions" >&2

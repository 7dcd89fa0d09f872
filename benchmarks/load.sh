#!/usr/bin/env bash
# Finds the ceilings of the HTTP API and the MCP gateway beside /healthz of the same host, with wrk,
# in one run, and prints markdown tables (LoadRun). Builds the benchmark jar with the reactor (no
# install) unless BUILD=0. Arguments go to LoadRun, e.g.:
#   benchmarks/load.sh                                      # host and wrk share both CPUs
#   benchmarks/load.sh --host-cpus 0 --driver-cpus 1 --driver-threads 1   # one CPU each
#   benchmarks/load.sh --seconds 10 --max-connections 512 --sessions 2000
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
if ! command -v wrk >/dev/null; then
  echo "wrk is missing: install it with 'apt-get install -y wrk' (as root)." >&2
  exit 1
fi
if [ "${BUILD:-1}" != 0 ]; then
  mvn -B -ntp -q -pl benchmarks -am package -DskipTests
fi
exec java -cp benchmarks/target/benchmarks.jar dev.toolhost.benchmarks.load.LoadRun "$@"

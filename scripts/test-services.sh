# Sourced by ./run-tests: makes sure what the test suite talks to is here and running, starting
# or installing (from Debian's packages) whatever is missing. The tests use the real parts:
# RabbitMQ on 127.0.0.1:5672, Redis on 127.0.0.1:6379, PostgreSQL on 127.0.0.1:5432 (database
# test, trust authentication, for the scheduling cluster tests), and Debian's python3-pika for the
# Python examples of the wire protocol. Node and npm install the MCP servers the tests use.
# bubblewrap is the exec sandbox, which the escape suite runs against.

toolhost_apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "run-tests: $* is missing and this user cannot install it (run as root, or: sudo apt-get install -y $*)." >&2
    exit 1
  fi
  apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null
}

if ! rabbitmqctl -q status >/dev/null 2>&1; then
  command -v rabbitmq-server >/dev/null || toolhost_apt_install rabbitmq-server
  echo "run-tests: starting RabbitMQ" >&2
  rabbitmq-server -detached
  rabbitmqctl await_startup --timeout 120 >/dev/null
fi
# The dead-letter queue's bounds are a policy the library sets over the management HTTP API.
if ! rabbitmq-plugins -q is_enabled rabbitmq_management >/dev/null 2>&1; then
  rabbitmq-plugins -q enable rabbitmq_management >/dev/null
fi
if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null || toolhost_apt_install redis-server
  echo "run-tests: starting Redis" >&2
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
  command -v pg_ctlcluster >/dev/null || toolhost_apt_install postgresql
  echo "run-tests: starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  for _ in $(seq 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
fi
if ! psql -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1; then
  echo "run-tests: creating PostgreSQL database test" >&2
  createdb -h 127.0.0.1 -U postgres test
fi
# The Python example service and caller use Debian's pika with Debian's python.
if ! /usr/bin/python3 -c 'import pika' >/dev/null 2>&1; then
  echo "run-tests: installing python3-pika" >&2
  toolhost_apt_install python3-pika
fi
command -v npm >/dev/null || toolhost_apt_install nodejs npm
command -v bwrap >/dev/null || toolhost_apt_install bubblewrap
# wrk drives the HTTP API and the gateway in the load driver's test (benchmarks/load.sh).
command -v wrk >/dev/null || toolhost_apt_install wrk
# The browser tool's tests drive Debian's headless Chromium; chromium-driver comes from the same
# source package, so their versions always match.
{ command -v chromium >/dev/null && command -v chromedriver >/dev/null; } \
  || toolhost_apt_install chromium chromium-driver

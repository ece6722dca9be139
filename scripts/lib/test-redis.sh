#!/usr/bin/env bash
# Makes sure a Redis server for the tests answers on loopback and prints its
# URL as the last line of stdout (progress goes to stderr).
#
#   test-redis.sh          start a private instance, or reuse one that runs
#   test-redis.sh --stop   stop the private instance
#
# Order of preference:
#   1. $MAILASSAY_TEST_REDIS_URL, when it is set and answers PING;
#   2. the private instance in ${MAILASSAY_REDIS_DIR:-/tmp/mailassay-redis}
#      (Debian's redis-server, no persistence, 127.0.0.1 only), on the first
#      free port from ${MAILASSAY_REDIS_PORT:-56379}, kept in its
#      redis.conf across runs.
# The system's own Redis (6379) is never used: tests stop and start their
# own servers and flush keys; a private port keeps them away from anything
# else on the machine. Idempotent: run it as often as you like.
set -euo pipefail

dir=${MAILASSAY_REDIS_DIR:-/tmp/mailassay-redis}
first_port=${MAILASSAY_REDIS_PORT:-56379}
conf="$dir/redis.conf"

log() { echo "test-redis: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

port_busy() { (: </dev/tcp/127.0.0.1/"$1") 2>/dev/null; }

# Whether the server at URL $1 answers PING within 3 s.
answers() {
  [ "$(timeout 3 redis-cli -u "$1" PING 2>/dev/null)" = PONG ]
}

url_for() { echo "redis://127.0.0.1:$1/0"; }

conf_port() {
  [ -f "$conf" ] || return 0
  sed -n 's/^port \([0-9]*\)$/\1/p' "$conf" | tail -n 1
}

stop() {
  [ -f "$conf" ] || return 0
  local port
  port=$(conf_port)
  if [ -n "$port" ] && answers "$(url_for "$port")"; then
    log "stopping the instance on 127.0.0.1:$port"
    redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  fi
}

if [ "${1:-}" = --stop ]; then
  stop
  exit 0
fi

# 1. The caller's URL.
if [ -n "${MAILASSAY_TEST_REDIS_URL:-}" ]; then
  if answers "$MAILASSAY_TEST_REDIS_URL"; then
    echo "$MAILASSAY_TEST_REDIS_URL"
    exit 0
  fi
  log "MAILASSAY_TEST_REDIS_URL does not answer; starting a private instance"
fi

command -v redis-server >/dev/null || die "redis-server not found: apt-get install redis-server"

# Two runs at once must not start two instances.
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9

# 2. The private instance.
port=$(conf_port)
if [ -n "$port" ] && answers "$(url_for "$port")"; then
  url_for "$port"
  exit 0
fi
if [ -z "$port" ] || port_busy "$port"; then
  port=$first_port
  while port_busy "$port"; do port=$((port + 1)); done
  cat >"$conf" <<CONF
bind 127.0.0.1
port $port
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
dir $dir
save ""
appendonly no
CONF
fi
log "starting redis-server on 127.0.0.1:$port ($dir)"
# The lock descriptor is closed so the daemon does not hold it forever.
redis-server "$conf" 9>&- >/dev/null || die "start failed, see $dir/redis.log"
url=$(url_for "$port")
for _ in $(seq 1 50); do
  answers "$url" && break
  sleep 0.1
done
answers "$url" || die "$url does not answer, see $dir/redis.log"
echo "$url"

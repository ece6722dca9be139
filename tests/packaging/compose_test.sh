#!/usr/bin/env bash
# deploy/compose.yaml stays a cluster that starts (issue #33):
#  1. Debian's `docker-compose config` accepts it (no daemon needed), and
#     refuses it without POSTGRES_PASSWORD (no default password);
#  2. every MAILASSAY_* variable it names is a setting of the binary
#     (`mailassay config` prints the registry of config/load.cpp);
#  3. the three nodes share one PostgreSQL and one Redis with one prefix,
#     trust the HAProxy address for X-Forwarded-For, keep their data folder
#     on a volume of their own, and HAProxy's configuration names each node.
# Usage: compose_test.sh SOURCE_DIR BINARY
set -euo pipefail
src=$1 bin=$2
compose="$src/deploy/compose.yaml"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
command -v docker-compose >/dev/null ||
  { echo "FAIL: docker-compose is not installed (scripts/lib/test-packages.txt)"; exit 1; }

# 1.
if ! POSTGRES_PASSWORD=check-only docker-compose -f "$compose" config >/tmp/compose-config.$$ 2>&1; then
  cat /tmp/compose-config.$$
  rm -f /tmp/compose-config.$$
  echo "FAIL: docker-compose config refuses deploy/compose.yaml"
  exit 1
fi
normalized=$(cat /tmp/compose-config.$$)
rm -f /tmp/compose-config.$$
(unset POSTGRES_PASSWORD; docker-compose -f "$compose" config -q >/dev/null 2>&1) &&
  bad "docker-compose config accepts the file without POSTGRES_PASSWORD"

# 2.
settings=$("$bin" config | cut -d= -f1 | sort -u)
[ "$(wc -l <<<"$settings")" -gt 20 ] || bad "mailassay config printed too few settings"
used=$(grep -oE 'MAILASSAY_[A-Z0-9_]+' "$compose" | sort -u)
[ -n "$used" ] || bad "compose.yaml names no MAILASSAY_* variable"
for v in $used; do
  grep -qx "$v" <<<"$settings" || bad "compose.yaml: $v is not a setting (mailassay config)"
done

# 3.
python3 -c '
import sys, yaml
cfg = yaml.safe_load(sys.stdin)
haproxy_cfg = open(sys.argv[1]).read()
services = cfg["services"]
bad = []
for name in ("postgres", "redis", "haproxy"):
    if name not in services:
        bad.append("no %s service" % name)
nodes = sorted(n for n in services if n.startswith("mailassay-"))
if len(nodes) != 3:
    bad.append("want three mailassay nodes, found %s" % nodes)
proxy = services.get("haproxy", {}).get("networks", {}).get("mailassay") or {}
proxy_ip = proxy.get("ipv4_address")
shared = {}
for n in nodes:
    env = services[n].get("environment", {})
    for k in ("MAILASSAY_DATABASE_URL", "MAILASSAY_REDIS_URL", "MAILASSAY_REDIS_PREFIX"):
        shared.setdefault(k, set()).add(env.get(k))
    if not str(env.get("MAILASSAY_DATABASE_URL", "")).startswith("postgresql://"):
        bad.append("%s: MAILASSAY_DATABASE_URL is not PostgreSQL" % n)
    if "@postgres:" not in str(env.get("MAILASSAY_DATABASE_URL", "")):
        bad.append("%s: the database is not the postgres service" % n)
    if not str(env.get("MAILASSAY_REDIS_URL", "")).startswith("redis://redis:"):
        bad.append("%s: MAILASSAY_REDIS_URL is not the redis service" % n)
    if proxy_ip is None or env.get("MAILASSAY_HTTP_TRUSTED_PROXIES") != proxy_ip:
        bad.append("%s: MAILASSAY_HTTP_TRUSTED_PROXIES is not HAProxy'"'"'s address %s" % (n, proxy_ip))
    if "MAILASSAY_AUTH_JWT_SECRET" in env:
        bad.append("%s: sets MAILASSAY_AUTH_JWT_SECRET (the shared key belongs in the database)" % n)
    vols = [v for v in services[n].get("volumes", []) if ":/var/lib/mailassay/data" in str(v)]
    if len(vols) != 1:
        bad.append("%s: no volume of its own at /var/lib/mailassay/data" % n)
    if ("server " not in haproxy_cfg) or (" %s:3000" % n) not in haproxy_cfg:
        bad.append("haproxy.cfg does not name %s:3000" % n)
for k, values in shared.items():
    if len(values) != 1 or None in values:
        bad.append("%s differs between the nodes: %s" % (k, values))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
' "$src/deploy/haproxy.cfg" <<<"$normalized" || fail=1

((fail == 0)) && echo "compose: docker-compose config accepts it; $(wc -w <<<"$used") MAILASSAY_* variables, all settings; three nodes share PostgreSQL and Redis behind HAProxy"
exit $fail

#!/usr/bin/env bash
# Makes sure a private Postfix for the tests answers on a loopback address and
# prints "address:port" as the last line of stdout (progress goes to stderr).
#
#   test-postfix.sh            install (if missing), configure, start or reuse
#   test-postfix.sh --preseed  only tell debconf "No configuration" for postfix
#                              (run before apt installs it: no system instance)
#   test-postfix.sh --stop     stop the private instance
#
# The instance lives in ${MAILASSAY_POSTFIX_DIR:-/tmp/mailassay-postfix}
# (etc/ config, spool/ queue, data/, postfix.log) and listens only on
# ${MAILASSAY_POSTFIX_ADDRESS:-127.0.0.25}, on the first free port from
# ${MAILASSAY_POSTFIX_PORT:-2525} (kept in etc/master.cf across runs). It
# accepts mail for virtual mailboxes only and rejects the rest at RCPT:
#   postfix.test           alice, bob, carol; anyone else: 550 5.1.1 User unknown
#   load.postfix.test      box000 ... box199 (200 mailboxes, for load tests
#                          and benchmarks); anyone else: 550 5.1.1
#   catchall.postfix.test  every local part (an @domain virtual alias)
#   any other domain       554 5.7.1 Relay access denied
# It never looks anything up in DNS and never sends mail out.
#
# Debian's own instance (/etc/postfix) must not hold port 25 on loopback: the
# project's SMTP test peers bind 127.0.0.x. When it does, it is stopped and
# disabled. Idempotent: run it as often as you like; it reuses what exists.
set -euo pipefail

dir=${MAILASSAY_POSTFIX_DIR:-/tmp/mailassay-postfix}
address=${MAILASSAY_POSTFIX_ADDRESS:-127.0.0.25}
first_port=${MAILASSAY_POSTFIX_PORT:-2525}
domain=postfix.test
load_domain=load.postfix.test
catchall_domain=catchall.postfix.test
users=(alice bob carol)
load_boxes=200
conf="$dir/etc"

log() { echo "test-postfix: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

installed() {
  dpkg-query -W -f='${Status}' postfix 2>/dev/null | grep -q "ok installed"
}

preseed() {
  installed && return 0
  # "No configuration": Debian writes no /etc/postfix/main.cf and starts no
  # system instance (otherwise "Internet Site" listens on *:25).
  echo "postfix postfix/main_mailer_type select No configuration" |
    $sudo debconf-set-selections
}

port_busy() { (: </dev/tcp/"$1"/"$2") 2>/dev/null; }

# Whether an SMTP server greets on $1:$2 within 3 s.
greets() {
  local banner
  banner=$(timeout 3 bash -c 'exec 3<>/dev/tcp/"$1"/"$2" &&
    head -c 3 <&3 && printf "QUIT\r\n" >&3' _ "$1" "$2" 2>/dev/null) || true
  [ "$banner" = 220 ]
}

private() { $sudo postfix -c "$conf" "$@"; }

case "${1:-}" in
--preseed)
  preseed
  exit 0
  ;;
--stop)
  if [ -f "$conf/main.cf" ] && private status >/dev/null 2>&1; then
    private stop 2>&1 | sed 's/^/test-postfix: /' >&2
  fi
  exit 0
  ;;
"") ;;
*) die "unknown option $1" ;;
esac

if ! installed || ! command -v openssl >/dev/null; then
  log "installing postfix (debconf: No configuration) and openssl"
  preseed
  list=$(mktemp)
  printf 'postfix\nopenssl\n' >"$list"
  "$(dirname "$0")/install-deps.sh" "$list" || {
    rm -f "$list"
    die "could not install postfix and openssl"
  }
  rm -f "$list"
fi
command -v postfix >/dev/null || die "postfix not found: apt-get install postfix"

# Two runs at once must not both write the configuration or start masters.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

# Debian's system instance: stop it when it holds 127.0.0.1:25 (or *:25), and
# keep init from starting it again.
if [ -f /etc/postfix/main.cf ] && $sudo postfix status >/dev/null 2>&1 &&
  port_busy 127.0.0.1 25; then
  log "stopping Debian's system Postfix: it listens on port 25 of loopback"
  $sudo postfix stop >/dev/null 2>&1 || true
  if [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now postfix >/dev/null 2>&1 || true
  elif command -v update-rc.d >/dev/null; then
    $sudo update-rc.d postfix disable >/dev/null 2>&1 || true
  fi
fi

# The port: the one already configured, else the first free one.
port=""
if [ -f "$conf/master.cf" ]; then
  port=$(sed -n "s/^$address:\([0-9]*\) .*smtpd$/\1/p" "$conf/master.cf")
fi
if [ -z "$port" ]; then
  port=$first_port
  while port_busy "$address" "$port"; do port=$((port + 1)); done
fi

$sudo mkdir -p "$conf" "$dir/spool" "$dir/data" "$dir/mailboxes"
$sudo chown postfix: "$dir/data"
$sudo chown nobody:nogroup "$dir/mailboxes"

# A self-signed certificate for STARTTLS (probes do not verify by default).
if [ ! -s "$conf/tls.pem" ]; then
  tmp=$(mktemp -d)
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -days 3650 -subj "/CN=mx.$domain" -keyout "$tmp/key.pem" \
    -out "$tmp/cert.pem" 2>/dev/null || die "openssl could not make a certificate"
  cat "$tmp/key.pem" "$tmp/cert.pem" >"$tmp/tls.pem"
  $sudo install -m 600 -o root -g root "$tmp/tls.pem" "$conf/tls.pem"
  rm -rf "$tmp"
fi

# Writes stdin to $conf/$1 when it differs; remembers that it did.
changed=0
put() {
  local tmp
  tmp=$(mktemp)
  cat >"$tmp"
  if ! cmp -s "$tmp" "$conf/$1"; then
    $sudo install -m 644 -o root -g root "$tmp" "$conf/$1"
    changed=1
  fi
  rm -f "$tmp"
}

put main.cf <<CONF
# Private Postfix for mailassay's tests (scripts/lib/test-postfix.sh).
compatibility_level = 3.6
queue_directory = $dir/spool
data_directory = $dir/data
maillog_file = $dir/postfix.log
maillog_file_prefixes = $dir
# Listeners are in master.cf; Postfix only knows 127.0.0.1 as an interface.
inet_interfaces = loopback-only
inet_protocols = ipv4
myhostname = mx.$domain
mydomain = $domain
myorigin = \$myhostname
mydestination =
mynetworks = $address/32
relay_domains =
alias_maps =
alias_database =
local_recipient_maps =
# No DNS, no outbound mail: nothing here may leave 127.0.0.0/8.
smtpd_peername_lookup = no
smtp_dns_support_level = disabled
default_transport = error:outbound mail disabled
relay_transport = error:outbound mail disabled
local_transport = error:local delivery disabled
# Virtual mailboxes; unknown recipients get 550 5.1.1 at RCPT.
virtual_mailbox_domains = $domain $load_domain
virtual_mailbox_maps = texthash:$conf/virtual_mailboxes
virtual_mailbox_base = $dir/mailboxes
virtual_uid_maps = static:$(id -u nobody)
virtual_gid_maps = static:$(getent group nogroup | cut -d: -f3)
virtual_alias_domains = $catchall_domain
virtual_alias_maps = texthash:$conf/virtual_aliases
smtpd_reject_unlisted_recipient = yes
smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions =
smtpd_banner = \$myhostname ESMTP
# Every probe opens a message with its first accepted RCPT and drops it with
# RSET: nothing is ever delivered, so Postfix's flow control (one token per
# delivered message) would run dry and hold each new message for
# in_flow_delay (1 s) -- a throttle this instance's workload invents.
in_flow_delay = 0
smtpd_tls_security_level = may
smtpd_tls_chain_files = $conf/tls.pem
biff = no
CONF

put master.cf <<CONF
# service type  private unpriv chroot wakeup maxproc command
$address:$port inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
virtual   unix  -       n       n       -       -       virtual
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
CONF

{
  for u in "${users[@]}"; do echo "$u@$domain $domain/$u/"; done
  for ((i = 0; i < load_boxes; i++)); do
    printf 'box%03d@%s %s/box%03d/\n' "$i" "$load_domain" "$load_domain" "$i"
  done
} | put virtual_mailboxes

echo "@$catchall_domain ${users[0]}@$domain" | put virtual_aliases

if ! private check >/dev/null 2>&1; then
  # Postfix prints its errors only to a terminal: show them through one.
  script -qec "$sudo postfix -c '$conf' check" /dev/null >&2 || true
  die "postfix check failed for $conf"
fi

if private status >/dev/null 2>&1; then
  if [ "$changed" = 1 ]; then
    log "configuration changed: reloading the instance in $dir"
    private reload >/dev/null 2>&1 || die "reload failed, see $dir/postfix.log"
  fi
else
  port_busy "$address" "$port" && die "$address:$port is taken by another program"
  log "starting the instance in $dir on $address:$port"
  # The lock descriptor is closed so the master does not hold it forever.
  private start >/dev/null 2>&1 9>&- || die "start failed, see $dir/postfix.log"
fi

ok=0
for _ in $(seq 50); do
  if greets "$address" "$port"; then
    ok=1
    break
  fi
  sleep 0.2
done
[ "$ok" = 1 ] || die "no SMTP greeting on $address:$port, see $dir/postfix.log"
if port_busy 127.0.0.1 25; then
  log "warning: something listens on 127.0.0.1:25; SMTP test peers may clash"
fi
echo "$address:$port"

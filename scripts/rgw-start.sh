#!/bin/bash
# Bring up a throw-away single-node Ceph (1 mon, 1 memstore OSD, no mgr) plus radosgw (beast)
# on 127.0.0.1, from scratch, with all state under $CEPH_BASE (default: a folder under the
# system temp dir).  How the tests use it: docs/research/testing.md, "Testing against the stores".
#
#   eval "$(scripts/rgw-start.sh)"     # exports S3_ENDPOINT, AWS_ACCESS_KEY_ID, ...
#   ...tests...
#   scripts/rgw-stop.sh                # same CEPH_BASE
#
# The same radosgw also serves HTTPS on a second port (RGW_TLS=0 turns that off), with a
# self-signed certificate for IP 127.0.0.1 made here by openssl: Hadoop's S3A (AWS SDK v2)
# cannot write an empty object to this Ceph over plain http (the SDK's chunked signature of an
# empty body gets 400 XAmzContentSHA256Mismatch), and over TLS it can.  Exported for clients:
#   S3_ENDPOINT_TLS                https://127.0.0.1:PORT
#   S3_TLS_CA_BUNDLE               the certificate, PEM (boto3: verify=... or AWS_CA_BUNDLE)
#   S3_TLS_TRUSTSTORE              the certificate in a JKS trust store, for a JVM's
#   S3_TLS_TRUSTSTORE_PASSWORD     -Djavax.net.ssl.trustStore=... (only when keytool exists)
# Without openssl it serves plain http only.  CEPH_RGW_TLS_PORT picks the HTTPS port.
# CEPH_MEMSTORE_BYTES bounds the objects held in RAM (4 GiB); CEPH_RGW_GC_SECONDS makes RGW free
# the parts of deleted objects after that many seconds instead of two hours (long benchmarks).
#
# stdout carries only the `export` lines (also written to $CEPH_BASE/env); progress goes to
# stderr.  Installs radosgw/ceph-mon/ceph-osd with apt-get when missing (Debian, root).
# Exit status 3 means "cannot run here" (no packages and no way to install them): callers such
# as the pytest fixture skip rather than fail on it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BASE=${CEPH_BASE:-${TMPDIR:-/tmp}/zerorename-rgw}
ACCESS_KEY=${S3_ACCESS_KEY:-testaccesskey}
SECRET_KEY=${S3_SECRET_KEY:-testsecretkey}
# RGW refuses to complete an upload whose non-final parts are under 5 MiB (as AWS does).  The
# test suites write files of a few hundred bytes in 256-byte parts (and Spark's in 64 KiB), so
# the throw-away server allows tiny parts; RGW_MULTIPART_MIN_PART_SIZE=5242880 restores AWS's.
MIN_PART=${RGW_MULTIPART_MIN_PART_SIZE:-1}
case "$MIN_PART" in ''|*[!0-9]*) echo "rgw-start.sh: RGW_MULTIPART_MIN_PART_SIZE must be a byte count" >&2; exit 1 ;; esac
T0=$(date +%s.%N)
ts() { awk -v a="$T0" -v b="$(date +%s.%N)" -v m="$*" 'BEGIN{printf "[rgw-start %6.2fs] %s\n", b-a, m}' >&2; }
die() { echo "rgw-start.sh: $*" >&2; exit 1; }
unsupported() { echo "rgw-start.sh: cannot run here: $*" >&2; exit 3; }

# --- packages --------------------------------------------------------------------------------
if ! command -v radosgw >/dev/null || ! command -v ceph-mon >/dev/null \
   || ! command -v ceph-osd >/dev/null; then
  command -v apt-get >/dev/null || unsupported "radosgw is not installed and there is no apt-get"
  [ "$(id -u)" = 0 ] || unsupported "radosgw is not installed and we are not root"
  ts "installing radosgw ceph-mon ceph-osd (apt-get, --no-install-recommends)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
           --no-install-recommends radosgw ceph-mon ceph-osd; } >"${TMPDIR:-/tmp}/zerorename-rgw-apt.log" 2>&1; then
    tail -20 "${TMPDIR:-/tmp}/zerorename-rgw-apt.log" >&2
    unsupported "apt-get install radosgw ceph-mon ceph-osd failed"
  fi
  ts "installed"
fi
command -v python3 >/dev/null || unsupported "python3 is needed to pick ports and poll HTTP"

# A port with no socket in any state: a TIME-WAIT left by an earlier run makes radosgw's bind
# fail (beast does not set SO_REUSEADDR), so fresh ports are picked every run.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
MON_PORT=${CEPH_MON_PORT:-$(free_port)}
RGW_PORT=${CEPH_RGW_PORT:-$(free_port)}
[ "$MON_PORT" != "$RGW_PORT" ] || RGW_PORT=$(free_port)
TLS=${RGW_TLS:-1}
case "$TLS" in 0|1) ;; *) die "RGW_TLS must be 0 or 1" ;; esac
if [ "$TLS" = 1 ] && ! command -v openssl >/dev/null; then
  echo "rgw-start.sh: no openssl: serving plain http only (S3_ENDPOINT_TLS unset)" >&2
  TLS=0
fi
if [ "$TLS" = 1 ]; then
  TLS_PORT=${CEPH_RGW_TLS_PORT:-$(free_port)}
  while [ "$TLS_PORT" = "$MON_PORT" ] || [ "$TLS_PORT" = "$RGW_PORT" ]; do TLS_PORT=$(free_port); done
fi
TRUSTSTORE_PASSWORD=${RGW_TRUSTSTORE_PASSWORD:-changeit}

# memstore (default): all objects in the OSD's RAM, up to CEPH_MEMSTORE_BYTES (4 GiB; RAM is
# taken as objects arrive, so a larger bound costs nothing until used). bluestore: sparse 4 GiB
# file under $BASE.
MEMSTORE_BYTES=${CEPH_MEMSTORE_BYTES:-4294967296}
case "$MEMSTORE_BYTES" in ''|*[!0-9]*) die "CEPH_MEMSTORE_BYTES must be a number of bytes" ;; esac
case "${CEPH_OBJECTSTORE:-memstore}" in
  memstore) OSD_STORE_CONF="osd_objectstore = memstore
memstore_device_bytes = $MEMSTORE_BYTES" ;;
  bluestore) OSD_STORE_CONF="osd_objectstore = bluestore
bluestore_block_path = $BASE/osd.\$id/block.file
bluestore_block_create = true
bluestore_block_size = 4294967296
bluestore_fsck_on_mount = false
bluestore_fsck_on_mkfs = false
bluestore_cache_size = 134217728" ;;
  *) die "CEPH_OBJECTSTORE must be memstore or bluestore" ;;
esac

if [ -e "$BASE/run/pids" ]; then CEPH_BASE=$BASE "$HERE/rgw-stop.sh" || true; fi
rm -rf "$BASE"
mkdir -p "$BASE"/{mon.a,osd.0,run,log,rgw}
FSID=$(cat /proc/sys/kernel/random/uuid)

# --- TLS: a self-signed certificate for 127.0.0.1, and the same in a JKS trust store ----------
FRONTEND="beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1"
TRUSTSTORE=
if [ "$TLS" = 1 ]; then
  mkdir -p "$BASE/tls"
  CERT=$BASE/tls/cert.pem
  KEY=$BASE/tls/key.pem
  # SAN IP:127.0.0.1: clients check the address they dialled against the SAN, not the CN
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$KEY" -out "$CERT" \
    >"$BASE/log/openssl.log" 2>&1 || die "openssl could not make the certificate: $(tail -3 "$BASE/log/openssl.log")"
  if command -v keytool >/dev/null; then
    TRUSTSTORE=$BASE/tls/truststore.jks
    keytool -importcert -noprompt -alias zerorename-rgw -file "$CERT" -keystore "$TRUSTSTORE" \
      -storetype JKS -storepass "$TRUSTSTORE_PASSWORD" >"$BASE/log/keytool.log" 2>&1 \
      || die "keytool could not make the trust store: $(tail -3 "$BASE/log/keytool.log")"
  else
    echo "rgw-start.sh: no keytool: no JKS trust store (S3_TLS_TRUSTSTORE unset)" >&2
  fi
  FRONTEND="$FRONTEND ssl_endpoint=127.0.0.1:$TLS_PORT ssl_certificate=$CERT ssl_private_key=$KEY"
fi
# The parts of a deleted multipart object wait for RGW's garbage collector, by default two hours
# (rgw_gc_obj_min_wait): a long benchmark that deletes what it wrote fills the memstore before.
# CEPH_RGW_GC_SECONDS=N lets the collector free them after N seconds, every N seconds.
RGW_GC_CONF=
if [ -n "${CEPH_RGW_GC_SECONDS:-}" ]; then
  case "$CEPH_RGW_GC_SECONDS" in *[!0-9]*) die "CEPH_RGW_GC_SECONDS must be a number of seconds" ;; esac
  RGW_GC_CONF="rgw_gc_obj_min_wait = $CEPH_RGW_GC_SECONDS
rgw_gc_processor_period = $CEPH_RGW_GC_SECONDS"
fi
CONF=$BASE/ceph.conf
cat > "$CONF" <<CONFEOF
[global]
fsid = $FSID
mon_host = v2:127.0.0.1:$MON_PORT
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_ipv6 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
run_dir = $BASE/run
admin_socket = $BASE/run/\$name.asok
log_file = $BASE/log/\$name.log
keyring = $BASE/keyring
osd_pool_default_size = 1
osd_pool_default_min_size = 1
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
[mon]
mon_data = $BASE/mon.\$id
mon_cluster_log_file = $BASE/log/cluster.log
# every pool create / "application enable" is a paxos round: 1 s each by default
paxos_propose_interval = 0.01
paxos_min_wait = 0.001
mon_data_avail_warn = 1
[osd]
osd_data = $BASE/osd.\$id
$OSD_STORE_CONF
[client.rgw.x]
# tcp_nodelay: without it every GET waits ~40 ms (Nagle vs delayed ACK)
rgw_frontends = $FRONTEND
rgw_data = $BASE/rgw
# radosgw's built-in default is ms_mon_client_mode=secure, which auth none cannot satisfy
# (it retries "get_initial_auth_request returned -13" forever)
ms_mon_client_mode = crc
# minimum size of every part but the last (default 5 MiB); see MIN_PART above
rgw_multipart_min_part_size = $MIN_PART
$RGW_GC_CONF
CONFEOF
CEPH="ceph -c $CONF"
fail() { # print the logs that explain a failed start, then stop what was started
  echo "rgw-start.sh: $*" >&2
  for f in "$BASE"/log/*; do [ -f "$f" ] && { echo "--- $f" >&2; tail -15 "$f" >&2; }; done
  CEPH_BASE=$BASE "$HERE/rgw-stop.sh" || true
  exit 1
}

# --- monitor ---------------------------------------------------------------------------------
ceph-authtool --create-keyring "$BASE/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$BASE/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
  --cap mgr 'allow *' >/dev/null
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$BASE/monmap" >/dev/null
ceph-mon -c "$CONF" --mkfs -i a --monmap "$BASE/monmap" --keyring "$BASE/keyring" \
  >"$BASE/log/mon-mkfs.log" 2>&1 || fail "ceph-mon --mkfs failed"
ceph-mon -c "$CONF" -i a -f >"$BASE/log/mon.out" 2>&1 &
echo "$!" >> "$BASE/run/pids"
ts "mon started (pid $!, port $MON_PORT)"
timeout 30 $CEPH mon stat >/dev/null 2>&1 || fail "mon not answering"
ts "mon answering"

# --- one OSD (memstore: RAM; memstore_device_bytes is only the advertised size) ---------------
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
OSD_ID=$(timeout 30 $CEPH osd new "$OSD_UUID" 2>/dev/null) || fail "ceph osd new failed"
ceph-osd -c "$CONF" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" >>"$BASE/log/osd-mkfs.log" 2>&1 \
  || fail "ceph-osd --mkfs failed"
ceph-osd -c "$CONF" -i "$OSD_ID" -f >"$BASE/log/osd.out" 2>&1 &
OSD_PID=$!
echo "$OSD_PID" >> "$BASE/run/pids"
ts "osd.$OSD_ID started (pid $OSD_PID)"
ok=0
for _ in $(seq 1 120); do
  kill -0 "$OSD_PID" 2>/dev/null || break
  if $CEPH osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1'; then ok=1; break; fi
  sleep 0.25
done
[ "$ok" = 1 ] || fail "osd did not come up"
ts "osd up"

# --- radosgw ---------------------------------------------------------------------------------
radosgw -c "$CONF" -n client.rgw.x -f >"$BASE/log/rgw.out" 2>&1 &
RGW_PID=$!
echo "$RGW_PID" >> "$BASE/run/pids"
ts "radosgw started (pid $RGW_PID, port $RGW_PORT)"
http_up() { # URL [CA file]: does the frontend answer (any HTTP status)?
  python3 - "$@" <<'PY'
import ssl, sys, urllib.request, urllib.error
context = ssl.create_default_context(cafile=sys.argv[2]) if len(sys.argv) > 2 else None
try:
    urllib.request.urlopen(sys.argv[1], timeout=1, context=context)
except urllib.error.HTTPError:
    pass                      # any HTTP status means the frontend answers
except Exception:
    sys.exit(1)
PY
}
ok=0
for _ in $(seq 1 300); do
  kill -0 "$RGW_PID" 2>/dev/null || break
  if http_up "http://127.0.0.1:$RGW_PORT/"; then ok=1; break; fi
  sleep 0.1
done
[ "$ok" = 1 ] || fail "radosgw did not answer HTTP"
ts "radosgw answering HTTP"
if [ "$TLS" = 1 ]; then
  # the certificate verified against itself: proves the SAN and the chain clients will check
  ok=0
  for _ in $(seq 1 50); do
    if http_up "https://127.0.0.1:$TLS_PORT/" "$CERT"; then ok=1; break; fi
    sleep 0.1
  done
  [ "$ok" = 1 ] || fail "radosgw did not answer HTTPS on port $TLS_PORT"
  ts "radosgw answering HTTPS (port $TLS_PORT)"
fi
timeout 60 radosgw-admin -c "$CONF" -n client.admin user create --uid=test --display-name=test \
  --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >"$BASE/log/user-create.out" 2>&1 \
  || fail "radosgw-admin user create failed"
ts "user created"
cat > "$BASE/env" <<ENVEOF
export S3_ENDPOINT=http://127.0.0.1:$RGW_PORT
export AWS_ACCESS_KEY_ID=$ACCESS_KEY
export AWS_SECRET_ACCESS_KEY=$SECRET_KEY
export AWS_DEFAULT_REGION=us-east-1
export CEPH_BASE=$BASE
ENVEOF
if [ "$TLS" = 1 ]; then
  {
    echo "export S3_ENDPOINT_TLS=https://127.0.0.1:$TLS_PORT"
    echo "export S3_TLS_CA_BUNDLE=$CERT"
    if [ -n "$TRUSTSTORE" ]; then
      echo "export S3_TLS_TRUSTSTORE=$TRUSTSTORE"
      echo "export S3_TLS_TRUSTSTORE_PASSWORD=$TRUSTSTORE_PASSWORD"
    fi
  } >> "$BASE/env"
fi
cat "$BASE/env"

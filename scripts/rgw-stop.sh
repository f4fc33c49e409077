#!/bin/bash
# Stop the daemons rgw-start.sh launched, by the PIDs it recorded in $CEPH_BASE/run/pids
# (never by name): TERM all, wait up to 10 s (a zombie counts as gone: the daemons are orphans
# and get reaped late), then KILL what is left.  CEPH_STOP_SIGNAL=KILL skips radosgw's ~5 s
# graceful exit, which is fine because all state is thrown away.  RGW_KEEP_STATE=1 keeps
# $CEPH_BASE (logs) instead of deleting it.
BASE=${CEPH_BASE:-${TMPDIR:-/tmp}/zerorename-rgw}
PIDS_FILE=$BASE/run/pids
[ -f "$PIDS_FILE" ] || exit 0
PIDS=$(tac "$PIDS_FILE")
alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1; [[ "$s" != Z* ]]; }
for pid in $PIDS; do kill -"${CEPH_STOP_SIGNAL:-TERM}" "$pid" 2>/dev/null; done
for _ in $(seq 1 100); do
  left=0
  for pid in $PIDS; do alive "$pid" && left=1; done
  [ "$left" = 0 ] && break
  sleep 0.1
done
for pid in $PIDS; do alive "$pid" && kill -KILL "$pid" 2>/dev/null; done
rm -f "$PIDS_FILE"
if [ "${RGW_KEEP_STATE:-0}" != 1 ]; then rm -rf "$BASE"; fi
exit 0

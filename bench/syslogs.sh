#!/usr/bin/env bash
# rsyslog (with rsyslog-kafka) and syslog-ng (with syslog-ng-mod-rdkafka) for
# `./knockwatch bench ingest --as-deployed`: Debian's packages and the libraries this machine lacks,
# downloaded by apt and unpacked (dpkg -x) into DIR, not installed: the two conflict as installed
# packages, and a benchmark has no business replacing the host's syslog.
# Usage: bench/syslogs.sh DIR    (does nothing when DIR already holds both)
set -euo pipefail
dest="$1"
if [ -x "$dest/usr/sbin/rsyslogd" ] && [ -x "$dest/usr/sbin/syslog-ng" ]; then
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || { echo "bench/syslogs.sh: no apt-get here" >&2; exit 1; }
debs="$(mktemp -d)"
trap 'rm -rf "$debs"' EXIT
mkdir -p "$debs/partial" "$dest"
download() { # the packages (even where installed: --reinstall) and whatever of their dependencies is not installed
  apt-get install -d --reinstall -y -qq -o Dir::Cache::archives="$debs" "$@" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -d --reinstall -y -qq -o Dir::Cache::archives="$debs" "$@" >/dev/null; }
}
# one at a time: they conflict with each other
download rsyslog rsyslog-kafka
download syslog-ng-core syslog-ng-mod-rdkafka
for deb in "$debs"/*.deb; do
  dpkg -x "$deb" "$dest"
done
echo "bench/syslogs.sh: rsyslog and syslog-ng unpacked in $dest" >&2

#!/usr/bin/env bash
# Installs Debian's ZooKeeper server when it is missing. Tests start their own private servers
# (test-harness/src/servers), so nothing is started here.
set -euo pipefail
if [ -x /usr/share/zookeeper/bin/zkServer.sh ] && command -v java >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends zookeeper default-jre-headless

#!/usr/bin/env bash
# System packages the tests need: Chromium (headless report rendering test) and docker-compose 1.29
# (validates docker/docker-compose.yml without an engine). Installed from Debian's packages when
# missing and we are root; otherwise the dependent tests report what is missing.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "warning: missing system packages ${need[*]} (install them with apt-get as root)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null

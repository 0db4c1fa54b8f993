#!/usr/bin/env bash
# The browser tests drive Debian's chromium; install it when missing (as root, or with sudo).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
echo "Installing Debian's chromium for the browser tests..." >&2
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
test -x /usr/bin/chromium || { echo "chromium did not install; the browser tests cannot run" >&2; exit 1; }

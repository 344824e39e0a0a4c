#!/usr/bin/env bash
# Installs the Debian packages the test suite uses for real: chromium and bubblewrap.
# On a Debian machine as root it installs what is missing; elsewhere it says what to install.
set -u
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "Please install: ${missing[*]} (tests that need them will be skipped with the reason)." >&2
fi
exit 0

#!/usr/bin/env bash
# Installs the system programs the test suite drives for real: chromium and its headless shell (browser tests), bwrap from
# bubblewrap (the grader's sandbox), node from nodejs (the JavaScript and TypeScript exercises; npm installs the
# OpenID provider the single sign-on tests sign in with) and
# PostgreSQL's server programs from postgresql (the store and class tests start a throwaway cluster).
# Run as root on a system with apt-get (Debian, Ubuntu, ...), it installs those that are missing with
# apt-get; anywhere else it names what to install and exits 0 (the tests that need them say why they skip).
set -u
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing with apt-get: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "Please install: ${missing[*]} (with your system's package manager; tests that need them will be skipped with the reason)." >&2
fi
exit 0

#!/bin/bash
# Fetch a Debian source package into a directory, once (idempotent).
#   mpi-builds/debian_source.sh PACKAGE DESTDIR
# Leaves DESTDIR/PACKAGE_*.dsc and its tarballs (not unpacked) and DESTDIR/.fetched-PACKAGE.
# Enables deb-src for the machine's Debian suites if no deb-src line is configured (needs root).
set -euo pipefail
pkg=$1
dest=$2
stamp="$dest/.fetched-$pkg"
if [ -f "$stamp" ]; then exit 0; fi
mkdir -p "$dest"
command -v dpkg-source >/dev/null || { echo "$0: dpkg-source missing (apt-get install dpkg-dev)" >&2; exit 1; }
if ! apt-get source --print-uris "$pkg" >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "$0: no deb-src entries for $pkg and not root to add them" >&2; exit 1
  fi
  src=/etc/apt/sources.list.d/collsel-deb-src.sources
  if [ ! -f "$src" ]; then
    # Same mirrors and suites as the binary entries, source type.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed -e 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$src.tmp"
    else
      grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' > "${src%.sources}.list"
      : > "$src.tmp"
    fi
    mv "$src.tmp" "$src"
    [ -s "$src" ] || rm -f "$src"
  fi
  apt-get update -qq
fi
(cd "$dest" && apt-get source --download-only -qq "$pkg")
touch "$stamp"

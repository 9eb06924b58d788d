#!/bin/bash
# MPICH's default MPIR-level collective selection tree (maint/tuning/coll/mpir/generic.json)
# from the Debian source package of the installed MPICH version, copied to OUT.
#   mpi-builds/mpich-base/fetch_generic_json.sh OUT
# The source package goes to build/src (git-ignored); nothing of MPICH is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
srcdir=$(dirname "$out")/../src
"$here/../debian_source.sh" mpich "$srcdir"
# A binary rebuild (+bN) has the source version without the suffix.
installed=$(dpkg-query -W -f '${Version}' mpich | sed 's/+b[0-9]*$//')
dsc=$(ls "$srcdir"/mpich_*.dsc | head -1)
fetched=$(sed -n 's/^Version: //p' "$dsc")
if [ "$installed" != "$fetched" ]; then
  echo "$0: installed MPICH is $installed but the source package is $fetched" >&2
  exit 1
fi
tarball=$(ls "$srcdir"/mpich_*.orig.tar.* | head -1)
member='*/maint/tuning/coll/mpir/generic.json'
mkdir -p "$(dirname "$out")"
tar -xOf "$tarball" --wildcards "$member" > "$out.tmp"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out.tmp"
mv "$out.tmp" "$out"
echo "$out: $member from $(basename "$tarball") (MPICH $fetched)"

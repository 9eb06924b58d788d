#!/bin/bash
# Build Open MPI 4.1 (Debian source package, upstream tree without Debian's patches) with
# ompi_coll_tuned_<coll>_intra_dec_fixed replaced by collsel's generated functions.
#   mpi-builds/ompi-patched/build.sh DIR ompi_<coll>_intra_dec_fixed.c...
# (`collsel emit --target ompi-dec-fixed` files, any of the 14 collectives; the name says which).
# scan and exscan, which 4.1.4 leaves to coll/basic, get a fixed decision in coll/tuned first
# (tuned_sources.py: the linear algorithm coll/basic runs), so that theirs can replace it.
# DIR/src: unpacked source; DIR/obj: build tree; DIR/install: prefix (bin/mpicc, bin/mpirun).
# Every stage is skipped when its stamp exists; a changed generated function only recompiles
# coll_tuned_decision_fixed.c (the spliced file is rewritten only when its text changes).
# The build defines COLLSEL_TRACE: the trace is compiled in, and printed only when the
# environment variable COLLSEL_TRACE is set at run time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1; shift
replacements=()
for file in "$@"; do
  coll=$(basename "$file" .c); coll=${coll#ompi_}; coll=${coll%_intra_dec_fixed}
  replacements+=("ompi_coll_tuned_${coll}_intra_dec_fixed=$file")
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
log() { echo "ompi-patched: $*"; }
start=$(date +%s)

"$here/../debian_source.sh" openmpi "$dir/../src"
if [ ! -f "$dir/.unpacked" ]; then
  rm -rf "$dir/src"
  dsc=$(ls "$dir"/../src/openmpi_*.dsc | head -1)
  log "unpacking $(basename "$dsc") (upstream tree, Debian patches skipped)"
  dpkg-source -q --skip-patches -x "$dsc" "$dir/src" >/dev/null
  f="$dir/src/ompi/mca/coll/tuned/coll_tuned_decision_fixed.c"
  cp -p "$f" "$f.orig"
  touch "$dir/.unpacked"
fi

# Components no test or program here loads (MPI-IO, UCX and verbs transports, monitoring,
# fault-tolerance and topology plug-ins) are not built: 735 compiles instead of 901, the build
# 179 s instead of 236 s here (2026-12-01).
unused=btl-openib,common-verbs,common-ucx,pml-ucx,osc-ucx,pml-cm,pml-v,vprotocol,pml-monitoring
unused+=,coll-monitoring,osc-monitoring,common-monitoring,io,fcoll,fbtl,fs,sharedfp,common-ompio
unused+=,topo-treematch
if [ ! -f "$dir/.configured" ]; then
  rm -rf "$dir/obj"; mkdir -p "$dir/obj"
  log "configure (log: $dir/obj/configure.out)"
  (cd "$dir/obj" && nice -n 19 "$dir/src/configure" --prefix="$dir/install" \
     --disable-mpi-fortran --disable-oshmem --disable-mpi-java --disable-mpi-cxx \
     --disable-io-romio --with-hwloc=external --with-libevent=external \
     --disable-dependency-tracking --enable-mca-no-build="$unused" \
     --with-pmix="/usr/lib/$(gcc -print-multiarch)/pmix2" --disable-silent-rules \
     CFLAGS="-O2 -DCOLLSEL_TRACE" > configure.out 2>&1) \
    || { tail -30 "$dir/obj/configure.out"; exit 1; }
  touch "$dir/.configured"
fi

f="$dir/src/ompi/mca/coll/tuned/coll_tuned_decision_fixed.c"
python3 "$here/tuned_sources.py" "$dir/src"
python3 "$here/splice.py" "$f.base" "$f" "${replacements[@]}"

log "make install (log: $dir/obj/make.out)"
(cd "$dir/obj" && nice -n 19 make -j2 install > make.out 2>&1) \
  || { grep -n -B2 -A8 "error" "$dir/obj/make.out" | tail -40; exit 1; }
# The commands that compiled the spliced file and linked coll/tuned, kept for the integration
# test that builds a private mca_coll_tuned.so (make.out lacks them when nothing was recompiled).
cmds=$(grep -E '^libtool: (compile: .*/coll_tuned_decision_fixed\.c |link: .*-o \.libs/mca_coll_tuned\.so)' \
       "$dir/obj/make.out" || true)
if [ "$(printf '%s\n' "$cmds" | grep -c .)" = 2 ]; then
  printf '%s\n' "$cmds" > "$dir/obj/coll_tuned_commands.txt"
fi
touch "$dir/.installed"
log "installed in $dir/install ($(( $(date +%s) - start )) s)"

# Sourced by the GPU-machine scripts: makes the Debian packages carried in
# .carry/*.deb (LAPACK, BLAS, OpenBLAS, tmglib, gfortran, MPFR, GMP,
# Random123) usable by the build and at run time, unpacked under /tmp.
if ls .carry/*.deb >/dev/null 2>&1; then
  P=/tmp/tn_pfx
  L=$P/usr/lib/x86_64-linux-gnu
  [ -d "$L" ] || for f in .carry/*.deb; do dpkg -x "$f" "$P"; done
  ln -sf libgfortran.so.5 "$L/libgfortran.so"
  export CPATH="$P/usr/include:$P/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$L:$L/blas:$L/lapack${LIBRARY_PATH:+:$LIBRARY_PATH}"
  # OpenBLAS (when carried) first at run time: the reference BLAS is slow
  # for the host-side residuals of the benchmarks
  OB=""
  [ -d "$L/openblas-pthread" ] && OB="$L/openblas-pthread:"
  export LD_LIBRARY_PATH="$OB$L:$L/blas:$L/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export PATH="$PATH:/usr/local/cuda/bin"

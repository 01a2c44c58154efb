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
# NCCL for the distributed drivers (loaded at run time): where the system
# has no libnccl.so.2, the one of PyTorch's nvidia-nccl package
if [ -z "${TCNLA_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
  _d=$(python3 -c 'import nvidia.nccl as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null)
  [ -n "$_d" ] && [ -e "$_d/libnccl.so.2" ] && export TCNLA_NCCL_LIBRARY="$_d/libnccl.so.2"
  unset _d
fi
# keep NVLink multicast off in every program started from here
export NCCL_NVLS_ENABLE=0

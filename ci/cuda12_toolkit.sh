#!/usr/bin/env bash
# Assembles one CUDA 12.4.1 toolkit tree (bin/nvcc, nvvm/, include/, lib64/) without installing
# anything system-wide, for Hopper's sm_90a instructions (wgmma), which CUDA 11.8 cannot emit.
# Usage: ci/cuda12_toolkit.sh PREFIX      (idempotent: a finished PREFIX is reused)
#   Then: export CUDA_HOME=PREFIX CUDAToolkit_ROOT=PREFIX CUDA_ROOT=PREFIX PATH=PREFIX/bin:$PATH
#
# Where each part comes from, all NVIDIA's binaries of the one CUDA 12.4.1 release:
#   PyPI (pip install --target): nvidia-cuda-nvcc-cu12 (ptxas, crt/ headers, libnvvm, libdevice),
#     nvidia-cuda-runtime-cu12 (runtime headers, libcudart.so.12), nvidia-cuda-cccl-cu12 (CCCL).
#   Debian's non-free nvidia-cuda-toolkit and nvidia-cuda-dev of trixie, downloaded and unpacked
#     here only (never installed): the compiler driver and front ends (nvcc, cicc, cudafe++,
#     fatbinary, nvlink, bin2c, cuobjdump, nvdisasm), the static runtime and the libcuda stub.
#     NVIDIA's cu12 wheels carry no nvcc driver, cicc or cudafe++ (checked for 12.1 to 12.9.86;
#     only the CUDA 13 wheels do), and Debian's newest CUDA 12 is 12.4.1: so 12.4.1 throughout.
set -euo pipefail

prefix=${1:?usage: ci/cuda12_toolkit.sh PREFIX}
[ -f "$prefix/.complete" ] && { echo "[cuda12] reusing $prefix"; exit 0; }

wheels=(nvidia-cuda-nvcc-cu12==12.4.131 nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-cccl-cu12==12.4.127.post1)
debian_suite=trixie
debs=(nvidia-cuda-toolkit=12.4.131~12.4.1-2 nvidia-cuda-dev=12.4.127~12.4.1-2)

parts=$prefix.parts
log=$parts/log
rm -rf "$prefix" "$parts"
mkdir -p "$parts/apt/lists/partial" "$parts/apt/cache/archives/partial" "$parts/deb"
trap 'rc=$?; [ $rc -eq 0 ] || { echo "[cuda12] FAILED (exit $rc); last lines of $log:" >&2; tail -n 30 "$log" >&2; }' EXIT
say() { echo "[cuda12] $*"; }

python3 -m pip --version > /dev/null 2>&1 || { echo "[cuda12] needs pip for python3 (Debian: apt-get install python3-pip)" >&2; exit 1; }
say "pip install --target $parts/wheels ${wheels[*]}"
python3 -m pip install -q --disable-pip-version-check --no-deps --no-compile --target "$parts/wheels" "${wheels[@]}" >> "$log" 2>&1

# A private apt state: Debian $debian_suite's non-free index, used for downloads only, so that
# this machine's own sources and packages stay as they are.
cat > "$parts/apt/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $debian_suite non-free
SRC
apt_private=(-o Dir::Etc::SourceList="$parts/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o Dir::State::Lists="$parts/apt/lists" -o Dir::Cache="$parts/apt/cache"
             -o Dir::State::Status=/dev/null -o APT::Architecture=amd64 -o APT::Architectures=amd64
             -o APT::Sandbox::User=root)
say "apt-get download ${debs[*]} (Debian $debian_suite non-free, about 1 GB; unpacked here, not installed)"
apt-get "${apt_private[@]}" update -q >> "$log" 2>&1
(cd "$parts/deb" && apt-get "${apt_private[@]}" download "${debs[@]}" >> "$log" 2>&1)

say "assembling $prefix"
mkdir -p "$prefix"/{bin/crt,nvvm/bin,include,lib64/stubs}
unpack() {  # unpack DEB_NAME MEMBER... : the named members of a downloaded .deb into $parts/x
  local deb=("$parts"/deb/"$1"_*.deb); shift
  mkdir -p "$parts/x"
  dpkg-deb --fsys-tarfile "${deb[0]}" | tar -x -C "$parts/x" "$@"
}
tk=./usr/lib/nvidia-cuda-toolkit/bin
unpack nvidia-cuda-toolkit ./usr/bin/bin2c ./usr/bin/cudafe++ ./usr/bin/fatbinary ./usr/bin/nvlink \
    ./usr/bin/cuobjdump ./usr/bin/nvdisasm ./usr/bin/nvprune ./usr/bin/cu++filt "$tk/nvcc" "$tk/cicc" \
    "$tk/crt/link.stub" "$tk/crt/prelink.stub"
cp "$parts"/x/usr/bin/* "$parts/x/$tk/nvcc" "$prefix/bin/"
cp "$parts/x/$tk"/crt/*.stub "$prefix/bin/crt/"
cp "$parts/x/$tk/cicc" "$prefix/nvvm/bin/"
lib=./usr/lib/x86_64-linux-gnu
unpack nvidia-cuda-dev "$lib/libcudart_static.a" "$lib/libcudadevrt.a" "$lib/libculibos.a" "$lib/stubs/libcuda.so"
cp "$parts/x/$lib"/*.a "$prefix/lib64/"
cp "$parts/x/$lib/stubs/libcuda.so" "$prefix/lib64/stubs/"

w=$parts/wheels/nvidia
cp "$w/cuda_nvcc/bin/ptxas" "$prefix/bin/"
cp -r "$w/cuda_nvcc/nvvm"/{include,lib64,libdevice} "$prefix/nvvm/"
cp -r "$w/cuda_runtime/include"/. "$w/cuda_nvcc/include"/. "$w/cuda_cccl/include"/. "$prefix/include/"
find "$prefix/include" -name '__init__.py' -delete
find "$prefix/include" -name '__pycache__' -prune -exec rm -rf {} +
cp "$w/cuda_runtime/lib/libcudart.so.12" "$prefix/lib64/"
ln -s libcudart.so.12 "$prefix/lib64/libcudart.so"
ln -s libcuda.so "$prefix/lib64/stubs/libcuda.so.1"

# The standard toolkit's profile: nvcc finds cicc, libdevice, headers and libraries from here.
cat > "$prefix/bin/nvcc.profile" <<'PROFILE'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE
cat > "$prefix/version.json" <<'VERSION'
{ "cuda": { "name": "CUDA SDK", "version": "12.4.1" } }
VERSION

version=$("$prefix/bin/nvcc" --version | grep -o 'release [0-9.]*')
[ "$version" = "release 12.4" ] || { echo "[cuda12] $prefix/bin/nvcc reports '$version', expected release 12.4" >&2; exit 1; }
rm -rf "$parts"
touch "$prefix/.complete"
say "installed CUDA 12.4.1 in $prefix"

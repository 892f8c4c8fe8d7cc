# Source this at the start of a command on the GPU machine (see ../shared/GPU.md):
# installs the carried wheels, registers the NVIDIA OpenCL driver and makes mcl importable.
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
export PYTHONUNBUFFERED=1
ls /etc/OpenCL/vendors 2>/dev/null | grep -q nvidia || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export MCL_DEVICE=${MCL_DEVICE:-NVIDIA:}
set +e

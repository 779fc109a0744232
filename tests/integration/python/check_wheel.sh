#!/usr/bin/env bash
# The Python client packages from a clean copy, offline: `pip wheel` runs setup.py's hook
# (generate_stubs.py), the wheel holds the generated stubs, and the installed package imports.
#   check_wheel.sh REPO_ROOT PYTHON
set -euo pipefail
root=$1 python=$2
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/clients" "$work/src/proto"
cp -r "$root/clients/python" "$work/src/clients/python"
cp -r "$root/proto/." "$work/src/proto/"
rm -rf "$work/src/clients/python/slotserve/v1" "$work/src/clients/python/slotserve/_health"
"$python" -m pip wheel --quiet --no-build-isolation --no-deps --no-index \
  "$work/src/clients/python" -w "$work/wheels"
wheel=$(ls "$work"/wheels/slotserve-*.whl)
for member in slotserve/v1/slotserve_pb2.py slotserve/v1/slotserve_pb2_grpc.py \
              slotserve/_health/v1/health_pb2.py slotserve/client.py slotserve/aio.py; do
  "$python" -c "import sys, zipfile; sys.exit('$member' not in zipfile.ZipFile('$wheel').namelist())" \
    || { echo "FAIL: $wheel lacks $member"; exit 1; }
done
"$python" -m pip install --quiet --no-deps --no-index --target "$work/site" "$wheel"
(cd "$work" && PYTHONPATH="$work/site" "$python" -c \
  "import slotserve; print('installed', slotserve.__version__, slotserve.Client.__name__)")
echo "PASS: $(basename "$wheel") builds offline and imports"

#!/usr/bin/env bash
# Prepare, on this (CPU) machine, what the GPU check needs on the device machine, whose image has
# Python 3.12 with torch (CUDA), numpy, scipy, scikit-learn, matplotlib, numba and pytest, but not
# fairmon's other dependencies and no internet (see scripts/device/README.md):
#   .whl/      Python 3.12 manylinux wheels of the missing packages, versions from constraints.txt
#   .devdata/  the datasets the CUDA benchmarks read (Adult, the GESD CSVs), from FAIRMON_DATA_DIR
# Both folders are ignored through .git/info/exclude and travel with the device tool's `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=${FAIRMON_DATA_DIR:-../shared/datasets}
PY=${PYTHON:-.venv/bin/python}
for d in /.whl/ /.devdata/; do
  grep -qxF "$d" .git/info/exclude 2>/dev/null || echo "$d" >> .git/info/exclude
done

# not in the device image (KINDS.md's package list), with what they need that it also lacks;
# narwhals is in the image but travels pinned: fairlearn and the carried pandas need a recent one
PKGS=(shap slicer pymoo fairlearn narwhals autograd cma alive-progress about-time graphemeu Deprecated moocore cffi pycparser
      platformdirs dill pydantic pydantic_core annotated-types typing-inspection typing_extensions pandas SQLAlchemy greenlet)
pinned() {  # NAME==VERSION from constraints.txt (names compared case- and -/_-insensitively)
  local want; want=$(echo "$1" | tr 'A-Z_' 'a-z-')
  awk -F'==' -v w="$want" '{n=tolower($1); gsub("_","-",n)} n==w {print $0; exit}' constraints.txt
}
rm -rf .whl && mkdir -p .whl
specs=()
for p in "${PKGS[@]}"; do
  s=$(pinned "$p"); [ -n "$s" ] || { echo "prepare.sh: $p is not pinned in constraints.txt" >&2; exit 2; }
  specs+=("$s")
done
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${specs[@]}"
# lime is published as a source distribution only: build its (pure-Python) wheel here
"$PY" -m pip wheel -q --no-deps -w .whl "$(pinned lime)"

rm -rf .devdata && mkdir -p .devdata
# Adult (explainers, RUMIE speed), the GESD CSVs (GESD speed, FEU) and COMPAS (the RUMIE step's
# --smoke dry run), gzipped (9.2 -> 1.5 MiB; gpu-check.sh unpacks them): the kit must stay under the
# device tool's 64 MiB with the wheels and the tracked tree
tar czf .devdata/datasets.tgz -C "$DATA" adult gesd compas
du -sh .whl .devdata
# the device tool sends the tracked tree, untracked files git does not ignore and the carried folders:
# 64 MiB at most (its README). Say so here, not after a device call is refused.
total=$(( $( (git ls-files -z; git ls-files -z --others --exclude-standard) | xargs -0 -r du -cb 2>/dev/null | awk '$2 == "total" {t += $1} END {print t}') \
          + $(du -scb .whl .devdata | awk 'END {print $1}') ))
echo "prepare.sh: $((total / 1048576)) MiB would travel (the device tool's limit: 64 MiB)"
if [ "$total" -ge $((64 * 1048576)) ]; then
  echo "prepare.sh: over the limit: carry fewer wheels or datasets" >&2
  exit 3
fi

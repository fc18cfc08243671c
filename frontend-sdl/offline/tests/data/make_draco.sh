#!/usr/bin/env bash
# Regenerates the Draco-compressed (KHR_draco_mesh_compression) test models from the shared
# Khronos samples (needs npm; the outputs are committed because CI has none):
#   RiggedFigure-draco.glb       gltf-pipeline -d with its defaults: 11-bit positions, 8-bit
#                                normals, 12-bit weights ("generic"), EdgeBreaker connectivity
#   RiggedFigure-draco-seq.glb   gltf-transform draco --method sequential: the sequential codec,
#                                14-bit positions, 10-bit normals, 12-bit weights, after
#                                gltf-transform's weld (370 vertices become 365)
#   SimpleSkin-draco.gltf        gltf-pipeline -d --draco.uncompressedFallback: JSON with data
#                                URIs; the extension used, not required, and the accessors keep
#                                uncompressed fallback data
# With a directory argument, also writes the larger shared models through gltf-pipeline -d
# there (CesiumMan, Fox, BrainStem, RecursiveSkeletons: not committed, read by the ignored test
# `draco_shared_models` of tests/draco_meshes.rs when SINEW_DRACO_DIR names that directory).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
assets="$here/../../../../../shared/assets/gltf"
pipeline() { npx --yes gltf-pipeline@4.3.1 "$@"; }
transform() { npx --yes @gltf-transform/cli@4.5.1 "$@"; }
pipeline -i "$assets/RiggedFigure/RiggedFigure.glb" -o "$here/RiggedFigure-draco.glb" -d
transform draco --method sequential "$assets/RiggedFigure/RiggedFigure.glb" "$here/RiggedFigure-draco-seq.glb"
pipeline -i "$assets/SimpleSkin/SimpleSkin.gltf" -o "$here/SimpleSkin-draco.gltf" -d --draco.uncompressedFallback
if [ $# -ge 1 ]; then
  mkdir -p "$1"
  for m in CesiumMan Fox BrainStem RecursiveSkeletons; do
    pipeline -i "$assets/$m/$m.glb" -o "$1/$m-draco.glb" -d
  done
fi

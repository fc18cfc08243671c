#!/usr/bin/env bash
# Regenerates the compressed and quantized RiggedFigure test models from the shared Khronos
# sample (needs npm; the outputs are committed because CI has none):
#   RiggedFigure-quantized.glb  KHR_mesh_quantization (gltfpack's default quantization: 14-bit
#                               integer positions, 8-bit normalized normals and weights)
#   RiggedFigure-meshopt.glb    the same, EXT_meshopt_compression with filters (-cc)
#   RiggedFigure-meshopt-khr.glb  the same, KHR_meshopt_compression (-ce khr: version-1 vertex
#                               streams)
# Animations keep their source keys (-af 0); their values are quantized as gltfpack does.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$here/../../../../../shared/assets/gltf/RiggedFigure/RiggedFigure.glb"
npx --yes gltfpack@1.3.0 -i "$src" -o "$here/RiggedFigure-quantized.glb" -af 0
npx --yes gltfpack@1.3.0 -i "$src" -o "$here/RiggedFigure-meshopt.glb" -af 0 -cc -ce ext
npx --yes gltfpack@1.3.0 -i "$src" -o "$here/RiggedFigure-meshopt-khr.glb" -af 0 -cc -ce khr

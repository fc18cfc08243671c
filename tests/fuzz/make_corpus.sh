#!/usr/bin/env bash
# Fills tests/fuzz/corpus/<target>/ with the seed inputs of each fuzz target: the small files
# kept in tests/fuzz/seeds/ (hand-written md5 and BVH), plus files made at fuzz time from the models in
# ../shared/assets (never copied into the repository). Run from anywhere; needs the release
# `sinew` binary, which it builds.
set -euo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$fuzz/../.." && pwd)"
assets="$(cd "$root/../shared/assets" && pwd)"
seeds="$fuzz/seeds"
corpus="$fuzz/corpus"

mkdir -p "$corpus"/{asset_parse,md5mesh,md5anim,gltf_import,image_decode,bvh,fbx}

# A NUL-joined pair: the md5 targets read "first file \0 second file".
pair() { { cat "$1"; printf '\0'; cat "$2"; } > "$3"; }

(cd "$root" && cargo build --release -q -p sinew-frontend --bin sinew)
sinew="$root/target/release/sinew"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
bake() { "$sinew" bake "$@" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }; }

# .sinew: bakes of the small and larger models (made here, never committed).
for m in SimpleSkin/SimpleSkin.gltf RiggedSimple/RiggedSimple.glb InterpolationTest/InterpolationTest.glb \
  BoxAnimated/BoxAnimated.glb; do
  bake "$assets/gltf/$m" -o "$corpus/asset_parse/$(basename "${m%.*}").sinew"
done
bake "$assets/gltf/Fox/Fox.glb" -o "$corpus/asset_parse/Fox.sinew"
bake "$assets/gltf/CesiumMan/CesiumMan.glb" -o "$corpus/asset_parse/CesiumMan.sinew"
bob="$assets/md5/boblamp/boblampclean"
bake "$bob.md5mesh" --anim "$bob.md5anim" -o "$corpus/asset_parse/Bob.sinew"
bake "$seeds/md5/arm.md5mesh" --anim "$seeds/md5/arm.md5anim" -o "$corpus/asset_parse/arm.sinew"
# Lossless keys (f32 tracks, cubic splines kept) and small palettes (several parts per mesh).
bake "$assets/gltf/InterpolationTest/InterpolationTest.glb" --lossless -o "$corpus/asset_parse/InterpolationTest-lossless.sinew"
bake "$assets/gltf/Fox/Fox.glb" --palette 8 --influences 8 -o "$corpus/asset_parse/Fox-p8.sinew"
# Morph targets and weight tracks (quantized and f32).
bake "$assets/gltf/AnimatedMorphCube/AnimatedMorphCube.glb" -o "$corpus/asset_parse/AnimatedMorphCube.sinew"
bake "$assets/gltf/AnimatedMorphCube/AnimatedMorphCube.glb" --lossless -o "$corpus/asset_parse/AnimatedMorphCube-lossless.sinew"
# An animation graph section (the issue's minimal graph on Fox).
bake "$assets/gltf/Fox/Fox.glb" --graph "$seeds/graph/fox.json" -o "$corpus/asset_parse/Fox-graph.sinew"
# A graph with an override and an additive layer (its layer table).
bake "$assets/gltf/Fox/Fox.glb" --graph "$root/frontend-sdl/offline/tests/data/fox_layered_graph.json" \
    -o "$corpus/asset_parse/Fox-layered-graph.sinew"

# Spring bones (a spring-bone section): the VRM conformance capsule model and three-vrm's plane
# collider example.
bake "$assets/vrm/vrm-conformance/springbone_collider_capsule_x0p02_r0p1.vrm" \
    -o "$corpus/asset_parse/springs-capsule.sinew"
bake "$assets/vrm/three-vrm/plane-collider.gltf" -o "$corpus/asset_parse/springs-plane.sinew"

# md5 text: the hand-written arm and Bob, alone and paired.
cp "$seeds/md5/arm.md5mesh" "$corpus/md5mesh/"
pair "$seeds/md5/arm.md5mesh" "$seeds/md5/arm.md5anim" "$corpus/md5mesh/arm-pair"
cp "$bob.md5mesh" "$corpus/md5mesh/"
pair "$bob.md5mesh" "$bob.md5anim" "$corpus/md5mesh/bob-pair"
cp "$seeds/md5/arm.md5anim" "$corpus/md5anim/"
pair "$seeds/md5/arm.md5anim" "$seeds/md5/arm.md5mesh" "$corpus/md5anim/arm-pair"
cp "$bob.md5anim" "$corpus/md5anim/"
pair "$bob.md5anim" "$bob.md5mesh" "$corpus/md5anim/bob-pair"

# glTF: the small sample models.
for m in RiggedSimple/RiggedSimple.glb SimpleSkin/SimpleSkin.gltf BoxAnimated/BoxAnimated.glb \
  InterpolationTest/InterpolationTest.glb AnimatedMorphCube/AnimatedMorphCube.glb; do
  cp "$assets/gltf/$m" "$corpus/gltf_import/"
done
# Quantized, meshopt-compressed (EXT and KHR) and Draco-compressed RiggedFigure and SimpleSkin,
# kept with sinew-offline's tests.
cp "$root"/frontend-sdl/offline/tests/data/RiggedFigure-*.glb "$root"/frontend-sdl/offline/tests/data/*-draco.gltf \
  "$corpus/gltf_import/"
# And the bad-input corpus's broken meshopt and Draco streams and extension objects.
(cd "$root" && SINEW_FUZZ_SEEDS="$corpus/gltf_import" cargo test -q -p sinew-tests --test fuzz_regressions \
  write_compressed_seeds -- --ignored > "$log" 2>&1) || { cat "$log" >&2; exit 1; }

# Texture extensions (WebP, KHR_texture_basisu fallbacks), kept with sinew-offline's tests.
cp "$root"/frontend-sdl/offline/tests/data/textures/*.glb "$corpus/gltf_import/"

# BVH: the hand-written seeds, bvh_anim's minimal file and the CMU capture.
cp "$seeds"/bvh/*.bvh "$assets/bvh/bvh_anim/test_simple.bvh" "$assets/bvh/cmu/01_01.bvh" "$corpus/bvh/"

# FBX: the shared Blender, Maya (binary and ASCII) and assimp files.
cp "$assets"/fbx/ufbx/*.fbx "$assets/fbx/assimp/huesitos.fbx" "$corpus/fbx/"

# Inputs the fuzzer found to crash once are seeds too (for image_decode: small valid PNG and
# WebP, truncated, oversized and corrupt images kept there as its seeds).
for t in asset_parse md5mesh md5anim gltf_import image_decode bvh fbx; do
  if [ -d "$fuzz/regressions/$t" ]; then
    find "$fuzz/regressions/$t" -type f -exec cp {} "$corpus/$t/" \;
  fi
done
chmod -R u+w "$corpus"
du -sh "$corpus"/*

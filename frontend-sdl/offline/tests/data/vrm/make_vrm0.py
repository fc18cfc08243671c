#!/usr/bin/env python3
"""Writes vrm0_springs.gltf, a VRM 0.x model small enough to check its spring bones by hand.

Run from anywhere with Python 3 (standard library only); the output is written next to this
script and committed. The document is glTF JSON with one buffer embedded as a base64 `data:`
URI, and lists the VRM 0.x extension `VRM` in `extensionsUsed`.

Nodes (translations in meters, no rotation or scale):

    0 hips        (0, 1, 0)          children 1, 5
    1 hair_root   (0, 0.5, 0.1)      children 2, 4
    2 hair_a      (0, -0.1, 0)       child 3
    3 hair_a_tip  (0.03, -0.04, 0)   leaf
    4 hair_b      (0, 0, 0)          leaf, at its parent's position
    5 head        (0, 0.6, 0)        child 6; holds the mesh
    6 ribbon      (0, 0, -0.2)       leaf

Mesh: one triangle (0,0,0), (0.1,0,0), (0,0.1,0), float positions and uint16 indices in the
buffer, rigid on `head`.

extensions.VRM.secondaryAnimation:

    colliderGroups[0]  node 5 (head): spheres {offset (0.01, 0.02, 0.03), radius 0.1} and
                       {radius 0.05, no offset}
    colliderGroups[1]  node 2 (hair_a): sphere {offset (z -0.01), radius 0.01}
    boneGroups[0]      "ribbon": bones [6], center -1, colliderGroups [1, 0], stiffiness 2,
                       dragForce 0.3, gravityPower 0.5, gravityDir {x 1, y -1}, hitRadius 0.02
    boneGroups[1]      "hair": bones [1], center 0, colliderGroups [0], every parameter left out

What an importer following three-vrm should make of it, by hand:

- colliders (z of the offsets negated, VRM 0.x being in Unity's axes): head (0.01, 0.02,
  -0.03) r 0.1; head (0, 0, 0) r 0.05; hair_a (0, 0, 0.01) r 0.01.
- swaying joints: ribbon (leaf: virtual tail 0.07 along its translation, (0, 0, -0.07));
  hair_root -> hair_a, tail (0, -0.1, 0); hair_a -> hair_a_tip, tail (0.03, -0.04, 0);
  hair_a_tip (leaf: (0.6, -0.8, 0) x 0.07 = (0.042, -0.056, 0)); hair_b (leaf at zero
  translation: zero tail).
- parameters: ribbon's as given (gravityDir (1, -1, 0), not mirrored); hair's three-vrm's
  defaults: hitRadius 0, stiffness 1, gravityPower 0, gravityDir (0, -1, 0), dragForce 0.4;
  hair's center hips, ribbon's none.
- colliders per joint: ribbon [2, 0, 1] (group 1's then group 0's), hair [0, 1].
- run order: hair_root, hair_a (the ribbon collides with the sphere on hair_a, so the spring
  joints at and above hair_a go first), ribbon, hair_a_tip, hair_b.
"""

import base64
import json
import os
import struct

positions = [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.0, 0.1, 0.0)]
indices = [0, 1, 2]
pos_bytes = b"".join(struct.pack("<3f", *p) for p in positions)
idx_bytes = struct.pack("<3H", *indices) + b"\0\0"  # padded to 4 bytes
blob = pos_bytes + idx_bytes


def node(name, t, children=(), **extra):
    n = {"name": name, "translation": list(t)}
    if children:
        n["children"] = list(children)
    n.update(extra)
    return n


doc = {
    "asset": {"version": "2.0", "generator": "sinew tests/data/vrm/make_vrm0.py"},
    "extensionsUsed": ["VRM"],
    "scene": 0,
    "scenes": [{"nodes": [0]}],
    "nodes": [
        node("hips", (0, 1, 0), (1, 5)),
        node("hair_root", (0, 0.5, 0.1), (2, 4)),
        node("hair_a", (0, -0.1, 0), (3,)),
        node("hair_a_tip", (0.03, -0.04, 0)),
        node("hair_b", (0, 0, 0)),
        node("head", (0, 0.6, 0), (6,), mesh=0),
        node("ribbon", (0, 0, -0.2)),
    ],
    "meshes": [{"name": "patch", "primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
    "accessors": [
        {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
         "min": [0.0, 0.0, 0.0], "max": [0.1, 0.1, 0.0]},
        {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"},
    ],
    "bufferViews": [
        {"buffer": 0, "byteOffset": 0, "byteLength": len(pos_bytes)},
        {"buffer": 0, "byteOffset": len(pos_bytes), "byteLength": 6},
    ],
    "buffers": [{
        "byteLength": len(blob),
        "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode("ascii"),
    }],
    "extensions": {"VRM": {
        "specVersion": "0.0",
        "secondaryAnimation": {
            "colliderGroups": [
                {"node": 5, "colliders": [
                    {"offset": {"x": 0.01, "y": 0.02, "z": 0.03}, "radius": 0.1},
                    {"radius": 0.05},
                ]},
                {"node": 2, "colliders": [{"offset": {"z": -0.01}, "radius": 0.01}]},
            ],
            "boneGroups": [
                {"comment": "ribbon", "bones": [6], "center": -1, "colliderGroups": [1, 0],
                 "stiffiness": 2.0, "dragForce": 0.3, "gravityPower": 0.5,
                 "gravityDir": {"x": 1, "y": -1}, "hitRadius": 0.02},
                {"comment": "hair", "bones": [1], "center": 0, "colliderGroups": [0]},
            ],
        },
    }},
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vrm0_springs.gltf")
with open(out, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
print(out)

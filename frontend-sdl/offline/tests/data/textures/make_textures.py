#!/usr/bin/env python3
"""Writes the texture test models of this directory (see README.md). Needs Python 3 and, for the
WebP files, npm: gltf-transform 4.5.1 is installed into a temporary directory, and its `sharp`
(libwebp) decodes the lossy WebP image for reference. The outputs are committed: CI has no npm.

Every model is one skinned quad (a joint, a two-key animation) facing +Z with a texture:
  quad-png.glb              a 16 x 16 PNG texture of varied colors
  quad-webp.glb             the same, its texture re-encoded as lossless WebP by
                            `gltf-transform webp --lossless true` (EXT_texture_webp, required,
                            no fallback image)
  quad-webp-lossy.glb       the same, lossy WebP (--quality 90)
  quad-webp-lossy.rgba      its WebP image decoded by libwebp (sharp), 16 x 16 RGBA8
  quad-webp-corrupt.glb     quad-webp.glb with its WebP image cut to half its bytes
  quad-both.glb             the WebP image through EXT_texture_webp and, as the texture's
                            `source` fallback, a solid magenta PNG (extension used, not required)
  quad-basisu-used.glb      the PNG as `source` and a KHR_texture_basisu image (a KTX2 header,
                            never decoded); the extension used, not required
  quad-basisu-only.glb      the same without the fallback `source`
  quad-basisu-required.glb  quad-basisu-used.glb with KHR_texture_basisu required
  mix.glb                   a solid (200, 120, 40) sRGB texture, base-color factor
                            (1, 0.8, 0.5), vertex colors (0.5, 1, 0.25): linear light gives the
                            sRGB color (146, 108, 9)
  mix-ref.glb               the same quad with a solid texture of that expected color, factor 1
                            and no vertex colors
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
GLTF_TRANSFORM_VERSION = "4.5.1"

# Decodes a WebP file (argv[1] under `node -e`) to raw RGBA8 (argv[2]) with sharp.
DECODE_JS = """
const sharp = require('sharp');
sharp(process.argv[1]).ensureAlpha().raw().toBuffer().then((data) => require('fs').writeFileSync(process.argv[2], data));
"""


def png(width, height, pixel):
    """An 8-bit RGB PNG whose pixel (x, y) is pixel(x, y)."""
    raw = b"".join(b"\0" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def srgb_linear(c):
    s = c / 255
    return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4


def srgb_code(x):
    s = x * 12.92 if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055
    return round(min(max(s, 0.0), 1.0) * 255)


class Builder:
    """Accumulates a GLB's binary chunk and JSON."""

    def __init__(self):
        self.bin = bytearray()
        self.doc = {"asset": {"version": "2.0", "generator": "sinew make_textures.py"}, "bufferViews": [],
                    "accessors": []}

    def view(self, data):
        while len(self.bin) % 4:
            self.bin.append(0)
        self.doc["bufferViews"].append({"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)})
        self.bin += data
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, fmt, kind, ctype, rows, **extra):
        data = b"".join(struct.pack("<" + fmt, *r) for r in rows)
        a = {"bufferView": self.view(data), "componentType": ctype, "count": len(rows), "type": kind}
        a.update(extra)
        self.doc["accessors"].append(a)
        return len(self.doc["accessors"]) - 1

    def image(self, data, mime):
        self.doc.setdefault("images", []).append({"bufferView": self.view(data), "mimeType": mime})
        return len(self.doc["images"]) - 1

    def glb(self):
        while len(self.bin) % 4:
            self.bin.append(0)
        self.doc["buffers"] = [{"byteLength": len(self.bin)}]
        text = json.dumps(self.doc, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 4)
        body = struct.pack("<I4s", len(text), b"JSON") + text + struct.pack("<I4s", len(self.bin), b"BIN\0") + self.bin
        return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def quad(texture_png, factor=(1.0, 1.0, 1.0, 1.0), vertex_color=None):
    """The skinned textured quad; returns its Builder (texture 0 reads image 0)."""
    b = Builder()
    pos = [(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0)]
    attributes = {
        "POSITION": b.accessor("3f", "VEC3", 5126, pos, min=[-1, -1, 0], max=[1, 1, 0]),
        "NORMAL": b.accessor("3f", "VEC3", 5126, [(0, 0, 1)] * 4),
        "TEXCOORD_0": b.accessor("2f", "VEC2", 5126, [(0, 1), (1, 1), (1, 0), (0, 0)]),
        "JOINTS_0": b.accessor("4B", "VEC4", 5121, [(0, 0, 0, 0)] * 4),
        "WEIGHTS_0": b.accessor("4f", "VEC4", 5126, [(1, 0, 0, 0)] * 4),
    }
    if vertex_color is not None:
        attributes["COLOR_0"] = b.accessor("4f", "VEC4", 5126, [tuple(vertex_color) + (1.0,)] * 4)
    indices = b.accessor("3H", "SCALAR", 5123, [(0, 1, 2), (0, 2, 3)])
    b.doc["accessors"][indices]["count"] = 6
    ibm = b.accessor("16f", "MAT4", 5126, [(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)])
    times = b.accessor("f", "SCALAR", 5126, [(0.0,), (1.0,)], min=[0.0], max=[1.0])
    rotations = b.accessor("4f", "VEC4", 5126, [(0, 0, 0, 1), (0, 0, 0, 1)])
    b.image(texture_png, "image/png")
    b.doc.update({
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [{"name": "root"}, {"name": "quad", "mesh": 0, "skin": 0}],
        "skins": [{"joints": [0], "inverseBindMatrices": ibm}],
        "meshes": [{"primitives": [{"attributes": attributes, "indices": indices, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorFactor": list(factor), "baseColorTexture": {"index": 0},
                                                "metallicFactor": 0.0}}],
        "textures": [{"source": 0}],
        "samplers": [],
        "animations": [{"name": "still", "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
                        "samplers": [{"input": times, "output": rotations}]}],
    })
    del b.doc["samplers"]
    return b


def read_glb(path):
    """(JSON document, BIN bytes) of a GLB file."""
    data = open(path, "rb").read()
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + n])
    rest = data[20 + n:]
    m = struct.unpack_from("<I", rest, 0)[0]
    return doc, bytes(rest[8:8 + m])


def image_bytes(doc, blob, i):
    v = doc["bufferViews"][doc["images"][i]["bufferView"]]
    return blob[v.get("byteOffset", 0):v.get("byteOffset", 0) + v["byteLength"]]


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")


def main():
    varied = png(16, 16, lambda x, y: (x * 16 + 8, y * 16 + 8, (x * y * 7 + 40) % 256))
    write("quad-png.glb", quad(varied).glb())

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "install", "--silent", "--prefix", tmp, f"@gltf-transform/cli@{GLTF_TRANSFORM_VERSION}"],
                       check=True)
        tool = os.path.join(tmp, "node_modules", ".bin", "gltf-transform")
        for name, flags in [("quad-webp.glb", ["--lossless", "true"]), ("quad-webp-lossy.glb", ["--quality", "90"])]:
            out = os.path.join(tmp, name)
            subprocess.run([tool, "webp", os.path.join(HERE, "quad-png.glb"), out] + flags, check=True)
            write(name, open(out, "rb").read())
        doc, blob = read_glb(os.path.join(HERE, "quad-webp-lossy.glb"))
        lossy = os.path.join(tmp, "lossy.webp")
        with open(lossy, "wb") as f:
            f.write(image_bytes(doc, blob, doc["textures"][0]["extensions"]["EXT_texture_webp"]["source"]))
        decoded = os.path.join(tmp, "lossy.rgba")
        env = dict(os.environ, NODE_PATH=os.path.join(tmp, "node_modules"))
        subprocess.run(["node", "-e", DECODE_JS, lossy, decoded], check=True, env=env)
        write("quad-webp-lossy.rgba", open(decoded, "rb").read())

    doc, blob = read_glb(os.path.join(HERE, "quad-webp.glb"))
    webp = image_bytes(doc, blob, doc["textures"][0]["extensions"]["EXT_texture_webp"]["source"])
    assert webp[:4] == b"RIFF" and webp[8:12] == b"WEBP", "gltf-transform did not write a WebP image"

    corrupt = quad(varied)
    corrupt.doc["images"] = []
    corrupt.image(webp[: len(webp) // 2], "image/webp")
    corrupt.doc["textures"] = [{"extensions": {"EXT_texture_webp": {"source": 0}}}]
    corrupt.doc["extensionsUsed"] = corrupt.doc["extensionsRequired"] = ["EXT_texture_webp"]
    write("quad-webp-corrupt.glb", corrupt.glb())

    magenta = png(16, 16, lambda x, y: (255, 0, 255))
    both = quad(magenta)
    w = both.image(webp, "image/webp")
    both.doc["textures"] = [{"source": 0, "extensions": {"EXT_texture_webp": {"source": w}}}]
    both.doc["extensionsUsed"] = ["EXT_texture_webp"]
    write("quad-both.glb", both.glb())

    # A KTX2 file identifier and an empty header: enough to be a KTX2 image that is never read.
    ktx2 = b"\xabKTX 20\xbb\r\n\x1a\n" + bytes(68)
    for name, fallback, required in [("quad-basisu-used.glb", True, False), ("quad-basisu-only.glb", False, False),
                                     ("quad-basisu-required.glb", True, True)]:
        q = quad(varied)
        k = q.image(ktx2, "image/ktx2")
        texture = {"extensions": {"KHR_texture_basisu": {"source": k}}}
        if fallback:
            texture["source"] = 0
        q.doc["textures"] = [texture]
        q.doc["extensionsUsed"] = ["KHR_texture_basisu"]
        if required:
            q.doc["extensionsRequired"] = ["KHR_texture_basisu"]
        write(name, q.glb())

    texel, factor, vertex = (200, 120, 40), (1.0, 0.8, 0.5), (0.5, 1.0, 0.25)
    expect = tuple(srgb_code(srgb_linear(t) * f * v) for t, f, v in zip(texel, factor, vertex))
    assert expect == (146, 108, 9), expect
    write("mix.glb", quad(png(4, 4, lambda x, y: texel), factor + (1.0,), vertex).glb())
    write("mix-ref.glb", quad(png(4, 4, lambda x, y: expect)).glb())


if __name__ == "__main__":
    sys.exit(main())

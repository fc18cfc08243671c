#!/usr/bin/env python3
"""Writes the small inputs that made sinew spend time or memory far out of proportion to their
size (found while fuzzing; see tests/tests/fuzz_regressions.rs). Each is named after what it
stresses. Usage: amplifiers.py OUT_DIR; then time `sinew info` / `sinew bake` on the files."""
import base64, json, math, os, struct, sys, zlib


def sinew_file(bodies, table):
    """A .sinew file from (kind, body index) entries; bodies laid out once each after the table."""
    table_end = 24 + 12 * len(table)
    offsets, at = [], table_end
    for b in bodies:
        offsets.append(at)
        at += len(b)
    d = bytearray(b'SINEW\0\r\n' + struct.pack('<HHIII', 1, 0, at, 0, len(table)))
    for kind, i in table:
        d += struct.pack('<4sII', kind, offsets[i], len(bodies[i]))
    for b in bodies:
        d += b
    struct.pack_into('<I', d, 16, zlib.crc32(bytes(d[20:])) & 0xffffffff)
    return bytes(d)


def skeleton(n, named):
    b = struct.pack('<H', n) + b''.join(struct.pack('<h', i - 1) for i in range(n))
    b += struct.pack('<10f', 0, 0, 0, 0, 0, 0, 1, 1, 1, 1) * n
    for i in range(n):
        name = ('j%031d' % i).encode() if named else b''
        b += bytes([len(name)]) + name
    return b


def skin():
    return bytes([0]) + struct.pack('<HH', 1, 0) + struct.pack('<16f', *[1 if k % 5 == 0 else 0 for k in range(16)])


def mesh(skin_index, vertices):
    b = bytes([0]) + struct.pack('<HH', 0xFFFF if skin_index is None else skin_index, 0xFFFF) + bytes([255] * 4)
    if vertices == 0:
        return b + struct.pack('<H', 0)
    b += struct.pack('<H', 1) + struct.pack('<HIBB', 0, vertices, 0, 0) + bytes(12 * vertices)
    return b + struct.pack('<IB', 0, 2)


def md5_chain(joints, frames):
    m = ['MD5Version 10', 'commandline ""', 'numJoints %d' % joints, 'numMeshes 1', 'joints {']
    m += ['"j%d" %d ( 0 %d 0 ) ( 0 0 0 )' % (i, i - 1, i) for i in range(joints)]
    m += ['}', 'mesh {', 'shader "s"', 'numverts 3'] + ['vert %d ( 0 0 ) %d 1' % (v, v) for v in range(3)]
    m += ['numtris 1', 'tri 0 0 1 2', 'numweights 3', 'weight 0 0 1 ( 0 0 0 )', 'weight 1 0 1 ( 1 0 0 )',
          'weight 2 %d 1 ( 0 1 0 )' % (joints - 1), '}']
    a = ['MD5Version 10', 'commandline ""', 'numFrames %d' % frames, 'numJoints %d' % joints, 'frameRate 24',
         'numAnimatedComponents 0', 'hierarchy {'] + ['"j%d" %d 0 0' % (i, i - 1) for i in range(joints)]
    a += ['}', 'bounds {'] + ['( 0 0 0 ) ( 1 1 1 )'] * frames + ['}', 'baseframe {']
    a += ['( 0 %d 0 ) ( 0 0 0 )' % i for i in range(joints)] + ['}'] + ['frame %d { }' % f for f in range(frames)]
    return '\n'.join(m) + '\n', '\n'.join(a) + '\n'


def sparse_gltf(count):
    buf = struct.pack('<I3f', 0, 1, 2, 3)
    return json.dumps({
        'asset': {'version': '2.0'}, 'scene': 0, 'scenes': [{'nodes': [0]}], 'nodes': [{'mesh': 0}],
        'meshes': [{'primitives': [{'attributes': {'POSITION': 0}}]}],
        'buffers': [{'byteLength': len(buf), 'uri': 'data:application/octet-stream;base64,' + base64.b64encode(buf).decode()}],
        'bufferViews': [{'buffer': 0, 'byteOffset': 0, 'byteLength': 4}, {'buffer': 0, 'byteOffset': 4, 'byteLength': 12}],
        'accessors': [{'componentType': 5126, 'count': count, 'type': 'VEC3', 'min': [0, 0, 0], 'max': [1, 2, 3],
                       'sparse': {'count': 1, 'indices': {'bufferView': 0, 'componentType': 5125},
                                  'values': {'bufferView': 1}}}]})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def write(name, data):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data if isinstance(data, bytes) else data.encode())

    # 80 000 table entries aliasing one 960 KB mesh body: Asset::parse validates it per entry.
    write('aliased-sections.sinew', sinew_file([skeleton(1, True), mesh(None, 80000)],
                                               [(b'SKEL', 0)] + [(b'MESH', 1)] * 80000))
    # 80 000 small meshes whose skin comes after them: each mesh's skin lookup walks the table.
    n = 80000
    write('skin-after-meshes.sinew', sinew_file([skeleton(1, True)] + [mesh(0, 0)] * n + [skin()],
                                                [(b'SKEL', 0)] + [(b'MESH', 1 + i) for i in range(n)] + [(b'SKIN', 1 + n)]))
    # 1024 distinct 32-byte joint names: the duplicate-name check looks every name up from the start.
    write('1024-names.sinew', sinew_file([skeleton(1024, True)], [(b'SKEL', 0)]))
    # A 600-byte glTF whose sparse POSITION accessor declares 89 million vertices.
    write('sparse-89M.gltf', sparse_gltf((1 << 30) // 12))
    # 140 KB of md5 text: a 1000-joint chain held still for 2000 frames (2 M joint-frames).
    mesh_text, anim_text = md5_chain(1000, 2000)
    write('chain1000.md5mesh', mesh_text)
    write('chain1000.md5anim', anim_text)


if __name__ == '__main__':
    main()

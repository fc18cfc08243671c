//! The `.sinew` byte layout, the bottom layer of asset reading: the layout's constants, the
//! key codecs shared by the baker (host) and the runtime, little-endian reading (the crate's
//! `reader`) and writing (`writer`, with the `writer` feature), the file's [`crc32`], and [`ParseError`]. Everything is
//! little-endian with no alignment requirement. The sections are parsed and validated in
//! [`crate::asset`]; clips are decoded in [`crate::clip`]. Other crates also reach this module
//! as `sinew::asset::format`.
//!
//! ```text
//! header (24 bytes)
//!   magic        [u8; 8]  = MAGIC
//!   version      u16      = VERSION
//!   flags        u16      = 0
//!   file_len     u32      total length of the file in bytes
//!   crc32        u32      CRC-32 of bytes [20 .. file_len): everything after this field
//!   section_cnt  u32
//! section table: section_cnt × 12 bytes
//!   kind         [u8; 4]  SKEL | SKIN | MESH | CLIP | TEXR | MRPH | MWGT | GRPH | CREP | SPRG
//!                         (others are skipped)
//!   offset       u32      from the start of the file
//!   length       u32
//! sections: each starts at or after the end of the table and of the section before it in the
//!   table (no overlap), and the sections of one kind are consecutive entries of the table
//! SKEL (at most one; required when any SKIN or CLIP exists)
//!   joint_count  u16
//!   parents      i16 × n          (-1: root; parents come first)
//!   rest         f32 × 10 × n     (translation xyz, rotation xyzw, scale xyz)
//!   names        n × (u8 len, UTF-8 bytes)
//! SKIN
//!   name         u8 len + bytes
//!   joint_count  u16
//!   joints       u16 × n          (skeleton joint of each skin joint)
//!   inverse_bind f32 × 16 × n     (column-major)
//! MESH
//!   name         u8 len + bytes
//!   skin         u16              (NONE: rigid)
//!   node         u16              (NONE, or the joint that instances the mesh: a rigid mesh
//!                                  follows it, a skinned mesh is placed by its skin alone)
//!   color        [u8; 4]          (linear RGBA × 255)
//!   part_count   u16
//!   parts        part_count × {
//!     palette_len u16, palette u16 × len   (skin-joint indices; vertex joints index this)
//!     vertex_count u32, influences u8 (0..=MAX_INFLUENCES), attributes u8 (ATTR_*)
//!     positions f32 × 3 × v, [normals f32 × 3 × v], [tangents f32 × 4 × v]
//!     joints u16 × k × v, weights f32 × k × v
//!     index_count u32, index_size u8 (2 or 4), indices × index_count
//!     [texcoords f32 × 2 × v]          (ATTR_TEXCOORDS; (0, 0) is the texture's top left)
//!     [colors u8 × 4 × v]              (ATTR_COLORS; linear RGBA × 255)
//!     material (MATERIAL_LEN bytes):
//!       factor [u8; 4] (base color, linear RGBA × 255), texture u16 (NONE or a TEXR index),
//!       wrap_s u8, wrap_t u8 (WRAP_*), mag_filter u8, min_filter u8 (FILTER_*),
//!       flags u8 (MATERIAL_*), reserved u8 = 0
//!   }
//!   (skinned vertices have no negative weight and not all weights zero; each triangle uses
//!   three distinct vertices below vertex_count; a textured material needs texcoords, the
//!   vertex-color flag needs colors)
//! TEXR (textures, numbered in table order; referenced by mesh part materials)
//!   name         u8 len + bytes
//!   format       u8               (TEXEL_RGBA8 | TEXEL_RGB565)
//!   flags        u8               = 0
//!   width        u16, height u16  (1 ..= MAX_TEXTURE_DIMENSION)
//!   texels       width × height × (4 | 2) bytes, rows from the top
//! CLIP
//!   name         u8 len + bytes
//!   start, end   f32              (union of the tracks' key times, seconds)
//!   track_count  u16
//!   tracks       track_count × 12 bytes:
//!     joint u16, target u8 (TARGET_*), interpolation u8 (INTERP_*), format u8 (FORMAT_*),
//!     flags u8 (TRACK_FLAG_*), key_count u16, data_offset u32 (from the section start)
//!   track data   (see FORMAT_F32, FORMAT_QUANTIZED and FORMAT_PACKED; the data of consecutive
//!                tracks does not overlap)
//! MRPH (version 2; the morph targets of one mesh: at most one per mesh, in increasing mesh
//!   order, after the mesh sections it names)
//!   mesh         u16              (mesh index)
//!   target_count u16              (1 ..= MAX_MORPH_TARGETS)
//!   weights      f32 × targets    (default weights of the mesh instance)
//!   part_count   u16              (the mesh's)
//!   parts        part_count × {
//!     vertex_count u32            (the mesh part's)
//!     targets      target_count × {
//!       count u32 (vertices the target moves, at most vertex_count), format u8 (MORPH_*),
//!       attributes u8 (ATTR_NORMALS | ATTR_TANGENTS: deltas stored besides positions),
//!       index_size u8 (2 or 4), shifts [u8; 3] (MORPH_QUANTIZED: position, normal, tangent)
//!       vertices index_size × count   (strictly increasing, below vertex_count)
//!       deltas   count × (position xyz [, normal xyz] [, tangent xyz]): f32 (MORPH_F32) or
//!                i16 `q` decoded as `q / 2^shift` of the attribute (MORPH_QUANTIZED)
//!     }
//!   }
//! MWGT (version 2; the morph-weight tracks of one clip: at most one per clip, in increasing
//!   clip order, after the clip and MRPH sections it names)
//!   clip         u16              (clip index)
//!   start, end   f32              (the clip's range, bit for bit)
//!   track_count  u16
//!   tracks       track_count × 12 bytes, as CLIP's with joint = mesh index (the mesh has an
//!                MRPH section; one track per mesh) and target = TARGET_WEIGHTS; flags 0
//!   track data   FORMAT_F32: f32 times then `targets` values per key (× 3 for cubic
//!                splines); FORMAT_QUANTIZED (step and linear): u16 times as CLIP's, `min`
//!                f32, `scale` f32, then u16 × targets per key decoded as
//!                `min + scale · q / 65536`
//! CREP (version 3, optional; the baker's error report of one clip: at most one per clip, in
//!   increasing clip order; the runtime never needs it)
//!   clip         u16              (clip index)
//!   flags        u8               (REPORT_FLAG_*)
//!   reserved     u8               = 0
//!   bound        f32              (the error bound the clip was baked to, meters; > 0)
//!   shell        f32              (the shell distance, meters, ≥ 0; with
//!                                  REPORT_FLAG_SHELL_FROM_MESH the largest joint's)
//!   error        f32              (the baker's largest measured shell error, meters, ≥ 0;
//!                                  0 with REPORT_FLAG_UNMEASURED)
//!   joint        u16              (the joint of that error; NONE only when it is 0)
//!   reserved     u16              = 0
//!   time         f32              (the clip time of that error, seconds, within the clip)
//! GRPH (version 3; animation graphs, the definition of a state machine each, see
//!   `crate::graph`; after the clips they play)
//!   name         u8 len + bytes
//!   initial      u16              (the state playing first)
//!   counts       u16 × 5          parameters (≤ MAX_GRAPH_PARAMETERS), states
//!                                 (≤ MAX_GRAPH_STATES), transitions, points, conditions
//!   parameters   × 8 bytes: kind u8 (PARAM_*), reserved u8 × 3 = 0, default f32
//!                (float: its value; bool: 0 or 1; trigger: 0)
//!   states       × 12 bytes: kind u8 (STATE_*), flags u8 (STATE_FLAG_*), a u16 (the clip,
//!                or the blend parameter: x in 2D), b u16 (y in 2D, else NONE), points
//!                start u16 and count u16 (0 0 for a clip state), reserved u16 = 0
//!   transitions  × 20 bytes: from u16 (NONE: any state), to u16, conditions start u16 and
//!                count u16, blend u8 (BLEND_*), curve u8 (CURVE_*; 0 when inertialized),
//!                flags u8 (TRANSITION_FLAG_*), reserved u8 = 0, exit_time f32 (0 without
//!                the exit-time flag), duration f32
//!   points       × 12 bytes: clip u16, reserved u16 = 0, position x f32, y f32 (0 in 1D)
//!   conditions   × 8 bytes: parameter u16, test u8 (TEST_*), reserved u8 = 0, value f32
//!                (0 for bool and trigger tests)
//!   names        (parameters + states) × (u8 len, UTF-8 bytes): the parameters' then the
//!                states'
//!   layers       (optional: absent, the graph has none) count u16 (1 to MAX_GRAPH_LAYERS),
//!                then per layer (`crate::graph::GraphLayer`, over the base's parameters):
//!     name         u8 len + bytes (unique among the layers)
//!     mode         u8 (LAYER_OVERRIDE, LAYER_ADDITIVE), reference u8 (additive:
//!                  REFERENCE_REST or REFERENCE_BAKED; override: 0)
//!     initial      u16              (the layer's state playing first)
//!     weight       f32              (its initial weight, in [0, 1])
//!     counts       u16 × 5          mask channels, states (≤ MAX_GRAPH_STATES), transitions,
//!                                   points, conditions
//!     mask         × 8 bytes (GRAPH_CHANNEL_LEN): start u16 (a joint), end u16 (NONE: the
//!                  subtree of start, else the joints start..=end), fade_in u16, reserved
//!                  u16 = 0
//!     states, transitions, points, conditions: as the base's, indices the layer's own
//!     names        states × (u8 len, UTF-8 bytes)
//!   (every index in range, kinds matching, positions and times as `Graph::validate` wants:
//!   the section is checked by the same rules; mask joints within the skeleton)
//! SPRG (optional, at most one; spring bones, see `crate::job::spring`; needs the skeleton)
//!   counts       u16 × 4          springs, joints, colliders, table entries
//!   springs      × 4 bytes (SPRING_RECORD_LEN): first u16, len u16: a span of the joint list
//!                that starts and ends on the spring's joints and holds them all (the joints
//!                of the span whose spring is this one; only a spring interleaved with another
//!                in run order holds others); len 0: a spring without joints
//!   joints       × 52 bytes (SPRING_JOINT_LEN), in run order: joint u16 (each skeleton joint
//!                once), child u16 (NONE: a virtual tail; else a joint below `joint`), center
//!                u16 (NONE: world space), spring u16 (its spring; the joint lies in the
//!                spring's span), colliders_start u16, colliders_len u16 (a range of the
//!                table), tail f32 × 3, hit_radius f32 (≥ 0), stiffness f32, gravity_power
//!                f32, gravity_dir f32 × 3, drag_force f32
//!   colliders    × 32 bytes (SPRING_COLLIDER_LEN): joint u16, kind u8 (COLLIDER_*), flags u8
//!                (COLLIDER_FLAG_INSIDE, spheres and capsules only), offset f32 × 3, tail f32
//!                × 3 (capsule; 0 for a sphere) or normal f32 × 3 (plane), radius f32 (≥ 0; 0
//!                for a plane)
//!   table        u16 × entries    collider indices; a joint's colliders are its range of it
//!   names        springs × (u8 len, UTF-8 bytes)
//!   (every float finite; every joint index below the skeleton's joint count)
//! ```

use crate::math::Quat;
use crate::real::Real;

mod crc;
mod error;
mod material;
pub(crate) mod packed;
pub(crate) mod reader;
#[cfg(any(test, feature = "writer"))]
pub mod writer;

pub use crc::crc32;
pub use error::{GraphPart, ParseError, ReportField, SpringPart};
pub use material::*;
pub use packed::PACKED_HEADER_LEN;

/// File magic.
pub const MAGIC: [u8; 8] = *b"SINEW\0\r\n";
/// Format version this build reads and writes.
pub const VERSION: u16 = 3;
/// Header length in bytes.
pub const HEADER_LEN: usize = 24;
/// Offset of the first byte covered by the checksum.
pub const CRC_START: usize = 20;
/// Section table entry length in bytes.
pub const SECTION_ENTRY_LEN: usize = 12;
/// Clip track directory entry length in bytes.
pub const TRACK_ENTRY_LEN: usize = 12;
/// "No index" in u16 fields.
pub const NONE: u16 = 0xFFFF;

/// Section kind: the skeleton.
pub const KIND_SKELETON: [u8; 4] = *b"SKEL";
/// Section kind: a skin.
pub const KIND_SKIN: [u8; 4] = *b"SKIN";
/// Section kind: a mesh.
pub const KIND_MESH: [u8; 4] = *b"MESH";
/// Section kind: a clip.
pub const KIND_CLIP: [u8; 4] = *b"CLIP";

/// Section kind: an animation graph (a state machine's definition).
pub const KIND_GRAPH: [u8; 4] = *b"GRPH";
/// Bytes of a graph parameter record.
pub const GRAPH_PARAMETER_LEN: usize = 8;
/// Bytes of a graph state record.
pub const GRAPH_STATE_LEN: usize = 12;
/// Bytes of a graph transition record.
pub const GRAPH_TRANSITION_LEN: usize = 20;
/// Bytes of a graph blend-point record.
pub const GRAPH_POINT_LEN: usize = 12;
/// Bytes of a graph condition record.
pub const GRAPH_CONDITION_LEN: usize = 8;
/// Bytes of a graph layer's mask channel record.
pub const GRAPH_CHANNEL_LEN: usize = 8;
/// Most layers of a baked graph (besides the base).
pub const MAX_GRAPH_LAYERS: usize = 64;
/// Graph layer mode: override.
pub const LAYER_OVERRIDE: u8 = 0;
/// Graph layer mode: additive.
pub const LAYER_ADDITIVE: u8 = 1;
/// Additive layer reference: the skeleton's rest pose.
pub const REFERENCE_REST: u8 = 0;
/// Additive layer reference: the clips hold deltas.
pub const REFERENCE_BAKED: u8 = 1;
/// Most parameters of a baked graph.
pub const MAX_GRAPH_PARAMETERS: usize = 256;
/// Most states of a baked graph.
pub const MAX_GRAPH_STATES: usize = 256;
/// Graph parameter kind: float.
pub const PARAM_FLOAT: u8 = 0;
/// Graph parameter kind: bool.
pub const PARAM_BOOL: u8 = 1;
/// Graph parameter kind: trigger.
pub const PARAM_TRIGGER: u8 = 2;
/// Graph state kind: one clip.
pub const STATE_CLIP: u8 = 0;
/// Graph state kind: a 1D blend space.
pub const STATE_BLEND1D: u8 = 1;
/// Graph state kind: a 2D blend space.
pub const STATE_BLEND2D: u8 = 2;
/// Graph state flag: its clips loop.
pub const STATE_FLAG_LOOP: u8 = 1;
/// Graph state flag: a blend space keeps its clips in phase.
pub const STATE_FLAG_SYNC: u8 = 2;
/// Graph transition blend: crossfade.
pub const BLEND_CROSSFADE: u8 = 0;
/// Graph transition blend: inertialization.
pub const BLEND_INERTIALIZE: u8 = 1;
/// Crossfade curve: linear.
pub const CURVE_LINEAR: u8 = 0;
/// Crossfade curve: smoothstep.
pub const CURVE_SMOOTHSTEP: u8 = 1;
/// Graph transition flag: a synced crossfade.
pub const TRANSITION_FLAG_SYNC: u8 = 1;
/// Graph transition flag: the exit time applies.
pub const TRANSITION_FLAG_EXIT_TIME: u8 = 2;
/// Graph condition test: float `>` value.
pub const TEST_GREATER: u8 = 0;
/// Graph condition test: float `<` value.
pub const TEST_LESS: u8 = 1;
/// Graph condition test: float `≥` value.
pub const TEST_AT_LEAST: u8 = 2;
/// Graph condition test: float `≤` value.
pub const TEST_AT_MOST: u8 = 3;
/// Graph condition test: bool true.
pub const TEST_TRUE: u8 = 4;
/// Graph condition test: bool false.
pub const TEST_FALSE: u8 = 5;
/// Graph condition test: trigger set.
pub const TEST_TRIGGERED: u8 = 6;

/// Section kind: the baker's error report of one clip (optional).
pub const KIND_CLIP_REPORT: [u8; 4] = *b"CREP";
/// Bytes of a clip-report section.
pub const CLIP_REPORT_LEN: usize = 24;
/// Clip-report flag: each joint's shell distance came from the mesh — its farthest mesh
/// vertex, or its subtree's reach for a joint that moves none itself (the `shell` field holds
/// the largest) — not one distance for all.
pub const REPORT_FLAG_SHELL_FROM_MESH: u8 = 1;
/// Clip-report flag: the clip was stored lossless without a measurement (the baker's work
/// budget ran out); the error is 0 and names no joint.
pub const REPORT_FLAG_UNMEASURED: u8 = 2;

/// Section kind: a character's spring bones (optional, at most one per file).
pub const KIND_SPRINGS: [u8; 4] = *b"SPRG";
/// Bytes of the spring-bone section's header: the counts of springs, joints, colliders and
/// table entries, `u16` each.
pub const SPRINGS_HEADER_LEN: usize = 8;
/// Bytes of a spring record (`first`, `len`: its span of the joint list).
pub const SPRING_RECORD_LEN: usize = 4;
/// Bytes of a spring joint record.
pub const SPRING_JOINT_LEN: usize = 52;
/// Bytes of a collider record.
pub const SPRING_COLLIDER_LEN: usize = 32;
/// Collider kind: a sphere.
pub const COLLIDER_SPHERE: u8 = 0;
/// Collider kind: a capsule.
pub const COLLIDER_CAPSULE: u8 = 1;
/// Collider kind: a plane.
pub const COLLIDER_PLANE: u8 = 2;
/// Collider flag (spheres and capsules): the tails are kept inside the shape.
pub const COLLIDER_FLAG_INSIDE: u8 = 1;

/// Section kind: the morph targets of one mesh.
pub const KIND_MORPH: [u8; 4] = *b"MRPH";
/// Section kind: the morph-weight tracks of one clip.
pub const KIND_WEIGHTS: [u8; 4] = *b"MWGT";
/// Bytes of a morph target's header in an MRPH section (count, format, attributes, index size,
/// shifts).
pub const MORPH_TARGET_HEADER_LEN: usize = 10;
/// Morph delta format: `f32` components. Lossless.
pub const MORPH_F32: u8 = 0;
/// Morph delta format: `i16` components `q`, decoded as `q / 2^shift` with one shift per
/// attribute (at most [`MAX_MORPH_SHIFT`]): integer-only for `Q16`.
pub const MORPH_QUANTIZED: u8 = 1;
/// Largest shift of [`MORPH_QUANTIZED`] deltas (a step of 2⁻³¹).
pub const MAX_MORPH_SHIFT: u8 = 31;

/// Mesh part attribute bit: normals present.
pub const ATTR_NORMALS: u8 = 1;
/// Mesh part attribute bit: tangents present.
pub const ATTR_TANGENTS: u8 = 2;

/// Track target: translation.
pub const TARGET_TRANSLATION: u8 = 0;
/// Track target: rotation.
pub const TARGET_ROTATION: u8 = 1;
/// Track target: scale.
pub const TARGET_SCALE: u8 = 2;

/// Track target (MWGT sections only): the morph weights of a mesh.
pub const TARGET_WEIGHTS: u8 = 3;

/// Interpolation: step.
pub const INTERP_STEP: u8 = 0;
/// Interpolation: linear (rotations on the shortest arc).
pub const INTERP_LINEAR: u8 = 1;
/// Interpolation: glTF cubic Hermite spline.
pub const INTERP_CUBIC: u8 = 2;

/// Track flag: interpolate this LINEAR rotation track with exact slerp even when the sampler
/// asks for corrected nlerp (the baker sets it where nlerp's deviation would exceed its bound).
pub const TRACK_FLAG_SLERP: u8 = 1;

/// Key format: `f32` times (strictly increasing) then `f32` values, `components` per key
/// (`3 × components` for cubic splines: in-tangent, value, out-tangent). Lossless.
pub const FORMAT_F32: u8 = 0;
/// Key format (step and linear only): `u16` times, `t = start + (end − start) · q / 65535`
/// (strictly increasing), then for translation and scale `min` (f32 × 3) and `scale`
/// (f32 × 3) followed by `u16 × 3` per key decoded as `min + scale · q / 65536`; for rotations
/// 6 bytes per key ([`pack_rotation`]).
pub const FORMAT_QUANTIZED: u8 = 1;

/// Key format (step and linear only, clip tracks): bit-packed records, each a key's frame on
/// the track's time grid (or none: key `k` is frame `k`) and its three stored components at
/// per-track widths in per-track ranges; rotations drop `w` (`w ≥ 0`), optionally relative to
/// a per-track reference rotation. Layout in the `packed` module's documentation:
/// `frames u16, time_bits u8, flags u8, bits [u8; 3], [reference f32 × 4],
/// [sub_bits u8, sub_shift u8], 3 × {min f32, [range f32]}, records`.
pub const FORMAT_PACKED: u8 = 2;
/// Packed track flag: the keys are relative to a reference rotation stored in the header.
pub const PACKED_FLAG_REFERENCE: u8 = 1;
/// Packed track flag: each record's frame is followed by a sub-frame offset (widths in the
/// header), for keys whose times are off the frame grid.
pub const PACKED_FLAG_SUBFRAME: u8 = 2;
/// Packed track flag (rotations only): each record's components are followed by the 2-bit
/// index (x, y, z, w) of the component left out, the largest in magnitude, rebuilt as
/// `√(1 − a² − b² − c²)`; the three stored are the others in xyzw order. Tracks whose
/// rotations turn through half a revolution or more keep a precision that dropping `w` loses.
pub const PACKED_FLAG_LARGEST: u8 = 4;
/// Widest packed sub-frame offset, in bits.
pub const MAX_PACKED_SUB_BITS: u8 = 16;
/// Most sub-frames per frame of a packed track, as a power of two.
pub const MAX_PACKED_SUB_SHIFT: u8 = 16;
/// Widest packed component, in bits.
pub const MAX_PACKED_BITS: u8 = 24;
/// Widest packed frame index, in bits.
pub const MAX_PACKED_TIME_BITS: u8 = 16;

/// True when this build decodes clip keys in `format` (the `clip-f32`, `clip-quantized` and
/// `clip-packed` features); the parser refuses tracks in other formats.
#[inline(always)]
pub const fn key_format_enabled(format: u8) -> bool {
    (format == FORMAT_F32 && cfg!(feature = "clip-f32"))
        || (format == FORMAT_QUANTIZED && cfg!(feature = "clip-quantized"))
        || (format == FORMAT_PACKED && cfg!(feature = "clip-packed"))
}

/// Bytes per packed rotation.
pub const ROTATION_BYTES: usize = 6;

/// Components of a track's values: 4 for rotations (xyzw), 3 otherwise.
#[inline(always)]
pub(crate) fn track_components(target: u8) -> usize {
    if target == TARGET_ROTATION {
        4
    } else {
        3
    }
}

/// Bytes of key data of a track (`None` on overflow).
pub(crate) fn track_data_len(target: u8, interp: u8, format: u8, keys: usize) -> Option<usize> {
    let c = track_components(target);
    if format == FORMAT_F32 {
        let per_key = if interp == INTERP_CUBIC { 3 * c } else { c };
        keys.checked_mul(4 + 4 * per_key)
    } else if target == TARGET_ROTATION {
        keys.checked_mul(2 + ROTATION_BYTES)
    } else {
        keys.checked_mul(2 + 6)?.checked_add(24)
    }
}

/// 1/√2 as a ratio of integers (for generic code).
#[inline(always)]
fn frac_1_sqrt_2<R: Real>() -> R {
    R::ratio(70_710_678, 100_000_000)
}

/// Packs a unit quaternion as smallest-three: the three smaller components in 15 bits each
/// (range ±1/√2, step 4.3e-5), the index of the largest in 2 bits and its sign in 1 bit.
/// Bits 0–14, 15–29, 30–44: components; 45–46: index; 47: sign of the largest.
#[must_use]
pub fn pack_rotation(q: [f32; 4]) -> [u8; 6] {
    let mut largest = 0;
    for i in 1..4 {
        if q[i].abs() > q[largest].abs() {
            largest = i;
        }
    }
    let sign = (q[largest] < 0.0) as u64;
    let mut bits = 0u64;
    let mut k = 0;
    for (i, &c) in q.iter().enumerate() {
        if i == largest {
            continue;
        }
        // q = round(c · √2 · 16384) + 16384, clamped to 15 bits.
        let v = c * core::f32::consts::SQRT_2 * 16384.0;
        let r = if v >= 0.0 { (v + 0.5) as i32 } else { -((-v + 0.5) as i32) };
        let u = (r + 16384).clamp(0, 32767) as u64;
        bits |= u << (15 * k);
        k += 1;
    }
    bits |= (largest as u64) << 45;
    bits |= sign << 47;
    let b = bits.to_le_bytes();
    [b[0], b[1], b[2], b[3], b[4], b[5]]
}

/// Unpacks a rotation written by [`pack_rotation`]; integer-only for `Q16`.
#[inline]
#[must_use]
pub fn unpack_rotation<R: Real>(b: [u8; 6]) -> Quat<R> {
    unpack_rotation_raw(b).normalize()
}

/// Unpacks a rotation without the final normalization: its norm is within about 1e-5 of 1
/// (the quantization step), for callers that normalize after interpolating.
#[inline]
#[must_use]
pub fn unpack_rotation_raw<R: Real>(b: [u8; 6]) -> Quat<R> {
    let bits = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], 0, 0]);
    let largest = ((bits >> 45) & 3) as usize;
    let negative = (bits >> 47) & 1 != 0;
    let k = frac_1_sqrt_2::<R>();
    let c = |i: u32| R::from_fixed_bits(((bits >> (15 * i)) & 0x7fff) as i32 - 16384, 14) * k;
    let (a, bb, cc) = (c(0), c(1), c(2));
    let w2 = (R::ONE - a * a - bb * bb - cc * cc).max(R::ZERO);
    // √x as x · (1/√x): the extra refinement of `Real::sqrt` is below the quantization step.
    let w = if w2 > R::ZERO { w2 * w2.inv_sqrt() } else { R::ZERO };
    let w = if negative { -w } else { w };
    match largest {
        0 => Quat::new(w, a, bb, cc),
        1 => Quat::new(a, w, bb, cc),
        2 => Quat::new(a, bb, w, cc),
        _ => Quat::new(a, bb, cc, w),
    }
}

/// Quantizes a key time into the clip's `[start, end]` range as `u16` (see
/// [`FORMAT_QUANTIZED`]).
#[must_use]
pub fn quantize_time(t: f32, start: f32, end: f32) -> u16 {
    if end <= start {
        return 0;
    }
    let f = ((t - start) / (end - start)).clamp(0.0, 1.0);
    (f * 65535.0 + 0.5) as u16
}

/// The time a quantized key stands for.
#[must_use]
pub fn dequantize_time(q: u16, start: f32, end: f32) -> f32 {
    start + (end - start) * (q as f32 / 65535.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Vec3;
    use crate::real::Q16;

    #[test]
    fn rotation_roundtrip_error() {
        let mut worst = 0.0f32;
        let mut worst_q = 0.0f32;
        for i in (0..2000).step_by(if cfg!(miri) { 40 } else { 1 }) {
            let axis = Vec3::new((i as f32 * 0.37).sin(), (i as f32 * 0.11).cos(), (i as f32 * 0.73).sin())
                .try_normalize()
                .unwrap_or(Vec3::X);
            let q = Quat::from_axis_angle(axis, i as f32 * 0.0093 - 9.0);
            for s in [q, -q] {
                let p = pack_rotation(s.to_array());
                let u: Quat<f32> = unpack_rotation(p);
                // Sign of the largest component is kept, so the hemisphere is preserved.
                assert!(u.dot(s) > 0.0);
                worst = worst.max(u.angle_between(s));
                let uq: Quat<Q16> = unpack_rotation(p);
                let uq = Quat::new(uq.x.to_f32(), uq.y.to_f32(), uq.z.to_f32(), uq.w.to_f32());
                worst_q = worst_q.max(uq.angle_between(s));
            }
        }
        assert!(worst < 1.3e-4, "f32 smallest-three error {worst:e} rad");
        assert!(worst_q < 4.0e-4, "Q16 smallest-three error {worst_q:e} rad");
    }

    #[test]
    fn time_quantization() {
        assert_eq!(quantize_time(0.5, 0.5, 2.0), 0);
        assert_eq!(quantize_time(2.0, 0.5, 2.0), 65535);
        assert_eq!(dequantize_time(65535, 0.5, 2.0), 2.0);
        assert_eq!(quantize_time(1.0, 1.0, 1.0), 0);
        let t = dequantize_time(quantize_time(1.234, 0.0, 8.6), 0.0, 8.6);
        assert!((t - 1.234).abs() < 8.6 / 65535.0);
    }
}

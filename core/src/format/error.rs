//! [`ParseError`]: why bytes are not a valid `.sinew` file, for every section kind.

use core::fmt;

use super::VERSION;
use crate::limits::MAX_MORPH_TARGETS;
use crate::skeleton::SkeletonError;

/// Why [`Asset::parse`](crate::asset::Asset::parse) rejected a file. `section` fields index
/// the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The data ends before a structure it declares.
    Truncated,
    /// The file does not start with the `.sinew` magic bytes.
    BadMagic,
    /// The format version is not one this build reads.
    UnsupportedVersion {
        /// Version found in the header.
        found: u16,
    },
    /// The header's file length differs from the data length.
    LengthMismatch {
        /// Length declared in the header.
        declared: u32,
    },
    /// The CRC-32 of the contents differs from the stored one (corrupt data).
    ChecksumMismatch {
        /// Stored checksum.
        stored: u32,
        /// Checksum of the data.
        computed: u32,
    },
    /// A section lies outside the file, starts before the end of the table or of the section
    /// before it, comes apart from the other sections of its kind, or its contents do not fill
    /// it exactly.
    BadSection {
        /// Section index.
        section: u16,
    },
    /// A count or length inside a section (joints, parts, vertices, indices, tracks, a name)
    /// declares more data than the section holds.
    SectionOverrun {
        /// Section index.
        section: u16,
    },
    /// More than one skeleton section.
    DuplicateSkeleton,
    /// Skins, clips or spring bones exist but no skeleton does.
    MissingSkeleton,
    /// More than one spring-bone section.
    DuplicateSprings,
    /// The skeleton is invalid.
    Skeleton(SkeletonError),
    /// A float is NaN or infinite.
    NonFinite {
        /// Section index.
        section: u16,
    },
    /// A name is not UTF-8 or longer than [`MAX_NAME_LEN`](crate::limits::MAX_NAME_LEN).
    BadName {
        /// Section index.
        section: u16,
    },
    /// A joint index is not below the skeleton's joint count.
    JointOutOfRange {
        /// Section index.
        section: u16,
    },
    /// A mesh names a skin that does not exist.
    SkinOutOfRange {
        /// Section index.
        section: u16,
    },
    /// A mesh palette entry is not below its skin's joint count, or a vertex joint is not below
    /// the palette length.
    PaletteOutOfRange {
        /// Section index.
        section: u16,
    },
    /// A mesh part declares 0 influences with a skin, influences without one, or more than
    /// [`MAX_INFLUENCES`](crate::limits::MAX_INFLUENCES).
    BadInfluences {
        /// Section index.
        section: u16,
    },
    /// A mesh part's index count is not a multiple of 3, or its index size is not 2 or 4.
    BadIndices {
        /// Section index.
        section: u16,
    },
    /// A triangle of a mesh part uses a vertex index that is not below the part's vertex count.
    IndexOutOfRange {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Triangle index within the part.
        triangle: u32,
        /// The vertex index found.
        vertex: u32,
    },
    /// A triangle of a mesh part uses one vertex twice (the baker drops such triangles).
    DegenerateTriangle {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Triangle index within the part.
        triangle: u32,
    },
    /// A skinned vertex has a negative weight.
    NegativeWeight {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Vertex index within the part.
        vertex: u32,
    },
    /// A skinned vertex has no weight: all of its weights are zero.
    ZeroWeights {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Vertex index within the part.
        vertex: u32,
    },
    /// An inverse bind matrix holds a NaN or infinite value.
    NonFiniteBind {
        /// Section index.
        section: u16,
        /// Skin joint whose matrix it is.
        joint: u16,
    },
    /// A clip track has an unknown target, interpolation or format, no keys, or a quantized
    /// cubic spline.
    BadTrack {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
    },
    /// A clip track stores its keys in a format this build does not decode: the crate was built
    /// without that format's feature (`clip-f32`, `clip-quantized`, `clip-packed`).
    KeyFormatDisabled {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
        /// The track's key format ([`FORMAT_F32`](super::FORMAT_F32),
        /// [`FORMAT_QUANTIZED`](super::FORMAT_QUANTIZED) or [`FORMAT_PACKED`](super::FORMAT_PACKED)).
        format: u8,
    },
    /// Two tracks of a clip animate the same joint property.
    DuplicateTrack {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
    },
    /// Key times are not strictly increasing, or lie outside the clip's range.
    UnsortedKeys {
        /// Section index.
        section: u16,
        /// Track index within the clip.
        track: u16,
    },
    /// The clip's start is after its end.
    BadTimeRange {
        /// Section index.
        section: u16,
    },
    /// A morph-target section names no mesh, comes out of mesh order (or twice for one mesh),
    /// or its part count or a part's vertex count differs from its mesh's.
    MorphMeshMismatch {
        /// Section index.
        section: u16,
    },
    /// A morph-target section's target count is 0 or above
    /// [`MAX_MORPH_TARGETS`](crate::limits::MAX_MORPH_TARGETS).
    BadMorphCount {
        /// Section index.
        section: u16,
    },
    /// A morph target has an unknown format, attribute bits, index size or shift, or moves more
    /// vertices than its part has.
    BadMorphTarget {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Target index.
        target: u16,
    },
    /// A morph target's vertex indices are not strictly increasing or not below its part's
    /// vertex count.
    MorphVertexIndex {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// Target index.
        target: u16,
    },
    /// A morph-weight section names no clip, comes out of clip order (or twice for one clip),
    /// or its time range differs from its clip's.
    WeightClipMismatch {
        /// Section index.
        section: u16,
    },
    /// A morph-weight track names a mesh without morph targets.
    WeightTrackMesh {
        /// Section index.
        section: u16,
        /// Track index within the section.
        track: u16,
    },
    /// A texture section has an unknown texel format, non-zero flags, a width or height of 0
    /// or above [`MAX_TEXTURE_DIMENSION`](crate::raster::MAX_TEXTURE_DIMENSION), or texel data
    /// that is not `width × height` texels long.
    BadTexture {
        /// Section index.
        section: u16,
    },
    /// A graph section has an unknown code, a reserved byte that is not 0, more parameters or
    /// states than its limits, or a record that breaks the graph's rules (an index out of
    /// range, a condition on a parameter of another kind, a repeated name, positions out of
    /// order, a negative duration…).
    BadGraph {
        /// Section index.
        section: u16,
        /// What is wrong.
        part: GraphPart,
        /// Its index in its list (0 for the graph as a whole).
        index: u16,
    },
    /// A layer of a graph section has an unknown mode or reference code, a weight outside
    /// `[0, 1]`, a repeated name, a mask channel past the skeleton or a nonzero reserved
    /// field, or a record that breaks the graph's rules (as [`ParseError::BadGraph`], indices
    /// the layer's own).
    BadGraphLayer {
        /// Section index.
        section: u16,
        /// The layer (1…; the base graph is layer 0).
        layer: u16,
        /// What is wrong ([`GraphPart::Header`]: the layer's mode, weight, name or initial
        /// state).
        part: GraphPart,
        /// Its index in the layer's list (0 for the layer as a whole).
        index: u16,
    },
    /// A clip-report section (the baker's error bound and measured error of one clip) names no
    /// clip or comes out of clip order, has an unknown flag or a nonzero reserved field, or a
    /// value that is not finite, is negative, names a joint past the skeleton or a time outside
    /// the clip.
    BadClipReport {
        /// Section index.
        section: u16,
        /// The field that is wrong.
        field: ReportField,
    },
    /// The spring-bone section holds a record that is out of range or not finite (see
    /// [`SpringPart`] for each rule).
    BadSprings {
        /// Section index.
        section: u16,
        /// The record and rule that fail.
        part: SpringPart,
        /// The record's index in its list.
        index: u16,
    },
    /// A mesh part's material has an unknown wrap mode, filter or flag, a texture without
    /// texture coordinates, or the vertex-color flag without vertex colors.
    BadMaterial {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
    },
    /// A mesh part's material names a texture past the file's texture sections.
    TextureOutOfRange {
        /// Section index.
        section: u16,
        /// Part index within the mesh.
        part: u16,
        /// The texture index found.
        texture: u16,
    },
}

/// The part of a graph section that [`ParseError::BadGraph`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphPart {
    /// The header: counts over their limits, or no initial state.
    Header,
    /// A parameter (its kind, default or name).
    Parameter,
    /// A state (its kind, flags, clip, parameters, points or name).
    State,
    /// A transition (its states, conditions, blend or times).
    Transition,
    /// A condition (its test, parameter or value).
    Condition,
    /// A layer's mask channel (its joints or reserved field).
    Mask,
}

/// The record of a spring-bone section that [`ParseError::BadSprings`] names, and what is wrong
/// with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpringPart {
    /// A spring's span passes the end of the joint list, or does not start and end on joints
    /// of that spring.
    Spring,
    /// A spring's name is not UTF-8.
    Name,
    /// A spring joint's `joint` is past the skeleton, or swings in an earlier spring joint too.
    Joint,
    /// A spring joint's `child` is past the skeleton, is its `joint`, or is not below it.
    Child,
    /// A spring joint's `center` is past the skeleton.
    Center,
    /// A spring joint's `spring` is past the springs, or the joint lies outside that spring's
    /// span.
    JointSpring,
    /// A spring joint's collider range passes the end of the table.
    JointColliders,
    /// A spring joint's tail or a setting is NaN or infinite, or its `hit_radius` is negative.
    Setting,
    /// A collider's joint is past the skeleton.
    ColliderJoint,
    /// A collider's kind is unknown, or its flags hold an unknown bit or mark a plane inside.
    ColliderKind,
    /// A collider's offset, tail, normal or radius is NaN or infinite, its radius is negative,
    /// or a field its kind does not use (a sphere's tail, a plane's radius) is not 0.
    ColliderShape,
    /// An entry of the joint→collider table is not an index of the colliders.
    Table,
    /// The spring joints' collider counts up to this one add up to more than
    /// [`MAX_SPRING_TESTS`](crate::limits::MAX_SPRING_TESTS) tests per step.
    Tests,
}

/// The field of a clip-report section that [`ParseError::BadClipReport`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportField {
    /// The clip index: no such clip, or not after the previous report's.
    Clip,
    /// The flags (an unknown bit) or a reserved field (not 0).
    Flags,
    /// The error bound: not finite or not above 0.
    Bound,
    /// The shell distance: not finite or negative.
    Shell,
    /// The measured error: not finite, negative, or not 0 for an unmeasured clip.
    Error,
    /// The joint of the error: past the skeleton, or none for a nonzero error.
    Joint,
    /// The time of the error: not finite or outside the clip's range.
    Time,
}

impl fmt::Display for ReportField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Clip => "clip index",
            Self::Flags => "flags or reserved field",
            Self::Bound => "error bound",
            Self::Shell => "shell distance",
            Self::Error => "measured error",
            Self::Joint => "joint",
            Self::Time => "time",
        })
    }
}

impl fmt::Display for SpringPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Spring => "spring (its joint span)",
            Self::Name => "spring (its name)",
            Self::Joint => "spring joint (its joint)",
            Self::Child => "spring joint (its child)",
            Self::Center => "spring joint (its center)",
            Self::JointSpring => "spring joint (its spring)",
            Self::JointColliders => "spring joint (its collider range)",
            Self::Setting => "spring joint (its tail or settings)",
            Self::ColliderJoint => "collider (its joint)",
            Self::ColliderKind => "collider (its kind or flags)",
            Self::ColliderShape => "collider (its shape)",
            Self::Table => "joint collider table entry",
            Self::Tests => "spring joint (collider tests per step past the limit)",
        })
    }
}

impl fmt::Display for GraphPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Header => "header",
            Self::Parameter => "parameter",
            Self::State => "state",
            Self::Transition => "transition",
            Self::Condition => "condition",
            Self::Mask => "mask channel",
        })
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Truncated => f.write_str("data ends early (truncated file)"),
            Self::BadMagic => f.write_str("not a .sinew file (bad magic bytes)"),
            Self::UnsupportedVersion { found } => {
                write!(f, "format version {found} is not supported (expected {VERSION})")
            }
            Self::LengthMismatch { declared } => {
                write!(f, "header declares {declared} bytes but the data length differs")
            }
            Self::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): corrupt data")
            }
            Self::BadSection { section } => {
                write!(f, "section {section} lies outside the file, overlaps another, is out of order or has the wrong length")
            }
            Self::SectionOverrun { section } => {
                write!(f, "section {section} declares more data than it holds (a count runs past its end)")
            }
            Self::DuplicateSkeleton => f.write_str("more than one skeleton section"),
            Self::MissingSkeleton => f.write_str("skins, clips or spring bones without a skeleton section"),
            Self::DuplicateSprings => f.write_str("more than one spring-bone section"),
            Self::BadSprings { section, part, index } => {
                write!(f, "spring-bone section {section}: {part} {index} is invalid")
            }
            Self::Skeleton(e) => write!(f, "invalid skeleton: {e}"),
            Self::NonFinite { section } => write!(f, "section {section} holds a NaN or infinite value"),
            Self::BadName { section } => write!(f, "section {section} holds a name that is not UTF-8 or too long"),
            Self::JointOutOfRange { section } => write!(f, "section {section} refers to a joint past the skeleton"),
            Self::SkinOutOfRange { section } => write!(f, "mesh section {section} refers to a missing skin"),
            Self::PaletteOutOfRange { section } => {
                write!(f, "mesh section {section} has a joint index past its palette")
            }
            Self::BadInfluences { section } => write!(f, "mesh section {section} has an invalid influence count"),
            Self::BadIndices { section } => {
                write!(f, "mesh section {section} has an index count that is not a multiple of 3 or a bad index size")
            }
            Self::IndexOutOfRange { section, part, triangle, vertex } => {
                write!(f, "mesh section {section}, part {part}: triangle {triangle}: vertex {vertex} is out of range")
            }
            Self::DegenerateTriangle { section, part, triangle } => {
                write!(f, "mesh section {section}, part {part}: triangle {triangle} uses a vertex twice")
            }
            Self::NegativeWeight { section, part, vertex } => {
                write!(f, "mesh section {section}, part {part}: vertex {vertex} has a negative weight")
            }
            Self::ZeroWeights { section, part, vertex } => {
                write!(f, "mesh section {section}, part {part}: vertex {vertex} has weights summing to 0")
            }
            Self::NonFiniteBind { section, joint } => {
                write!(f, "skin section {section}: the inverse bind matrix of skin joint {joint} is not finite")
            }
            Self::BadTrack { section, track } => {
                write!(f, "clip section {section}, track {track}: invalid track header")
            }
            Self::KeyFormatDisabled { section, track, format } => {
                let (name, feature) = match format {
                    super::FORMAT_F32 => ("f32", "clip-f32"),
                    super::FORMAT_QUANTIZED => ("quantized", "clip-quantized"),
                    _ => ("packed", "clip-packed"),
                };
                write!(
                    f,
                    "clip section {section}, track {track}: {name} keys, a format this build does not decode \
                     (sinew feature `{feature}`)"
                )
            }
            Self::DuplicateTrack { section, track } => {
                write!(f, "clip section {section}, track {track}: a second track for the same joint property")
            }
            Self::UnsortedKeys { section, track } => {
                write!(f, "clip section {section}, track {track}: key times not strictly increasing within the clip")
            }
            Self::BadTimeRange { section } => write!(f, "clip section {section}: start is after end"),
            Self::BadGraph { section, part, index } => {
                write!(f, "graph section {section}: {part} {index} is invalid")
            }
            Self::BadGraphLayer { section, layer, part, index } => {
                write!(f, "graph section {section}, layer {layer}: {part} {index} is invalid")
            }
            Self::BadTexture { section } => {
                write!(f, "texture section {section}: bad texel format, flags, dimensions or texel data length")
            }
            Self::BadMaterial { section, part } => {
                write!(
                    f,
                    "mesh section {section}, part {part}: invalid material (codes, or attributes it needs are missing)"
                )
            }
            Self::TextureOutOfRange { section, part, texture } => {
                write!(f, "mesh section {section}, part {part}: material texture {texture} does not exist")
            }
            Self::MorphMeshMismatch { section } => write!(
                f,
                "morph section {section} names no mesh, is out of mesh order, or its parts differ from its mesh's"
            ),
            Self::BadMorphCount { section } => {
                write!(f, "morph section {section}: the target count is 0 or above {MAX_MORPH_TARGETS}")
            }
            Self::BadMorphTarget { section, part, target } => write!(
                f,
                "morph section {section}, part {part}, target {target}: unknown format, attributes, index size or \
                 shift, or more vertices than the part"
            ),
            Self::MorphVertexIndex { section, part, target } => write!(
                f,
                "morph section {section}, part {part}, target {target}: vertex indices not increasing or out of range"
            ),
            Self::WeightClipMismatch { section } => write!(
                f,
                "morph-weight section {section} names no clip, is out of clip order, or its range differs from the clip's"
            ),
            Self::BadClipReport { section, field } => {
                write!(f, "clip-report section {section}: invalid {field}")
            }
            Self::WeightTrackMesh { section, track } => {
                write!(f, "morph-weight section {section}, track {track}: the mesh has no morph targets")
            }
        }
    }
}

impl core::error::Error for ParseError {}

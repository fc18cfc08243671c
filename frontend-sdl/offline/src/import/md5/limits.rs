//! What this importer accepts: the one `MD5Version` it reads, and caps on what a file may declare
//! (so that hostile counts cannot make it allocate without bound).

/// Most joints an md5 file may declare (rig joint indices are `u16`).
pub const MAX_JOINTS: usize = 1 << 16;

/// Most weights one vertex may reference (`countWeight`); bounds the influence arrays.
pub const MAX_WEIGHTS_PER_VERTEX: usize = 32;

/// Most `numJoints × numFrames` an anim may declare; bounds the keys of the clip it becomes.
pub const MAX_JOINT_FRAMES: usize = 1 << 21;

/// The only `MD5Version` understood.
pub(super) const MD5_VERSION: i64 = 10;

/// Entries reserved up front at most, whatever count a file declares.
pub(super) const PREALLOC_CAP: usize = 4096;

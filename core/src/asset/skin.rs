//! The skin section: the skeleton joint and inverse bind matrix of each skin joint.

use crate::format::reader::{is_finite_bits, le_f32, le_u16, le_u32, Reader};
use crate::format::ParseError;
use crate::math::Mat4;
use crate::real::Real;

/// A skin section: skin joints and inverse bind matrices.
#[derive(Debug, Clone, Copy)]
pub struct SkinData<'a> {
    name: &'a str,
    joints: &'a [u8],
    inverse_bind: &'a [u8],
}

impl<'a> SkinData<'a> {
    pub(super) fn parse(body: &'a [u8], sec: u16, skeleton_joints: usize) -> Result<SkinData<'a>, ParseError> {
        let mut r = Reader::for_section(body, sec);
        let name = r.str().map_err(|_| ParseError::BadName { section: sec })?;
        let n = r.u16()? as usize;
        let joints = r.bytes(n * 2)?;
        for i in 0..n {
            if le_u16(joints, i * 2) as usize >= skeleton_joints {
                return Err(ParseError::JointOutOfRange { section: sec });
            }
        }
        let ib = r.bytes(n * 64)?;
        for i in 0..n * 16 {
            if !is_finite_bits(le_u32(ib, i * 4)) {
                return Err(ParseError::NonFiniteBind { section: sec, joint: (i / 16) as u16 });
            }
        }
        if r.pos() != body.len() {
            return Err(ParseError::BadSection { section: sec });
        }
        Ok(SkinData { name, joints, inverse_bind: ib })
    }
    pub(super) fn view(body: &'a [u8]) -> Option<Self> {
        let mut r = Reader::new(body);
        let name = r.str().ok()?;
        let n = r.u16().ok()? as usize;
        let joints = r.bytes(n * 2).ok()?;
        let inverse_bind = r.bytes(n * 64).ok()?;
        Some(SkinData { name, joints, inverse_bind })
    }
    /// Skin name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Number of skin joints.
    #[must_use]
    pub fn num_joints(&self) -> usize {
        self.joints.len() / 2
    }
    /// Skeleton joint of skin joint `i`.
    #[must_use]
    pub fn joint(&self, i: usize) -> u16 {
        le_u16(self.joints, i * 2)
    }
    /// Inverse bind matrix of skin joint `i`.
    #[must_use]
    pub fn inverse_bind<R: Real>(&self, i: usize) -> Mat4<R> {
        let a: [R; 16] = core::array::from_fn(|k| R::from_f32(le_f32(self.inverse_bind, i * 64 + k * 4)));
        Mat4::from_cols_array(&a)
    }
}

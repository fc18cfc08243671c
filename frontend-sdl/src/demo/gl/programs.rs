//! The renderer's shader programs: compiling and linking GLSL ES 1.00 sources with their
//! attribute locations, the skinning programs (LBS, DQS with scale, rigid DQS) for their
//! palette sizes ([`check_skin_shaders`] tries all three), the line and HUD programs, and
//! their uniforms.

use glow::HasContext;

use super::context::GlError;
use crate::demo::shaders::{self, attrib, SkinShader};

/// A skinning program (one of [`SkinShader`]) and its uniforms.
pub(super) struct SkinProgram {
    /// The linked program.
    pub(super) program: glow::Program,
    /// `u_MVP`.
    pub(super) mvp: Option<glow::UniformLocation>,
    /// `u_normalMat`.
    pub(super) normal_mat: Option<glow::UniformLocation>,
    /// `u_lightDir`.
    pub(super) light_dir: Option<glow::UniformLocation>,
    /// `u_light` (ambient, diffuse).
    pub(super) light: Option<glow::UniformLocation>,
    /// The first element of the palette array, `u_jointMat[0]` or `u_jointDQ[0]`.
    pub(super) palette: Option<glow::UniformLocation>,
    /// `u_color`.
    pub(super) color: Option<glow::UniformLocation>,
    /// `u_texture` (the base-color texture's unit).
    pub(super) texture: Option<glow::UniformLocation>,
    /// Joints its palette holds (`JOINTS`).
    pub(super) joints: usize,
}

/// The line program and its uniforms.
pub(super) struct LineProgram {
    /// The linked program.
    pub(super) program: glow::Program,
    /// `u_MVP`.
    pub(super) mvp: Option<glow::UniformLocation>,
    /// `u_color`.
    pub(super) color: Option<glow::UniformLocation>,
}

/// The HUD program and its uniforms.
pub(super) struct HudProgram {
    /// The linked program.
    pub(super) program: glow::Program,
    /// `u_screen` (viewport size in pixels).
    pub(super) screen: Option<glow::UniformLocation>,
    /// `u_font` (the atlas' texture unit).
    pub(super) font: Option<glow::UniformLocation>,
}

fn compile(gl: &glow::Context, kind: u32, name: &str, source: &str) -> Result<glow::Shader, GlError> {
    // SAFETY: shader object calls on the current context with a valid handle.
    unsafe {
        let s = gl.create_shader(kind).map_err(GlError::Create)?;
        gl.shader_source(s, source);
        gl.compile_shader(s);
        if gl.get_shader_compile_status(s) {
            Ok(s)
        } else {
            let log = gl.get_shader_info_log(s);
            gl.delete_shader(s);
            Err(GlError::Compile { shader: name.to_string(), log })
        }
    }
}

/// Compiles and links a program from full sources (see [`shaders::vertex_shader`] and
/// A mesh vertex's attributes and their locations, as the skinning programs bind them.
pub(super) const MESH_ATTRIBUTES: [(u32, &str); 6] = [
    (attrib::POSITION, "a_position"),
    (attrib::NORMAL, "a_normal"),
    (attrib::JOINT_INDICES, "a_jointIndices"),
    (attrib::JOINT_WEIGHTS, "a_jointWeights"),
    (attrib::TEXCOORD, "a_uv"),
    (attrib::VERTEX_COLOR, "a_color"),
];

/// [`shaders::fragment_shader`]) with the attribute locations bound as listed.
pub(super) fn link(
    gl: &glow::Context,
    name: &str,
    vs: &str,
    fs: &str,
    attributes: &[(u32, &str)],
) -> Result<glow::Program, GlError> {
    let v = compile(gl, glow::VERTEX_SHADER, &format!("{name}.vert"), vs)?;
    let f = match compile(gl, glow::FRAGMENT_SHADER, &format!("{name}.frag"), fs) {
        Ok(f) => f,
        Err(e) => {
            // SAFETY: deleting the shader created above.
            unsafe { gl.delete_shader(v) };
            return Err(e);
        }
    };
    // SAFETY: program object calls on the current context with valid handles.
    unsafe {
        let p = gl.create_program().map_err(GlError::Create)?;
        gl.attach_shader(p, v);
        gl.attach_shader(p, f);
        for &(loc, a) in attributes {
            gl.bind_attrib_location(p, loc, a);
        }
        gl.link_program(p);
        gl.delete_shader(v);
        gl.delete_shader(f);
        if gl.get_program_link_status(p) {
            Ok(p)
        } else {
            let log = gl.get_program_info_log(p);
            gl.delete_program(p);
            Err(GlError::Link { program: name.to_string(), log })
        }
    }
}

fn skin_program(gl: &glow::Context, shader: SkinShader, joints: usize) -> Result<SkinProgram, GlError> {
    let program = link(
        gl,
        shader.name(),
        &shaders::skin_shader_source(shader, joints),
        &shaders::fragment_shader(shaders::MESH_FRAGMENT),
        &MESH_ATTRIBUTES,
    )?;
    // SAFETY: uniform queries on a linked program.
    unsafe {
        let u = |n: &str| gl.get_uniform_location(program, n);
        Ok(SkinProgram {
            program,
            mvp: u("u_MVP"),
            normal_mat: u("u_normalMat"),
            light_dir: u("u_lightDir"),
            light: u("u_light"),
            palette: u(&format!("{}[0]", shader.palette_uniform())),
            color: u("u_color"),
            texture: u("u_texture"),
            joints: joints.max(1),
        })
    }
}

/// Compiles the three skinning shaders for a palette of `joints` joints and returns the
/// compile or link error of the first that fails. The programs are deleted again.
///
/// # Errors
///
/// The [`GlError`] of the first shader that fails.
pub fn check_skin_shaders(gl: &glow::Context, joints: usize) -> Result<(), GlError> {
    for m in [SkinShader::Lbs, SkinShader::Dqs, SkinShader::DqsRigid] {
        let p = skin_program(gl, m, joints)?;
        // SAFETY: deleting the program just linked.
        unsafe { gl.delete_program(p.program) };
    }
    Ok(())
}

/// Every program the renderer draws with.
pub(super) struct Programs {
    /// Linear blend skinning.
    pub(super) lbs: SkinProgram,
    /// Dual-quaternion skinning with scale.
    pub(super) dqs: SkinProgram,
    /// Dual-quaternion skinning of rigid palettes.
    pub(super) dqs_rigid: SkinProgram,
    /// World-space lines.
    pub(super) lines: LineProgram,
    /// HUD triangles.
    pub(super) hud: HudProgram,
}

impl Programs {
    /// Compiles and links every program: DQS with scale for a palette of `joints` joints, LBS
    /// and rigid DQS for `rigid_joints`.
    pub(super) fn new(gl: &glow::Context, joints: usize, rigid_joints: usize) -> Result<Programs, GlError> {
        let lbs = skin_program(gl, SkinShader::Lbs, rigid_joints)?;
        let dqs = skin_program(gl, SkinShader::Dqs, joints)?;
        let dqs_rigid = skin_program(gl, SkinShader::DqsRigid, rigid_joints)?;
        let lp = link(
            gl,
            "lines",
            &shaders::vertex_shader(shaders::LINE_VERTEX),
            &shaders::fragment_shader(shaders::LINE_FRAGMENT),
            &[(attrib::POSITION, "a_position")],
        )?;
        let hp = link(
            gl,
            "hud",
            &shaders::vertex_shader(shaders::HUD_VERTEX),
            &shaders::fragment_shader(shaders::HUD_FRAGMENT),
            &[(attrib::POSITION, "a_position"), (attrib::UV, "a_uv"), (attrib::COLOR, "a_color")],
        )?;
        // SAFETY: uniform queries on linked programs.
        unsafe {
            let lines = LineProgram {
                program: lp,
                mvp: gl.get_uniform_location(lp, "u_MVP"),
                color: gl.get_uniform_location(lp, "u_color"),
            };
            let hud = HudProgram {
                program: hp,
                screen: gl.get_uniform_location(hp, "u_screen"),
                font: gl.get_uniform_location(hp, "u_font"),
            };
            Ok(Programs { lbs, dqs, dqs_rigid, lines, hud })
        }
    }

    /// The skinning program of `shader`.
    pub(super) fn skin(&self, shader: SkinShader) -> &SkinProgram {
        match shader {
            SkinShader::Lbs => &self.lbs,
            SkinShader::Dqs => &self.dqs,
            SkinShader::DqsRigid => &self.dqs_rigid,
        }
    }

    /// Deletes every program.
    pub(super) fn delete(&self, gl: &glow::Context) {
        // SAFETY: deleting programs linked by `Programs::new` on this context.
        unsafe {
            for p in [self.lbs.program, self.dqs.program, self.dqs_rigid.program, self.lines.program, self.hud.program]
            {
                gl.delete_program(p);
            }
        }
    }
}

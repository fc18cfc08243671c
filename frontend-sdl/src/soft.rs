//! `sinew soft`: the same scene as the SDL demo, skinned on the CPU and drawn by the core's
//! software rasterizer (`sinew::raster`, textured parts as `TexturedMesh`es reading the baked
//! textures in place), shown in a `minifb` window (X11) or written to a PNG. A viewed model is
//! built as `sinew demo` builds it ([`load_viewer`]): from a clip (`--clip`), driven by an
//! animation graph file (`--graph`, its state and parameters in the window's title), or playing
//! another model's clips retargeted onto it (`--retarget-from`, the source drawn to its left).
//! In the built-in scene's window `G` switches the character's foot placement on the terrain
//! (the title says whether it is on).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sinew::math::{Mat4, Vec3};
use sinew::raster::{
    BandBuffer, CachedVertex, Cull, Depth16, Depth32, DepthFormat, Draw, Indices, Light, Lines, Mesh, PixelFormat,
    Renderer, Rgb, Rgb565, Sampler, Shading, Target, Texture, TexturedMesh, Xrgb8888,
};

use crate::demo::graph_drive::FLOAT_STEP;
use crate::demo::viewer::{PaletteSizes, Viewer};
use crate::playback::{load_viewer, PlaybackOptions};
use crate::scene::{default_camera, linear_to_srgb, srgb_to_linear, Camera, Frame, Scene, SceneLight};
use sinew_offline::model::Skinning;

/// Background color (the GL demo's clear color).
pub const BACKGROUND: Rgb = Rgb::new(31, 33, 41);
const GRID: Rgb = Rgb::new(74, 80, 94);
const BONES: Rgb = Rgb::new(255, 214, 64);

/// Options of `sinew soft`.
#[derive(Debug, Clone)]
pub struct SoftOptions {
    /// The model to view (default: the built-in scene) and what drives it, as `sinew demo`
    /// takes them.
    pub playback: PlaybackOptions,
    /// Render without a window.
    pub headless: bool,
    /// Headless: frames to render.
    pub frames: u64,
    /// Headless: scene time of the last frame in seconds (default `frames / 60`).
    pub time: Option<f32>,
    /// Headless: write the last frame here (PNG).
    pub screenshot: Option<PathBuf>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Draw the bone overlay.
    pub bones: bool,
}

impl Default for SoftOptions {
    fn default() -> Self {
        SoftOptions {
            playback: PlaybackOptions::default(),
            headless: false,
            frames: 1,
            time: None,
            screenshot: None,
            width: crate::DEFAULT_WIDTH,
            height: crate::DEFAULT_HEIGHT,
            bones: false,
        }
    }
}

/// Why `sinew soft` stopped.
#[derive(Debug)]
pub enum SoftError {
    /// The scene or model could not be built or posed.
    Scene(String),
    /// The window could not be opened or updated.
    Window(String),
    /// The screenshot could not be written.
    Io(std::io::Error),
}

impl fmt::Display for SoftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scene(s) => write!(f, "{s}"),
            Self::Window(s) => write!(f, "window: {s}"),
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SoftError {}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct SoftReport {
    /// Frames rendered.
    pub frames: u64,
    /// Mean time per frame (skinning + rasterizing), milliseconds.
    pub ms_per_frame: f64,
    /// With a graph: its state and parameters after the last frame.
    pub graph_state: Option<String>,
}

/// One skinned mesh part ready to draw: positions, normals, indices, model matrix, base color
/// (the part's material factor, or the object's override) in linear light and encoded for
/// display, and its surface: texture coordinates, vertex colors, texture and sampler.
struct Part<'a> {
    positions: Vec<Vec3<f32>>,
    normals: Vec<Vec3<f32>>,
    indices: Vec<u32>,
    world: Mat4<f32>,
    /// Linear light: a [`TexturedMesh`]'s factor (combined with texels and vertex colors in
    /// linear light).
    color: Rgb,
    /// Encoded for display: a plain [`Mesh`]'s color (its light level scales it as stored).
    display: Rgb,
    texcoords: Vec<[f32; 2]>,
    colors: Option<Vec<[u8; 4]>>,
    texture: Option<Texture<'a>>,
    sampler: Sampler,
}

/// The CPU-side geometry of one frame: skinned parts, grid and bone lines.
struct Geometry<'a> {
    parts: Vec<Part<'a>>,
    grid: Vec<Vec3<f32>>,
    bones: Vec<Vec3<f32>>,
}

fn rgb(c: [f32; 3]) -> Rgb {
    let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    Rgb::new(q(c[0]), q(c[1]), q(c[2]))
}

fn geometry<'a>(frame: &Frame<'a>, overlays: Overlays) -> Result<Geometry<'a>, SoftError> {
    let mut g = Geometry { parts: Vec::new(), grid: Vec::new(), bones: Vec::new() };
    for o in &frame.objects {
        let skinned = o.skin_cpu().map_err(|e| SoftError::Scene(e.to_string()))?;
        let asset = o.model.asset();
        let Some(mesh) = asset.mesh(o.mesh) else { continue };
        for (part, sp) in mesh.parts().zip(skinned) {
            let indices: Vec<u32> = (0..part.num_indices()).map(|i| part.index(i)).collect();
            let material = part.material();
            let override_rgb = [o.color[0], o.color[1], o.color[2]];
            let (color, display) = if o.material_colors {
                let f = [material.factor[0], material.factor[1], material.factor[2]];
                (Rgb::new(f[0], f[1], f[2]), rgb(f.map(|c| linear_to_srgb(f32::from(c) / 255.0))))
            } else {
                (rgb(override_rgb.map(srgb_to_linear)), rgb(override_rgb))
            };
            let n = part.num_vertices();
            let texture = material.texture.and_then(|t| asset.texture(t)).map(|t| t.texture());
            let texture = texture.filter(|_| part.has_texcoords());
            let texcoords = if texture.is_some() { (0..n).map(|v| part.texcoord(v)).collect() } else { Vec::new() };
            let colors = (material.vertex_colors && part.has_colors()).then(|| (0..n).map(|v| part.color(v)).collect());
            g.parts.push(Part {
                positions: sp.positions,
                normals: sp.normals,
                indices,
                world: o.world,
                color,
                display,
                texcoords,
                colors,
                texture,
                sampler: material.sampler(),
            });
        }
    }
    if overlays.grid {
        g.grid = frame.grid.iter().flatten().copied().collect();
    }
    if overlays.bones {
        g.bones = frame.bones.iter().flatten().copied().collect();
    }
    Ok(g)
}

/// The draw list for `g` (meshes, then the depth-tested grid, then bones over everything):
/// parts with a texture or vertex colors as [`TexturedMesh`]es, the others as plain meshes.
fn draws<'a>(g: &'a Geometry<'_>, line_indices: &'a [u32]) -> Vec<Draw<'a, f32>> {
    let mut d: Vec<Draw<'a, f32>> = g
        .parts
        .iter()
        .map(|p| {
            let shading = if p.normals.len() == p.positions.len() { Shading::Smooth } else { Shading::Flat };
            let mesh = Mesh {
                positions: &p.positions,
                normals: (shading == Shading::Smooth).then_some(p.normals.as_slice()),
                indices: Indices::U32(&p.indices),
                model: p.world,
                color: p.color,
                shading,
            };
            if p.texture.is_none() && p.colors.is_none() {
                // srgb(factor) · light: what the textured path draws without texture or colors.
                return Draw::Mesh(Mesh { color: p.display, ..mesh });
            }
            Draw::Textured(TexturedMesh {
                mesh,
                texcoords: &p.texcoords,
                colors: p.colors.as_deref(),
                texture: p.texture,
                sampler: p.sampler,
            })
        })
        .collect();
    let lines = |pts: &'a [Vec3<f32>], color, depth_test| {
        Draw::Lines(Lines {
            positions: pts,
            indices: Indices::U32(&line_indices[..pts.len()]),
            model: Mat4::IDENTITY,
            color,
            depth_test,
        })
    };
    if !g.grid.is_empty() {
        d.push(lines(&g.grid, GRID, true));
    }
    if !g.bones.is_empty() {
        d.push(lines(&g.bones, BONES, false));
    }
    d
}

fn renderer(camera: &Camera, light: &SceneLight, width: u32, height: u32) -> Renderer<f32> {
    let mut r = Renderer::new(camera.view_proj(width as f32 / height.max(1) as f32));
    r.light = Light { direction: light.direction, ambient: light.ambient, diffuse: light.diffuse };
    r.cull = Cull::Back;
    r
}

/// What to draw besides the meshes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlays {
    /// The ground grid (depth-tested).
    pub grid: bool,
    /// Bone lines (over everything).
    pub bones: bool,
}

/// Renders `frame` with `camera` into a full XRGB8888 frame of `width × height` pixels.
///
/// # Errors
///
/// [`SoftError::Scene`] when skinning or rasterizing refuses its inputs.
pub fn render_frame(
    frame: &Frame<'_>,
    camera: &Camera,
    width: u32,
    height: u32,
    overlays: Overlays,
) -> Result<Vec<u32>, SoftError> {
    let n = width as usize * height as usize;
    let mut color = vec![0u32; n];
    let mut depth = vec![0u32; n];
    render_into::<Xrgb8888, Depth32>(frame, camera, width, height, overlays, &mut color, &mut depth)?;
    Ok(color)
}

/// Renders `frame` into caller buffers of any pixel and depth format (`width × height`
/// elements each), cleared to [`BACKGROUND`] first.
///
/// # Errors
///
/// As [`render_frame`].
pub fn render_into<C: PixelFormat, D: DepthFormat>(
    frame: &Frame<'_>,
    camera: &Camera,
    width: u32,
    height: u32,
    overlays: Overlays,
    color: &mut [C::Raw],
    depth: &mut [D::Raw],
) -> Result<(), SoftError> {
    let g = geometry(frame, overlays)?;
    let line_indices: Vec<u32> = (0..g.grid.len().max(g.bones.len()) as u32).collect();
    let scene = draws(&g, &line_indices);
    let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(&scene)];
    let mut target = Target::<C, D>::new(color, Some(depth), width, height, width as usize)
        .map_err(|e| SoftError::Scene(e.to_string()))?;
    target.clear(BACKGROUND);
    target.clear_depth();
    renderer(camera, &SceneLight::DEFAULT, width, height)
        .render(&mut target, &scene, &mut scratch)
        .map_err(|e| SoftError::Scene(e.to_string()))
}

/// Renders `frame` in horizontal bands of `rows` rows into a small RGB565 + 16-bit depth
/// buffer, the way a microcontroller without a full framebuffer would, and assembles the bands
/// into a full frame. Returns the frame and the bytes the band buffers take.
///
/// # Errors
///
/// As [`render_frame`].
pub fn render_frame_bands(
    frame: &Frame<'_>,
    camera: &Camera,
    width: u32,
    height: u32,
    rows: u32,
    overlays: Overlays,
) -> Result<(Vec<u16>, usize), SoftError> {
    let g = geometry(frame, overlays)?;
    let line_indices: Vec<u32> = (0..g.grid.len().max(g.bones.len()) as u32).collect();
    let scene = draws(&g, &line_indices);
    let mut scratch = vec![CachedVertex::default(); Renderer::scratch_len(&scene)];
    let band = width as usize * rows as usize;
    let mut color = vec![0u16; band];
    let mut depth = vec![0u16; band];
    let band_bytes = band * 4;
    let mut out = vec![0u16; width as usize * height as usize];
    let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), width, height, rows)
        .map_err(|e| SoftError::Scene(e.to_string()))?;
    renderer(camera, &SceneLight::DEFAULT, width, height)
        .render_bands(&mut bands, &scene, &mut scratch, BACKGROUND, |y0, px| {
            let start = y0 as usize * width as usize;
            let len = px.len().min(out.len().saturating_sub(start));
            out[start..start + len].copy_from_slice(&px[..len]);
        })
        .map_err(|e| SoftError::Scene(e.to_string()))?;
    Ok((out, band_bytes))
}

/// Writes XRGB8888 pixels as an RGB PNG.
///
/// # Errors
///
/// I/O and encoding errors.
pub fn write_png(path: &Path, pixels: &[u32], width: u32, height: u32) -> Result<(), SoftError> {
    let file = std::fs::File::create(path).map_err(SoftError::Io)?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| SoftError::Io(std::io::Error::other(e)))?;
    let data: Vec<u8> = pixels.iter().flat_map(|&p| [(p >> 16) as u8, (p >> 8) as u8, p as u8]).collect();
    w.write_image_data(&data).map_err(|e| SoftError::Io(std::io::Error::other(e)))
}

/// What the window shows: the built-in scene or a model.
enum Content {
    Scene(Box<Scene>),
    Model(Box<Viewer>),
}

impl Content {
    fn camera(&self, aspect: f32) -> Camera {
        match self {
            Content::Scene(_) => default_camera(aspect),
            Content::Model(v) => Camera::framing(v.center, v.radius),
        }
    }

    /// The graph's state and parameters, when a graph drives the model.
    fn graph_state(&self) -> Option<String> {
        match self {
            Content::Model(v) => v.graph.as_ref().map(|g| format!("{}   {}", g.state_line(), g.parameters_line())),
            Content::Scene(_) => None,
        }
    }
}

fn render_content(
    content: &mut Content,
    t: f32,
    camera: &Camera,
    width: u32,
    height: u32,
    bones: bool,
) -> Result<Vec<u32>, SoftError> {
    match content {
        Content::Scene(s) => {
            s.params.show_bones = bones;
            let f = s.frame(t).map_err(|e| SoftError::Scene(e.to_string()))?;
            render_frame(&f, camera, width, height, Overlays { grid: true, bones })
        }
        Content::Model(v) => {
            let f = v.frame(Skinning::Lbs, bones).map_err(|e| SoftError::Scene(e.to_string()))?;
            render_frame(&f, camera, width, height, Overlays { grid: true, bones })
        }
    }
}

/// Runs `sinew soft`: a window, or headless rendering to a PNG.
///
/// # Errors
///
/// [`SoftError`] when the scene, the model, the window or the screenshot fails.
pub fn run(opts: &SoftOptions) -> Result<SoftReport, SoftError> {
    if opts.width == 0 || opts.height == 0 || opts.width > 4096 || opts.height > 4096 {
        return Err(SoftError::Scene("width and height must be 1 to 4096".into()));
    }
    opts.playback.validate().map_err(SoftError::Scene)?;
    let viewer =
        load_viewer(&opts.playback, PaletteSizes::same(usize::MAX)).map_err(|e| SoftError::Scene(e.to_string()))?;
    let mut content = match viewer {
        Some(v) => Content::Model(Box::new(v)),
        None => Content::Scene(Box::new(Scene::new(None).map_err(|e| SoftError::Scene(e.to_string()))?)),
    };
    // A model or retarget source without meshes (motion capture) shows its bones.
    let opts =
        &SoftOptions { bones: opts.bones || matches!(&content, Content::Model(v) if v.meshless()), ..opts.clone() };
    let aspect = opts.width as f32 / opts.height as f32;
    let mut camera = content.camera(aspect);
    if opts.headless {
        let frames = opts.frames.max(1);
        let last = opts.time.unwrap_or(frames as f32 / 60.0);
        let started = Instant::now();
        let mut pixels = Vec::new();
        for i in 0..frames {
            let t = last - (frames - 1 - i) as f32 / 60.0;
            if let Content::Model(v) = &mut content {
                v.advance(if i == 0 { last.max(0.0) - (frames - 1) as f32 / 60.0 } else { 1.0 / 60.0 })
                    .map_err(SoftError::Scene)?;
            }
            pixels = render_content(&mut content, t.max(0.0), &camera, opts.width, opts.height, opts.bones)?;
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0 / frames as f64;
        if let Some(path) = &opts.screenshot {
            write_png(path, &pixels, opts.width, opts.height)?;
        }
        return Ok(SoftReport { frames, ms_per_frame: ms, graph_state: content.graph_state() });
    }
    window_loop(opts, &mut content, &mut camera)
}

fn window_loop(opts: &SoftOptions, content: &mut Content, camera: &mut Camera) -> Result<SoftReport, SoftError> {
    use minifb::{Key, KeyRepeat, Window, WindowOptions};
    let mut window = Window::new("sinew soft", opts.width as usize, opts.height as usize, WindowOptions::default())
        .map_err(|e| SoftError::Window(e.to_string()))?;
    let mut t = 0.0f32;
    let mut paused = false;
    let mut bones = opts.bones;
    let mut last = Instant::now();
    let mut frames = 0u64;
    let mut total = 0.0f64;
    while window.is_open() && !window.is_key_down(Key::Escape) {
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f32().min(0.1);
        last = now;
        if !paused {
            t += dt;
            if let Content::Model(v) = content {
                v.advance(dt).map_err(SoftError::Scene)?;
            }
        }
        let shift = window.is_key_down(Key::LeftShift) || window.is_key_down(Key::RightShift);
        let graph = match content {
            Content::Model(v) => v.graph.as_mut(),
            Content::Scene(_) => None,
        };
        if let Some(g) = graph {
            // The graph's keys: the parameters instead of pausing and the vertical orbit.
            let step = if shift { 10.0 * FLOAT_STEP } else { FLOAT_STEP };
            for k in window.get_keys_pressed(KeyRepeat::Yes) {
                match k {
                    Key::Tab => g.select_by(if shift { -1 } else { 1 }),
                    Key::Up => g.nudge(step),
                    Key::Down => g.nudge(-step),
                    Key::Space | Key::Enter => g.toggle(),
                    Key::P => paused = !paused,
                    _ => {}
                }
            }
        } else {
            if window.is_key_down(Key::Up) {
                camera.orbit(0.0, 1.0 * dt);
            }
            if window.is_key_down(Key::Down) {
                camera.orbit(0.0, -dt);
            }
        }
        let graph_keys = matches!(content, Content::Model(v) if v.graph.is_some());
        for k in window.get_keys_pressed(KeyRepeat::No) {
            match k {
                Key::Space if !graph_keys => paused = !paused,
                Key::B => bones = !bones,
                Key::RightBracket | Key::N => {
                    if let Content::Model(v) = content {
                        v.step_clip(1);
                    }
                }
                Key::LeftBracket | Key::P => {
                    if let Content::Model(v) = content {
                        v.step_clip(-1);
                    }
                }
                Key::S => {
                    if let Content::Model(v) = content {
                        if let Some(d) = v.retarget.as_mut() {
                            d.show_source = !d.show_source;
                        }
                    }
                }
                Key::F => *camera = content.camera(opts.width as f32 / opts.height as f32),
                Key::G => {
                    if let Content::Scene(s) = content {
                        s.params.foot_placement.switch_at(t);
                    }
                }
                _ => {}
            }
        }
        if window.is_key_down(Key::Left) {
            camera.orbit(-1.5 * dt, 0.0);
        }
        if window.is_key_down(Key::Right) {
            camera.orbit(1.5 * dt, 0.0);
        }
        if window.is_key_down(Key::Equal) {
            camera.zoom(1.0 - dt);
        }
        if window.is_key_down(Key::Minus) {
            camera.zoom(1.0 + dt);
        }
        let started = Instant::now();
        let pixels = render_content(content, t, camera, opts.width, opts.height, bones)?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        total += ms;
        frames += 1;
        let retarget = matches!(content, Content::Model(v) if v.retarget.is_some());
        let feet = match content {
            Content::Scene(s) if s.params.foot_placement.is_on(t) => " G foot placement (on),",
            Content::Scene(_) => " G foot placement (off),",
            Content::Model(_) => "",
        };
        let title = match content.graph_state() {
            Some(g) => format!(
                "sinew soft — {g} — Tab parameter, Up/Down change, Space flip/fire, P pause, Left/Right orbit, Esc quit"
            ),
            None => format!(
                "sinew soft — {ms:.1} ms/frame — Space pause, B bones, [ ] clip,{}{feet} arrows orbit, +/- zoom, F frame, Esc quit",
                if retarget { " S source," } else { "" }
            ),
        };
        window.set_title(&title);
        window
            .update_with_buffer(&pixels, opts.width as usize, opts.height as usize)
            .map_err(|e| SoftError::Window(e.to_string()))?;
    }
    Ok(SoftReport {
        frames,
        ms_per_frame: if frames > 0 { total / frames as f64 } else { 0.0 },
        graph_state: content.graph_state(),
    })
}

//! Running `sinew demo` ([`run`]): opening the window and renderer, loading the model asked
//! for, then either the headless frames and the screenshot, or the interactive event loop.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::app::App;
use super::draw::Layers;
use super::gl::{GlInfo, Renderer};
use super::options::{validate, DemoError, DemoOptions, DemoReport};
use super::window::GlWindow;

/// Writes `w × h` RGBA pixels (top row first) to a PNG file.
fn write_png(path: &Path, rgba: &[u8], w: u32, h: u32) -> Result<(), DemoError> {
    let file = std::fs::File::create(path).map_err(|e| DemoError::Screenshot(format!("{}: {e}", path.display())))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(|e| DemoError::Screenshot(e.to_string()))?;
    writer.write_image_data(rgba).map_err(|e| DemoError::Screenshot(e.to_string()))?;
    writer.finish().map_err(|e| DemoError::Screenshot(e.to_string()))
}

/// The context's version and kind, for logs and the report.
fn describe(info: &GlInfo) -> String {
    format!("{} ({})", info.version, if info.es { "OpenGL ES context" } else { "desktop OpenGL context" })
}

/// The viewed model's graph state and parameters, for the report.
fn graph_state(app: &App) -> Option<String> {
    let g = app.viewer.as_ref().and_then(|(v, _)| v.graph.as_ref())?;
    Some(format!("{}   {}", g.state_line(), g.parameters_line()))
}

/// Runs the demo: a window until closed, or headless when `frames` or `screenshot` is set.
///
/// # Errors
///
/// [`DemoError`] for invalid options, no window or context, shader failures; headless runs
/// also stop on a model that fails to load, GL errors after a frame, and a screenshot that
/// cannot be written.
pub fn run(opts: &DemoOptions) -> Result<DemoReport, DemoError> {
    validate(opts)?;
    let headless = opts.frames.is_some() || opts.screenshot.is_some();
    let mut win =
        GlWindow::open("sinew demo", opts.width, opts.height, !headless, opts.gl).map_err(DemoError::Window)?;
    if !headless {
        // The HUD is laid out without overlaps from this size up.
        let (w, h) = super::hud_layout::MIN_WINDOW;
        let _ = win.window.set_minimum_size(w.min(opts.width), h.min(opts.height));
    }
    let mut r = Renderer::new(win.glow(), opts.palette)?;
    eprintln!(
        "sinew demo: SDL video driver {}, {}, GL_RENDERER {}, GLSL {}, {} vertex uniform vectors, palette {} joints ({} with scale)",
        win.video.current_video_driver(),
        describe(&r.info),
        r.info.renderer,
        r.info.shading_language,
        r.info.max_vertex_uniform_vectors,
        r.rigid_palette_size,
        r.palette_size
    );
    if !headless && win.video.current_video_driver() == "offscreen" {
        return Err(DemoError::Window(
            "no display (SDL fell back to its offscreen driver): set DISPLAY, or run headless with --frames".into(),
        ));
    }
    let mut app = App::new(&r, opts)?;
    if opts.playback.model.is_some() {
        // The model on the command line, driven and playing as asked; a window stays on the
        // scene with the error shown unless a graph, a retarget source or a clip was asked for.
        let loaded = app.load(&r, &opts.playback);
        let p = &opts.playback;
        let asked = p.graph.is_some() || p.retarget_from.is_some() || p.clip.is_some();
        if let (Err(e), true) = (loaded, headless || asked || opts.crowd.is_some()) {
            return Err(DemoError::Load(e));
        }
        if let Some(c) = opts.crowd {
            app.start_crowd(&r, c)?;
        }
    }
    let mut events = win.sdl.event_pump().map_err(DemoError::Window)?;
    if headless {
        let n = opts.frames.unwrap_or(1);
        let end = opts.time.unwrap_or(n as f32 / 60.0);
        let (w, h) = (opts.width, opts.height);
        let layers = if opts.hud { Layers::ALL } else { Layers { hud: false, ..Layers::ALL } };
        for i in 0..n {
            let t0 = Instant::now();
            for _ in events.poll_iter() {}
            let t = end * (i + 1) as f32 / n as f32;
            let prev = end * i as f32 / n as f32;
            match (app.crowd.as_mut(), app.viewer.as_mut()) {
                (Some(c), _) => c.queue(t - prev),
                (None, Some((v, _))) => v.advance(t - prev).map_err(DemoError::Graph)?,
                (None, None) => app.time = t,
            }
            app.draw(&mut r, w, h, true, layers)?;
            let cpu = t0.elapsed().as_secs_f64() * 1000.0;
            r.finish();
            app.stats.add(t0.elapsed().as_secs_f64() * 1000.0, cpu);
            let codes = r.errors();
            if !codes.is_empty() {
                return Err(DemoError::GlErrors { frame: i, codes });
            }
        }
        if let Some(c) = &app.crowd {
            eprintln!("sinew demo: {} ({} mesh parts, {})", c.hud_line(), c.parts, c.how);
        }
        if let Some(path) = &opts.screenshot {
            let rgba = r.read_rgba(w, h);
            write_png(path, &rgba, w, h)?;
        }
        return Ok(DemoReport {
            frames: n,
            context: describe(&r.info),
            renderer: r.info.renderer.clone(),
            palette: r.palette_size,
            rigid_palette: r.rigid_palette_size,
            mean_frame_ms: app.stats.mean_frame_ms(),
            mean_cpu_ms: app.stats.mean_cpu_ms(),
            screenshot: opts.screenshot.clone(),
            graph_state: graph_state(&app),
        });
    }
    let mut last = Instant::now();
    let mut reported: Vec<u32> = Vec::new();
    'frames: loop {
        for e in events.poll_iter() {
            if app.event(&r, e) {
                break 'frames;
            }
        }
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f32().min(0.25);
        let frame_ms = now.duration_since(last).as_secs_f64() * 1000.0;
        last = now;
        app.advance(dt);
        let (w, h) = win.window.drawable_size();
        let t0 = Instant::now();
        app.draw(&mut r, w.max(1), h.max(1), false, Layers::ALL)?;
        let cpu = t0.elapsed().as_secs_f64() * 1000.0;
        if std::mem::take(&mut app.snapshot) {
            let path =
                opts.screenshot.clone().unwrap_or_else(|| PathBuf::from(format!("sinew-{}.png", app.stats.drawn)));
            match write_png(&path, &r.read_rgba(w.max(1), h.max(1)), w.max(1), h.max(1)) {
                Ok(()) => app.say(format!("wrote {}", path.display()), false),
                Err(e) => app.say(e.to_string(), true),
            }
        }
        win.window.gl_swap_window();
        app.stats.add(frame_ms, cpu);
        for c in r.errors() {
            if !reported.contains(&c) {
                reported.push(c);
                eprintln!("sinew demo: GL error 0x{c:04x} after frame {}", app.stats.drawn);
            }
        }
    }
    Ok(DemoReport {
        frames: app.stats.drawn,
        context: describe(&r.info),
        renderer: r.info.renderer.clone(),
        palette: r.palette_size,
        rigid_palette: r.rigid_palette_size,
        mean_frame_ms: app.stats.mean_frame_ms(),
        mean_cpu_ms: app.stats.mean_cpu_ms(),
        screenshot: None,
        graph_state: graph_state(&app),
    })
}

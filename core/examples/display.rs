//! The rasterizer on an embedded-graphics display: the character rendered in bands of 8 rows
//! straight to a `DrawTarget`, here a 160 × 128 RGB565 panel (the size of an ST7735) kept in
//! memory and written as a PNG. On a board the same call takes the display driver's type (any
//! crate implementing `embedded_graphics_core::draw_target::DrawTarget`).
//!
//! ```text
//! cargo run -p sinew --example display --features embedded-graphics [-- out.png]
//! ```

use embedded_graphics::pixelcolor::Rgb565 as EgRgb565;
use embedded_graphics::prelude::*;
use embedded_graphics::primitives::Rectangle;

use sinew::asset::{Asset, PartBuffers};
use sinew::job::{LocalToModelJob, Palette, SamplingJob, SkinMatrixJob};
use sinew::limits::soa_count;
use sinew::math::{Mat4, SoaTransform, Vec3};
use sinew::raster::display::{render_to_display, EgColor};
use sinew::raster::{BandBuffer, CachedVertex, Depth16, Draw, Indices, Mesh, PixelFormat, Renderer, Rgb, Rgb565};
use sinew::skeleton::Skeleton;

static CHARACTER: &[u8] = include_bytes!("../fixtures/character.sinew");

const WIDTH: u32 = 160;
const HEIGHT: u32 = 128;
const BAND_ROWS: u32 = 8;
const SOA: usize = soa_count(24);
const BACKGROUND: Rgb = Rgb::new(16, 16, 24);

/// An RGB565 panel in memory, as a display driver would present it.
struct Panel {
    pixels: Vec<EgRgb565>,
}

impl OriginDimensions for Panel {
    fn size(&self) -> Size {
        Size::new(WIDTH, HEIGHT)
    }
}

impl DrawTarget for Panel {
    type Color = EgRgb565;
    type Error = core::convert::Infallible;

    fn draw_iter<I: IntoIterator<Item = Pixel<EgRgb565>>>(&mut self, pixels: I) -> Result<(), Self::Error> {
        for Pixel(p, c) in pixels {
            if p.x >= 0 && p.y >= 0 && (p.x as u32) < WIDTH && (p.y as u32) < HEIGHT {
                self.pixels[p.y as usize * WIDTH as usize + p.x as usize] = c;
            }
        }
        Ok(())
    }

    // A driver sends a rectangle in one bus transaction; this one copies rows.
    fn fill_contiguous<I: IntoIterator<Item = EgRgb565>>(
        &mut self,
        area: &Rectangle,
        colors: I,
    ) -> Result<(), Self::Error> {
        let points = area.points();
        self.draw_iter(points.zip(colors).map(|(p, c)| Pixel(p, c)))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).map_or_else(|| std::env::temp_dir().join("sinew-display.png"), Into::into);
    let asset = Asset::parse(CHARACTER)?;
    let skeleton: Skeleton<f32, SOA> = asset.skeleton().ok_or("no skeleton")?.to_skeleton()?;
    let walk = asset.clip_by_name("walk").ok_or("no walk")?;
    let mesh = (0..asset.num_meshes()).filter_map(|i| asset.mesh(i)).find(|m| m.skin().is_some()).ok_or("no mesh")?;
    let skin = asset.skin(mesh.skin().unwrap_or(0)).ok_or("no skin")?;

    // The pose of walk at 0.3 s, its palette, and the skinned mesh (see the `host` example).
    let mut pose = [SoaTransform::IDENTITY; SOA];
    let mut cursors = vec![0u16; walk.num_tracks()];
    SamplingJob::new(walk, 0.3, skeleton.rest_pose(), &mut cursors, &mut pose).run()?;
    let mut model = vec![Mat4::IDENTITY; skeleton.num_joints()];
    LocalToModelJob::new(skeleton.view(), &pose, &mut model).run()?;
    let inverse_bind: Vec<Mat4<f32>> = (0..skin.num_joints()).map(|j| skin.inverse_bind(j)).collect();
    let joints: Vec<u16> = (0..skin.num_joints()).map(|j| skin.joint(j)).collect();
    let mut palette = vec![Mat4::IDENTITY; skin.num_joints()];
    SkinMatrixJob::new(&model, &inverse_bind, &mut palette).with_joints(&joints).run()?;
    let part = mesh.parts().next().ok_or("no part")?;
    let (n, len) = (part.num_vertices(), part.inputs_len());
    let (mut bind, mut index, mut weight) =
        (vec![Vec3::ZERO; n], vec![0u16; len.influences], vec![0.0; len.influences]);
    let inputs = part.read_inputs(PartBuffers::new(&mut bind, &mut index, &mut weight))?;
    let mut part_palette = vec![Mat4::IDENTITY; len.palette];
    let part_palette = part.local_palette(&palette, &mut part_palette)?;
    let mut positions = vec![Vec3::ZERO; n];
    inputs.job(Palette::Matrices(part_palette), &mut positions).run()?;
    let triangles: Vec<u16> = (0..part.num_indices()).map(|i| part.index(i) as u16).collect();

    // ANCHOR: display
    // Render band by band straight to the display: 160 × 8 pixels of color and depth in RAM.
    let mut color = [0u16; (WIDTH * BAND_ROWS) as usize];
    let mut depth = [0u16; (WIDTH * BAND_ROWS) as usize];
    let mut bands = BandBuffer::<Rgb565, Depth16>::new(&mut color, Some(&mut depth), WIDTH, HEIGHT, BAND_ROWS)?;
    let view_proj = Mat4::perspective_rh_gl(0.6, WIDTH as f32 / HEIGHT as f32, 0.5, 20.0)
        * Mat4::look_at_rh(Vec3::new(2.5, 1.3, 2.5), Vec3::new(0.0, 0.85, 0.0), Vec3::Y);
    let [r, g, b, _] = mesh.color();
    let body = Mesh::new(&positions, None, Indices::U16(&triangles), Rgb::new(r, g, b));
    let mut scratch = vec![CachedVertex::default(); n];
    let mut display = Panel { pixels: vec![EgRgb565::BLACK; (WIDTH * HEIGHT) as usize] };
    render_to_display(
        &Renderer::new(view_proj),
        &mut bands,
        &[Draw::Mesh(body)],
        &mut scratch,
        BACKGROUND,
        &mut display,
    )?;
    // ANCHOR_END: display

    let rgb: Vec<u8> = display
        .pixels
        .iter()
        .flat_map(|c| [c.r() << 3 | c.r() >> 2, c.g() << 2 | c.g() >> 4, c.b() << 3 | c.b() >> 2])
        .collect();
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(&out)?), WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(&rgb)?;
    let background = Rgb565::to_eg(Rgb565::pack(BACKGROUND));
    let lit = display.pixels.iter().filter(|c| **c != background).count();
    println!("{WIDTH}×{HEIGHT} RGB565 display, {lit} pixels of the character, written to {}", out.display());
    Ok(())
}

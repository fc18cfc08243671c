//! What a model holds, line by line ([`print_info`]): `sinew info`'s listing, and what
//! `sinew bake` prints of the file it wrote.

use sinew::job::spring::ColliderShape;
use sinew_offline::model::Model;
use sinew_offline::rig::{Rig, SpringBones, SpringSource};

use super::measure::shell_text;
use super::output::{Failure, Out};

/// The model's joints and skins; its meshes with their parts' materials and
/// morph targets; its textures and animation graphs; each clip with its tracks by storage, its
/// stored bake report and morph weights; then the import's notes.
pub fn print_info(model: &Model, out: &mut Out) -> Result<(), Failure> {
    print_info_with_rig(model, None, out)
}

/// [`print_info`], with the spring bones of `rig`, the file the model was imported from (the
/// baked file does not hold them), before the notes: see [`print_springs`].
pub fn print_info_with_rig(model: &Model, rig: Option<&Rig>, out: &mut Out) -> Result<(), Failure> {
    let a = model.asset();
    let s = model.skeleton();
    out.line(format_args!("model {} ({} bytes baked)", model.name, model.bytes().len()))?;
    out.line(format_args!("joints {}", s.num_joints()))?;
    if s.num_joints() == 0 && a.num_clips() == 0 {
        out.line(format_args!("nothing to animate: the model has no joints and no clips"))?;
    }
    for i in 0..a.num_skins() {
        if let Some(k) = a.skin(i) {
            out.line(format_args!("skin {i} '{}': {} joints", k.name(), k.num_joints()))?;
        }
    }
    for i in 0..a.num_meshes() {
        if let Some(m) = a.mesh(i) {
            let (v, t, k) = m.parts().fold((0, 0, 0), |acc, p| {
                (acc.0 + p.num_vertices(), acc.1 + p.num_indices() / 3, acc.2.max(p.influences()))
            });
            let skin = m.skin().map(|s| s.to_string()).unwrap_or_else(|| "-".into());
            out.line(format_args!(
                "mesh {i} '{}': skin {skin}, {} parts, {v} vertices, {t} triangles, {k} influences",
                m.name(),
                m.num_parts()
            ))?;
            for (j, p) in m.parts().enumerate() {
                out.line(format_args!("  part {j}: {}", material_text(&p)))?;
            }
            if let Some(mt) = a.morph_targets(i) {
                let stored: Vec<_> = mt.parts().flat_map(|p| p.targets()).collect();
                let quantized = stored.iter().filter(|t| t.is_quantized()).count();
                let deltas: usize = stored.iter().map(|t| t.len()).sum();
                let weights: Vec<String> =
                    (0..mt.num_targets()).map(|t| format!("{}", mt.default_weight::<f32>(t))).collect();
                out.line(format_args!(
                    "  {} morph targets, default weights [{}], {deltas} vertex deltas ({quantized} of {} part targets quantized), {} bytes",
                    mt.num_targets(),
                    weights.join(", "),
                    stored.len(),
                    mt.byte_len()
                ))?;
            }
        }
    }
    for i in 0..a.num_textures() {
        if let Some(t) = a.texture(i) {
            let texture = t.texture();
            out.line(format_args!(
                "texture {i} '{}': {}x{} {:?}, {} bytes",
                t.name(),
                texture.width(),
                texture.height(),
                texture.format(),
                texture.texels().len()
            ))?;
        }
    }
    for i in 0..a.num_graphs() {
        if let Some(g) = a.graph(i) {
            let states: Vec<&str> = (0..g.num_states()).filter_map(|s| g.state_name(s)).collect();
            let parameters: Vec<&str> = (0..g.num_parameters()).filter_map(|p| g.parameter_name(p)).collect();
            let layers: Vec<&str> = (1..=g.num_layers()).filter_map(|l| g.layer(l)).map(|l| l.name()).collect();
            let layers = if layers.is_empty() {
                String::new()
            } else {
                format!(", {} layers [{}]", layers.len(), layers.join(", "))
            };
            out.line(format_args!(
                "graph {i} '{}': {} states [{}], {} parameters [{}], {} transitions, initial '{}'{layers}, {} bytes",
                g.name(),
                states.len(),
                states.join(", "),
                parameters.len(),
                parameters.join(", "),
                g.num_transitions(),
                g.state_name(g.initial()).unwrap_or("?"),
                g.byte_len()
            ))?;
        }
    }
    for i in 0..a.num_clips() {
        if let Some(c) = a.clip(i) {
            out.line(format_args!(
                "clip {i} '{}': {:.4} s ({:.4} .. {:.4}), {} tracks ({}), {} keys, {} bytes",
                c.name(),
                c.end() - c.start(),
                c.start(),
                c.end(),
                c.num_tracks(),
                track_storage(&c),
                c.num_keys(),
                c.byte_len()
            ))?;
            if let Some(r) = a.clip_report(i) {
                out.line(format_args!("  {}", report_text(&r, s)))?;
            }
            if let Some(w) = a.morph_weights(i) {
                let meshes: Vec<String> = (0..w.num_tracks())
                    .filter_map(|t| w.track(t))
                    .map(|t| format!("mesh {} ({} keys, {:?}, {:?})", t.mesh, t.key_count, t.interpolation, t.format))
                    .collect();
                out.line(format_args!("  morph weights: {}, {} bytes", meshes.join(", "), w.byte_len()))?;
            }
        }
    }
    match rig {
        Some(rig) => print_springs(rig, out)?,
        None => print_baked_springs(model, out)?,
    }
    for n in &model.notes {
        out.line(format_args!("note: {n}"))?;
    }
    Ok(())
}

/// The spring bones of a baked file, when it has any: their counts (springs, swaying joints,
/// colliders by shape), the section's size, then per spring its name, joint count and first
/// and last joint.
fn print_baked_springs(model: &Model, out: &mut Out) -> Result<(), Failure> {
    let Some(b) = model.asset().springs() else { return Ok(()) };
    let s = model.skeleton();
    let name = |j: u16| s.name(usize::from(j)).unwrap_or("?");
    let mut shapes = [("sphere", 0), ("capsule", 0), ("plane", 0), ("inside sphere", 0), ("inside capsule", 0)];
    for c in (0..b.num_colliders()).filter_map(|i| b.collider::<f32>(i)) {
        let k = match c.shape {
            ColliderShape::Sphere { inside: false, .. } => 0,
            ColliderShape::Capsule { inside: false, .. } => 1,
            ColliderShape::Plane { .. } => 2,
            ColliderShape::Sphere { inside: true, .. } => 3,
            ColliderShape::Capsule { inside: true, .. } => 4,
        };
        shapes[k].1 += 1;
    }
    let shapes: Vec<String> = shapes.iter().filter(|(_, n)| *n > 0).map(|(k, n)| format!("{k} {n}")).collect();
    let shapes = if shapes.is_empty() { String::new() } else { format!(" ({})", shapes.join(", ")) };
    out.line(format_args!(
        "springs: {} springs, {} swaying joints, {} colliders{shapes}, {} bytes",
        b.num_springs(),
        b.num_joints(),
        b.num_colliders(),
        b.byte_len()
    ))?;
    for i in 0..b.num_springs() {
        let Some(spring) = b.spring(i) else { continue };
        let joints: Vec<u16> = b.spring_joints(i).filter_map(|j| b.joint::<f32>(j)).map(|j| j.joint).collect();
        let label = if spring.name.is_empty() { String::new() } else { format!(" '{}'", spring.name) };
        let ends = match (joints.first(), joints.last()) {
            (Some(&a), Some(&z)) => format!(" ('{}' .. '{}')", name(a), name(z)),
            _ => String::new(),
        };
        out.line(format_args!("  spring {i}{label}: {} swaying joints{ends}", joints.len()))?;
    }
    Ok(())
}

/// The spring bones of `rig`, when it has any: [`spring_lines`].
pub fn print_springs(rig: &Rig, out: &mut Out) -> Result<(), Failure> {
    for line in spring_lines(rig) {
        out.line(format_args!("{line}"))?;
    }
    Ok(())
}

/// The lines `sinew info` prints about the spring bones of `rig` (none without any): their
/// source and counts (springs, swaying joints, colliders by shape, collider groups), then per
/// spring its name, joint count, first and last joint, collider groups and center.
pub fn spring_lines(rig: &Rig) -> Vec<String> {
    let Some(b) = &rig.springs else { return Vec::new() };
    let name = |j: usize| rig.joints.get(j).map_or("?", |r| r.name.as_str());
    let source = match &b.source {
        SpringSource::Vrm1 { spec_version, extended_colliders: 0 } => format!("VRMC_springBone {spec_version}"),
        SpringSource::Vrm1 { spec_version, extended_colliders } => {
            format!("VRMC_springBone {spec_version} ({extended_colliders} extended colliders)")
        }
        SpringSource::Vrm0 => "VRM 0.x secondaryAnimation".into(),
    };
    let mut lines = vec![format!(
        "springs from {source}: {} springs, {} swaying joints, {} colliders{}, {} collider groups",
        b.springs.len(),
        b.joints.len(),
        b.colliders.len(),
        shapes_text(b),
        b.collider_groups.len()
    )];
    for (i, s) in b.springs.iter().enumerate() {
        let label = s.name.as_deref().map_or_else(String::new, |n| format!(" '{n}'"));
        let ends = match (s.joints.first(), s.joints.last()) {
            (Some(a), Some(z)) => format!(" ('{}' .. '{}')", name(a.joint), name(z.joint)),
            _ => String::new(),
        };
        let groups: Vec<String> = s
            .collider_groups
            .iter()
            .map(|&g| match b.collider_groups.get(g).and_then(|g| g.name.as_deref()) {
                Some(n) => format!("{g} '{n}'"),
                None => g.to_string(),
            })
            .collect();
        let center = s.center.map_or_else(String::new, |c| format!(", center '{}'", name(c)));
        lines.push(format!(
            "  spring {i}{label}: {} joints{ends}, collider groups [{}]{center}",
            s.joints.len(),
            groups.join(", ")
        ));
    }
    lines
}

/// The colliders' shapes with their counts, `" (sphere 2, plane 1)"`, or nothing for none.
fn shapes_text(b: &SpringBones) -> String {
    let kinds: Vec<String> =
        b.shape_counts().iter().filter(|(_, n)| *n > 0).map(|(kind, n)| format!("{kind} {n}")).collect();
    if kinds.is_empty() {
        String::new()
    } else {
        format!(" ({})", kinds.join(", "))
    }
}

/// A clip's tracks counted by storage (packed, quantized, lossless `f32`), then the constant
/// ones (a single key, in any storage) and the exactly slerped ones.
fn track_storage(c: &sinew::clip::Clip<'_>) -> String {
    use sinew::clip::KeyFormat;
    let tracks: Vec<_> = (0..c.num_tracks()).filter_map(|t| c.track(t)).collect();
    let count = |f: KeyFormat| tracks.iter().filter(|t| t.format == f).count();
    format!(
        "{} packed, {} quantized, {} lossless f32; {} constant, {} exact slerp",
        count(KeyFormat::Packed),
        count(KeyFormat::Quantized),
        count(KeyFormat::F32),
        tracks.iter().filter(|t| t.key_count == 1).count(),
        tracks.iter().filter(|t| t.slerp).count()
    )
}

/// One line about a clip's stored bake report: the bound and shell it was baked to, and the
/// largest shell error the baker measured, with its joint and time.
fn report_text(r: &sinew::asset::ClipReport, skeleton: sinew::skeleton::SkeletonView<'_, f32>) -> String {
    let shell = shell_text(r.shell_from_mesh, f64::from(r.shell));
    let head = format!("baked to {:.1e} m at {shell}", r.bound);
    if !r.measured {
        return format!("{head}; stored lossless without measurement (work budget)");
    }
    match r.joint {
        Some(j) => format!(
            "{head}; baker's largest shell error {:.2e} m at joint '{}', {:.4} s",
            r.error,
            skeleton.name(j).unwrap_or("?"),
            r.time
        ),
        None => format!("{head}; baker's largest shell error 0 m"),
    }
}

/// One line about a mesh part's material: base-color factor, texture and sampler, vertex colors.
fn material_text(p: &sinew::asset::MeshPart<'_>) -> String {
    use sinew::asset::format::*;
    let m = p.material();
    let f = m.factor;
    let mut s = format!("material color #{:02x}{:02x}{:02x}{:02x}", f[0], f[1], f[2], f[3]);
    if let Some(t) = m.texture {
        let filter = |c: u8| match c {
            FILTER_NEAREST => "nearest",
            FILTER_LINEAR => "linear",
            FILTER_NEAREST_MIPMAP_NEAREST => "nearest-mipmap-nearest",
            FILTER_LINEAR_MIPMAP_NEAREST => "linear-mipmap-nearest",
            FILTER_NEAREST_MIPMAP_LINEAR => "nearest-mipmap-linear",
            _ => "linear-mipmap-linear",
        };
        s += &format!(
            ", texture {t} (wrap {:?}/{:?}, mag {}, min {})",
            m.wrap_s,
            m.wrap_t,
            filter(m.mag_filter),
            filter(m.min_filter)
        );
    }
    if m.vertex_colors {
        s += ", vertex colors";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::spring_lines;

    /// The spring lines of `sinew-offline`'s VRM 0.x test file, whose springs its recipe
    /// (`tests/data/vrm/make_vrm0.py`) lists: groups "ribbon" (node 6, collider groups 1 and 0)
    /// and "hair" (hair_root's four nodes, collider group 0, center hips); three spheres.
    #[test]
    fn springs_of_the_vrm0_test_file() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("offline/tests/data/vrm/vrm0_springs.gltf");
        let rig = sinew_offline::import::load(&file, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            spring_lines(&rig),
            [
                "springs from VRM 0.x secondaryAnimation: 2 springs, 5 swaying joints, 3 colliders (sphere 3), 2 collider groups",
                "  spring 0 'ribbon': 1 joints ('ribbon' .. 'ribbon'), collider groups [1, 0]",
                "  spring 1 'hair': 4 joints ('hair_root' .. 'hair_b'), collider groups [0], center 'hips'",
            ]
        );
        let none = sinew_offline::rig::Rig::default();
        assert!(spring_lines(&none).is_empty());
    }
}

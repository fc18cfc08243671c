//! The RAM table of `tests/firmware/README.md` ("How big each buffer is") equals what the types
//! take: each row is checked against `core::mem::size_of` of the controller, its scratch and the
//! pose for that configuration, in `f32` and in `Q16`.

use core::mem::size_of;

use sinew::capacity::Capacity;
use sinew::controller::{Controller, ControllerScratch};
use sinew::math::{Mat4, SoaTransform};
use sinew::{Real, Q16};

sinew::capacity! {
    /// The first row: the firmware's character with two slots.
    pub struct Row24 { joints: 24, slots: 2, tracks: 16 }
}
sinew::capacity! {
    /// The second row.
    pub struct Row32 { joints: 32, slots: 2, tracks: 48 }
}
sinew::capacity! {
    /// The third row: a humanoid with an upper-body layer.
    pub struct Row64 { joints: 64, slots: 4, layers: 2 }
}
sinew::capacity! {
    /// The fourth row: a base, an override and an additive layer.
    pub struct Row128 { joints: 128, slots: 4, layers: 3 }
}

/// Bytes of (controller, scratch, local pose, model matrices) for capacity `C`.
fn sizes<R: Real, C: Capacity>() -> [usize; 4] {
    [
        size_of::<Controller<R, C>>(),
        size_of::<ControllerScratch<R, C>>(),
        C::SOA * size_of::<SoaTransform<R>>(),
        C::JOINTS * size_of::<Mat4<R>>(),
    ]
}

/// A row of the table for capacity `C`: its joints, slots, layers and tracks, its sizes in
/// `f32` and in `Q16`.
fn row<C: Capacity>() -> ([usize; 4], [usize; 4], [usize; 4]) {
    ([C::JOINTS, C::SLOTS, C::LAYERS, C::TRACKS], sizes::<f32, C>(), sizes::<Q16, C>())
}

/// The rows of the table: joints, slots, layers, tracks, then the four sizes in bytes.
fn table() -> Vec<[usize; 8]> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/firmware/README.md"))
        .expect("tests/firmware/README.md");
    let start = text.find("<!-- footprint table -->").expect("the table's marker");
    text[start..]
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<usize> = l
                .split('|')
                .map(|c| c.trim().replace(',', ""))
                .filter(|c| !c.is_empty())
                .map(|c| c.parse().unwrap_or_else(|_| panic!("not a number: {c:?} in {l}")))
                .collect();
            cells.try_into().unwrap_or_else(|_| panic!("8 cells in {l}"))
        })
        .collect()
}

#[test]
fn the_firmware_guide_table_is_what_the_types_take() {
    let computed = [row::<Row24>(), row::<Row32>(), row::<Row64>(), row::<Row128>()];
    for (config, f, _) in computed {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            config[0], config[1], config[2], config[3], f[0], f[1], f[2], f[3]
        );
    }
    let rows = table();
    assert_eq!(rows.len(), computed.len(), "one row per configuration");
    for (row, (config, f, q)) in rows.iter().zip(computed) {
        assert_eq!(row[..4], config, "configuration");
        assert_eq!(row[4..], f, "{config:?}: f32 sizes");
        assert_eq!(f, q, "{config:?}: Q16 takes what f32 takes");
    }
}

//! The RAM table of `tests/firmware/README.md` ("How big each buffer is") equals what the types
//! take: each row is checked against `core::mem::size_of` of the controller, its scratch and the
//! pose for that configuration, in `f32` and in `Q16`.

use core::mem::size_of;

use sinew::controller::{Controller, ControllerScratch};
use sinew::limits::soa_count;
use sinew::math::{Mat4, SoaTransform};
use sinew::{Real, Q16};

/// Bytes of (controller, scratch, local pose, model matrices) for `J` joints, `S` slots, `L`
/// layers and `T` tracks.
fn sizes<R: Real, const J: usize, const SOA: usize, const S: usize, const L: usize, const T: usize>() -> [usize; 4] {
    assert_eq!(SOA, soa_count(J));
    [
        size_of::<Controller<R, SOA, S, L, T>>(),
        size_of::<ControllerScratch<R, SOA, S, L>>(),
        SOA * size_of::<SoaTransform<R>>(),
        J * size_of::<Mat4<R>>(),
    ]
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
    let computed = [
        (
            [24, 2, 1, 16],
            sizes::<f32, 24, { soa_count(24) }, 2, 1, 16>(),
            sizes::<Q16, 24, { soa_count(24) }, 2, 1, 16>(),
        ),
        (
            [32, 2, 1, 48],
            sizes::<f32, 32, { soa_count(32) }, 2, 1, 48>(),
            sizes::<Q16, 32, { soa_count(32) }, 2, 1, 48>(),
        ),
        (
            [64, 4, 2, 192],
            sizes::<f32, 64, { soa_count(64) }, 4, 2, 192>(),
            sizes::<Q16, 64, { soa_count(64) }, 4, 2, 192>(),
        ),
        (
            [128, 4, 3, 384],
            sizes::<f32, 128, { soa_count(128) }, 4, 3, 384>(),
            sizes::<Q16, 128, { soa_count(128) }, 4, 3, 384>(),
        ),
    ];
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

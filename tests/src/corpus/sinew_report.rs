//! Clip-report cases: the real CesiumMan bake ([`cesium_sinew`](super::sinew::cesium_sinew))
//! with its clip-report section changed field by field, cut short, grown, repeated for the same
//! clip (and, checked as it is built, removed: still a valid file), each with the [`ParseError`] `Asset::parse` must give.

use sinew::asset::format::*;
use sinew::asset::{Asset, ParseError};

use super::sinew::cesium_sinew;
use super::sinew_layout::{patched, reheader, section_of, sections};
use super::Category::{self, *};
use super::{put_f32, put_u16, put_u32, u16_at, u32_at, Case};

/// `base` with its section table entry `index` removed or, with `copy`, a copy of that section's
/// body appended as one more section of the same kind (the table grows by one entry; every
/// offset follows).
fn with_section(base: &[u8], index: u16, copy: bool) -> Vec<u8> {
    let secs = sections(base);
    let s = secs[index as usize];
    let table_end = HEADER_LEN + secs.len() * SECTION_ENTRY_LEN;
    let shift = SECTION_ENTRY_LEN as i64 * if copy { 1 } else { -1 };
    let mut b = base[..HEADER_LEN].to_vec();
    put_u32(&mut b, 20, (secs.len() as i64 + shift.signum()) as u32);
    let mut entries: Vec<([u8; 4], usize, usize)> =
        secs.iter().filter(|t| copy || t.index != index).map(|t| (t.kind, t.off, t.len)).collect();
    let body_end = secs.iter().map(|t| t.off + t.len).max().unwrap_or(table_end);
    if copy {
        entries.push((s.kind, body_end, s.len));
    }
    for (kind, off, len) in &entries {
        b.extend_from_slice(kind);
        b.extend_from_slice(&((*off as i64 + shift) as u32).to_le_bytes());
        b.extend_from_slice(&(*len as u32).to_le_bytes());
    }
    b.extend_from_slice(&base[table_end..]);
    if copy {
        b.extend_from_slice(&base[s.off..s.off + s.len]);
    }
    reheader(b)
}

/// Every clip-report case.
pub(super) fn report_cases() -> Vec<Case<(), ParseError>> {
    type C = Case<(), ParseError>;
    let real = cesium_sinew();
    let rep = section_of(&real, KIND_CLIP_REPORT);
    let clip = section_of(&real, KIND_CLIP);
    let joints = u16_at(&real, section_of(&real, KIND_SKELETON).off);
    let end = f32::from_bits(u32_at(&real, clip.off + 1 + real[clip.off] as usize + 4));
    let report = Asset::parse(&real).ok().and_then(|a| a.clip_report(0));
    assert!(report.is_some_and(|r| r.measured && r.error > 0.0 && r.joint.is_some()), "{report:?}");
    assert_eq!(rep.len, CLIP_REPORT_LEN);
    let sec = rep.index;
    let at = rep.off;
    let bad = |field| ParseError::BadClipReport { section: sec, field };
    let mut cases: Vec<C> = Vec::new();
    let mut field = |category: Category, name: &str, f: &dyn Fn(&mut Vec<u8>), field| {
        cases.push(C::is(category, format!("CesiumMan report {name}"), patched(&real, f), bad(field)));
    };
    field(JointIndex, "clip 1 of 1", &|b| put_u16(b, at, 1), ReportField::Clip);
    field(JointIndex, "clip 65535", &|b| put_u16(b, at, NONE), ReportField::Clip);
    field(Counts, "unknown flag 4", &|b| b[at + 2] = 4, ReportField::Flags);
    field(Counts, "reserved byte 1", &|b| b[at + 3] = 1, ReportField::Flags);
    field(Counts, "reserved u16 1", &|b| put_u16(b, at + 18, 1), ReportField::Flags);
    for (name, v) in [("NaN", f32::NAN), ("infinite", f32::INFINITY)] {
        field(NonFinite, &format!("bound {name}"), &|b| put_f32(b, at + 4, v), ReportField::Bound);
        field(NonFinite, &format!("shell {name}"), &|b| put_f32(b, at + 8, v), ReportField::Shell);
        field(NonFinite, &format!("error {name}"), &|b| put_f32(b, at + 12, v), ReportField::Error);
        field(NonFinite, &format!("time {name}"), &|b| put_f32(b, at + 20, v), ReportField::Time);
    }
    field(Counts, "bound 0", &|b| put_f32(b, at + 4, 0.0), ReportField::Bound);
    field(Counts, "bound -0", &|b| put_f32(b, at + 4, -0.0), ReportField::Bound);
    field(Counts, "bound -1e-4", &|b| put_f32(b, at + 4, -1e-4), ReportField::Bound);
    field(Counts, "shell -0.03", &|b| put_f32(b, at + 8, -0.03), ReportField::Shell);
    field(Counts, "error -1e-6", &|b| put_f32(b, at + 12, -1e-6), ReportField::Error);
    field(Counts, "unmeasured with an error", &|b| b[at + 2] |= REPORT_FLAG_UNMEASURED, ReportField::Error);
    field(JointIndex, "joint past the skeleton", &|b| put_u16(b, at + 16, joints), ReportField::Joint);
    field(JointIndex, "no joint for a nonzero error", &|b| put_u16(b, at + 16, NONE), ReportField::Joint);
    field(Unsorted, "time after the clip", &|b| put_f32(b, at + 20, end + 0.01), ReportField::Time);
    field(Unsorted, "time before the clip", &|b| put_f32(b, at + 20, -1.0), ReportField::Time);

    // The section's length: one byte short, one byte long (a byte added at the end of the file).
    let entry = HEADER_LEN + sec as usize * SECTION_ENTRY_LEN;
    cases.push(C::is(
        Truncated,
        "CesiumMan report section 23 bytes",
        patched(&real, |b| put_u32(b, entry + 8, CLIP_REPORT_LEN as u32 - 1)),
        ParseError::SectionOverrun { section: sec },
    ));
    cases.push(C::is(
        Counts,
        "CesiumMan report section 25 bytes",
        patched(&real, |b| {
            put_u32(b, entry + 8, CLIP_REPORT_LEN as u32 + 1);
            b.push(0);
        }),
        ParseError::BadSection { section: sec },
    ));
    let copy = sections(&real).len() as u16;
    cases.push(C::is(
        Unsorted,
        "CesiumMan two reports for clip 0",
        with_section(&real, sec, true),
        ParseError::BadClipReport { section: copy, field: ReportField::Clip },
    ));
    // Without its report the file stays valid: the section is optional.
    let stripped = with_section(&real, sec, false);
    assert!(Asset::parse(&stripped).is_ok_and(|a| a.num_clips() == 1 && a.clip_report(0).is_none()));
    cases
}

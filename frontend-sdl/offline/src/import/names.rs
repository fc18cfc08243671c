//! Names of what the importers make (joints, skins, meshes, clips): a missing or empty name gets
//! a fallback such as `node3`, and a name already given in the same list gets a `#n` suffix.
//!
//! Both importers use [`UniqueNames`]; they differ only in the first suffix they try: glTF counts
//! from 1 for every name (`a`, `a#1`, `a#2`), md5 starts at the entry's index in its list (a second
//! `root` at joint 4 becomes `root#4`). Names are not shortened here: the baker cuts them to its
//! own length limit.

use std::collections::HashSet;

/// `name` when it is there and not empty, else `fallback()`.
pub(crate) fn or_fallback(name: Option<&str>, fallback: impl FnOnce() -> String) -> String {
    match name {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => fallback(),
    }
}

/// The names given so far in one list (the joints of a rig, its clips, ...).
#[derive(Debug, Default)]
pub(crate) struct UniqueNames {
    used: HashSet<String>,
    suffixed: usize,
}

impl UniqueNames {
    /// `base` when no name given so far is `base`, else `base#n` with the smallest `n` from
    /// `first` on that gives a name not given so far. The name returned counts as given.
    pub(crate) fn make(&mut self, base: String, first: usize) -> String {
        if self.used.insert(base.clone()) {
            return base;
        }
        self.suffixed += 1;
        let mut n = first;
        loop {
            let candidate = format!("{base}#{n}");
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }

    /// How many names [`UniqueNames::make`] has given a suffix.
    pub(crate) fn suffixed(&self) -> usize {
        self.suffixed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make_all(names: &[&str], first: impl Fn(usize) -> usize) -> (Vec<String>, usize) {
        let mut unique = UniqueNames::default();
        let made = names.iter().enumerate().map(|(i, n)| unique.make((*n).to_owned(), first(i))).collect();
        (made, unique.suffixed())
    }

    #[test]
    fn distinct_names_are_kept() {
        assert_eq!(make_all(&["a", "b", "a#1"], |_| 1), (vec!["a".into(), "b".into(), "a#1".into()], 0));
    }

    #[test]
    fn suffixes_from_one_for_every_name() {
        // The glTF numbering.
        let (made, suffixed) = make_all(&["a", "b", "a", "a", "b"], |_| 1);
        assert_eq!(made, ["a", "b", "a#1", "a#2", "b#1"]);
        assert_eq!(suffixed, 3);
    }

    #[test]
    fn suffixes_from_the_entry_index() {
        // The md5 numbering.
        let (made, suffixed) = make_all(&["root", "root", "hip", "root", "hip"], |i| i);
        assert_eq!(made, ["root", "root#1", "hip", "root#3", "hip#4"]);
        assert_eq!(suffixed, 3);
    }

    #[test]
    fn a_suffix_skips_names_already_given() {
        let (made, _) = make_all(&["a", "a#1", "a#2", "a"], |_| 1);
        assert_eq!(made, ["a", "a#1", "a#2", "a#3"]);
        let (made, _) = make_all(&["x", "x#2", "x"], |i| i);
        assert_eq!(made, ["x", "x#2", "x#3"]);
        // A name given with a suffix is itself taken: a later name equal to it gets one too.
        let (made, suffixed) = make_all(&["a", "a", "a#1"], |_| 1);
        assert_eq!(made, ["a", "a#1", "a#1#1"]);
        assert_eq!(suffixed, 2);
    }

    #[test]
    fn fallbacks_for_missing_and_empty_names() {
        assert_eq!(or_fallback(Some("hip"), || "node0".into()), "hip");
        assert_eq!(or_fallback(Some(""), || "node1".into()), "node1");
        assert_eq!(or_fallback(None, || "node2".into()), "node2");
        // The fallback is only built when it is needed.
        assert_eq!(or_fallback(Some("x"), || unreachable!()), "x");
    }

    #[test]
    fn fallbacks_are_made_unique_too() {
        let mut unique = UniqueNames::default();
        let a = unique.make(or_fallback(Some("node1"), || "unused".into()), 1);
        let b = unique.make(or_fallback(None, || "node1".into()), 1);
        assert_eq!((a.as_str(), b.as_str()), ("node1", "node1#1"));
    }
}

//! Reading the extensions' JSON: each value found by key or position with its JSON path, so that
//! every [`SpringError`] names the value it is about.

use serde_json::{Map, Value};

use super::error::{SpringError, SpringErrorKind};

/// A JSON value and its path from the document root.
#[derive(Clone)]
pub(super) struct At<'a> {
    /// The value.
    pub(super) value: &'a Value,
    /// Its path, such as `extensions.VRMC_springBone.springs[0]`.
    path: String,
}

/// Allowed values of a number.
#[derive(Clone, Copy)]
pub(super) enum Range {
    /// Any finite `f32`.
    Any,
    /// At least 0.
    NonNegative,
    /// 0 to 1.
    Unit,
}

impl<'a> At<'a> {
    /// `value` at the root path `root` (such as `extensions.VRMC_springBone`).
    pub(super) fn root(value: &'a Value, root: &str) -> Self {
        At { value, path: root.to_owned() }
    }

    /// The path as text.
    pub(super) fn path(&self) -> String {
        self.path.clone()
    }

    /// An error about this value.
    pub(super) fn error(&self, kind: SpringErrorKind) -> SpringError {
        SpringError { path: self.path(), kind }
    }

    /// The value as an object.
    pub(super) fn object(&self) -> Result<&'a Map<String, Value>, SpringError> {
        self.value.as_object().ok_or_else(|| self.error(SpringErrorKind::Type { expected: "an object" }))
    }

    /// The value as an array.
    pub(super) fn array(&self) -> Result<&'a [Value], SpringError> {
        self.value
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| self.error(SpringErrorKind::Type { expected: "an array" }))
    }

    /// The value as a string.
    pub(super) fn string(&self) -> Result<&'a str, SpringError> {
        self.value.as_str().ok_or_else(|| self.error(SpringErrorKind::Type { expected: "a string" }))
    }

    /// The value as a boolean.
    pub(super) fn boolean(&self) -> Result<bool, SpringError> {
        self.value.as_bool().ok_or_else(|| self.error(SpringErrorKind::Type { expected: "true or false" }))
    }

    /// The value as an index into a list of `limit` items that are `what`s.
    pub(super) fn index(&self, what: &'static str, limit: usize) -> Result<usize, SpringError> {
        let index = self.value.as_u64().ok_or_else(|| self.error(SpringErrorKind::Type { expected: "an index" }))?;
        match usize::try_from(index) {
            Ok(i) if i < limit => Ok(i),
            _ => Err(self.error(SpringErrorKind::BadIndex { what, index, limit })),
        }
    }

    /// The value as an `f32` in `range`.
    pub(super) fn number(&self, range: Range) -> Result<f32, SpringError> {
        let v = self.value.as_f64().ok_or_else(|| self.error(SpringErrorKind::Type { expected: "a number" }))?;
        // JSON numbers are finite; a large one is not as `f32`.
        let f = v as f32;
        let (ok, words) = match range {
            Range::Any => (f.is_finite(), "a finite f32"),
            Range::NonNegative => (f.is_finite() && f >= 0.0, "at least 0"),
            Range::Unit => ((0.0..=1.0).contains(&f), "0 to 1"),
        };
        if ok {
            Ok(f)
        } else {
            Err(self.error(SpringErrorKind::OutOfRange { value: v, range: words }))
        }
    }

    /// The value as an array of three finite `f32`s.
    pub(super) fn vec3(&self) -> Result<[f32; 3], SpringError> {
        let items = self.array()?;
        if items.len() != 3 {
            return Err(self.error(SpringErrorKind::Type { expected: "an array of 3 numbers" }));
        }
        let mut out = [0.0; 3];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.item(i).number(Range::Any)?;
        }
        Ok(out)
    }

    /// The value as a VRM 0.x vector, an object with numbers `x`, `y` and `z` (each 0 when
    /// left out).
    pub(super) fn xyz(&self) -> Result<[f32; 3], SpringError> {
        self.object()?;
        let mut out = [0.0; 3];
        for (o, key) in out.iter_mut().zip(["x", "y", "z"]) {
            if let Some(v) = self.get(key) {
                *o = v.number(Range::Any)?;
            }
        }
        Ok(out)
    }

    /// Member `key` of this object, if it is an object with that member (`null` counts as
    /// absent, as three-vrm reads it).
    pub(super) fn get(&self, key: &str) -> Option<At<'a>> {
        let v = self.value.as_object()?.get(key)?;
        if v.is_null() {
            return None;
        }
        Some(At { value: v, path: format!("{}.{key}", self.path) })
    }

    /// Member `key` of this object, which must be there.
    pub(super) fn require(&self, key: &str, expected: &'static str) -> Result<At<'a>, SpringError> {
        self.object()?;
        self.get(key).ok_or_else(|| SpringError {
            path: format!("{}.{key}", self.path),
            kind: SpringErrorKind::Type { expected },
        })
    }

    /// Item `i` of this array (the caller has checked that it is one, of at least `i + 1`
    /// items); `null` when it is not.
    pub(super) fn item(&self, i: usize) -> At<'a> {
        let v = self.value.as_array().and_then(|a| a.get(i)).unwrap_or(&Value::Null);
        At { value: v, path: format!("{}[{i}]", self.path) }
    }

    /// The items of this array with their paths.
    pub(super) fn items(&self) -> Result<impl Iterator<Item = At<'a>> + '_, SpringError> {
        let n = self.array()?.len();
        Ok((0..n).map(move |i| self.item(i)))
    }
}

//! glTF 2.0 importer.

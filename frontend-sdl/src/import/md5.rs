//! Doom 3 md5 (version 10) importer.

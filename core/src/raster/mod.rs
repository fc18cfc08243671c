//! Software rasterizer.

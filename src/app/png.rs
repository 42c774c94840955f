//! PNG encoding for exporting the current view, with the `png` crate (already in the build through
//! eframe's image support; pure Rust, so the web build has it too).

/// Encodes 8-bit RGBA pixels (`width × height × 4` bytes, row-major) as a PNG file; an error when
/// the pixels are not that many.
pub fn encode_rgba(width: u32, height: u32, rgba: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Balanced);
    let mut writer = encoder.write_header().map_err(|e| format!("PNG: {e}"))?;
    writer.write_image_data(rgba).map_err(|e| format!("PNG: {e}"))?;
    writer.finish().map_err(|e| format!("PNG: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_round_trip_and_a_flat_image_is_small() {
        let (w, h) = (64u32, 48u32);
        let rgba: Vec<u8> = (0..w * h).flat_map(|i| [(i % 7) as u8 * 30, 40, (i / w) as u8, 255]).collect();
        let png = encode_rgba(w, h, &rgba).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        let mut reader = png::Decoder::new(std::io::Cursor::new(&png)).read_info().unwrap();
        let mut back = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut back).unwrap();
        assert_eq!((info.width, info.height, info.color_type), (w, h, png::ColorType::Rgba));
        assert_eq!(back, rgba);
        // A screenshot is mostly flat: 1280 × 720 of one colour is a few kB, not 3.5 MB.
        let flat = encode_rgba(1280, 720, &vec![200u8; 1280 * 720 * 4]).unwrap();
        assert!(flat.len() < 20_000, "{} bytes", flat.len());
        assert!(encode_rgba(2, 2, &[0; 5]).is_err());
    }
}

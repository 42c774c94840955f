//! Compressed logs (`.jsonl.gz`, `.jsonl.zst`, or any format inside gzip or zstd), read as streams:
//! the decompressed bytes go to a sink a piece at a time, so a large log never has to be held
//! whole in memory, compressed or not. Detected by content (the magic bytes), not by name.
//! Both decoders are pure Rust (flate2 on `miniz_oxide`, `ruzstd`), so this works on the web too.

use std::io::{BufRead, Read};

use super::LoadError;

/// A compression vantage reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// gzip (one member or several).
    Gzip,
    /// Zstandard (one frame or several).
    Zstd,
}

impl Compression {
    /// The compression `bytes` (the start of a file) are in, if any.
    pub fn of(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Some(Self::Gzip)
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Self::Zstd)
        } else {
            None
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Zstd => "zstd",
        }
    }
}

/// Bytes handed to the sink at a time.
const PIECE: usize = 1 << 20;

/// Decompresses `input` and hands the bytes to `sink` a piece at a time, in order. The sink may
/// stop the stream by returning an error, which is returned.
pub fn for_each_piece(
    kind: Compression,
    mut input: impl BufRead,
    mut sink: impl FnMut(&[u8]) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    let mut buffer = vec![0u8; PIECE];
    let corrupt = |e: &dyn std::fmt::Display| {
        LoadError::from(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {e}", kind.name())))
    };
    match kind {
        Compression::Gzip => {
            let mut decoder = flate2::bufread::MultiGzDecoder::new(input);
            loop {
                let n = decoder.read(&mut buffer).map_err(|e| corrupt(&e))?;
                if n == 0 {
                    return Ok(());
                }
                sink(&buffer[..n])?;
            }
        }
        Compression::Zstd => loop {
            // One decoder per frame; a file may hold several (as `zstd` writes for large inputs).
            if input.fill_buf().map_err(|e| corrupt(&e))?.is_empty() {
                return Ok(());
            }
            let mut frame = ruzstd::decoding::StreamingDecoder::new(&mut input).map_err(|e| corrupt(&e))?;
            loop {
                let n = frame.read(&mut buffer).map_err(|e| corrupt(&e))?;
                if n == 0 {
                    break;
                }
                sink(&buffer[..n])?;
            }
        },
    }
}

/// The whole decompressed content of `bytes`, stopped with [`LoadError::TooLarge`] past the
/// memory budget (a small file that inflates without end is refused, not followed).
pub fn inflate_all(kind: Compression, bytes: &[u8], budget: u64) -> Result<Vec<u8>, LoadError> {
    let mut out = Vec::new();
    for_each_piece(kind, bytes, |piece| {
        out.extend_from_slice(piece);
        if out.len() as u64 > budget {
            return Err(LoadError::TooLarge {
                needed: format!("more than {}", super::budget::size(budget)),
                budget: super::budget::size(budget),
                read: format!(
                    "{} decompressed from {} of {}",
                    super::budget::size(out.len() as u64),
                    super::budget::size(bytes.len() as u64),
                    kind.name()
                ),
            });
        }
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_and_zstd_streams_give_back_their_bytes() {
        let text = b"{\"vantage\": 1}\n".repeat(1000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &text).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(Compression::of(&gz), Some(Compression::Gzip));
        assert_eq!(inflate_all(Compression::Gzip, &gz, 1 << 30).unwrap(), text);
        let mut zst = ruzstd::encoding::compress_to_vec(&text[..7000], ruzstd::encoding::CompressionLevel::Fastest);
        zst.extend(ruzstd::encoding::compress_to_vec(&text[7000..], ruzstd::encoding::CompressionLevel::Fastest));
        assert_eq!(Compression::of(&zst), Some(Compression::Zstd));
        assert_eq!(inflate_all(Compression::Zstd, &zst, 1 << 30).unwrap(), text);
        assert!(inflate_all(Compression::Gzip, &gz[..gz.len() / 2], 1 << 30).is_err());
    }
}

//! A small ZIP reader for containers such as Inspect's `.eval`: the central directory is read
//! first, and an entry is decompressed only when asked for (stored, deflate, or zstd as method 93,
//! in as many frames as it was written), its CRC-32 checked. Pure Rust, so it works on the web too:
//! the `zip` crate reads zstd through a C binding, which does not build for wasm32. No ZIP64 (an
//! archive over 4 GiB or 65 535 entries): one is refused with a message that says so.

/// One entry of the central directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the archive.
    pub name: String,
    /// Compression method (0 stored, 8 deflate, 93 zstd).
    pub method: u16,
    /// Compressed size.
    pub compressed_size: u32,
    /// Uncompressed size.
    pub size: u32,
    /// CRC-32 of the uncompressed content.
    pub crc32: u32,
    /// Offset of the local header.
    pub local_offset: u32,
}

/// An archive over borrowed bytes.
pub struct Archive<'a> {
    bytes: &'a [u8],
    /// The most bytes an entry may inflate to (the load's memory budget).
    budget: u64,
    /// The entries, in directory order.
    pub entries: Vec<Entry>,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

impl<'a> Archive<'a> {
    /// Reads the central directory; an error says what is wrong. No entry read from it inflates
    /// past `budget` bytes.
    pub fn open(bytes: &'a [u8], budget: u64) -> Result<Self, String> {
        if !bytes.starts_with(b"PK\x03\x04") {
            return Err("not a ZIP file".to_owned());
        }
        // The end-of-central-directory record sits in the last 22 + 65535 bytes.
        let floor = bytes.len().saturating_sub(22 + 65_535);
        let eocd = (floor..bytes.len().saturating_sub(21))
            .rev()
            .find(|&i| u32_at(bytes, i) == Some(0x0605_4b50))
            .ok_or("no end-of-central-directory record (truncated archive?)")?;
        let count = u16_at(bytes, eocd + 10).ok_or("short end record")? as usize;
        let mut at = u32_at(bytes, eocd + 16).ok_or("short end record")? as usize;
        const ZIP64: &str = "a ZIP64 archive (over 4 GiB or 65 535 entries), which vantage does not read";
        if count == 0xFFFF || at == 0xFFFF_FFFF {
            return Err(ZIP64.to_owned());
        }
        let mut entries = Vec::with_capacity(count);
        for i in 0..count {
            if u32_at(bytes, at) != Some(0x0201_4b50) {
                return Err(format!("central directory entry {i} is damaged"));
            }
            let field = |offset: usize| u16_at(bytes, at + offset).ok_or_else(|| format!("entry {i} is cut off"));
            let field32 = |offset: usize| u32_at(bytes, at + offset).ok_or_else(|| format!("entry {i} is cut off"));
            let (name_len, extra_len, comment_len) = (field(28)? as usize, field(30)? as usize, field(32)? as usize);
            let name = bytes.get(at + 46..at + 46 + name_len).ok_or_else(|| format!("entry {i}: name cut off"))?;
            let entry = Entry {
                name: String::from_utf8_lossy(name).into_owned(),
                method: field(10)?,
                crc32: field32(16)?,
                compressed_size: field32(20)?,
                size: field32(24)?,
                local_offset: field32(42)?,
            };
            if [entry.compressed_size, entry.size, entry.local_offset].contains(&0xFFFF_FFFF) {
                return Err(format!("{}: {ZIP64}", entry.name));
            }
            entries.push(entry);
            at += 46 + name_len + extra_len + comment_len;
        }
        Ok(Self { bytes, budget, entries })
    }

    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The decompressed content of `entry`.
    pub fn read(&self, entry: &Entry) -> Result<Vec<u8>, String> {
        read_entry(self.bytes, entry, self.budget)
    }

    /// The decompressed content of the entry named `name`, if present.
    pub fn read_named(&self, name: &str) -> Option<Result<Vec<u8>, String>> {
        self.entry(name).map(|e| self.read(e))
    }
}

/// The decompressed content of `entry` of the archive `bytes` (for a reader that keeps the
/// directory itself and the bytes elsewhere). An entry inflates to at most the size its directory
/// entry declares and at most the memory budget ([`super::budget`]): one that would go further (a
/// ZIP bomb, or a damaged archive) is an error, found before that much memory is taken.
pub fn read_entry(bytes: &[u8], entry: &Entry, budget: u64) -> Result<Vec<u8>, String> {
    let content = inflate(bytes, entry, budget)?;
    // Not under fuzzing: a mutated entry would fail its CRC before its content is read.
    let crc = crc32(&content);
    if crc != entry.crc32 && !cfg!(fuzzing) {
        return Err(format!("{}: damaged (CRC-32 {crc:08x}, the directory says {:08x})", entry.name, entry.crc32));
    }
    Ok(content)
}

/// The archive `bytes` with each entry's CRC-32, in its central directory entry and its local
/// header, set to that of its content: what a fuzzer's mutated input looked like to the parsers
/// behind the check, which a fuzzing build skips. `tests/it/fixtures.rs` replays the kept inputs
/// through it, so that a replay reaches what the fuzzer reached. `None` when `bytes` is not an
/// archive this reader opens; an entry that does not inflate keeps its CRC.
pub fn with_true_crcs(bytes: &[u8], budget: u64) -> Option<Vec<u8>> {
    let archive = Archive::open(bytes, budget).ok()?;
    let mut out = bytes.to_vec();
    let eocd = (bytes.len().saturating_sub(22 + 65_535)..bytes.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(bytes, i) == Some(0x0605_4b50))?;
    let mut at = u32_at(bytes, eocd + 16)? as usize;
    for entry in &archive.entries {
        let (name_len, extra_len, comment_len) =
            (u16_at(bytes, at + 28)? as usize, u16_at(bytes, at + 30)? as usize, u16_at(bytes, at + 32)? as usize);
        if let Ok(content) = inflate(bytes, entry, budget) {
            let crc = crc32(&content).to_le_bytes();
            for place in [at + 16, entry.local_offset as usize + 14] {
                if let Some(slot) = out.get_mut(place..place + 4) {
                    slot.copy_from_slice(&crc);
                }
            }
        }
        at += 46 + name_len + extra_len + comment_len;
    }
    Some(out)
}

/// The content of `entry`, its CRC not checked.
fn inflate(bytes: &[u8], entry: &Entry, budget: u64) -> Result<Vec<u8>, String> {
    let at = entry.local_offset as usize;
    if u32_at(bytes, at) != Some(0x0403_4b50) {
        return Err(format!("{}: damaged local header", entry.name));
    }
    let name_len = u16_at(bytes, at + 26).ok_or("cut off")? as usize;
    let extra_len = u16_at(bytes, at + 28).ok_or("cut off")? as usize;
    let start = at + 30 + name_len + extra_len;
    let data = bytes
        .get(start..start + entry.compressed_size as usize)
        .ok_or_else(|| format!("{}: data cut off", entry.name))?;
    if u64::from(entry.size) > budget {
        return Err(format!(
            "{}: declares {} uncompressed, past the memory budget of {}",
            entry.name,
            super::budget::size(u64::from(entry.size)),
            super::budget::size(budget)
        ));
    }
    let limit = entry.size as usize;
    let bomb = || {
        format!(
            "{}: inflates past the {} its directory entry declares (a ZIP bomb, or a damaged archive); not read",
            entry.name,
            super::budget::size(u64::from(entry.size))
        )
    };
    let content = match entry.method {
        0 => Ok(data.to_vec()),
        8 => miniz_oxide::inflate::decompress_to_vec_with_limit(data, limit).map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => bomb(),
            _ => format!("{}: deflate: {e:?}", entry.name),
        }),
        93 => {
            use std::io::Read as _;
            let mut out = Vec::new();
            let mut input = data;
            // Frame after frame, as many as were written, never more than the declared size.
            while !input.is_empty() {
                let frame = ruzstd::decoding::StreamingDecoder::new(&mut input)
                    .map_err(|e| format!("{}: zstd: {e}", entry.name))?;
                let room = (limit - out.len()) as u64 + 1;
                frame.take(room).read_to_end(&mut out).map_err(|e| format!("{}: zstd: {e}", entry.name))?;
                if out.len() > limit {
                    return Err(bomb());
                }
            }
            Ok(out)
        }
        other => Err(format!("{}: compression method {other} is not supported", entry.name)),
    }?;
    Ok(content)
}

/// Writes a ZIP archive of `(name, method, content)` entries (stored, deflate or zstd): for tests
/// and sample files.
pub fn write(entries: &[(&str, u16, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut directory = Vec::new();
    for &(name, method, content) in entries {
        let data = match method {
            8 => miniz_oxide::deflate::compress_to_vec(content, 6),
            93 => ruzstd::encoding::compress_to_vec(content, ruzstd::encoding::CompressionLevel::Fastest),
            _ => content.to_vec(),
        };
        let offset = out.len() as u32;
        let crc = crc32(content);
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend_from_slice(&sig.to_le_bytes());
            if central {
                h.extend_from_slice(&20u16.to_le_bytes());
            }
            h.extend_from_slice(&20u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&method.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&crc.to_le_bytes());
            h.extend_from_slice(&(data.len() as u32).to_le_bytes());
            h.extend_from_slice(&(content.len() as u32).to_le_bytes());
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            if central {
                // Comment length, disk number, internal attributes; external attributes; offset.
                h.extend_from_slice(&[0; 6]);
                h.extend_from_slice(&0u32.to_le_bytes());
                h.extend_from_slice(&offset.to_le_bytes());
            }
            h.extend_from_slice(name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend_from_slice(&data);
        directory.extend(header(0x0201_4b50, true));
    }
    let directory_offset = out.len() as u32;
    out.extend_from_slice(&directory);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(directory.len() as u32).to_le_bytes());
    out.extend_from_slice(&directory_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// CRC-32 (IEEE), as ZIP and PNG use it.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutated_entry_fails_its_crc_until_the_replay_sets_it_to_its_content() {
        let mut bytes = write(&[("a.json", 0, b"{\"x\": 1}"), ("b.json", 8, b"[1, 2, 3]")]);
        // A fuzzer's mutation inside the stored entry's content.
        let at = bytes.windows(6).position(|w| w == b"\"x\": 1").unwrap() + 5;
        bytes[at] = b'7';
        let archive = Archive::open(&bytes, 1 << 20).unwrap();
        assert!(archive.read(&archive.entries[0]).unwrap_err().contains("damaged (CRC-32"));
        let fixed = with_true_crcs(&bytes, 1 << 20).unwrap();
        let archive = Archive::open(&fixed, 1 << 20).unwrap();
        assert_eq!(archive.read(&archive.entries[0]).unwrap(), b"{\"x\": 7}");
        assert_eq!(archive.read(&archive.entries[1]).unwrap(), b"[1, 2, 3]");
        assert_eq!(with_true_crcs(b"not a zip", 1 << 20), None);
    }

    #[test]
    fn round_trips_stored_deflate_and_zstd_entries() {
        let big = "{\"k\": 1}\n".repeat(10_000);
        let bytes = write(&[("a.json", 0, b"{}"), ("b.json", 8, big.as_bytes()), ("c.json", 93, big.as_bytes())]);
        let archive = Archive::open(&bytes, 1 << 30).expect("opens");
        assert_eq!(archive.entries.len(), 3);
        for name in ["b.json", "c.json"] {
            assert_eq!(archive.read_named(name).expect("present").expect("reads"), big.as_bytes());
        }
        assert_eq!(archive.read_named("a.json").expect("present").expect("reads"), b"{}");
        assert!(
            Archive::open(&bytes[..bytes.len() - 30], 1 << 30).is_err(),
            "a cut-off archive is an error, not a panic"
        );
    }
}

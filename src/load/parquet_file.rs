//! Reading the columns of a Parquet file without polars, on every target: the footer and its
//! schema, then one column at a time from its column chunks' bytes, so that a reader that
//! fetches byte ranges (the web build over HTTP Range requests, or a file read in pieces) reads
//! only the columns it needs.
//!
//! Written here, not taken from a crate, because none builds for `wasm32-unknown-unknown` with
//! the codecs vantage's own files use: polars does not build for wasm32 at all, and the
//! `parquet` crate's zstd codec is the C library (`zstd-sys`), which this toolchain cannot
//! compile for wasm32. The codecs here are pure Rust: `ruzstd`, `snap`, and flate2 on
//! `miniz_oxide`; natively, with the `parquet` feature, zstd pages go to the C library that
//! polars links anyway, which is about 3× faster than `ruzstd` on them.
//!
//! What it reads: flat columns and lists of one level (Parquet's three-level `LIST` and the
//! legacy two-level form) of booleans, 32- and 64-bit integers (signed or unsigned), floats,
//! doubles and byte arrays; PLAIN, dictionary (`PLAIN_DICTIONARY`, `RLE_DICTIONARY`), RLE booleans
//! and `BYTE_STREAM_SPLIT` values; data pages v1 and v2; uncompressed, zstd, snappy and gzip
//! pages. Everything else is an error that names it. Every count a file declares is bounded
//! by the bytes that hold it, so a damaged file is an error, never an allocation of what it
//! claims.

use std::io::Read as _;

use super::thrift::{Reader, Value};

/// Most value slots (values and nulls) one column of one file may hold.
const MAX_SLOTS: usize = 1 << 26;

/// Most bytes a page may decompress to.
const MAX_PAGE: usize = 1 << 30;

/// A Parquet physical type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Physical {
    Boolean,
    Int32,
    Int64,
    Float,
    Double,
    ByteArray,
}

/// How a leaf column's levels nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// One value per row.
    Flat,
    /// A list per row: a definition level below `present` is a null list, below `element` an
    /// empty one, below the maximum a null element.
    List { present: u8, element: u8 },
    /// Nesting this reader does not follow (more than one repeated level).
    Nested,
}

/// A leaf column of the schema.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The name of the top-level field it belongs to.
    pub name: String,
    /// Its full path of names below the root, dotted (`messages.list.element.role` for a field
    /// of a struct inside a list).
    pub path: String,
    physical: Option<Physical>,
    unsigned: bool,
    shape: Shape,
    max_def: u8,
    max_rep: u8,
}

/// Where one column chunk's bytes are in the file.
#[derive(Clone, Copy, Debug)]
pub struct Chunk {
    /// Offset of its first page.
    pub start: u64,
    /// Its length in bytes.
    pub len: u64,
    codec: i64,
}

/// A file's footer: its rows, leaf columns and the chunks of each row group.
#[derive(Clone, Debug)]
pub struct ParquetMeta {
    /// Rows in the file.
    pub rows: u64,
    /// The leaf columns, in the file's order.
    pub leaves: Vec<Leaf>,
    /// For each row group, the chunk of each leaf.
    pub row_groups: Vec<Vec<Chunk>>,
}

/// The values of a column, one per slot (a null slot holds a default value).
#[derive(Debug)]
pub enum Values {
    /// Booleans.
    Bool(Vec<bool>),
    /// Integers (unsigned 32-bit ones zero-extended, unsigned 64-bit ones as their bits).
    Int(Vec<i64>),
    /// 32-bit floats.
    F32(Vec<f32>),
    /// 64-bit floats.
    F64(Vec<f64>),
    /// UTF-8 texts: the concatenated bytes (checked to be UTF-8 at every slot's boundary) and
    /// each slot's end.
    Text { data: String, ends: Vec<usize> },
    /// Byte arrays that are not all UTF-8.
    Bytes,
}

/// One decoded column.
#[derive(Debug)]
pub struct Column {
    /// The values, one per slot.
    pub values: Values,
    /// Whether each slot holds a value (`None`: all do).
    pub valid: Option<Vec<bool>>,
    /// For a list column, where each row's slots start (one more than the rows) and whether
    /// the row's list is there at all.
    pub lists: Option<(Vec<usize>, Vec<bool>)>,
    /// Whether values are unsigned (a negative one, read back, is out of range).
    pub unsigned: bool,
}

impl Column {
    /// Whether slot `i` holds a value.
    pub fn is_valid(&self, i: usize) -> bool {
        self.valid.as_ref().is_none_or(|v| v.get(i).copied().unwrap_or(false))
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        match &self.values {
            Values::Bool(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Text { ends, .. } => ends.len(),
            Values::Bytes => self.valid.as_ref().map_or(0, Vec::len),
        }
    }

    /// The slots of row `row` of a list column (`None` for a null list or a flat column).
    pub fn list(&self, row: usize) -> Option<std::ops::Range<usize>> {
        let (offsets, present) = self.lists.as_ref()?;
        if !*present.get(row)? {
            return None;
        }
        Some(offsets[row]..offsets[row + 1])
    }

    /// Slot `i` as a float.
    pub fn f32(&self, i: usize) -> Option<f32> {
        if !self.is_valid(i) {
            return None;
        }
        match &self.values {
            Values::F32(v) => v.get(i).copied(),
            Values::F64(v) => v.get(i).map(|&x| x as f32),
            Values::Int(v) => v.get(i).map(|&x| x as f32),
            _ => None,
        }
    }

    /// Slot `i` as an integer.
    pub fn int(&self, i: usize) -> Option<i64> {
        if !self.is_valid(i) {
            return None;
        }
        match &self.values {
            Values::Int(v) => v.get(i).copied(),
            _ => None,
        }
    }

    /// Slot `i` as an unsigned 64-bit integer.
    pub fn u64(&self, i: usize) -> Option<u64> {
        let v = self.int(i)?;
        if self.unsigned { Some(v as u64) } else { u64::try_from(v).ok() }
    }

    /// Slot `i` as an unsigned 32-bit integer.
    pub fn u32(&self, i: usize) -> Option<u32> {
        u32::try_from(self.u64(i)?).ok()
    }

    /// Slot `i` as a boolean.
    pub fn bool(&self, i: usize) -> Option<bool> {
        if !self.is_valid(i) {
            return None;
        }
        match &self.values {
            Values::Bool(v) => v.get(i).copied(),
            _ => None,
        }
    }

    /// Slot `i` as a text.
    pub fn str(&self, i: usize) -> Option<&str> {
        if !self.is_valid(i) {
            return None;
        }
        match &self.values {
            Values::Text { data, ends } => {
                let start = if i == 0 { 0 } else { *ends.get(i - 1)? };
                data.get(start..*ends.get(i)?)
            }
            _ => None,
        }
    }

    /// What the values are, as an error names them.
    pub fn type_name(&self) -> &'static str {
        match &self.values {
            Values::Bool(_) => "booleans",
            Values::Int(_) => "integers",
            Values::F32(_) | Values::F64(_) => "floats",
            Values::Text { .. } => "texts",
            Values::Bytes => "binary",
        }
    }
}

/// The length of the footer, from a file's last 8 bytes.
pub fn footer_len(tail: &[u8]) -> Result<u64, String> {
    let n = tail.len();
    if n < 8 || !tail.ends_with(b"PAR1") {
        return Err("not a Parquet file (no PAR1 at its end)".to_owned());
    }
    Ok(u64::from(u32::from_le_bytes([tail[n - 8], tail[n - 7], tail[n - 6], tail[n - 5]])))
}

impl ParquetMeta {
    /// The footer of a whole file.
    pub fn of_file(bytes: &[u8]) -> Result<Self, String> {
        let len = footer_len(bytes)?;
        let n = bytes.len() as u64;
        let start = (n - 8).checked_sub(len).filter(|&s| s >= 4).ok_or("a footer longer than the file")?;
        Self::parse(&bytes[start as usize..(n - 8) as usize], start)
    }

    /// The footer from its bytes (without the length and magic after it), which start at
    /// offset `footer_start` of the file: chunks must lie before it.
    pub fn parse(footer: &[u8], footer_start: u64) -> Result<Self, String> {
        let meta = Reader::new(footer).fields(0).map_err(|e| format!("footer: {e}"))?;
        let rows = u64::try_from(meta.int(3).ok_or("footer: no row count")?).map_err(|_n| "footer: negative rows")?;
        let leaves = leaves(meta.list(2))?;
        let mut row_groups = Vec::new();
        for (g, group) in meta.list(4).iter().enumerate() {
            let chunks = group.list(1);
            if chunks.len() != leaves.len() {
                return Err(format!("row group {g}: {} column chunks for {} columns", chunks.len(), leaves.len()));
            }
            let mut out = Vec::with_capacity(chunks.len());
            for (c, chunk) in chunks.iter().enumerate() {
                let what = || format!("row group {g}, column {}", leaves[c].name);
                let m = chunk.field(3).ok_or_else(|| format!("{}: no metadata", what()))?;
                let start = match (m.int(11), m.int(9)) {
                    (Some(d), Some(p)) if d > 0 => d.min(p),
                    (_, Some(p)) => p,
                    _ => return Err(format!("{}: no data page offset", what())),
                };
                let len = m.int(7).ok_or_else(|| format!("{}: no size", what()))?;
                let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(len)) else {
                    return Err(format!("{}: a negative offset or size", what()));
                };
                if start < 4 || start.saturating_add(len) > footer_start {
                    return Err(format!("{}: a chunk of {len} bytes at {start} past the file", what()));
                }
                out.push(Chunk { start, len, codec: m.int(4).unwrap_or(0) });
            }
            row_groups.push(out);
        }
        Ok(Self { rows, leaves, row_groups })
    }

    /// The index of the leaf of top-level field `name`.
    pub fn leaf(&self, name: &str) -> Option<usize> {
        self.leaves.iter().position(|l| l.name == name)
    }

    /// The index of the leaf at the dotted `path` (a field of a struct: `messages.list.element.role`).
    pub fn leaf_at(&self, path: &str) -> Option<usize> {
        self.leaves.iter().position(|l| l.path == path)
    }

    /// The chunks of leaf `leaf`, one per row group.
    pub fn chunks(&self, leaf: usize) -> impl Iterator<Item = Chunk> + '_ {
        self.row_groups.iter().filter_map(move |g| g.get(leaf).copied())
    }
}

/// The leaf columns of a flattened schema (depth first; element 0 is the root).
fn leaves(schema: &[Value]) -> Result<Vec<Leaf>, String> {
    /// Walks the element at `*at` and its children: `path` holds (repetition, name) of its
    /// ancestors below the root.
    fn walk(
        schema: &[Value],
        at: &mut usize,
        path: &mut Vec<i64>,
        names: &mut Vec<String>,
        top: &str,
        out: &mut Vec<Leaf>,
    ) -> Result<(), String> {
        let element = schema.get(*at).ok_or("schema: cut off")?;
        *at += 1;
        let name = element.str(4).unwrap_or("");
        let top = if path.is_empty() { name } else { top };
        path.push(element.int(3).unwrap_or(0));
        names.push(name.to_owned());
        let children = element.int(5).unwrap_or(0);
        if children > 0 {
            if path.len() > 16 || usize::try_from(children).map_or(true, |c| c > schema.len()) {
                return Err("schema: nested too deep or too many children".to_owned());
            }
            for _ in 0..children {
                walk(schema, at, path, names, top, out)?;
            }
        } else {
            out.push(leaf(element, path, top, names.join(".")));
        }
        path.pop();
        names.pop();
        Ok(())
    }
    let root = schema.first().ok_or("schema: empty")?;
    let mut at = 1;
    let mut out = Vec::new();
    let mut path = Vec::new();
    let mut names = Vec::new();
    for _ in 0..root.int(5).unwrap_or(0) {
        walk(schema, &mut at, &mut path, &mut names, "", &mut out)?;
    }
    Ok(out)
}

/// A leaf column, from its element and the repetitions (0 required, 1 optional, 2 repeated)
/// from its top-level field down to itself.
fn leaf(element: &Value, path: &[i64], top: &str, dotted: String) -> Leaf {
    let physical = match element.int(1) {
        Some(0) => Some(Physical::Boolean),
        Some(1) => Some(Physical::Int32),
        Some(2) => Some(Physical::Int64),
        Some(4) => Some(Physical::Float),
        Some(5) => Some(Physical::Double),
        Some(6) => Some(Physical::ByteArray),
        _ => None,
    };
    // Converted types 11–14 are UINT_8..UINT_64; logical type 10 is INTEGER { bitWidth, isSigned }.
    let logical_unsigned = element.field(10).and_then(|l| l.field(10)).and_then(|i| i.bool(2)) == Some(false);
    let unsigned = logical_unsigned || matches!(element.int(6), Some(11..=14));
    let (mut def, mut rep, mut present, mut first_rep) = (0u8, 0u8, 0u8, None);
    for &repetition in path {
        match repetition {
            1 => def = def.saturating_add(1),
            2 => {
                if first_rep.is_none() {
                    present = def;
                    first_rep = Some(def + 1);
                }
                def = def.saturating_add(1);
                rep = rep.saturating_add(1);
            }
            _ => {}
        }
    }
    let shape = match (rep, first_rep) {
        (0, _) => Shape::Flat,
        (1, Some(element)) => Shape::List { present, element },
        _ => Shape::Nested,
    };
    Leaf { name: top.to_owned(), path: dotted, physical, unsigned, shape, max_def: def, max_rep: rep }
}

/// Reads the bit-packed / run-length hybrid encoding of `count` values of `width` bits.
fn hybrid(bytes: &[u8], width: u8, count: usize, out: &mut Vec<u32>) -> Result<(), String> {
    if width > 32 {
        return Err(format!("a bit width of {width}"));
    }
    let mut r = Reader::new(bytes);
    let want = out.len() + count;
    let value_bytes = usize::from(width).div_ceil(8);
    while out.len() < want {
        let header = varint(bytes, &mut r.at)?;
        if header & 1 == 0 {
            let run = usize::try_from(header >> 1).map_err(|_n| "a run past memory")?;
            let raw = bytes.get(r.at..r.at + value_bytes).ok_or("levels cut off")?;
            r.at += value_bytes;
            let mut value = 0u32;
            for (k, b) in raw.iter().enumerate() {
                value |= u32::from(*b) << (8 * k);
            }
            let n = run.min(want - out.len());
            out.extend(std::iter::repeat_n(value, n));
        } else {
            let groups = usize::try_from(header >> 1).map_err(|_n| "a run past memory")?;
            let len = groups.checked_mul(usize::from(width)).ok_or("a run past memory")?;
            let packed = bytes.get(r.at..r.at.saturating_add(len)).unwrap_or(&bytes[r.at.min(bytes.len())..]);
            r.at = r.at.saturating_add(len);
            let n = (groups * 8).min(want - out.len());
            unpack(packed, width, n, out);
            if packed.len() < len && out.len() < want {
                return Err("levels cut off".to_owned());
            }
        }
    }
    Ok(())
}

fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at).ok_or("levels cut off")?;
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a number longer than 10 bytes".to_owned())
}

/// Appends `n` values of `width` bits packed little-endian, least significant bit first.
fn unpack(packed: &[u8], width: u8, n: usize, out: &mut Vec<u32>) {
    let width = usize::from(width);
    if width == 0 {
        out.extend(std::iter::repeat_n(0, n));
        return;
    }
    let available = packed.len() * 8 / width;
    for i in 0..n.min(available) {
        let bit = i * width;
        let mut value = 0u64;
        for k in 0..=width.div_ceil(8) {
            if let Some(&b) = packed.get(bit / 8 + k) {
                value |= u64::from(b) << (8 * k);
            }
        }
        out.push(((value >> (bit % 8)) & ((1u64 << width) - 1)) as u32);
    }
}

/// The bits needed for levels up to `max`.
fn level_width(max: u8) -> u8 {
    (8 - max.leading_zeros()) as u8
}

/// Decompresses a page body.
fn decompress(codec: i64, body: &[u8], size: usize) -> Result<Vec<u8>, String> {
    if size > MAX_PAGE {
        return Err(format!("a page of {size} bytes"));
    }
    let limited = |reader: &mut dyn std::io::Read, what: &str| -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(size.min(body.len().saturating_mul(16)));
        reader.take(size as u64 + 1).read_to_end(&mut out).map_err(|e| format!("{what}: {e}"))?;
        if out.len() != size {
            return Err(format!("{what}: the page holds {} bytes, its header says {size}", out.len()));
        }
        Ok(out)
    };
    match codec {
        0 => Ok(body.to_vec()),
        1 => {
            let len = snap::raw::decompress_len(body).map_err(|e| format!("snappy: {e}"))?;
            if len != size {
                return Err(format!("snappy: the page holds {len} bytes, its header says {size}"));
            }
            snap::raw::Decoder::new().decompress_vec(body).map_err(|e| format!("snappy: {e}"))
        }
        2 => limited(&mut flate2::read::MultiGzDecoder::new(body), "gzip"),
        #[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
        6 => {
            // The C library, linked already by polars: about 3× ruzstd's speed on text pages.
            let out = zstd::bulk::decompress(body, size).map_err(|e| format!("zstd: {e}"))?;
            if out.len() != size {
                return Err(format!("zstd: the page holds {} bytes, its header says {size}", out.len()));
            }
            Ok(out)
        }
        #[cfg(not(all(not(target_arch = "wasm32"), feature = "parquet")))]
        6 => {
            let mut input = body;
            let mut frame = ruzstd::decoding::StreamingDecoder::new(&mut input).map_err(|e| format!("zstd: {e}"))?;
            limited(&mut frame, "zstd")
        }
        other => {
            let name = match other {
                3 => "LZO",
                4 => "Brotli",
                5 => "LZ4",
                7 => "LZ4_RAW",
                _ => "an unknown codec",
            };
            Err(format!("pages compressed with {name}, which this reader does not decode (vantage writes zstd)"))
        }
    }
}

/// The values of the non-null slots of a column as they are decoded, page by page.
enum Raw {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bytes(Vec<u8>, Vec<usize>),
}

impl Raw {
    fn new(physical: Physical) -> Self {
        match physical {
            Physical::Boolean => Self::Bool(Vec::new()),
            Physical::Int32 | Physical::Int64 => Self::Int(Vec::new()),
            Physical::Float => Self::F32(Vec::new()),
            Physical::Double => Self::F64(Vec::new()),
            Physical::ByteArray => Self::Bytes(Vec::new(), Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Bool(v) => v.len(),
            Self::Int(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::F64(v) => v.len(),
            Self::Bytes(_, ends) => ends.len(),
        }
    }

    /// Appends `n` PLAIN-encoded values from `bytes`.
    fn plain(&mut self, leaf: &Leaf, bytes: &[u8], n: usize) -> Result<(), String> {
        let short = || format!("{}: values cut off", leaf.name);
        let fixed = |width: usize| -> Result<&[u8], String> {
            bytes.get(..n.checked_mul(width).ok_or_else(short)?).ok_or_else(short)
        };
        match (self, leaf.physical) {
            (Self::Bool(v), _) => {
                if bytes.len() * 8 < n {
                    return Err(short());
                }
                v.extend((0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1));
            }
            (Self::Int(v), Some(Physical::Int32)) => {
                let unsigned = leaf.unsigned;
                v.extend(fixed(4)?.chunks_exact(4).map(|c| {
                    let x = [c[0], c[1], c[2], c[3]];
                    if unsigned { i64::from(u32::from_le_bytes(x)) } else { i64::from(i32::from_le_bytes(x)) }
                }));
            }
            (Self::Int(v), _) => v.extend(
                fixed(8)?.chunks_exact(8).map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            ),
            (Self::F32(v), _) => {
                v.extend(fixed(4)?.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            }
            (Self::F64(v), _) => v.extend(
                fixed(8)?.chunks_exact(8).map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
            ),
            (Self::Bytes(data, ends), _) => {
                let mut at = 0usize;
                for _ in 0..n {
                    let len = bytes.get(at..at + 4).ok_or_else(short)?;
                    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
                    let value = bytes.get(at + 4..at + 4 + len).ok_or_else(short)?;
                    data.extend_from_slice(value);
                    ends.push(data.len());
                    at += 4 + len;
                }
            }
        }
        Ok(())
    }

    /// Appends `n` `BYTE_STREAM_SPLIT` values (fixed-width types only).
    fn byte_stream_split(&mut self, leaf: &Leaf, bytes: &[u8], n: usize) -> Result<(), String> {
        let width = match leaf.physical {
            Some(Physical::Int32 | Physical::Float) => 4,
            Some(Physical::Int64 | Physical::Double) => 8,
            _ => return Err(format!("{}: BYTE_STREAM_SPLIT on a type without a width", leaf.name)),
        };
        if bytes.len() < n * width {
            return Err(format!("{}: values cut off", leaf.name));
        }
        let mut plain = vec![0u8; n * width];
        for i in 0..n {
            for k in 0..width {
                plain[i * width + k] = bytes[k * n + i];
            }
        }
        self.plain(leaf, &plain, n)
    }

    /// Appends the dictionary values at `indices`.
    fn pick(&mut self, dictionary: &Self, indices: &[u32]) -> Result<(), String> {
        let bad = |i: u32| format!("a dictionary index {i} past the dictionary's {}", dictionary.len());
        macro_rules! copy {
            ($out:expr, $dict:expr) => {
                for &i in indices {
                    $out.push(*$dict.get(i as usize).ok_or_else(|| bad(i))?);
                }
            };
        }
        match (self, dictionary) {
            (Self::Bool(out), Self::Bool(dict)) => copy!(out, dict),
            (Self::Int(out), Self::Int(dict)) => copy!(out, dict),
            (Self::F32(out), Self::F32(dict)) => copy!(out, dict),
            (Self::F64(out), Self::F64(dict)) => copy!(out, dict),
            (Self::Bytes(data, ends), Self::Bytes(dict, dict_ends)) => {
                for &i in indices {
                    let i = i as usize;
                    let end = *dict_ends.get(i).ok_or_else(|| bad(i as u32))?;
                    let start = if i == 0 { 0 } else { dict_ends[i - 1] };
                    data.extend_from_slice(&dict[start..end]);
                    ends.push(data.len());
                }
            }
            _ => return Err("a dictionary of another type".to_owned()),
        }
        Ok(())
    }
}

/// Decodes leaf `leaf` of a file from the bytes of its chunks (one per row group, in order).
pub fn decode(meta: &ParquetMeta, leaf: usize, chunks: &[&[u8]]) -> Result<Column, String> {
    decode_with(meta, leaf, chunks, true)
}

/// Decodes leaf `leaf` of a file held whole in `bytes` (its chunks sliced from it; a chunk past the
/// end reads as empty, which the decoder refuses).
pub fn decode_in(meta: &ParquetMeta, leaf: usize, bytes: &[u8]) -> Result<Column, String> {
    let chunks: Vec<&[u8]> =
        meta.chunks(leaf).map(|c| bytes.get(c.start as usize..(c.start + c.len) as usize).unwrap_or(&[])).collect();
    decode(meta, leaf, &chunks)
}

/// Decodes only which slots of leaf `leaf` hold a value (the values are not read: a
/// [`Values::Bytes`] column with `valid` set).
pub fn decode_validity(meta: &ParquetMeta, leaf: usize, chunks: &[&[u8]]) -> Result<Column, String> {
    decode_with(meta, leaf, chunks, false)
}

fn decode_with(meta: &ParquetMeta, leaf: usize, chunks: &[&[u8]], values: bool) -> Result<Column, String> {
    let l = meta.leaves.get(leaf).ok_or("no such column")?;
    let located = |e: String| format!("column {}: {e}", l.name);
    let physical = l.physical.ok_or_else(|| located("a physical type this reader does not read".to_owned()))?;
    if l.shape == Shape::Nested {
        return Err(located("nested deeper than a list, which this reader does not read".to_owned()));
    }
    let mut levels = Levels { def: Vec::new(), rep: Vec::new(), count: 0 };
    let mut raw = Raw::new(physical);
    if chunks.len() != meta.row_groups.len() {
        return Err(located(format!("{} chunks for {} row groups", chunks.len(), meta.row_groups.len())));
    }
    for (chunk, bytes) in meta.chunks(leaf).zip(chunks) {
        read_chunk(l, chunk, bytes, &mut levels, values.then_some(&mut raw)).map_err(located)?;
    }
    assemble(l, levels, values.then_some(raw)).map_err(located)
}

/// The definition and repetition levels read so far (empty when the column has none).
struct Levels {
    def: Vec<u8>,
    rep: Vec<u8>,
    /// Slots read (values and nulls).
    count: usize,
}

/// Reads the pages of one column chunk.
fn read_chunk(
    l: &Leaf,
    chunk: Chunk,
    bytes: &[u8],
    levels: &mut Levels,
    mut raw: Option<&mut Raw>,
) -> Result<(), String> {
    let mut dictionary: Option<Raw> = None;
    let mut at = 0usize;
    let len = usize::try_from(chunk.len).map_err(|_n| "a chunk past memory")?;
    if bytes.len() < len {
        return Err(format!("a chunk of {len} bytes cut to {}", bytes.len()));
    }
    while at < len {
        let mut r = Reader::new(&bytes[at..len]);
        let header = r.fields(0).map_err(|e| format!("page header at {}: {e}", chunk.start as usize + at))?;
        let compressed = usize::try_from(header.int(3).unwrap_or(-1)).map_err(|_n| "a page without its size")?;
        let size = usize::try_from(header.int(2).unwrap_or(-1)).map_err(|_n| "a page without its size")?;
        let body_at = at + r.at;
        let body = bytes.get(body_at..body_at + compressed).ok_or("a page past its chunk")?;
        at = body_at + compressed;
        match header.int(1) {
            Some(2) => {
                if raw.is_none() {
                    continue;
                }
                let page = header.field(7).ok_or("a dictionary page without its header")?;
                let n = count(page.int(1), size)?;
                let mut dict = Raw::new(l.physical.ok_or("no type")?);
                let plain = decompress(chunk.codec, body, size)?;
                dict.plain(l, &plain, n)?;
                dictionary = Some(dict);
            }
            Some(0) => {
                let page = header.field(5).ok_or("a data page without its header")?;
                let plain = decompress(chunk.codec, body, size)?;
                let n = count(page.int(1), size.max(compressed))?;
                let mut at = 0;
                if l.max_rep > 0 {
                    at += prefixed_levels(&plain[at..], l.max_rep, n, &mut levels.rep)?;
                }
                if l.max_def > 0 {
                    at += prefixed_levels(&plain[at..], l.max_def, n, &mut levels.def)?;
                }
                levels.count += n;
                let present = present(l, &levels.def, n);
                if let Some(raw) = raw.as_deref_mut() {
                    values(l, page.int(2).unwrap_or(0), &plain[at..], present, dictionary.as_ref(), raw)?;
                }
            }
            Some(3) => {
                let page = header.field(8).ok_or("a data page v2 without its header")?;
                let n = count(page.int(1), size.max(compressed))?;
                let rep_len = usize::try_from(page.int(6).unwrap_or(0)).map_err(|_n| "negative level bytes")?;
                let def_len = usize::try_from(page.int(5).unwrap_or(0)).map_err(|_n| "negative level bytes")?;
                let rep = body.get(..rep_len).ok_or("levels past the page")?;
                let def = body.get(rep_len..rep_len + def_len).ok_or("levels past the page")?;
                if l.max_rep > 0 {
                    hybrid_levels(rep, l.max_rep, n, &mut levels.rep)?;
                }
                if l.max_def > 0 {
                    hybrid_levels(def, l.max_def, n, &mut levels.def)?;
                }
                levels.count += n;
                let present = present(l, &levels.def, n);
                if let Some(raw) = raw.as_deref_mut() {
                    let rest = &body[rep_len + def_len..];
                    let size = size.checked_sub(rep_len + def_len).ok_or("levels past the page")?;
                    let plain =
                        if page.bool(7).unwrap_or(true) { decompress(chunk.codec, rest, size)? } else { rest.to_vec() };
                    values(l, page.int(4).unwrap_or(0), &plain, present, dictionary.as_ref(), raw)?;
                }
            }
            _ => {}
        }
        if levels.count > MAX_SLOTS || raw.as_ref().is_some_and(|r| r.len() > MAX_SLOTS) {
            return Err(format!("more than {MAX_SLOTS} values"));
        }
    }
    Ok(())
}

/// A page's declared count of values, bounded by what its bytes can hold.
fn count(declared: Option<i64>, bytes: usize) -> Result<usize, String> {
    let n = usize::try_from(declared.unwrap_or(-1)).map_err(|_n| "a page without its count")?;
    if n > (bytes + 64).saturating_mul(4096).min(MAX_SLOTS) {
        return Err(format!("a page of {bytes} bytes declares {n} values"));
    }
    Ok(n)
}

/// The non-null values among the last `n` slots.
fn present(l: &Leaf, def: &[u8], n: usize) -> usize {
    if l.max_def == 0 {
        return n;
    }
    def[def.len().saturating_sub(n)..].iter().filter(|&&d| d == l.max_def).count()
}

/// Levels with a 4-byte length before them (data page v1); returns the bytes taken.
fn prefixed_levels(bytes: &[u8], max: u8, n: usize, out: &mut Vec<u8>) -> Result<usize, String> {
    let len = bytes.get(..4).ok_or("levels cut off")?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    hybrid_levels(bytes.get(4..4 + len).ok_or("levels cut off")?, max, n, out)?;
    Ok(4 + len)
}

fn hybrid_levels(bytes: &[u8], max: u8, n: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let mut values = Vec::with_capacity(n.min(bytes.len().saturating_mul(8) + 1024));
    hybrid(bytes, level_width(max), n, &mut values)?;
    if values.iter().any(|&v| v > u32::from(max)) {
        return Err(format!("a level above its maximum {max}"));
    }
    out.extend(values.iter().map(|&v| v as u8));
    Ok(())
}

/// Decodes `n` values encoded with `encoding`.
fn values(
    l: &Leaf,
    encoding: i64,
    bytes: &[u8],
    n: usize,
    dictionary: Option<&Raw>,
    raw: &mut Raw,
) -> Result<(), String> {
    match encoding {
        0 => raw.plain(l, bytes, n),
        2 | 8 => {
            let dictionary = dictionary.ok_or("dictionary-encoded values without a dictionary page")?;
            let (&width, rest) = bytes.split_first().ok_or("values cut off")?;
            let mut indices = Vec::with_capacity(n);
            hybrid(rest, width, n, &mut indices)?;
            raw.pick(dictionary, &indices)
        }
        3 if l.physical == Some(Physical::Boolean) => {
            let len = bytes.get(..4).ok_or("values cut off")?;
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
            let mut bits = Vec::with_capacity(n);
            hybrid(bytes.get(4..4 + len).ok_or("values cut off")?, 1, n, &mut bits)?;
            if let Raw::Bool(v) = raw {
                v.extend(bits.iter().map(|&b| b == 1));
            }
            Ok(())
        }
        9 => raw.byte_stream_split(l, bytes, n),
        other => {
            let name = match other {
                5 => "DELTA_BINARY_PACKED",
                6 => "DELTA_LENGTH_BYTE_ARRAY",
                7 => "DELTA_BYTE_ARRAY",
                _ => "an unknown encoding",
            };
            Err(format!("values encoded as {name}, which this reader does not decode"))
        }
    }
}

/// The column from its levels and the values of its non-null slots (`None`: only validity).
fn assemble(l: &Leaf, levels: Levels, raw: Option<Raw>) -> Result<Column, String> {
    let Levels { def, rep, count } = levels;
    let (valid, lists) = match l.shape {
        Shape::List { present, element } => {
            if rep.len() != def.len() {
                return Err("repetition and definition levels of different lengths".to_owned());
            }
            let (mut offsets, mut there, mut valid) = (Vec::new(), Vec::new(), Vec::new());
            for (&r, &d) in rep.iter().zip(&def) {
                if r == 0 {
                    offsets.push(valid.len());
                    there.push(d >= present);
                }
                if d >= element {
                    valid.push(d == l.max_def);
                }
            }
            offsets.push(valid.len());
            (Some(valid), Some((offsets, there)))
        }
        _ if l.max_def > 0 => (Some(def.iter().map(|&d| d == l.max_def).collect::<Vec<bool>>()), None),
        _ => (None, None),
    };
    let slots = valid.as_ref().map_or(count, Vec::len);
    let values = match raw {
        None => Values::Bytes,
        Some(raw) => {
            let present = valid.as_ref().map_or(slots, |v| v.iter().filter(|&&v| v).count());
            if raw.len() != present {
                return Err(format!("{} values for {present} non-null slots", raw.len()));
            }
            spread(raw, valid.as_deref())
        }
    };
    let valid = match (&values, valid) {
        (Values::Bytes, None) => Some(vec![true; slots]),
        (_, valid) => valid,
    };
    Ok(Column { values, valid, lists, unsigned: l.unsigned })
}

/// One value per slot: the non-null values at the valid slots (all, when `valid` is `None`), a
/// default at the others.
fn spread(raw: Raw, valid: Option<&[bool]>) -> Values {
    fn fill<T: Copy + Default>(values: Vec<T>, valid: Option<&[bool]>) -> Vec<T> {
        let Some(valid) = valid else { return values };
        let mut it = values.into_iter();
        valid.iter().map(|&v| if v { it.next().unwrap_or_default() } else { T::default() }).collect()
    }
    match raw {
        Raw::Bool(v) => Values::Bool(fill(v, valid)),
        Raw::Int(v) => Values::Int(fill(v, valid)),
        Raw::F32(v) => Values::F32(fill(v, valid)),
        Raw::F64(v) => Values::F64(fill(v, valid)),
        Raw::Bytes(data, ends) => {
            let Ok(data) = String::from_utf8(data) else { return Values::Bytes };
            if !ends.iter().all(|&e| data.is_char_boundary(e)) {
                return Values::Bytes;
            }
            let ends = match valid {
                None => ends,
                Some(valid) => {
                    let (mut it, mut last) = (ends.into_iter(), 0);
                    valid
                        .iter()
                        .map(|&v| {
                            if v {
                                last = it.next().unwrap_or(last);
                            }
                            last
                        })
                        .collect()
                }
            };
            Values::Text { data, ends }
        }
    }
}

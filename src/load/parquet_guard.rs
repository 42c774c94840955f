//! A Parquet file's structure checked before polars reads it. polars (0.55) sizes its buffers by
//! the counts a file declares, in its footer and in each page header, and a damaged file that
//! declares 10¹⁴ entries makes it ask for that much memory, which aborts the process (found by
//! fuzzing). So the footer (Thrift compact protocol) is parsed here with every list, map and string
//! bounded by the bytes that remain, and every page header of every column chunk is read: a page
//! must fit in its chunk, and its value count and sizes must be ones the file can hold. Pure Rust,
//! no allocation beyond the footer's own size.

use super::thrift::{Reader, Value};

/// Values a page may declare at most: a data page's values each take at least a bit of its
/// uncompressed bytes or of its repetition levels, so more than 8 per byte (plus a margin for
/// run-length encoded nulls, which take almost none) is damage.
const MAX_VALUES_PER_BYTE: i64 = 1 << 12;

/// What a field must be.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Int,
    List,
    Struct,
    Other,
}

/// The fields of the Parquet structures read here (parquet.thrift): id, kind, required.
const FILE_META: &[(i16, Kind, bool)] = &[
    (1, Kind::Int, true),
    (2, Kind::List, true),
    (3, Kind::Int, true),
    (4, Kind::List, true),
    (5, Kind::List, false),
    (6, Kind::Other, false),
    (7, Kind::List, false),
];
const ROW_GROUP: &[(i16, Kind, bool)] = &[(1, Kind::List, true), (2, Kind::Int, true), (3, Kind::Int, true)];
const COLUMN_CHUNK: &[(i16, Kind, bool)] = &[(1, Kind::Other, false), (2, Kind::Int, true), (3, Kind::Struct, false)];
const COLUMN_META: &[(i16, Kind, bool)] = &[
    (1, Kind::Int, true),
    (2, Kind::List, true),
    (3, Kind::List, true),
    (4, Kind::Int, true),
    (5, Kind::Int, true),
    (6, Kind::Int, true),
    (7, Kind::Int, true),
    (8, Kind::List, false),
    (9, Kind::Int, true),
    (10, Kind::Int, false),
    (11, Kind::Int, false),
];
const PAGE_HEADER: &[(i16, Kind, bool)] = &[
    (1, Kind::Int, true),
    (2, Kind::Int, true),
    (3, Kind::Int, true),
    (4, Kind::Int, false),
    (5, Kind::Struct, false),
    (6, Kind::Struct, false),
    (7, Kind::Struct, false),
    (8, Kind::Struct, false),
];
const DATA_PAGE: &[(i16, Kind, bool)] =
    &[(1, Kind::Int, true), (2, Kind::Int, true), (3, Kind::Int, true), (4, Kind::Int, true)];
const DICTIONARY_PAGE: &[(i16, Kind, bool)] = &[(1, Kind::Int, true), (2, Kind::Int, true)];
const DATA_PAGE_V2: &[(i16, Kind, bool)] = &[
    (1, Kind::Int, true),
    (2, Kind::Int, true),
    (3, Kind::Int, true),
    (4, Kind::Int, true),
    (5, Kind::Int, true),
    (6, Kind::Int, true),
];

/// Whether `value` is a struct whose known fields are each there at most once, of their kind,
/// and the required ones there: what a reader that trusts the file expects to find.
fn shaped(value: &Value, spec: &[(i16, Kind, bool)], what: &str) -> Result<(), String> {
    let Value::Struct(fields) = value else { return Err(format!("{what}: not a struct")) };
    for &(id, kind, required) in spec {
        let mut found = fields.iter().filter(|(i, _)| *i == id).map(|(_, v)| v);
        match (found.next(), found.next()) {
            (None, _) if required => return Err(format!("{what}: field {id} missing")),
            (None, _) => {}
            (Some(_), Some(_)) => return Err(format!("{what}: field {id} given twice")),
            (Some(v), None) => {
                let actual = match v {
                    Value::Int(_) => Kind::Int,
                    Value::List(_) => Kind::List,
                    Value::Struct(_) => Kind::Struct,
                    Value::Other | Value::Bool(_) | Value::Binary(_) => Kind::Other,
                };
                if actual != kind {
                    return Err(format!("{what}: field {id} of the wrong type"));
                }
            }
        }
    }
    Ok(())
}

/// Checks the Parquet file `bytes`: its footer, then the page headers of every column chunk.
pub fn check(bytes: &[u8]) -> Result<(), String> {
    let n = bytes.len();
    if n < 12 || !bytes.ends_with(b"PAR1") {
        return Err("no footer".to_owned());
    }
    let len = u32::from_le_bytes([bytes[n - 8], bytes[n - 7], bytes[n - 6], bytes[n - 5]]) as usize;
    let start = (n - 8).checked_sub(len).filter(|&s| s >= 4).ok_or("a footer longer than the file")?;
    let footer = Reader::new(&bytes[start..n - 8]).fields(0).map_err(|e| format!("footer: {e}"))?;
    shaped(&footer, FILE_META, "footer")?;
    // `FileMetaData.row_groups` (4) → `RowGroup.columns` (1) → `ColumnChunk.meta_data` (3).
    for (g, group) in footer.list(4).iter().enumerate() {
        shaped(group, ROW_GROUP, &format!("row group {g}"))?;
        for (c, column) in group.list(1).iter().enumerate() {
            let what = format!("row group {g}, column {c}");
            shaped(column, COLUMN_CHUNK, &what)?;
            let Some(meta) = column.field(3) else { continue };
            shaped(meta, COLUMN_META, &what)?;
            pages(bytes, meta, start).map_err(|e| format!("{what}: {e}"))?;
        }
    }
    Ok(())
}

/// The page headers of one column chunk (`ColumnMetaData` `meta`), which lies before `end`.
fn pages(bytes: &[u8], meta: &Value, end: usize) -> Result<(), String> {
    // `ColumnMetaData`: 5 num_values, 7 total_compressed_size, 9 data_page_offset,
    // 11 dictionary_page_offset.
    let first = match (meta.int(11), meta.int(9)) {
        (Some(d), Some(p)) if d > 0 => d.min(p),
        (_, Some(p)) => p,
        _ => return Err("no data page offset".to_owned()),
    };
    let size = meta.int(7).ok_or("no compressed size")?;
    let chunk_end = first.checked_add(size).ok_or("a chunk past the file")?;
    if first < 4 || size < 0 || chunk_end > end as i64 {
        return Err(format!("a chunk of {size} bytes at {first} past the file"));
    }
    let (mut at, chunk_end) = (first as usize, chunk_end as usize);
    while at < chunk_end {
        let mut reader = Reader::new(&bytes[at..chunk_end]);
        let header = reader.fields(0).map_err(|e| format!("page header at {at}: {e}"))?;
        shaped(&header, PAGE_HEADER, &format!("page header at {at}"))?;
        for (kind, spec) in [(5, DATA_PAGE), (7, DICTIONARY_PAGE), (8, DATA_PAGE_V2)] {
            if let Some(page) = header.field(kind) {
                shaped(page, spec, &format!("page header at {at}"))?;
            }
        }
        // `PageHeader`: 2 `uncompressed_page_size`, 3 compressed_page_size, 5 data_page_header,
        // 7 dictionary_page_header, 8 data_page_header_v2; each of those has num_values as 1.
        let compressed = header.int(3).ok_or("a page without its size")?;
        let uncompressed = header.int(2).ok_or("a page without its size")?;
        let body = at as i64 + reader.at as i64;
        if compressed < 0 || uncompressed < 0 || body + compressed > chunk_end as i64 {
            return Err(format!("a page of {compressed} bytes at {at} past its chunk"));
        }
        let i32_range = 0..=i64::from(i32::MAX);
        if !header.ints_within(2, i32_range.clone()) || !header.ints_within(3, i32_range.clone()) {
            return Err(format!("a page at {at} declares a size past i32"));
        }
        let room = (uncompressed.max(compressed) + 64).saturating_mul(MAX_VALUES_PER_BYTE).min(i64::from(i32::MAX));
        for kind in [5, 7, 8] {
            for page in header.fields(kind) {
                if !page.ints_within(1, 0..=room) {
                    return Err(format!("a page of {uncompressed} bytes declares {:?} values", page.int(1)));
                }
                // DataPageHeaderV2: 2 num_nulls and 3 num_rows at most num_values; 5 and 6 the
                // bytes of the definition and repetition levels, within the page.
                if kind == 8 {
                    let values = page.int(1).unwrap_or(0);
                    let within = compressed.min(uncompressed);
                    let levels = page.int(5).unwrap_or(0).saturating_add(page.int(6).unwrap_or(0));
                    if !page.ints_within(2, 0..=values)
                        || !page.ints_within(3, 0..=values)
                        || !page.ints_within(5, 0..=within)
                        || !page.ints_within(6, 0..=within)
                        || levels > within
                    {
                        return Err(format!("a page of {values} values declares counts or levels past it"));
                    }
                }
            }
        }
        at = (body + compressed) as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_footer_that_declares_more_than_it_holds_is_refused() {
        // A struct whose field 4 is a list of 2⁴⁰ i32 (header byte 0xf5, then the count).
        let mut footer = vec![0x49, 0xf5];
        let mut n: u64 = 1 << 40;
        while n >= 0x80 {
            footer.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        footer.push(n as u8);
        footer.push(0);
        let mut file = b"PAR1".to_vec();
        file.extend(&footer);
        file.extend((footer.len() as u32).to_le_bytes());
        file.extend(b"PAR1");
        let err = check(&file).unwrap_err();
        assert!(err.contains("declares 1099511627776 entries"), "{err}");
        assert!(check(b"PAR1PAR1").is_err());
    }
}

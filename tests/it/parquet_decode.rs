//! vantage's own Parquet decoder (`load::parquet_file`, the one the web build reads v2 with)
//! against files pyarrow wrote (tests/fixtures/parquet/decode/make.py) and against what pyarrow
//! reads back from them: every column, every row, nulls at every level.

use std::path::Path;

use vantage::load::parquet_file::{Column, ParquetMeta, decode, decode_validity};

const DIR: &str = "tests/fixtures/parquet/decode";

/// A column's rows as JSON, as pyarrow's `to_pydict` gives them.
fn rows_as_json(column: &Column, rows: usize) -> Vec<serde_json::Value> {
    let slot = |i: usize| -> serde_json::Value {
        if !column.is_valid(i) {
            return serde_json::Value::Null;
        }
        if let Some(s) = column.str(i) {
            return s.into();
        }
        if let Some(b) = column.bool(i) {
            return b.into();
        }
        if let Some(v) = column.int(i) {
            return if column.unsigned { (v as u64).into() } else { v.into() };
        }
        column.f32(i).map_or(serde_json::Value::Null, |_| match &column.values {
            vantage::load::parquet_file::Values::F64(v) => v[i].into(),
            vantage::load::parquet_file::Values::F32(v) => f64::from(v[i]).into(),
            _ => serde_json::Value::Null,
        })
    };
    (0..rows)
        .map(|row| match &column.lists {
            None => slot(row),
            Some(_) => column.list(row).map_or(serde_json::Value::Null, |slots| slots.map(slot).collect()),
        })
        .collect()
}

#[test]
fn pyarrow_files_decode_as_pyarrow_reads_them() {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(DIR).join("expected.json")).unwrap()).unwrap();
    let files = expected.as_object().unwrap();
    assert_eq!(files.len(), 4);
    for (file, columns) in files {
        let bytes = std::fs::read(Path::new(DIR).join(file)).unwrap();
        let meta = ParquetMeta::of_file(&bytes).unwrap();
        let columns = columns.as_object().unwrap();
        assert_eq!(meta.leaves.len(), columns.len(), "{file}");
        for (name, want) in columns {
            let want = want.as_array().unwrap();
            assert_eq!(meta.rows as usize, want.len());
            let leaf = meta.leaf(name).unwrap();
            let chunks: Vec<&[u8]> =
                meta.chunks(leaf).map(|c| &bytes[c.start as usize..(c.start + c.len) as usize]).collect();
            let column = decode(&meta, leaf, &chunks).unwrap_or_else(|e| panic!("{file} {name}: {e}"));
            assert_eq!(&rows_as_json(&column, want.len()), want, "{file}: column {name}");
            // Validity alone agrees with the values.
            let valid = decode_validity(&meta, leaf, &chunks).unwrap();
            assert_eq!(valid.lists.as_ref().map(|l| &l.1), column.lists.as_ref().map(|l| &l.1), "{file} {name}");
            assert_eq!(
                (0..column.slots()).map(|i| valid.is_valid(i)).collect::<Vec<_>>(),
                (0..column.slots()).map(|i| column.is_valid(i)).collect::<Vec<_>>(),
                "{file} {name}"
            );
        }
    }
}

#[test]
fn damaged_files_are_errors_not_panics() {
    let bytes = std::fs::read(Path::new(DIR).join("v2_zstd_split_pages.parquet")).unwrap();
    let meta = ParquetMeta::of_file(&bytes).unwrap();
    // Every byte of every chunk flipped in turn, and every chunk cut short: each decode returns
    // (an error or values), none panics or allocates what a damaged count claims.
    for leaf in 0..meta.leaves.len() {
        let chunks: Vec<(usize, usize)> = meta.chunks(leaf).map(|c| (c.start as usize, c.len as usize)).collect();
        let (start, len) = chunks[0];
        for at in (start..start + len).step_by(7) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xA5;
            let parts: Vec<&[u8]> = chunks.iter().map(|&(s, l)| &damaged[s..s + l]).collect();
            let _: Result<Column, String> = decode(&meta, leaf, &parts);
        }
        for cut in [0, 1, len / 2, len - 1] {
            let mut parts: Vec<&[u8]> = chunks.iter().map(|&(s, l)| &bytes[s..s + l]).collect();
            parts[0] = &bytes[start..start + cut];
            assert!(decode(&meta, leaf, &parts).is_err(), "column {leaf} cut to {cut} bytes");
        }
    }
    for at in (bytes.len() - 400..bytes.len() - 8).step_by(3) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0xFF;
        let _: Result<ParquetMeta, String> = ParquetMeta::of_file(&damaged);
    }
    assert!(ParquetMeta::of_file(b"PAR1").is_err());
    assert!(ParquetMeta::of_file(&bytes[..bytes.len() - 1]).is_err());
}

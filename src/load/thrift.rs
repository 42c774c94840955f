//! The Thrift compact protocol, as far as Parquet's footer and page headers need it: a struct is
//! read into a tree of [`Value`]s with every list, map and string bounded by the bytes that
//! remain (a damaged file that declares 10¹⁴ entries is an error, not an allocation) and nesting
//! bounded by `MAX_DEPTH`. Pure Rust, for every target.

/// Nesting deeper than this is refused (no stack overflow).
const MAX_DEPTH: usize = 64;

/// A Thrift compact-protocol value, as far as Parquet's structures need it.
#[derive(Debug)]
pub enum Value {
    /// i8, i16, i32 or i64.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A string or binary.
    Binary(Vec<u8>),
    /// A double, a map, or anything else Parquet's readers here do not look into.
    Other,
    /// A list or set.
    List(Vec<Self>),
    /// A struct: its fields, by id, in the order given.
    Struct(Vec<(i16, Self)>),
}

impl Value {
    /// Every occurrence of field `id` (a damaged struct may repeat one).
    pub fn fields(&self, id: i16) -> impl Iterator<Item = &Self> {
        let fields: &[(i16, Self)] = match self {
            Self::Struct(fields) => fields,
            _ => &[],
        };
        fields.iter().filter(move |(i, _)| *i == id).map(|(_, v)| v)
    }

    /// Field `id`, its last occurrence (as a decoder that overwrites would keep).
    pub fn field(&self, id: i16) -> Option<&Self> {
        self.fields(id).last()
    }

    /// Integer field `id`.
    pub fn int(&self, id: i16) -> Option<i64> {
        match self.field(id) {
            Some(Self::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// Boolean field `id`.
    pub fn bool(&self, id: i16) -> Option<bool> {
        match self.field(id) {
            Some(Self::Bool(v)) => Some(*v),
            _ => None,
        }
    }

    /// String field `id` (`None` when absent or not UTF-8).
    pub fn str(&self, id: i16) -> Option<&str> {
        match self.field(id) {
            Some(Self::Binary(v)) => std::str::from_utf8(v).ok(),
            _ => None,
        }
    }

    /// Whether every integer occurrence of field `id` lies in `range` (absent: true).
    pub fn ints_within(&self, id: i16, range: std::ops::RangeInclusive<i64>) -> bool {
        self.fields(id).all(|v| match v {
            Self::Int(x) => range.contains(x),
            _ => true,
        })
    }

    /// List field `id` (empty when absent).
    pub fn list(&self, id: i16) -> &[Self] {
        match self.field(id) {
            Some(Self::List(items)) => items,
            _ => &[],
        }
    }
}

/// Reads compact-protocol values from a byte slice.
pub struct Reader<'a> {
    bytes: &'a [u8],
    /// The offset of the next byte to read.
    pub at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    fn left(&self) -> u64 {
        (self.bytes.len() - self.at) as u64
    }

    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.bytes.get(self.at).ok_or("cut off")?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number longer than 10 bytes".to_owned())
    }

    fn zigzag(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], String> {
        if n > self.left() {
            return Err(format!("declares {n} bytes where {} remain", self.left()));
        }
        let start = self.at;
        self.at += n as usize;
        Ok(&self.bytes[start..self.at])
    }

    /// A count of elements, each at least one byte: no more than the bytes that remain.
    fn count(&self, n: u64) -> Result<u64, String> {
        if n > self.left() { Err(format!("declares {n} entries where {} bytes remain", self.left())) } else { Ok(n) }
    }

    fn value(&mut self, kind: u8, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deep".to_owned());
        }
        Ok(match kind {
            // In a struct a boolean field carries its value in its type.
            1 => Value::Bool(true),
            2 => Value::Bool(false),
            3 => Value::Int(i64::from(self.byte()? as i8)),
            4..=6 => Value::Int(self.zigzag()?),
            7 => {
                self.take(8)?;
                Value::Other
            }
            8 => {
                let n = self.varint()?;
                Value::Binary(self.take(n)?.to_vec())
            }
            9 | 10 => {
                let header = self.byte()?;
                let short = u64::from(header >> 4);
                let n = if short == 15 { self.varint()? } else { short };
                // Booleans in a list take a byte each.
                let element = match header & 0x0f {
                    1 | 2 => 3,
                    other => other,
                };
                let mut items = Vec::new();
                for _ in 0..self.count(n)? {
                    items.push(self.value(element, depth + 1)?);
                }
                Value::List(items)
            }
            11 => {
                let n = self.varint()?;
                if n > 0 {
                    let kinds = self.byte()?;
                    for _ in 0..self.count(n)? {
                        self.value(kinds >> 4, depth + 1)?;
                        self.value(kinds & 0x0f, depth + 1)?;
                    }
                }
                Value::Other
            }
            12 => self.fields(depth + 1)?,
            other => return Err(format!("unknown Thrift type {other}")),
        })
    }

    /// A struct: its fields up to the stop byte.
    pub fn fields(&mut self, depth: usize) -> Result<Value, String> {
        let mut fields = Vec::new();
        let mut id: i16 = 0;
        loop {
            let header = self.byte()?;
            if header == 0 {
                return Ok(Value::Struct(fields));
            }
            id = match header >> 4 {
                0 => i16::try_from(self.zigzag()?).map_err(|_id| "a field id past i16")?,
                delta => id.checked_add(i16::from(delta)).ok_or("a field id past i16")?,
            };
            let value = self.value(header & 0x0f, depth)?;
            fields.push((id, value));
        }
    }
}

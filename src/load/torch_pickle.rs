//! Reading `torch.save` files without Python: a ZIP (`<name>/data.pkl`, the tensors' storages in
//! `<name>/data/<key>`, `<name>/byteorder`) whose pickle holds plain Python values and tensors.
//!
//! No well-kept pure-Rust crate reads these: `serde-pickle` has no persistent ids (how a pickle
//! points at a tensor's storage) and refuses the `torch._utils._rebuild_tensor_v2` reduce; the
//! readers that handle them come inside whole tensor frameworks (candle), far too large a
//! dependency for one format. So this is the subset of the pickle protocol (versions 2 to 5) that
//! `torch.save` writes for dicts, lists, tuples, strings, numbers and tensors. Containers live in an
//! arena so that a memoized list filled after it was memoized reads back filled, as in Python. A
//! class other than a tensor or an `OrderedDict` becomes an [`Value::Object`] with its reduce
//! arguments and state. Hostile input never panics: every read is checked, the stack, the memo and
//! the arena are bounded, and a value nested deeper than [`MAX_DEPTH`] is cut off.

use std::collections::HashMap;

/// Nesting kept when a value is resolved; deeper values read as `None`.
pub const MAX_DEPTH: usize = 64;
/// The most values a pickle may make (stack, memo and containers together).
const MAX_VALUES: usize = 1 << 26;

/// A Python value as the pickle made it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An `int` that fits 64 bits.
    Int(i64),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// `bytes`.
    Bytes(Vec<u8>),
    /// A `list` (or a `set`).
    List(Vec<Self>),
    /// A `tuple`.
    Tuple(Vec<Self>),
    /// A `dict` (or an `OrderedDict`), in insertion order.
    Dict(Vec<(Self, Self)>),
    /// A tensor: its storage and view.
    Tensor(Tensor),
    /// Another class's object: `module.name`, its reduce arguments, its state.
    Object(String, Box<Self>, Box<Self>),
}

impl Value {
    /// The value under `key` of a dict with string keys.
    pub fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Self::Dict(items) => items.iter().find(|(k, _)| matches!(k, Self::Str(s) if s == key)).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A number as `f64` (ints, floats, booleans).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Int(i) => Some(*i as f64),
            Self::Float(f) => Some(*f),
            Self::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// An int.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Self::Int(i) => Some(*i),
            Self::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// A string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The items of a list or tuple.
    pub fn items(&self) -> Option<&[Self]> {
        match self {
            Self::List(v) | Self::Tuple(v) => Some(v),
            _ => None,
        }
    }
}

/// A tensor as the pickle describes it; its numbers are read with [`TorchFile::numbers`].
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// The storage class (`FloatStorage`, `LongStorage`, …).
    pub storage: String,
    /// The storage's key: its entry is `<name>/data/<key>`.
    pub key: String,
    /// The view's offset in the storage, in elements.
    pub offset: usize,
    /// The view's shape.
    pub shape: Vec<usize>,
    /// The view's strides, in elements.
    pub stride: Vec<usize>,
}

/// A `torch.save` file opened: its pickle read, its storages read when asked.
pub struct TorchFile<'a> {
    archive: super::zip::Archive<'a>,
    prefix: String,
    /// Each storage entry's index among the archive's entries, by storage key.
    storages: HashMap<String, usize>,
    /// The pickled value.
    pub value: Value,
}

impl<'a> TorchFile<'a> {
    /// Opens the ZIP and reads its `data.pkl`; why not, when it cannot. No entry inflates past
    /// `budget` bytes.
    pub fn parse(bytes: &'a [u8], budget: u64) -> Result<Self, String> {
        let archive = super::zip::Archive::open(bytes, budget)?;
        let pickle_name = archive
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .find(|n| n.ends_with("/data.pkl") || *n == "data.pkl")
            .ok_or("no data.pkl in the archive (not a torch.save file)")?
            .to_owned();
        let prefix = pickle_name.strip_suffix("data.pkl").unwrap_or_default().to_owned();
        if let Some(Ok(order)) = archive.read_named(&format!("{prefix}byteorder"))
            && order.trim_ascii() != b"little"
        {
            return Err(format!("byte order {:?}: only little-endian files are read", String::from_utf8_lossy(&order)));
        }
        let pickle = archive.read_named(&pickle_name).unwrap_or_else(|| Err("data.pkl is missing".to_owned()))?;
        let value = unpickle(&pickle)?;
        let data = format!("{prefix}data/");
        let storages = archive
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.name.strip_prefix(&data).map(|key| (key.to_owned(), i)))
            .collect();
        Ok(Self { archive, prefix, storages, value })
    }

    /// A tensor's numbers in row-major order, as `f64`; why not, when its storage is missing, too
    /// short or of a type not read.
    pub fn numbers(&self, tensor: &Tensor) -> Result<Vec<f64>, String> {
        let (size, read): (usize, fn(&[u8]) -> f64) = match tensor.storage.as_str() {
            "FloatStorage" => (4, |b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            "DoubleStorage" => (8, |b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
            "HalfStorage" => (2, |b| f64::from(half_to_f32(u16::from_le_bytes([b[0], b[1]])))),
            "BFloat16Storage" => (2, |b| f64::from(f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))),
            "LongStorage" => (8, |b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f64),
            "IntStorage" => (4, |b| f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            "ShortStorage" => (2, |b| f64::from(i16::from_le_bytes([b[0], b[1]]))),
            "CharStorage" => (1, |b| f64::from(b[0] as i8)),
            "ByteStorage" | "BoolStorage" => (1, |b| f64::from(b[0])),
            other => return Err(format!("tensors of {other} are not read")),
        };
        let name = format!("{}data/{}", self.prefix, tensor.key);
        let entry = self.storages.get(&tensor.key).and_then(|&i| self.archive.entries.get(i));
        let data = entry.map_or_else(|| Err(format!("{name} is missing")), |e| self.archive.read(e))?;
        let count: usize =
            tensor.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or("the tensor is too large")?;
        if count > data.len() / size.max(1) + 1 {
            return Err(format!("{name} holds fewer values than the tensor's shape"));
        }
        let mut out = Vec::with_capacity(count);
        let mut index = vec![0usize; tensor.shape.len()];
        for _ in 0..count {
            let at = tensor.offset + index.iter().zip(&tensor.stride).map(|(i, s)| i.saturating_mul(*s)).sum::<usize>();
            let bytes = data
                .get(at.saturating_mul(size)..at.saturating_mul(size) + size)
                .ok_or_else(|| format!("{name} is shorter than the tensor's view"))?;
            out.push(read(bytes));
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < tensor.shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(out)
    }
}

/// An IEEE half as `f32`.
fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::from((h >> 10) & 0x1f);
    let fraction = f32::from(h & 0x3ff);
    match exponent {
        0 => sign * fraction * 2f32.powi(-24),
        31 if fraction == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + fraction / 1024.0) * 2f32.powi(e - 15),
    }
}

/// A value while unpickling: containers are arena slots, so a memoized container filled later
/// reads back filled.
#[derive(Clone, Debug)]
enum Item {
    Plain(Value),
    Slot(usize),
    Global(String),
    Mark,
}

/// A container in the arena.
#[derive(Debug)]
enum Node {
    List(Vec<Item>),
    Tuple(Vec<Item>),
    Dict(Vec<(Item, Item)>),
    Tensor(Tensor),
    Object(String, Item, Option<Item>),
    Persistent(Item),
}

/// Reads a pickle (protocols 2 to 5) into a [`Value`]. A pickle whose shared references would
/// expand into more values than it could hold without them (a list holding one list many times,
/// nested) is refused rather than expanded.
pub fn unpickle(data: &[u8]) -> Result<Value, String> {
    let mut m = Machine { data, at: 0, stack: Vec::new(), memo: HashMap::new(), arena: Vec::new() };
    let top = m.run()?;
    // Without sharing, a pickle makes at most one value per byte; eight times that is ample.
    let budget = std::cell::Cell::new(data.len().saturating_mul(8).saturating_add(4096));
    let value = m.resolve(&top, 0, &budget);
    if budget.get() == 0 {
        return Err("the pickle's shared references expand past eight values per byte".to_owned());
    }
    Ok(value)
}

struct Machine<'a> {
    data: &'a [u8],
    at: usize,
    stack: Vec<Item>,
    memo: HashMap<u32, Item>,
    arena: Vec<Node>,
}

impl Machine<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len()).ok_or("the pickle ends early")?;
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    fn line(&mut self) -> Result<String, String> {
        let rest = &self.data[self.at..];
        let end = rest.iter().position(|&b| b == b'\n').ok_or("a text argument has no line end")?;
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.at += end + 1;
        Ok(text)
    }

    fn text(&mut self, n: usize) -> Result<Value, String> {
        let bytes = self.take(n)?;
        Ok(Value::Str(String::from_utf8_lossy(bytes).into_owned()))
    }

    fn bytes(&mut self, n: usize) -> Result<Value, String> {
        Ok(Value::Bytes(self.take(n)?.to_vec()))
    }

    fn push(&mut self, item: Item) -> Result<(), String> {
        if self.stack.len() + self.arena.len() + self.memo.len() > MAX_VALUES {
            return Err("the pickle makes too many values".to_owned());
        }
        self.stack.push(item);
        Ok(())
    }

    fn node(&mut self, node: Node) -> Result<(), String> {
        self.arena.push(node);
        self.push(Item::Slot(self.arena.len() - 1))
    }

    fn pop(&mut self) -> Result<Item, String> {
        self.stack.pop().ok_or_else(|| "the pickle's stack is empty".to_owned())
    }

    fn top(&self) -> Result<&Item, String> {
        self.stack.last().ok_or_else(|| "the pickle's stack is empty".to_owned())
    }

    /// The items above the topmost mark, taken off with the mark.
    fn pop_mark(&mut self) -> Result<Vec<Item>, String> {
        let mark = self.stack.iter().rposition(|i| matches!(i, Item::Mark)).ok_or("no mark on the stack")?;
        let items = self.stack.split_off(mark + 1);
        self.stack.pop();
        Ok(items)
    }

    /// The arena slot of the container on top of the stack (below `depth` items).
    fn container(&self, depth: usize) -> Result<usize, String> {
        let index = self.stack.len().checked_sub(depth + 1).ok_or("the pickle's stack is empty")?;
        match self.stack[index] {
            Item::Slot(slot) => Ok(slot),
            _ => Err("a container operation on a value that is not a container".to_owned()),
        }
    }

    fn extend(&mut self, slot: usize, items: Vec<Item>) -> Result<(), String> {
        match &mut self.arena[slot] {
            Node::List(list) => list.extend(items),
            Node::Dict(dict) => {
                if !items.len().is_multiple_of(2) {
                    return Err("SETITEMS with an odd number of items".to_owned());
                }
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    dict.push((k, v));
                }
            }
            _ => return Err("adding items to a value that is not a list or dict".to_owned()),
        }
        Ok(())
    }

    fn run(&mut self) -> Result<Item, String> {
        loop {
            let op = self.u8()?;
            match op {
                0x80 => {
                    self.u8()?;
                }
                0x95 => {
                    self.u64()?;
                }
                b'.' => return self.pop(),
                _ => {
                    if let Some(value) = self.scalar(op)? {
                        self.push(Item::Plain(value))?;
                    } else if !self.structure(op)? {
                        return Err(format!("pickle opcode 0x{op:02x} at byte {} is not read", self.at - 1));
                    }
                }
            }
        }
    }

    /// The value a scalar opcode makes; `None` when `op` is not one.
    fn scalar(&mut self, op: u8) -> Result<Option<Value>, String> {
        let value = match op {
            b'N' => Value::None,
            0x88 => Value::Bool(true),
            0x89 => Value::Bool(false),
            b'K' => Value::Int(i64::from(self.u8()?)),
            b'M' => Value::Int(i64::from(self.u16()?)),
            b'J' => Value::Int(i64::from(self.u32()? as i32)),
            0x8a | 0x8b => {
                let n = if op == 0x8a { usize::from(self.u8()?) } else { self.u32()? as usize };
                let bytes = self.take(n)?;
                if n <= 8 {
                    let mut buf = [if bytes.last().is_some_and(|b| b & 0x80 != 0) { 0xff } else { 0 }; 8];
                    buf[..n].copy_from_slice(bytes);
                    Value::Int(i64::from_le_bytes(buf))
                } else {
                    Value::Float(f64::NAN)
                }
            }
            b'G' => {
                let b = self.take(8)?;
                Value::Float(f64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            }
            b'I' | b'L' => {
                let text = self.line()?;
                match text.trim_end_matches('L') {
                    "01" => Value::Bool(true),
                    "00" => Value::Bool(false),
                    t => t.parse().map_or(Value::Float(f64::NAN), Value::Int),
                }
            }
            b'F' => Value::Float(self.line()?.trim().parse().unwrap_or(f64::NAN)),
            b'X' | b'T' => {
                let n = self.u32()? as usize;
                self.text(n)?
            }
            0x8c | b'U' => {
                let n = usize::from(self.u8()?);
                self.text(n)?
            }
            0x8d => {
                let n = usize::try_from(self.u64()?).map_err(|e| format!("a string too long: {e}"))?;
                self.text(n)?
            }
            b'B' => {
                let n = self.u32()? as usize;
                self.bytes(n)?
            }
            b'C' => {
                let n = usize::from(self.u8()?);
                self.bytes(n)?
            }
            0x8e => {
                let n = usize::try_from(self.u64()?).map_err(|e| format!("bytes too long: {e}"))?;
                self.bytes(n)?
            }
            b'S' | b'V' => Value::Str(self.line()?.trim_matches(|c| c == '\'' || c == '"').to_owned()),
            _ => return Ok(None),
        };
        Ok(Some(value))
    }

    /// Carries out a container, stack, memo or call opcode; `false` when `op` is not one.
    fn structure(&mut self, op: u8) -> Result<bool, String> {
        match op {
            b'(' => self.push(Item::Mark)?,
            b']' | 0x8f => self.node(Node::List(Vec::new()))?,
            b'}' => self.node(Node::Dict(Vec::new()))?,
            b')' => self.node(Node::Tuple(Vec::new()))?,
            b'l' | 0x91 => {
                let items = self.pop_mark()?;
                self.node(Node::List(items))?;
            }
            b't' => {
                let items = self.pop_mark()?;
                self.node(Node::Tuple(items))?;
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let at = self.stack.len().checked_sub(n).ok_or("a tuple of more items than the stack holds")?;
                let items = self.stack.split_off(at);
                self.node(Node::Tuple(items))?;
            }
            b'd' => {
                let items = self.pop_mark()?;
                self.node(Node::Dict(Vec::new()))?;
                let slot = self.container(0)?;
                self.extend(slot, items)?;
            }
            b'a' => {
                let item = self.pop()?;
                let slot = self.container(0)?;
                self.extend(slot, vec![item])?;
            }
            b'e' | 0x90 | b'u' => {
                let items = self.pop_mark()?;
                let slot = self.container(0)?;
                self.extend(slot, items)?;
            }
            b's' => {
                let value = self.pop()?;
                let key = self.pop()?;
                let slot = self.container(0)?;
                self.extend(slot, vec![key, value])?;
            }
            b'0' => {
                self.pop()?;
            }
            b'1' => {
                self.pop_mark()?;
            }
            b'2' => {
                let top = self.top()?.clone();
                self.push(top)?;
            }
            _ => return self.reference(op),
        }
        Ok(true)
    }

    /// Carries out a memo, global, persistent-id or call opcode; `false` when `op` is not one.
    fn reference(&mut self, op: u8) -> Result<bool, String> {
        match op {
            b'q' => {
                let key = u32::from(self.u8()?);
                self.memoize(key)?;
            }
            b'r' => {
                let key = self.u32()?;
                self.memoize(key)?;
            }
            0x94 => {
                let key = u32::try_from(self.memo.len()).map_err(|e| format!("the memo is full: {e}"))?;
                self.memoize(key)?;
            }
            b'h' | b'j' => {
                let key = if op == b'h' { u32::from(self.u8()?) } else { self.u32()? };
                let item = self.memo.get(&key).cloned().ok_or_else(|| format!("memo {key} was never set"))?;
                self.push(item)?;
            }
            b'c' => {
                let module = self.line()?;
                let name = self.line()?;
                self.push(Item::Global(format!("{module}.{name}")))?;
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                let text = |i: &Item| match i {
                    Item::Plain(Value::Str(s)) => s.clone(),
                    _ => String::new(),
                };
                self.push(Item::Global(format!("{}.{}", text(&module), text(&name))))?;
            }
            b'Q' => {
                let id = self.pop()?;
                self.node(Node::Persistent(id))?;
            }
            b'R' | 0x81 => {
                let args = self.pop()?;
                let callable = self.pop()?;
                self.reduce(&callable, args)?;
            }
            0x92 => {
                let _kwargs = self.pop()?;
                let args = self.pop()?;
                let callable = self.pop()?;
                self.reduce(&callable, args)?;
            }
            b'b' => {
                let state = self.pop()?;
                let slot = self.container(0)?;
                if let Node::Object(_, _, s) = &mut self.arena[slot] {
                    *s = Some(state);
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn memoize(&mut self, key: u32) -> Result<(), String> {
        let top = self.top()?.clone();
        if self.memo.len() > MAX_VALUES {
            return Err("the pickle's memo is too large".to_owned());
        }
        self.memo.insert(key, top);
        Ok(())
    }

    /// A call: a tensor rebuilt, an `OrderedDict`, or another class's object.
    fn reduce(&mut self, callable: &Item, args: Item) -> Result<(), String> {
        let name = match callable {
            Item::Global(name) => name.clone(),
            _ => String::from("?"),
        };
        if name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor" {
            let args = self.shallow(&args);
            if let Some(tensor) = self.tensor(&args) {
                return self.node(Node::Tensor(tensor));
            }
        }
        if name == "collections.OrderedDict" {
            return self.node(Node::Dict(Vec::new()));
        }
        self.node(Node::Object(name, args, None))
    }

    /// The items of a tuple item, one level down.
    fn shallow(&self, item: &Item) -> Vec<Item> {
        match item {
            Item::Slot(slot) => match self.arena.get(*slot) {
                Some(Node::Tuple(items) | Node::List(items)) => items.clone(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// A tensor from `_rebuild_tensor_v2(storage, offset, size, stride, …)`, its storage a
    /// persistent id `('storage', torch.XStorage, key, location, numel)`.
    fn tensor(&self, args: &[Item]) -> Option<Tensor> {
        let storage = match args.first()? {
            Item::Slot(slot) => match self.arena.get(*slot)? {
                Node::Persistent(id) => self.shallow(id),
                _ => return None,
            },
            _ => return None,
        };
        let class = match storage.get(1)? {
            Item::Global(name) => name.rsplit('.').next()?.to_owned(),
            _ => return None,
        };
        let key = match storage.get(2)? {
            Item::Plain(Value::Str(s)) => s.clone(),
            Item::Plain(Value::Int(i)) => i.to_string(),
            _ => return None,
        };
        let int = |item: &Item| match item {
            Item::Plain(Value::Int(i)) => usize::try_from(*i).ok(),
            _ => None,
        };
        let offset = int(args.get(1)?)?;
        let shape: Option<Vec<usize>> = self.shallow(args.get(2)?).iter().map(int).collect();
        let stride: Option<Vec<usize>> = self.shallow(args.get(3)?).iter().map(int).collect();
        let (shape, stride) = (shape?, stride?);
        (shape.len() == stride.len()).then_some(Tensor { storage: class, key, offset, shape, stride })
    }

    /// An item as a [`Value`], `depth` levels down (cut off past [`MAX_DEPTH`]), each value made
    /// taken from `budget` (none made once it is spent).
    fn resolve(&self, item: &Item, depth: usize, budget: &std::cell::Cell<usize>) -> Value {
        if depth > MAX_DEPTH || budget.get() == 0 {
            return Value::None;
        }
        budget.set(budget.get() - 1);
        let all = |items: &[Item]| items.iter().map(|i| self.resolve(i, depth + 1, budget)).collect();
        match item {
            Item::Plain(v) => v.clone(),
            Item::Mark => Value::None,
            Item::Global(name) => Value::Object(name.clone(), Box::new(Value::None), Box::new(Value::None)),
            Item::Slot(slot) => match self.arena.get(*slot) {
                Some(Node::List(items)) => Value::List(all(items)),
                Some(Node::Tuple(items)) => Value::Tuple(all(items)),
                Some(Node::Dict(items)) => Value::Dict(
                    items
                        .iter()
                        .map(|(k, v)| (self.resolve(k, depth + 1, budget), self.resolve(v, depth + 1, budget)))
                        .collect(),
                ),
                Some(Node::Tensor(t)) => Value::Tensor(t.clone()),
                Some(Node::Object(name, args, state)) => Value::Object(
                    name.clone(),
                    Box::new(self.resolve(args, depth + 1, budget)),
                    Box::new(state.as_ref().map_or(Value::None, |s| self.resolve(s, depth + 1, budget))),
                ),
                Some(Node::Persistent(id)) => self.resolve(id, depth + 1, budget),
                None => Value::None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memoized_list_filled_later_reads_back_filled_and_hostile_bytes_are_errors() {
        // [1, 2] memoized empty, filled with APPENDS, then fetched again: ([1, 2], [1, 2]).
        let pickle = b"\x80\x02]q\x00(K\x01K\x02eh\x00\x86q\x01.";
        let value = unpickle(pickle).unwrap_or(Value::None);
        let list = Value::List(vec![Value::Int(1), Value::Int(2)]);
        assert_eq!(value, Value::Tuple(vec![list.clone(), list]));
        for bad in [&b""[..], b"\x80\x02", b"h\x05.", b"a.", b"\xff", b"(u."] {
            assert!(unpickle(bad).is_err(), "{bad:?}");
        }
        // A list holding one list twice, 40 times nested: 2⁴⁰ values if expanded; refused.
        let mut laughs = b"\x80\x02]q\x00".to_vec();
        for i in 0..40u8 {
            laughs.extend_from_slice(&[b'h', i, b'h', i, 0x86, b'q', i + 1]);
        }
        laughs.push(b'.');
        assert!(unpickle(&laughs).is_err_and(|e| e.contains("shared references")));
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0xc000), -2.0);
    }
}

//! Texts read back from the files a run was read from (native): positioned reads, no memory map.

use std::borrow::Cow;

use crate::model::TextSource;

/// A file the run's texts are read from again when shown (positioned reads, no memory map: a map of
/// a file that is truncated while followed would end the process).
#[derive(Debug)]
pub struct FileSource {
    pub(crate) file: std::fs::File,
}

impl TextSource for FileSource {
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        let mut buffer = vec![0; len];
        read_exact_at(&self.file, &mut buffer, offset).ok()?;
        Some(Cow::Owned(buffer))
    }
}

/// The files of a directory read as one log (a verl `rollout_data_dir`): file `i`'s bytes are at
/// offsets `i << FILE_SHIFT` on, so a file that grows never reaches the next one's.
#[derive(Debug, Default)]
pub struct FilesSource {
    files: std::sync::RwLock<Vec<std::fs::File>>,
}

/// Where each file of a [`FilesSource`] begins: file `i` at `i << FILE_SHIFT` (files up to 1 TiB).
const FILE_SHIFT: u32 = 40;

impl FilesSource {
    /// Adds a file; returns the offset its bytes begin at.
    pub(crate) fn add(&self, file: std::fs::File) -> Option<u64> {
        let mut files = self.files.write().ok()?;
        files.push(file);
        Some(((files.len() - 1) as u64) << FILE_SHIFT)
    }
}

impl TextSource for FilesSource {
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        let files = self.files.read().ok()?;
        let file = files.get(usize::try_from(offset >> FILE_SHIFT).ok()?)?;
        let mut buffer = vec![0; len];
        read_exact_at(file, &mut buffer, offset & ((1 << FILE_SHIFT) - 1)).ok()?;
        Some(Cow::Owned(buffer))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &std::fs::File, mut buffer: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buffer.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buffer, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buffer = &mut buffer[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

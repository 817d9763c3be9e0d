//! Output files that never look complete unless they are: each is written under a temporary
//! name beside its final path (`.NAME.partial-PID`) and renamed into place only when the work
//! succeeded. The file is created when the work starts, so a bad path fails in milliseconds,
//! not after the run. An error or a drop before [`AtomicFile::commit`] removes it; a signal
//! handler removes every unfinished one with [`remove_unfinished`].

use crate::error::GraphError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files not yet committed, for the signal handler.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// An output file being written: a buffered writer on its temporary name.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    w: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    /// Creates the temporary file for `path`. Fails at once if `path` is a directory, its
    /// directory does not exist or is not writable.
    pub fn create(path: &Path) -> Result<Self, GraphError> {
        if path.is_dir() {
            return Err(GraphError::Parameter {
                name: "output".into(),
                message: format!("{}: is a directory, not a file", path.display()),
            });
        }
        let name = path
            .file_name()
            .ok_or_else(|| GraphError::Parameter { name: "output".into(), message: format!("{}: not a file name", path.display()) })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(GraphError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, format!("directory {} does not exist", dir.display())),
            });
        }
        let tmp = dir.join(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
        let file = std::fs::File::create(&tmp).map_err(|e| GraphError::Io { path: path.to_path_buf(), source: e })?;
        unfinished().push(tmp.clone());
        Ok(AtomicFile { path: path.to_path_buf(), tmp, w: Some(std::io::BufWriter::with_capacity(1 << 20, file)) })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes free for this process on the file system the file is written to (`None` where
    /// that cannot be asked).
    #[cfg(unix)]
    pub fn free_space(&self) -> Option<u64> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(self.tmp.as_os_str().as_bytes()).ok()?;
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: `c` is a NUL-terminated path and `st` a statvfs the call fills in.
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
            return None;
        }
        Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }

    /// Bytes free on the file's file system: not asked off Unix.
    #[cfg(not(unix))]
    pub fn free_space(&self) -> Option<u64> {
        None
    }

    /// Flushes the file and renames it to its final path.
    pub fn commit(mut self) -> Result<(), GraphError> {
        let w = self.w.take().expect("an AtomicFile is committed once");
        let done = (|| {
            let file = w.into_inner().map_err(|e| e.into_error())?;
            file.sync_data()?;
            drop(file);
            std::fs::rename(&self.tmp, &self.path)
        })();
        if done.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        unfinished().retain(|p| p != &self.tmp);
        done.map_err(|e| GraphError::Io { path: self.path.clone(), source: e })
    }
}

impl std::io::Seek for AtomicFile {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.w.as_mut().expect("not committed").seek(pos)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.as_mut().expect("not committed").write_all(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.w.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
            unfinished().retain(|p| p != &self.tmp);
        }
    }
}

/// Removes every output file not yet committed (for a signal handler, before the process
/// exits); returns the final paths they were for.
pub fn remove_unfinished() -> Vec<PathBuf> {
    let mut list = unfinished();
    let mut finals = Vec::new();
    for tmp in list.drain(..) {
        let _ = std::fs::remove_file(&tmp);
        let name = tmp.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let name = name.strip_prefix('.').and_then(|n| n.rsplit_once(".partial-")).map_or(name.clone(), |(n, _)| n.to_string());
        finals.push(tmp.with_file_name(name));
    }
    finals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_renames_and_drop_removes() {
        let dir = std::env::temp_dir().join(format!("wf-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let done = dir.join("a.txt");
        let mut f = AtomicFile::create(&done).unwrap();
        f.write_all(b"hello").unwrap();
        assert!(!done.exists(), "not visible before commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&done).unwrap(), b"hello");
        let dropped = dir.join("b.txt");
        {
            let mut f = AtomicFile::create(&dropped).unwrap();
            f.write_all(b"partial").unwrap();
        }
        assert!(!dropped.exists());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("a.txt")], "no temporary file left");
        let e = AtomicFile::create(&dir.join("missing").join("c.txt")).err().unwrap().to_string();
        assert!(e.contains("does not exist"), "{e}");
        let e = AtomicFile::create(&dir).err().unwrap().to_string();
        assert!(e.contains("is a directory"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

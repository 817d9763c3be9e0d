//! NumPy files through the ecosystem's crates: `npyz` encodes and decodes `.npy` arrays, and
//! `zip` holds them in an `.npz` (stored, as `numpy.savez` writes them), with zip64 so an
//! archive or an array may pass 4 GiB (an ordinary size for one epoch of sampled blocks on a
//! large graph).

use crate::atomic_file::AtomicFile;
use crate::error::GraphError;
use npyz::WriterBuilder;
use std::io::{Read, Write};
use std::path::Path;
use zip::{CompressionMethod, ZipWriter, write::SimpleFileOptions};

/// A 1-D array for an `.npy` or `.npz` file.
#[derive(Clone, Debug, PartialEq)]
pub enum NpyArray {
    /// `uint8`.
    U8(Vec<u8>),
    /// `uint32`.
    U32(Vec<u32>),
    /// `uint64`.
    U64(Vec<u64>),
    /// `float64`.
    F64(Vec<f64>),
}

impl NpyArray {
    /// Elements in the array.
    pub fn len(&self) -> usize {
        match self {
            NpyArray::U8(v) => v.len(),
            NpyArray::U32(v) => v.len(),
            NpyArray::U64(v) => v.len(),
            NpyArray::F64(v) => v.len(),
        }
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the array as a complete `.npy` file to `w`: npyz's header, then the elements in
    /// bulk (little-endian).
    pub fn write_npy(&self, mut w: impl Write) -> std::io::Result<()> {
        fn bulk<T: Copy, const N: usize>(v: &[T], w: &mut impl Write, le: impl Fn(T) -> [u8; N]) -> std::io::Result<()> {
            let mut buf = Vec::with_capacity((1 << 16) * N);
            for chunk in v.chunks(1 << 16) {
                buf.clear();
                chunk.iter().for_each(|&x| buf.extend_from_slice(&le(x)));
                w.write_all(&buf)?;
            }
            Ok(())
        }
        let shape = [self.len() as u64];
        match self {
            NpyArray::U8(v) => {
                w.write_all(&header::<u8>(&shape)?)?;
                w.write_all(v)
            }
            NpyArray::U32(v) => {
                w.write_all(&header::<u32>(&shape)?)?;
                bulk(v, &mut w, u32::to_le_bytes)
            }
            NpyArray::U64(v) => {
                w.write_all(&header::<u64>(&shape)?)?;
                bulk(v, &mut w, u64::to_le_bytes)
            }
            NpyArray::F64(v) => {
                w.write_all(&header::<f64>(&shape)?)?;
                bulk(v, &mut w, f64::to_le_bytes)
            }
        }
    }

    /// The array as a complete `.npy` file in memory.
    pub fn npy(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(128 + self.len() * 8);
        self.write_npy(&mut b).expect("writing to memory does not fail");
        b
    }

    /// Writes the array as a `.npy` file.
    pub fn write(&self, path: &Path) -> Result<(), GraphError> {
        self.write_into(AtomicFile::create(path)?)
    }

    /// Writes the array as a `.npy` file into `out` (created before the work) and commits it.
    pub fn write_into(&self, mut out: AtomicFile) -> Result<(), GraphError> {
        self.write_npy(&mut out).map_err(|e| GraphError::io(out.path(), e))?;
        out.commit()
    }
}

/// The `.npy` header (npyz's) of an array of `T` with `shape`, padded so the data that follows
/// is 64-byte aligned. npyz writes elements one call each (about 50 instructions apiece), so
/// the data is written in bulk after it.
pub fn header<T: npyz::AutoSerialize>(shape: &[u64]) -> std::io::Result<Vec<u8>> {
    let mut h = Vec::new();
    // Dropped unfinished: with a shape given, nothing more is written on drop.
    let writer = npyz::WriteOptions::<T>::new().default_dtype().shape(shape).writer(&mut h).begin_nd()?;
    drop(writer);
    Ok(h)
}

/// Writes named 1-D arrays as an `.npz` (an uncompressed zip of `.npy` files, what
/// `numpy.savez` writes and `numpy.load` reads).
pub fn write_npz(path: &Path, arrays: &[(String, NpyArray)]) -> Result<(), GraphError> {
    write_npz_into(AtomicFile::create(path)?, arrays)
}

/// [`write_npz`] into `out` (created before the work), committed when complete. Every entry
/// is written with zip64 extents, so neither an array nor the archive is limited to 4 GiB.
pub fn write_npz_into(out: AtomicFile, arrays: &[(String, NpyArray)]) -> Result<(), GraphError> {
    let path = out.path().to_path_buf();
    write_npz_to(out, arrays).map_err(|e| GraphError::io(&path, e))?.commit()
}

/// The `.npz` of [`write_npz_into`] into any seekable writer, which is handed back.
pub fn write_npz_to<W: Write + std::io::Seek>(out: W, arrays: &[(String, NpyArray)]) -> std::io::Result<W> {
    let mut npz = NpzWriter::new(out);
    for (name, array) in arrays {
        npz.add(name, array)?;
    }
    npz.finish()
}

/// An `.npz` written one array at a time, so a run can write each result as it comes and
/// drop it ([`write_npz_to`] writes a list at once).
pub struct NpzWriter<W: Write + std::io::Seek> {
    zip: ZipWriter<W>,
}

impl<W: Write + std::io::Seek> NpzWriter<W> {
    /// An empty archive on `out`.
    pub fn new(out: W) -> Self {
        NpzWriter { zip: ZipWriter::new(out) }
    }

    /// Appends array `name` (as the entry `name.npy`), stored uncompressed with zip64
    /// extents, so neither an array nor the archive is limited to 4 GiB.
    pub fn add(&mut self, name: &str, array: &NpyArray) -> std::io::Result<()> {
        let options = SimpleFileOptions::default().compression_method(CompressionMethod::Stored).large_file(true);
        self.zip.start_file(format!("{name}.npy"), options).map_err(std::io::Error::other)?;
        array.write_npy(&mut self.zip)
    }

    /// Writes the central directory and hands the writer back.
    pub fn finish(self) -> std::io::Result<W> {
        self.zip.finish().map_err(std::io::Error::other)
    }
}

/// Opens array `name` of an `.npz` (its `name.npy` entry) for reading.
pub fn npz_entry<'z, R: Read + std::io::Seek>(
    npz: &'z mut zip::ZipArchive<R>,
    name: &str,
) -> std::io::Result<npyz::NpyFile<zip::read::ZipFile<'z, R>>> {
    let entry = npz.by_name(&format!("{name}.npy")).map_err(std::io::Error::other)?;
    npyz::NpyFile::new(entry)
}

/// Reads a 1-D `.npy` of integers (`uint8/16/32/64`, `int8/16/32/64`, little- or big-endian)
/// as `i128`, so every value is kept for the caller to check.
pub fn read_int_npy(path: &Path) -> Result<Vec<i128>, GraphError> {
    let file = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
    read_int_npy_from(std::io::BufReader::new(file)).map_err(|e| GraphError::io(path, e))
}

fn read_int_npy_from(r: impl Read) -> std::io::Result<Vec<i128>> {
    let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let npy = npyz::NpyFile::new(r)?;
    if npy.shape().len() != 1 {
        return Err(bad(format!("expected a 1-D array, found shape {:?}", npy.shape())));
    }
    let npyz::DType::Plain(ty) = npy.dtype() else {
        return Err(bad("expected an array of integers, found a structured array".into()));
    };
    let (char, size) = (ty.type_char(), ty.size_field());
    let want = || bad(format!("expected integers (uint8..uint64, int8..int64), found `{ty}`"));
    fn all<T: npyz::Deserialize + Into<i128>>(npy: npyz::NpyFile<impl Read>) -> std::io::Result<Vec<i128>> {
        npy.data::<T>()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?
            .map(|x| x.map(Into::into))
            .collect()
    }
    match (char, size) {
        (npyz::TypeChar::Uint, 1) => all::<u8>(npy),
        (npyz::TypeChar::Uint, 2) => all::<u16>(npy),
        (npyz::TypeChar::Uint, 4) => all::<u32>(npy),
        (npyz::TypeChar::Uint, 8) => all::<u64>(npy),
        (npyz::TypeChar::Int, 1) => all::<i8>(npy),
        (npyz::TypeChar::Int, 2) => all::<i16>(npy),
        (npyz::TypeChar::Int, 4) => all::<i32>(npy),
        (npyz::TypeChar::Int, 8) => all::<i64>(npy),
        _ => Err(want()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_round_trip_through_npy() {
        let a = NpyArray::U64(vec![0, 7, u64::MAX]);
        let b = a.npy();
        assert_eq!(&b[..6], b"\x93NUMPY");
        let header_end = b.iter().position(|&c| c == b'\n').unwrap() + 1;
        assert_eq!(header_end % 64, 0, "the data is 64-byte aligned");
        assert_eq!(read_int_npy_from(&b[..]).unwrap(), vec![0, 7, u64::MAX as i128]);
        let signed = {
            let mut v = Vec::new();
            let mut w = npyz::WriteOptions::new().default_dtype().shape(&[2]).writer(&mut v).begin_nd().unwrap();
            w.extend([-3i16, 4]).unwrap();
            w.finish().unwrap();
            v
        };
        assert_eq!(read_int_npy_from(&signed[..]).unwrap(), vec![-3, 4]);
        let floats = NpyArray::F64(vec![1.5]).npy();
        assert!(read_int_npy_from(&floats[..]).unwrap_err().to_string().contains("expected integers"));
        let mut matrix = Vec::new();
        let mut w = npyz::WriteOptions::new().default_dtype().shape(&[1, 2]).writer(&mut matrix).begin_nd().unwrap();
        w.extend([1u32, 2]).unwrap();
        w.finish().unwrap();
        assert!(read_int_npy_from(&matrix[..]).unwrap_err().to_string().contains("1-D"));
    }

    #[test]
    fn npz_entries_read_back() {
        let dir = std::env::temp_dir().join(format!("wayfarer-npz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.npz");
        write_npz(&path, &[("ids".into(), NpyArray::U32(vec![3, 1])), ("values".into(), NpyArray::F64(vec![0.5, 2.0]))]).unwrap();
        let mut npz = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut names: Vec<_> = npz.file_names().map(str::to_string).collect();
        names.sort();
        assert_eq!(names, ["ids.npy", "values.npy"]);
        let ids: Vec<u32> = npz_entry(&mut npz, "ids").unwrap().into_vec().unwrap();
        let values: Vec<f64> = npz_entry(&mut npz, "values").unwrap().into_vec().unwrap();
        assert_eq!((ids, values), (vec![3, 1], vec![0.5, 2.0]));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod large {
    use super::*;

    use std::io::{Seek, SeekFrom};

    /// A file that skips over runs of zeros (leaving holes), so a 4.3 GB archive of zeros
    /// takes a few kilobytes of disk.
    struct Sparse(std::fs::File);

    impl Write for Sparse {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() >= 4096 && buf.iter().all(|&b| b == 0) {
                self.0.seek(SeekFrom::Current(buf.len() as i64))?;
                return Ok(buf.len());
            }
            self.0.write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.0.flush()
        }
    }

    impl Seek for Sparse {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.0.seek(pos)
        }
    }

    /// An archive past 4 GiB (zip64 offsets and sizes): a 4.3 GB array, then a small one whose
    /// entry starts past 2^32. Reading the small one back needs the zip64 records to be right.
    #[test]
    fn an_npz_over_4_gib_is_written_and_read_back() {
        let dir = std::env::temp_dir().join(format!("wayfarer-npz64-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.npz");
        let n = (4_300_000_000u64 / 8) as usize;
        // Zeroed pages are not resident until written, so this costs no memory to speak of.
        let big = NpyArray::U64(vec![0u64; n]);
        let file = Sparse(std::fs::File::create(&path).unwrap());
        let Sparse(file) = write_npz_to(file, &[("big".into(), big), ("tail".into(), NpyArray::U32(vec![7, 8, 9]))]).unwrap();
        drop(file);
        assert!(std::fs::metadata(&path).unwrap().len() > 1 << 32);
        let mut npz = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let tail: Vec<u32> = npz_entry(&mut npz, "tail").unwrap().into_vec().unwrap();
        assert_eq!(tail, [7, 8, 9]);
        assert_eq!(npz_entry(&mut npz, "big").unwrap().shape(), [n as u64]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

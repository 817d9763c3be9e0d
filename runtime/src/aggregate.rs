//! Neighbour aggregation of a sampled block (the sum or mean step of SAGEConv/GCN), on the
//! CPU: `out[r] = row_scale[r] · Σ_{k ∈ row r} col_scale[c_k] · x[c_k]` over a CSR of the
//! block (`indptr`, `cols`). The forward pass runs it over the block's rows by destination;
//! the backward pass runs the same thing over the transposed CSR.
//!
//! Rows come in two classes (the partitioning seed's hybrid metric, chosen by the caller):
//! **sparse** rows are summed edge after edge; **dense** rows as eight interleaved partial sums
//! per column, added at the end (on the GPU, a block's eight warps share a dense row). Both
//! orders of summation are fixed, whatever the thread count, and they are
//! the CUDA kernels' orders too (`wayfarer-cuda`'s `aggregate.cu`: a warp per sparse row, a
//! block of eight warps per dense row), so the CPU and the GPU give the same bits.

use crate::WalkError;
use rayon::prelude::*;
use std::ops::{Add, Mul};

/// Partial sums of a dense row (the eight warps of the CUDA kernel's block).
pub const DENSE_LANES: usize = 8;

/// A feature value the kernels sum (`f32`, `f64`).
pub trait Feature: Copy + Default + Send + Sync + Add<Output = Self> + Mul<Output = Self> {
    /// One.
    const ONE: Self;
}

impl Feature for f32 {
    const ONE: f32 = 1.0;
}

impl Feature for f64 {
    const ONE: f64 = 1.0;
}

/// A block as rows of columns: row `r` holds `cols[indptr[r]..indptr[r + 1]]`, indices of
/// rows of the input features.
#[derive(Clone, Copy, Debug)]
pub struct RowsCsr<'a> {
    /// `rows + 1` offsets into `cols`, non-decreasing, from 0.
    pub indptr: &'a [i64],
    /// Input rows.
    pub cols: &'a [i64],
}

/// Per-row and per-column factors (absent: 1).
#[derive(Clone, Copy, Debug)]
pub struct Scales<'a, T> {
    /// Multiplies each output row (the mean's `1/deg`).
    pub row: Option<&'a [T]>,
    /// Multiplies each input row where it is read (the mean's backward: `1/deg` of the
    /// destination).
    pub col: Option<&'a [T]>,
}

impl<T> Default for Scales<'_, T> {
    fn default() -> Self {
        Scales { row: None, col: None }
    }
}

/// Checks `csr` against `x_rows` input rows: offsets from 0, non-decreasing, within `cols`;
/// every column an input row. Returns the number of output rows.
pub fn check(csr: &RowsCsr<'_>, x_rows: usize) -> Result<usize, WalkError> {
    let (indptr, cols) = (csr.indptr, csr.cols);
    let Some((&first, _)) = indptr.split_first() else {
        return Err(WalkError::param("indptr", "empty: it has one entry more than there are rows"));
    };
    if first != 0 {
        return Err(WalkError::param("indptr", format!("indptr[0] = {first}, not 0")));
    }
    if let Some(i) = indptr.windows(2).position(|w| w[1] < w[0]) {
        return Err(WalkError::param("indptr", format!("indptr[{}] = {} is below indptr[{i}] = {}", i + 1, indptr[i + 1], indptr[i])));
    }
    let last = *indptr.last().expect("non-empty");
    if last as u64 > cols.len() as u64 {
        return Err(WalkError::param("indptr", format!("ends at {last}, past the {} columns", cols.len())));
    }
    if let Some(k) = cols[..last as usize].par_iter().position_first(|&c| c < 0 || c as u64 >= x_rows as u64) {
        return Err(WalkError::param("cols", format!("cols[{k}] = {}: not a row of the {x_rows} input rows", cols[k])));
    }
    Ok(indptr.len() - 1)
}

/// `out[r] = row[r] · Σ col[c] · x[c]` over row `r`'s columns `c`, for every row: the rows in
/// `dense` by the dense path, the others by the sparse one. `x` is `x_rows × dim` and `out`
/// `rows × dim`, row-major. Errors (before writing anything) name the bad argument.
pub fn gather_reduce<T: Feature>(
    csr: &RowsCsr<'_>,
    scales: Scales<'_, T>,
    dense: &[i64],
    x: &[T],
    dim: usize,
    out: &mut [T],
) -> Result<(), WalkError> {
    if dim == 0 {
        return Err(WalkError::param("dim", "features have at least one column"));
    }
    if !x.len().is_multiple_of(dim) {
        return Err(WalkError::param("x", format!("{} values are not rows of {dim}", x.len())));
    }
    let rows = check(csr, x.len() / dim)?;
    if out.len() as u64 != rows as u64 * dim as u64 {
        return Err(WalkError::param("out", format!("{} values, not {rows} rows of {dim}", out.len())));
    }
    if let Some(s) = scales.row.filter(|s| s.len() != rows) {
        return Err(WalkError::param("row_scale", format!("{} values for {rows} rows", s.len())));
    }
    if let Some(s) = scales.col.filter(|s| s.len() != x.len() / dim) {
        return Err(WalkError::param("col_scale", format!("{} values for {} input rows", s.len(), x.len() / dim)));
    }
    let mut is_dense = vec![false; rows];
    for (i, &r) in dense.iter().enumerate() {
        match usize::try_from(r).ok().filter(|&r| r < rows) {
            Some(r) => is_dense[r] = true,
            None => return Err(WalkError::param("dense", format!("dense[{i}] = {r}: not one of the {rows} rows"))),
        }
    }
    let col_scale = |c: usize| scales.col.map_or(T::ONE, |s| s[c]);
    let row_scale = |r: usize| scales.row.map_or(T::ONE, |s| s[r]);
    // Sparse rows: one task per row, its edges summed in order.
    out.par_chunks_mut(dim).enumerate().with_min_len(64).filter(|(r, _)| !is_dense[*r]).for_each(|(r, o)| {
        o.fill(T::default());
        for &c in &csr.cols[csr.indptr[r] as usize..csr.indptr[r + 1] as usize] {
            let (c, s) = (c as usize, col_scale(c as usize));
            for (o, &v) in o.iter_mut().zip(&x[c * dim..(c + 1) * dim]) {
                *o = *o + v * s;
            }
        }
        let s = row_scale(r);
        o.iter_mut().for_each(|o| *o = *o * s);
    });
    // Dense rows: each column is DENSE_LANES interleaved partial sums (edge k into sum k mod
    // DENSE_LANES), then added in lane order. Rows in parallel, into a buffer of their own
    // (they are scattered over `out`), then copied to their places.
    let mut done = vec![T::default(); dense.len() * dim];
    done.par_chunks_mut(dim).zip(dense).for_each_init(Vec::new, |lanes, (o, &r)| {
        let r = r as usize;
        lanes.clear();
        lanes.resize(DENSE_LANES * dim, T::default());
        for (k, &c) in csr.cols[csr.indptr[r] as usize..csr.indptr[r + 1] as usize].iter().enumerate() {
            let (c, s) = (c as usize, col_scale(c as usize));
            let lane = &mut lanes[(k % DENSE_LANES) * dim..][..dim];
            for (l, &v) in lane.iter_mut().zip(&x[c * dim..(c + 1) * dim]) {
                *l = *l + v * s;
            }
        }
        o.copy_from_slice(&lanes[..dim]);
        for lane in lanes[dim..].chunks_exact(dim) {
            for (o, &l) in o.iter_mut().zip(lane) {
                *o = *o + l;
            }
        }
        let s = row_scale(r);
        o.iter_mut().for_each(|o| *o = *o * s);
    });
    for (o, &r) in done.chunks_exact(dim).zip(dense) {
        out[r as usize * dim..(r as usize + 1) * dim].copy_from_slice(o);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block with an empty row, a hub row (40 edges, more than the dense lanes), repeated
    /// columns and a one-edge row; 5 input rows of `dim` features.
    fn block() -> (Vec<i64>, Vec<i64>) {
        let mut cols = vec![1, 1, 4];
        cols.extend((0..40).map(|k| (k * 7 % 5) as i64));
        cols.push(2);
        (vec![0, 3, 3, 43, 44], cols)
    }

    fn features(rows: usize, dim: usize) -> Vec<f64> {
        (0..rows * dim).map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0).collect()
    }

    /// The definition, summed in f64 by rows.
    fn naive(indptr: &[i64], cols: &[i64], row: Option<&[f64]>, col: Option<&[f64]>, x: &[f64], dim: usize) -> Vec<f64> {
        let mut out = vec![0.0; (indptr.len() - 1) * dim];
        for r in 0..indptr.len() - 1 {
            for &c in &cols[indptr[r] as usize..indptr[r + 1] as usize] {
                for f in 0..dim {
                    out[r * dim + f] += col.map_or(1.0, |s| s[c as usize]) * x[c as usize * dim + f];
                }
            }
            for f in 0..dim {
                out[r * dim + f] *= row.map_or(1.0, |s| s[r]);
            }
        }
        out
    }

    #[test]
    fn both_paths_compute_the_definition() {
        let (indptr, cols) = block();
        let dim = 70; // more than one dense column chunk, not a multiple of it
        let x = features(5, dim);
        let row = [0.5, 1.0, 0.25, 2.0];
        let col = [1.0, 0.5, 3.0, -1.0, 0.125];
        let csr = RowsCsr { indptr: &indptr, cols: &cols };
        for (scales, want) in [
            (Scales::default(), naive(&indptr, &cols, None, None, &x, dim)),
            (Scales { row: Some(&row[..]), col: Some(&col[..]) }, naive(&indptr, &cols, Some(&row), Some(&col), &x, dim)),
        ] {
            for dense in [&[][..], &[2][..], &[0, 1, 2, 3][..]] {
                let mut out = vec![f64::NAN; 4 * dim];
                gather_reduce(&csr, scales, dense, &x, dim, &mut out).unwrap();
                for (i, (a, b)) in out.iter().zip(&want).enumerate() {
                    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "dense rows {dense:?}: out[{i}] = {a}, want {b}");
                }
            }
        }
    }

    #[test]
    fn the_sums_do_not_depend_on_the_thread_count() {
        let (indptr, cols) = block();
        let dim = 130;
        let x: Vec<f32> = features(5, dim).into_iter().map(|v| v as f32 * 1.37).collect();
        let csr = RowsCsr { indptr: &indptr, cols: &cols };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut out = vec![0f32; 4 * dim];
            pool.install(|| gather_reduce(&csr, Scales::default(), &[2], &x, dim, &mut out)).unwrap();
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn bad_input_is_named_before_anything_is_written() {
        let (indptr, cols) = block();
        let x = features(5, 2);
        let mut out = vec![7.0; 8];
        let csr = RowsCsr { indptr: &indptr, cols: &cols };
        let err = |r: Result<(), WalkError>| r.unwrap_err().to_string();
        assert!(err(gather_reduce(&csr, Scales::default(), &[4], &x, 2, &mut out)).contains("dense[0] = 4"));
        assert!(err(gather_reduce(&csr, Scales::default(), &[], &x[..8], 2, &mut out)).contains("not a row of the 4 input rows"));
        assert!(err(gather_reduce(&csr, Scales::default(), &[], &x, 2, &mut out[..6])).contains("not 4 rows of 2"));
        let short = [0.5; 3];
        assert!(err(gather_reduce(&csr, Scales { row: Some(&short[..]), col: None }, &[], &x, 2, &mut out)).contains("row_scale"));
        let back = [0i64, 3, 2];
        assert!(
            err(gather_reduce(&RowsCsr { indptr: &back, cols: &cols }, Scales::default(), &[], &x, 2, &mut out[..4]))
                .contains("indptr[2] = 2 is below")
        );
        assert!(out.iter().all(|&v| v == 7.0));
    }
}

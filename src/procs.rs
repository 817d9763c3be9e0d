//! Several processes (`mpirun -np N wayfarer walk ...` or `wayfarer triangles`): which rank
//! this process is, the shard of the queries it runs, the file it writes, and the manifest
//! rank 0 writes; for triangles, the sums of the ranks' counts.
//!
//! Query `q` of the whole run is the same walk whichever process runs it (its streams are
//! keyed by the seed and `q`), so the shards' union, in rank order, is the single-process
//! output byte for byte.

use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// This process's place among the processes `mpirun` started (alone: rank 0 of 1).
pub struct Procs {
    /// This process's rank.
    pub rank: usize,
    /// Processes in the run.
    pub size: usize,
    /// Its rank among the processes on this host (which GPU it takes).
    pub local_rank: usize,
    #[cfg(feature = "mpi")]
    universe: Option<mpi::environment::Universe>,
}

/// Whether an MPI launcher started this process, and with how many processes.
pub fn launched_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map(|s| s.trim().parse().unwrap_or(1))
        .or_else(|| std::env::var_os("PMIX_RANK").map(|_| 2))
}

impl Procs {
    /// One process.
    pub fn single() -> Procs {
        Procs {
            rank: 0,
            size: 1,
            local_rank: 0,
            #[cfg(feature = "mpi")]
            universe: None,
        }
    }

    /// Joins the MPI run this process was launched in, if any (only then is MPI initialized).
    pub fn init() -> Result<Procs> {
        let Some(launched) = launched_size() else { return Ok(Procs::single()) };
        #[cfg(feature = "mpi")]
        {
            use mpi::traits::Communicator;
            let _ = launched;
            let Some(universe) = mpi::initialize() else { bail!("MPI was initialized twice") };
            let world = universe.world();
            let (rank, size) = (world.rank() as usize, world.size() as usize);
            let local_rank = ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"]
                .iter()
                .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
                .unwrap_or(rank);
            Ok(Procs { rank, size, local_rank, universe: Some(universe) })
        }
        #[cfg(not(feature = "mpi"))]
        {
            if launched > 1 {
                bail!(
                    "started by an MPI launcher with {launched} processes, but this wayfarer was built without MPI: \
                     build it with `cargo build --release --features mpi` (each process would otherwise run the whole job)"
                );
            }
            Ok(Procs::single())
        }
    }

    /// Waits until every process gets here.
    pub fn barrier(&self) {
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            use mpi::traits::CommunicatorCollectives;
            u.world().barrier();
        }
    }

    /// Makes every process use rank 0's cost model for the adaptive rule (the sampler a step
    /// takes depends on it, and with it the walk): rank 0 runs `resolve` (its cached or
    /// profiled model) and sends the result to the others. Explicit models need no agreement.
    pub fn agree_on_cost(
        &self,
        cfg: &mut wayfarer::WalkConfig,
        resolve: impl FnOnce(&wayfarer::WalkConfig) -> Result<wayfarer::engine::CostModel>,
    ) -> Result<()> {
        use wayfarer::CostRatio;
        if !self.sharded()
            || cfg.sampler != wayfarer::SamplerMode::Adaptive
            || matches!(cfg.cost_ratio, CostRatio::Default | CostRatio::Fixed(_) | CostRatio::Model(_))
        {
            return Ok(());
        }
        let mut m = [0.0f64; 3];
        if self.rank == 0 {
            let c = resolve(cfg)?;
            m = [c.ratio, c.fixed, c.ratio_short];
        }
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            use mpi::traits::{Communicator, Root};
            u.world().process_at_rank(0).broadcast_into(&mut m[..]);
        }
        cfg.cost_ratio = CostRatio::Model(wayfarer::engine::CostModel { ratio: m[0], fixed: m[1], ratio_short: m[2] });
        Ok(())
    }

    /// Sums `xs` element-wise over every process; each process gets the sums (alone: `xs`
    /// unchanged).
    pub fn sum_u64(&self, xs: &mut [u64]) {
        #[cfg(feature = "mpi")]
        if let Some(u) = &self.universe {
            use mpi::collective::SystemOperation;
            use mpi::traits::CommunicatorCollectives;
            let mine = xs.to_vec();
            u.world().all_reduce_into(&mine[..], xs, SystemOperation::sum());
        }
        #[cfg(not(feature = "mpi"))]
        let _ = xs;
    }

    /// Whether the run is split over processes.
    pub fn sharded(&self) -> bool {
        self.size > 1
    }
}

/// The file rank `rank` writes for output `out`: `walks.npy` → `walks.rank3.npy`.
pub fn shard_path(out: &Path, rank: usize) -> PathBuf {
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match out.extension() {
        Some(ext) => format!("{stem}.rank{rank}.{}", ext.to_string_lossy()),
        None => format!("{stem}.rank{rank}"),
    };
    out.with_file_name(name)
}

/// The manifest of a sharded output `out`: `walks.npy` → `walks.manifest.json`.
pub fn manifest_path(out: &Path) -> PathBuf {
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    out.with_file_name(format!("{stem}.manifest.json"))
}

/// What a sharded run wrote, for the manifest.
pub struct RunInfo<'a> {
    /// The walk's name.
    pub walk: &'a str,
    /// The seed.
    pub seed: u64,
    /// Steps per walk.
    pub length: u32,
    /// Queries of the whole run.
    pub queries: u64,
}

/// The manifest file (`format` = `wayfarer-walk-shards/1`).
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct Manifest {
    /// The manifest's format and version.
    pub format: String,
    /// The walk's name.
    pub walk: String,
    /// The seed.
    pub seed: u64,
    /// Steps per walk.
    pub length: u32,
    /// Queries of the whole run.
    pub queries: u64,
    /// Processes that wrote shards.
    pub ranks: usize,
    /// Every shard, in rank order.
    pub shards: Vec<Shard>,
}

/// One rank's shard of a run.
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
pub struct Shard {
    /// The rank that wrote it.
    pub rank: usize,
    /// Its file, relative to the manifest.
    pub file: String,
    /// The first query of the whole run it holds.
    pub first_query: u64,
    /// Queries it holds.
    pub queries: u64,
}

/// Writes the manifest of a run over `ranks` processes into `out`'s manifest file: every
/// shard's file (relative to the manifest) and query range, in order.
pub fn write_manifest(out: &Path, ranks: usize, info: &RunInfo) -> Result<PathBuf> {
    let shards = (0..ranks)
        .map(|r| {
            let first = (info.queries as u128 * r as u128 / ranks as u128) as u64;
            let end = (info.queries as u128 * (r as u128 + 1) / ranks as u128) as u64;
            let file = shard_path(out, r);
            let file = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            Shard { rank: r, file, first_query: first, queries: end - first }
        })
        .collect();
    let manifest = Manifest {
        format: "wayfarer-walk-shards/1".into(),
        walk: info.walk.into(),
        seed: info.seed,
        length: info.length,
        queries: info.queries,
        ranks,
        shards,
    };
    let mut text = serde_json::to_string_pretty(&manifest)?;
    text.push('\n');
    let path = manifest_path(out);
    if let Err(e) = std::fs::write(&path, text) {
        bail!("{}: {e}", path.display());
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_files_and_manifest_name_every_range_once() {
        assert_eq!(shard_path(Path::new("out/walks.npy"), 3), Path::new("out/walks.rank3.npy"));
        assert_eq!(shard_path(Path::new("walks"), 0), Path::new("walks.rank0"));
        assert_eq!(manifest_path(Path::new("out/walks.txt")), Path::new("out/walks.manifest.json"));
        let dir = std::env::temp_dir().join(format!("wf-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("w.npy");
        let p = write_manifest(&out, 3, &RunInfo { walk: "node2vec", seed: 7, length: 5, queries: 10 }).unwrap();
        let m: Manifest = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let ranges: Vec<_> = m.shards.iter().map(|s| (s.rank, s.file.as_str(), s.first_query, s.queries)).collect();
        assert_eq!(ranges, [(0, "w.rank0.npy", 0, 3), (1, "w.rank1.npy", 3, 3), (2, "w.rank2.npy", 6, 4)]);
        assert_eq!((m.walk.as_str(), m.seed, m.length, m.queries, m.ranks), ("node2vec", 7, 5, 10, 3));
        // Names that need escaping survive.
        let p = write_manifest(&out, 1, &RunInfo { walk: "a\"b\\c\u{1}", seed: 0, length: 1, queries: 1 }).unwrap();
        let m: Manifest = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        assert_eq!(m.walk, "a\"b\\c\u{1}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

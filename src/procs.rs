//! Several processes (`mpirun -np N wayfarer walk ...`): which rank this process is, the
//! shard of the queries it runs, the file it writes, and the manifest rank 0 writes.
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

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes the manifest of a run over `ranks` processes into `out`'s manifest file: every
/// shard's file (relative to the manifest) and query range, in order.
pub fn write_manifest(out: &Path, ranks: usize, info: &RunInfo) -> Result<PathBuf> {
    let mut shards = Vec::with_capacity(ranks);
    for r in 0..ranks {
        let first = (info.queries as u128 * r as u128 / ranks as u128) as u64;
        let end = (info.queries as u128 * (r as u128 + 1) / ranks as u128) as u64;
        let file = shard_path(out, r);
        let name = file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        shards.push(format!(
            "    {{\"rank\": {r}, \"file\": {}, \"first_query\": {first}, \"queries\": {}}}",
            json_string(&name),
            end - first
        ));
    }
    let text = format!(
        "{{\n  \"format\": \"wayfarer-walk-shards/1\",\n  \"walk\": {},\n  \"seed\": {},\n  \"length\": {},\n  \"queries\": {},\n  \"ranks\": {ranks},\n  \"shards\": [\n{}\n  ]\n}}\n",
        json_string(info.walk),
        info.seed,
        info.length,
        info.queries,
        shards.join(",\n")
    );
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
        let text = std::fs::read_to_string(p).unwrap();
        assert!(text.contains("\"first_query\": 0, \"queries\": 3"), "{text}");
        assert!(text.contains("\"first_query\": 3, \"queries\": 3"), "{text}");
        assert!(text.contains("\"rank\": 2, \"file\": \"w.rank2.npy\", \"first_query\": 6, \"queries\": 4"), "{text}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

//! The adaptive rule's cost model: eRVS iff `R·d·B > Ŝ·(d + F)` (see [`crate::engine`]), where
//! it comes from ([`CostRatio`]), how it is measured ([`profile_cost_model`]) and the cache of
//! measured models, keyed by everything a measurement depends on ([`cost_cache_key`]).

use crate::error::WalkError;
use crate::rng::{INIT_STEP, Purpose, StepRng};
use crate::sampler;
use crate::walk::{Bound, Ctx, Walk, Walker};
use std::time::Instant;

/// Rows up to this length count as short in the cost model: they fit in a few cache lines,
/// so an eRJS trial there is much cheaper than on a hub's row.
pub const SHORT_ROW: usize = 64;

/// The per-step cost model: eRVS iff `R·d·B > Ŝ·(d + F)` (see the module docs), with `R`
/// measured separately for short rows (up to [`SHORT_ROW`] edges) and long ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// `R` on long rows: time of one eRJS trial over time of one eRVS edge.
    pub ratio: f64,
    /// `F`: eRVS's fixed cost per step, in edge reads.
    pub fixed: f64,
    /// `R` on short rows.
    pub ratio_short: f64,
}

impl Default for CostModel {
    /// `R = 1`, `F = 0`: the model the non-adaptive policies run with (it sets eRJS's trial cap).
    fn default() -> Self {
        CostModel::uniform(1.0, 0.0)
    }
}

impl CostModel {
    /// Whether eRVS is expected to be cheaper than eRJS for this step.
    #[inline(always)]
    pub fn prefers_reservoir(&self, d: usize, bound: f32, sum_estimate: f32) -> bool {
        let r = self.ratio_for(d);
        let d = d as f64;
        r * d * bound as f64 > sum_estimate as f64 * (d + self.fixed)
    }

    /// `R` for a row of length `d`.
    #[inline(always)]
    pub fn ratio_for(&self, d: usize) -> f64 {
        if d <= SHORT_ROW { self.ratio_short } else { self.ratio }
    }

    /// One `R` for every row length.
    pub fn uniform(ratio: f64, fixed: f64) -> Self {
        CostModel { ratio, fixed, ratio_short: ratio }
    }

    /// eRJS's trial cap: about twice the trials eRVS's whole step would cost, so a loose bound
    /// costs at most a small constant factor over choosing eRVS directly.
    #[inline(always)]
    pub fn trial_cap(&self, d: usize) -> u32 {
        (2.0 * (d as f64 + self.fixed) / self.ratio_for(d).max(1e-3)).clamp(32.0, 1e9) as u32
    }

    pub(crate) fn validate(&self) -> Result<(), WalkError> {
        for r in [self.ratio, self.ratio_short] {
            if !(r > 0.0 && r.is_finite()) {
                return Err(WalkError::param("cost-ratio", format!("R = {r} must be finite and > 0")));
            }
        }
        if !(self.fixed >= 0.0 && self.fixed.is_finite()) {
            return Err(WalkError::param("cost-ratio", format!("F = {} must be finite and >= 0", self.fixed)));
        }
        Ok(())
    }
}

/// The CPU's cost model when none is given: a fixed one, so the walks of a seed do not depend on
/// the machine, its load or a cache. On R-MAT 16 it is as fast as the profiled model or faster
/// for Node2Vec, second-order PageRank and MetaPath, uniform and Pareto(1) weights, except 8%
/// on Pareto(1) PageRank (`bench/results/2026-12-01-cpu-default-cost-model.md`).
pub const CPU_COST_MODEL: CostModel = CostModel { ratio: 2.0, fixed: 8.0, ratio_short: 1.0 };

/// Where the cost model comes from. Only [`CostRatio::Default`], [`CostRatio::Fixed`] and
/// [`CostRatio::Model`] make a seed fix the walks on every machine: a measured model depends on
/// this machine's timing, and `R` moves steps between eRJS and eRVS, which draw differently.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum CostRatio {
    /// [`CPU_COST_MODEL`]: the same on every machine, so a seed gives the same walks anywhere.
    #[default]
    Default,
    /// Measure once per (walk program and parameters, graph contents, CPU model) and reuse the
    /// value from the cache file afterwards (see [`cost_cache_path`]); `--cost-ratio profile`.
    Cached,
    /// Measure on every run.
    Profile,
    /// Use this `R`, with `F = 0` (FlexiWalker's rule).
    Fixed(f64),
    /// Use this model.
    Model(CostModel),
}

impl CostRatio {
    /// Whether the model is measured at run time (so the walks depend on this machine).
    pub fn is_measured(&self) -> bool {
        matches!(self, CostRatio::Cached | CostRatio::Profile)
    }
}

/// Measures the cost model for this walk on this graph: `R` = (time per eRJS trial) /
/// (time per eRVS edge), and `F` = eRVS's fixed cost per step in edge reads.
///
/// Probes are the states reached by short pilot walks (exact eRVS, a few steps) from nodes
/// spread over the id range, so they sit where walkers spend their time. Rejection probes run a fixed number of trials whatever they accept, each
/// exactly as the engine runs it (envelope squeeze included). Reservoir
/// probes run twice: over at most `MAX_EDGES_PER_PROBE` edges of the probe's own row (never
/// past it), and over its first two edges only; the difference separates the per-edge cost
/// from the per-step cost. Each measurement is the best of three rounds.
pub fn profile_cost_model<W: Walk>(walk: &W, ctx: &Ctx) -> CostModel {
    const PROBES: usize = 2048;
    const TRIALS: usize = 32;
    const MAX_EDGES_PER_PROBE: usize = 4096;
    const MAX_EDGES: usize = 1 << 20;
    const SHORT: usize = 2;
    const PILOT_STEPS: u32 = 6;
    let fallback = CostModel::uniform(1.0, 0.0);
    let g = ctx.graph;
    let n = g.num_nodes();
    let stride = (n / PROBES).max(1);
    let mut probes = Vec::new();
    for p in (0..n).step_by(stride) {
        let t = p as u32;
        let mut w = Walker::<W::State>::new(t);
        let mut rng = StepRng::new(0, p as u64, INIT_STEP, Purpose::Profile);
        walk.init(ctx, &mut w, &mut rng);
        // A short pilot walk (exact, eRVS) puts the probe where walkers spend their time:
        // on hubs and, with skewed weights, on the heavy edges they go back and forth on.
        for step in 0..PILOT_STEPS {
            let row = g.row(w.cur);
            if row.is_empty() || row.len() > MAX_EDGES_PER_PROBE {
                break;
            }
            let mut rng = StepRng::new(1, p as u64, step, Purpose::Profile);
            let pick = sampler::reservoir_jump(row.len(), &mut rng, |i| walk.weight(ctx, &w, row.start + i).max(0.0));
            let Ok(Some(i)) = pick else { break };
            w.prev = w.cur;
            w.cur = g.targets()[row.start + i];
            w.last_edge = (row.start + i) as u64;
            w.step += 1;
        }
        if g.degree(w.cur) >= SHORT as u64
            && let Bound::Max(b) = walk.bound(ctx, &w)
            && b > 0.0
            && b.is_finite()
        {
            probes.push((w, b));
        }
    }
    if probes.is_empty() {
        return fallback;
    }
    let reservoir = |round: u64, cap: usize| -> (f64, usize, usize) {
        let t = Instant::now();
        let (mut edges, mut steps) = (0usize, 0usize);
        for (k, (w, _)) in probes.iter().enumerate() {
            if edges >= MAX_EDGES {
                break;
            }
            let row = g.row(w.cur);
            let d = row.len().min(cap);
            let mut rng = StepRng::new(round, k as u64, 1, Purpose::Profile);
            let r = sampler::reservoir_jump(d, &mut rng, |i| walk.weight(ctx, w, row.start + i).max(0.0));
            std::hint::black_box(r.ok());
            edges += d;
            steps += 1;
        }
        (t.elapsed().as_secs_f64(), edges, steps)
    };
    let (mut best_rjs, mut best_rjs_short) = (f64::INFINITY, f64::INFINITY);
    let short_probes = probes.iter().filter(|(w, _)| g.degree(w.cur) as usize <= SHORT_ROW).count();
    let (mut best_long, mut best_short) = (f64::INFINITY, f64::INFINITY);
    let (mut long_edges, mut long_steps, mut short_steps) = (0, 0, 0);
    for round in 0..3 {
        // Short and long rows are timed apart: a trial in a row of a few cache lines costs
        // far less than one in a hub's row.
        for short in [false, true] {
            let t = Instant::now();
            let mut acc = 0u64;
            for (k, (w, b)) in probes.iter().enumerate() {
                let row = g.row(w.cur);
                if (row.len() <= SHORT_ROW) != short {
                    continue;
                }
                let d = row.len() as u64;
                let mut rng = StepRng::new(round, k as u64, 0, Purpose::Profile);
                // The same trial as the engine's, squeeze included: on skewed weights most
                // rejections are decided by the envelope alone, and R must reflect that.
                for _ in 0..TRIALS {
                    let (i, y) = sampler::rejection_propose(d as usize, *b, &mut rng);
                    let envelope = |i: usize| walk.weight_envelope(ctx, w, row.start + i);
                    let weight = |i: usize| walk.weight(ctx, w, row.start + i);
                    acc += sampler::rejection_decide(i, y, f32::INFINITY, envelope, weight).unwrap_or(false) as u64;
                }
            }
            std::hint::black_box(acc);
            let el = t.elapsed().as_secs_f64();
            if short {
                best_rjs_short = best_rjs_short.min(el);
            } else {
                best_rjs = best_rjs.min(el);
            }
        }
        let (tl, el, sl) = reservoir(round, MAX_EDGES_PER_PROBE);
        best_long = best_long.min(tl);
        (long_edges, long_steps) = (el, sl);
        let (ts, _, ss) = reservoir(round, SHORT);
        best_short = best_short.min(ts);
        short_steps = ss;
    }
    let long_probes = probes.len() - short_probes;
    let per_trial_long = (long_probes > 0).then(|| best_rjs / (long_probes * TRIALS) as f64);
    let per_trial_short = (short_probes > 0).then(|| best_rjs_short / (short_probes * TRIALS) as f64);
    let (per_trial, per_trial_short) = match (per_trial_long, per_trial_short) {
        (Some(l), Some(s)) => (l, s),
        (Some(l), None) => (l, l),
        (None, Some(s)) => (s, s),
        (None, None) => return fallback,
    };
    let per_short_step = best_short / short_steps as f64;
    // Long scans: steps·(c0 + SHORT·ce) + (edges - SHORT·steps)·ce.
    let extra_edges = long_edges as f64 - (SHORT * long_steps) as f64;
    let per_edge = if extra_edges > 0.0 { (best_long - per_short_step * long_steps as f64) / extra_edges } else { f64::NAN };
    if !(per_edge > 0.0 && per_edge.is_finite() && per_trial > 0.0) {
        // Too few long rows to separate the costs: fall back to the plain ratio.
        let per_edge = best_long / long_edges.max(1) as f64;
        let m = CostModel { ratio: per_trial / per_edge, fixed: 0.0, ratio_short: per_trial_short / per_edge };
        return if m.validate().is_ok() { m } else { fallback };
    }
    let fixed = (per_short_step / per_edge - SHORT as f64).max(0.0);
    let m = CostModel { ratio: per_trial / per_edge, fixed, ratio_short: per_trial_short / per_edge };
    if m.validate().is_ok() { m } else { fallback }
}

/// The cost-ratio cache: `$WAYFARER_CACHE_DIR/cost-ratio.tsv`, else
/// `$XDG_CACHE_HOME/wayfarer/…`, else `~/.cache/wayfarer/…`.
pub fn cost_cache_path() -> Option<std::path::PathBuf> {
    let dir = if let Some(d) = std::env::var_os("WAYFARER_CACHE_DIR") {
        std::path::PathBuf::from(d)
    } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        std::path::PathBuf::from(d).join("wayfarer")
    } else {
        std::path::PathBuf::from(std::env::var_os("HOME")?).join(".cache").join("wayfarer")
    };
    Some(dir.join("cost-ratio.tsv"))
}

/// The cache key of a measured model: the walk's program and parameter values
/// ([`Walk::fingerprint`]), whether it reads weights, the graph's contents
/// ([`crate::CsrGraph::fingerprint`]) and the CPU model. An edited program, another parameter
/// value, another graph or another machine gets its own entry.
pub fn cost_cache_key<W: Walk>(walk: &W, graph: &crate::CsrGraph) -> String {
    format!(
        "v{}/4|{}|program {:016x}|{}|graph {:016x}|cpu {}",
        env!("CARGO_PKG_VERSION"),
        walk.name(),
        walk.fingerprint(),
        if walk.weighted() { "weighted" } else { "unweighted" },
        graph.fingerprint(),
        cpu_model()
    )
}

/// The CPU's model name (`/proc/cpuinfo`), or the architecture where that is not readable.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
        .replace(['|', '\t'], " ")
}

pub(crate) fn cached_model<W: Walk>(walk: &W, ctx: &Ctx) -> (CostModel, &'static str) {
    let key = cost_cache_key(walk, ctx.graph);
    let path = cost_cache_path();
    if let Some(p) = &path
        && let Ok(text) = std::fs::read_to_string(p)
    {
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() == 4
                && f[0] == key
                && let (Ok(ratio), Ok(fixed), Ok(ratio_short)) =
                    (f[1].trim().parse::<f64>(), f[2].trim().parse::<f64>(), f[3].trim().parse::<f64>())
            {
                let m = CostModel { ratio, fixed, ratio_short };
                if m.validate().is_ok() {
                    return (m, "cached");
                }
            }
        }
    }
    let m = profile_cost_model(walk, ctx);
    if let Some(p) = &path {
        // A cache that cannot be written only costs a re-profile next time.
        let _ = std::fs::create_dir_all(p.parent().unwrap()).and_then(|_| {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(p)?;
            writeln!(f, "{key}\t{}\t{}\t{}", m.ratio, m.fixed, m.ratio_short)
        });
    }
    (m, "profiled")
}

/// One case of the adaptive rule, with the answer every backend must give: the same inputs
/// to [`CostModel::prefers_reservoir`] and [`CostModel::trial_cap`] and to their copies in the
/// Cranelift turn, the CUDA kernel and the WGSL shader. The answers are written out, not
/// computed, so a change to any copy (this one included) fails the table.
#[derive(Clone, Copy, Debug)]
pub struct RuleCase {
    /// The cost model.
    pub model: CostModel,
    /// The row's length.
    pub d: u32,
    /// The step's bound `B`.
    pub bound: f32,
    /// The step's `Ŝ`.
    pub estimate: f32,
    /// eRVS rather than eRJS.
    pub reservoir: bool,
    /// eRJS's trial cap.
    pub cap: u32,
    /// Whether a backend deciding in `f32` (wgpu) must agree: false where the `f64` answer is
    /// not the `f32` one (a cap of 2·10^6 computed through `1e-3` in `f32` truncates to one less).
    pub f32_agrees: bool,
}

const fn case(ratio: f64, fixed: f64, ratio_short: f64, d: u32, bound: f32, estimate: f32, reservoir: bool, cap: u32) -> RuleCase {
    RuleCase { model: CostModel { ratio, fixed, ratio_short }, d, bound, estimate, reservoir, cap, f32_agrees: true }
}

/// The adaptive rule's cases: short and long rows on both sides of [`SHORT_ROW`], a tie (`R·d·B
/// = Ŝ·(d + F)` is eRJS), `Ŝ = 0`, an empty row, caps clamped below (32) and above (10^9), the
/// ratio floor of `1e-3`, and the CPU and GPU default models.
pub const ADAPTIVE_RULE_CASES: &[RuleCase] = &[
    case(2.0, 8.0, 1.0, 10, 1.0, 10.0, false, 36),
    case(2.0, 8.0, 1.0, 10, 100.0, 10.0, true, 36),
    case(2.0, 8.0, 1.0, 10, 18.0, 10.0, false, 36),
    case(2.0, 8.0, 1.0, 64, 1.0, 1.0, false, 144),
    case(2.0, 8.0, 1.0, 65, 1.0, 1.0, true, 73),
    case(2.0, 8.0, 1.0, 65, 1.0, 2.0, false, 73),
    case(2.0, 8.0, 1.0, 1000, 5.0, 3000.0, false, 1008),
    case(2.0, 8.0, 1.0, 2, 1.0, 1.0, false, 32),
    case(2.0, 8.0, 1.0, 5, 1.0, 0.0, true, 32),
    case(2.0, 8.0, 1.0, 0, 1.0, 1.0, false, 32),
    case(4.0, 64.0, 4.0, 100, 2.0, 150.0, false, 82),
    case(4.0, 64.0, 4.0, 100, 2.0, 2.0, true, 82),
    RuleCase { f32_agrees: false, ..case(1e-6, 0.0, 1e-6, 1000, 1e9, 1.0, true, 2_000_000) },
    RuleCase { f32_agrees: false, ..case(1e-6, 0.0, 1e-6, 1000, 1.0, 1.0, false, 2_000_000) },
    case(1e-4, 0.0, 1e-4, 100_000_000, 1.0, 1e6, false, 1_000_000_000),
    case(0.5, 3.0, 0.25, 200, 3.5, 1.0, true, 812),
    case(0.5, 3.0, 0.25, 40, 3.5, 100.0, false, 344),
    case(3.0, 0.1, 0.3, 7, 0.1, 0.21, false, 47),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::NodeStats;

    #[test]
    fn the_adaptive_rule_gives_every_case_its_answer() {
        for c in ADAPTIVE_RULE_CASES {
            let d = c.d as usize;
            assert_eq!((c.model.prefers_reservoir(d, c.bound, c.estimate), c.model.trial_cap(d)), (c.reservoir, c.cap), "{c:?}");
        }
    }
    use crate::walks::{Node2vec, Weighting};

    #[test]
    fn cost_model_reduces_to_flexiwalker_rule_without_fixed_cost() {
        let m = CostModel::uniform(4.0, 0.0);
        assert!(m.prefers_reservoir(10, 2.0, 7.9));
        assert!(!m.prefers_reservoir(10, 2.0, 8.0));
        // A fixed cost moves small rows to rejection sampling.
        let f = CostModel::uniform(4.0, 30.0);
        assert!(!f.prefers_reservoir(3, 2.0, 4.0));
        assert!(f.prefers_reservoir(3000, 2.0, 4.0));
        assert!(f.trial_cap(0) >= 32);
    }

    #[test]
    fn profiling_gives_a_usable_model() {
        let mut g = crate::graph::generate::rmat(12, 16, 2).unwrap();
        g.set_weights(Some(crate::graph::generate::weights(&g, "uniform".parse().unwrap(), 2))).unwrap();
        let walk = Node2vec::new(2.0, 0.5, Weighting::Weighted).unwrap();
        let stats = NodeStats::compute(&g, walk.requirements(), true);
        let m = profile_cost_model(&walk, &Ctx::new(&g, &stats));
        assert!(m.validate().is_ok(), "{m:?}");
    }
}

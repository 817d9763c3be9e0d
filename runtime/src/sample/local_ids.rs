//! Block-local ids of a sub-batch's nodes, for the CPU sampler's dedup.

/// Block-local ids of one sub-batch's nodes, kept per thread between sub-batches: either
/// `(node, local id)` entries in an open-addressing table with linear probing, sized to the
/// sub-batch (at most half full; [`HashedIds`]), or, when that would be about as large as the
/// graph's node count, a local id per node (no probing, half the bytes; [`NodeIds`]). Each
/// view clears what it filled when dropped. A general-purpose hash map (SipHash, growth) cost
/// half of the CPU sampler's time here.
#[derive(Default)]
pub(super) struct LocalIds {
    /// `node << 32 | local id`; `u64::MAX` where free.
    slots: Vec<u64>,
    /// Per node: its local id; `u32::MAX` where none.
    ids: Vec<u32>,
    /// Slots (hashed) or nodes (per node) in use, to clear them.
    filled: Vec<u32>,
    /// Per node: where each sampled neighbor is written, new or not, before the new ones
    /// are kept (only grows).
    written: Vec<u32>,
}

/// What a sub-batch's dedup needs of [`LocalIds`].
pub(super) trait LocalTable {
    /// Fetches `v`'s first slot ahead of a lookup (a hint).
    fn prefetch(&self, v: u32);
    /// `v`'s local id, or `fresh`'s (given `v` that id) when `v` is new; whether it was new.
    fn get_or_insert(&mut self, v: u32, fresh: u32) -> (u32, bool);

    /// One sub-batch's block-local ids: its destination nodes `dst` first (distinct:
    /// merge_seeds and the frontiers made here), then each sampled neighbor in order. Appends
    /// the new nodes to `frontier` and writes each edge's source id to `src`.
    #[inline(always)]
    fn number(&mut self, dst: &[u32], neighbors: &[u32], frontier: &mut Vec<u32>, src: &mut [u32]) {
        let base = frontier.len();
        for (i, &v) in dst.iter().enumerate() {
            self.get_or_insert(v, i as u32);
            frontier.push(v);
        }
        for (j, &u) in neighbors.iter().enumerate() {
            // The table can be larger than the caches: a slot is fetched a few edges ahead.
            if let Some(&ahead) = neighbors.get(j + SLOT_PREFETCH) {
                self.prefetch(ahead);
            }
            let (id, new) = self.get_or_insert(u, (frontier.len() - base) as u32);
            if new {
                frontier.push(u);
            }
            src[j] = id;
        }
    }
}

/// [`LocalIds`] as a hash table.
pub(super) struct HashedIds<'a> {
    slots: &'a mut [u64],
    filled: &'a mut Vec<u32>,
    mask: usize,
}

/// [`LocalIds`] as an id per node.
pub(super) struct NodeIds<'a> {
    ids: &'a mut [u32],
    filled: &'a mut Vec<u32>,
    written: &'a mut Vec<u32>,
}

impl LocalIds {
    /// The slots of a hash table with room for `entries` (a power of two, at most half full).
    /// When that is about as many as the graph's nodes, take [`LocalIds::per_node`] instead.
    pub(super) fn hashed_len(entries: usize) -> usize {
        (2 * entries.max(1)).next_power_of_two().max(64)
    }

    /// A hash table of `len` slots ([`LocalIds::hashed_len`]). Only the first slots of the
    /// allocation are used, so a small layer after a large one stays in cache.
    pub(super) fn hashed(&mut self, len: usize) -> HashedIds<'_> {
        if len > self.slots.len() {
            self.slots = vec![u64::MAX; len];
        }
        HashedIds { slots: &mut self.slots[..len], filled: &mut self.filled, mask: len - 1 }
    }

    /// An id per node of a graph of `nodes`.
    pub(super) fn per_node(&mut self, nodes: usize) -> NodeIds<'_> {
        if self.ids.len() < nodes {
            self.ids = vec![u32::MAX; nodes];
        }
        NodeIds { ids: &mut self.ids, filled: &mut self.filled, written: &mut self.written }
    }
}

impl HashedIds<'_> {
    /// Where `v`'s probe starts: by Fibonacci hashing (the top bits of the product spread
    /// consecutive ids).
    #[inline(always)]
    fn home(&self, v: u32) -> usize {
        ((v as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask
    }
}

impl LocalTable for HashedIds<'_> {
    #[inline(always)]
    fn prefetch(&self, v: u32) {
        crate::engine::prefetch(self.slots.as_ptr().wrapping_add(self.home(v)));
    }
    #[inline(always)]
    fn get_or_insert(&mut self, v: u32, fresh: u32) -> (u32, bool) {
        let mut at = self.home(v);
        loop {
            let s = self.slots[at];
            if s == u64::MAX {
                self.slots[at] = (v as u64) << 32 | fresh as u64;
                self.filled.push(at as u32);
                return (fresh, true);
            }
            if (s >> 32) as u32 == v {
                return (s as u32, false);
            }
            at = (at + 1) & self.mask;
        }
    }
}

impl Drop for HashedIds<'_> {
    fn drop(&mut self) {
        for &s in self.filled.iter() {
            self.slots[s as usize] = u64::MAX;
        }
        self.filled.clear();
    }
}

impl LocalTable for NodeIds<'_> {
    #[inline(always)]
    fn prefetch(&self, v: u32) {
        crate::engine::prefetch(self.ids.as_ptr().wrapping_add(v as usize));
    }
    #[inline(always)]
    fn get_or_insert(&mut self, v: u32, fresh: u32) -> (u32, bool) {
        let id = self.ids[v as usize];
        if id != u32::MAX {
            return (id, false);
        }
        self.ids[v as usize] = fresh;
        self.filled.push(v);
        (fresh, true)
    }

    /// Without a branch on whether a neighbor is new (about half are, in no order a predictor
    /// learns): every neighbor is written to `written` and the count moves by one if new.
    #[inline(always)]
    fn number(&mut self, dst: &[u32], neighbors: &[u32], frontier: &mut Vec<u32>, src: &mut [u32]) {
        for (i, &v) in dst.iter().enumerate() {
            self.ids[v as usize] = i as u32;
        }
        self.filled.extend_from_slice(dst);
        frontier.extend_from_slice(dst);
        if self.written.len() < neighbors.len() {
            self.written.resize(neighbors.len(), 0);
        }
        let (mut fresh, mut new_nodes) = (dst.len() as u32, 0usize);
        for (j, &u) in neighbors.iter().enumerate() {
            if let Some(&ahead) = neighbors.get(j + SLOT_PREFETCH) {
                self.prefetch(ahead);
            }
            let seen = self.ids[u as usize];
            let new = seen == u32::MAX;
            let id = if new { fresh } else { seen };
            self.ids[u as usize] = id;
            self.written[new_nodes] = u;
            new_nodes += new as usize;
            fresh += new as u32;
            src[j] = id;
        }
        self.filled.extend_from_slice(&self.written[..new_nodes]);
        frontier.extend_from_slice(&self.written[..new_nodes]);
    }
}

impl Drop for NodeIds<'_> {
    fn drop(&mut self) {
        for &v in self.filled.iter() {
            self.ids[v as usize] = u32::MAX;
        }
        self.filled.clear();
    }
}

/// How many edges ahead [`next_frontier`] prefetches a sampled neighbor's table slot.
const SLOT_PREFETCH: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Block-local ids by a plain map: the definition both tables must meet.
    fn by_map(dst: &[u32], neighbors: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let mut ids: HashMap<u32, u32> = HashMap::new();
        let mut frontier = Vec::new();
        for &v in dst.iter().chain(neighbors) {
            ids.entry(v).or_insert_with(|| {
                frontier.push(v);
                frontier.len() as u32 - 1
            });
        }
        (frontier, neighbors.iter().map(|v| ids[v]).collect())
    }

    #[test]
    fn both_tables_number_like_a_map_and_clear_between_sub_batches() {
        let nodes = 5000usize;
        let mut local = LocalIds::default();
        let mut x = 12345u64;
        let mut next = |below: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) as usize % below) as u32
        };
        for round in 0..12 {
            // Distinct destinations, then neighbors with repeats (some of them destinations).
            let mut dst: Vec<u32> = Vec::new();
            while dst.len() < 1 + round * 7 {
                let v = next(nodes);
                if !dst.contains(&v) {
                    dst.push(v);
                }
            }
            let neighbors: Vec<u32> = (0..round * 90).map(|i| if i % 5 == 0 { dst[i % dst.len()] } else { next(nodes / 4) }).collect();
            let (want_frontier, want_src) = by_map(&dst, &neighbors);
            for hashed in [true, false] {
                let (mut frontier, mut src) = (vec![7u32], vec![0u32; neighbors.len()]);
                if hashed {
                    local.hashed(LocalIds::hashed_len(dst.len() + neighbors.len())).number(&dst, &neighbors, &mut frontier, &mut src);
                } else {
                    local.per_node(nodes).number(&dst, &neighbors, &mut frontier, &mut src);
                }
                assert_eq!(frontier[1..], want_frontier[..], "round {round}, hashed {hashed}");
                assert_eq!(src, want_src, "round {round}, hashed {hashed}");
            }
        }
    }
}

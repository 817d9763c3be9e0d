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
}

/// What a sub-batch's dedup needs of [`LocalIds`].
pub(super) trait LocalTable {
    /// Fetches `v`'s first slot ahead of a lookup (a hint).
    fn prefetch(&self, v: u32);
    /// `v`'s local id, or `fresh`'s (given `v` that id) when `v` is new; whether it was new.
    fn get_or_insert(&mut self, v: u32, fresh: u32) -> (u32, bool);
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
        NodeIds { ids: &mut self.ids, filled: &mut self.filled }
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

/// One sub-batch's block-local ids: its destination nodes `dst` first (distinct: merge_seeds
/// and the frontiers made here), then each sampled neighbor in order. Appends the new nodes to
/// `frontier` and writes each edge's source id to `src`.
#[inline(always)]
pub(super) fn number_sources<T: LocalTable>(table: &mut T, dst: &[u32], neighbors: &[u32], frontier: &mut Vec<u32>, src: &mut [u32]) {
    let base = frontier.len();
    for (i, &v) in dst.iter().enumerate() {
        table.get_or_insert(v, i as u32);
        frontier.push(v);
    }
    for (j, &u) in neighbors.iter().enumerate() {
        // The table can be larger than the caches: a slot is fetched a few edges ahead.
        if let Some(&ahead) = neighbors.get(j + SLOT_PREFETCH) {
            table.prefetch(ahead);
        }
        let (id, new) = table.get_or_insert(u, (frontier.len() - base) as u32);
        if new {
            frontier.push(u);
        }
        src[j] = id;
    }
}

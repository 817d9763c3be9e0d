//! The structs the host hands the CUDA kernels, declared once as `#[repr(C)]` Rust types
//! that mirror the C declarations (`WfGraph` in `kernels/prelude.cuh`, `WfRunArgs` in
//! `kernels/walk.cu`, `WfSampleArgs` in `kernels/sample.cu`), uploaded as their bytes. A test
//! lays out each C declaration by the C rules ((`c_layout`)) and checks every field's offset
//! and the size against the Rust struct's (NVRTC has no `offsetof` to assert it in the
//! module). Device pointers are `u64` (`CUdeviceptr`); the C side's implicit padding is
//! explicit here.

#[cfg(test)]
use std::mem::{offset_of, size_of};

/// `WfGraph`: the graph and its per-node arrays on the device.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WfGraph {
    pub num_nodes: u32,
    pub _pad0: u32,
    pub offsets: u64,
    pub targets: u64,
    pub edges: u64,
    pub weights: u64,
    pub labels: u64,
    pub timestamps: u64,
    pub node_w: u64,
    pub weight_max: u64,
    pub weight_min: u64,
    pub weight_sum: u64,
    pub label_k: u32,
    pub _pad1: u32,
    pub label_stats: u64,
    pub nbr_degree_max: u64,
    pub nbr_degree_min: u64,
    pub node_props: u64,
    pub hub_slot: u64,
    pub hub_bits: u64,
    pub hub_words: u64,
    pub row_base: u64,
    pub hot_edges: u64,
    pub cold_targets: u64,
    pub cold_weights: u64,
    pub cold_labels: u64,
    pub cold_times: u64,
    pub term_entries0: u64,
    pub term_entries1: u64,
    pub term_entries2: u64,
    pub term_entries3: u64,
    pub term_sums0: u64,
    pub term_sums1: u64,
    pub term_sums2: u64,
    pub term_sums3: u64,
    pub seg_order: u64,
    pub seg_starts: u64,
    pub table_at: u64,
    pub seg_k: u32,
    pub multiplicity: u32,
    pub has_tables: u32,
    pub table_min_degree: u32,
    pub row_sig: u64,
    pub wide_sig: u64,
}

/// `WfRunArgs`: one batch of a walk run.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WfRunArgs {
    pub first_query: u64,
    pub num_queries: u64,
    pub seed: u64,
    pub length: u32,
    pub mode: u32,
    pub ratio: f64,
    pub fixed: f64,
    pub ratio_short: f64,
    pub short_row: u32,
    pub per_node_starts: u32,
    pub starts: u64,
    pub out: u64,
    pub lens: u64,
    pub counter: u64,
    pub stats: u64,
    pub error: u64,
    pub query_ids: u64,
    pub struct_cost: f64,
    pub out_edges: u64,
}

/// `WfSampleArgs`: one layer of neighbour sampling.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct WfSampleArgs {
    pub frontier: u64,
    pub classified: u64,
    pub batch_ptr: u64,
    pub bound_ptr: u64,
    pub full_before: u64,
    pub edge_ptr: u64,
    pub offsets: u64,
    pub targets: u64,
    pub out_eid: u64,
    pub out_nbr: u64,
    pub out_dst: u64,
    pub seed: u64,
    pub k: u32,
    pub n: u32,
    pub first_batch: u32,
    pub layer: u32,
    pub fanout: u32,
    pub with_replacement: i32,
    pub row_base: u64,
    pub hot_edges: u64,
    pub cold_targets: u64,
}

/// Every field of a host struct with its Rust offset, in declaration order (padding left out).
#[cfg(test)]
macro_rules! fields {
    ($ty:ident: $($field:ident),* $(,)?) => {{
        let mut v: Vec<(&'static str, usize)> = Vec::new();
        $(
            if !stringify!($field).starts_with("_pad") {
                v.push((stringify!($field), offset_of!($ty, $field)));
            }
        )*
        (v, size_of::<$ty>())
    }};
}

/// The host's layout of a kernel struct, by its C name: each named field with its offset,
/// and the size.
#[cfg(test)]
fn host_layout(c_name: &str) -> (Vec<(&'static str, usize)>, usize) {
    match c_name {
        "WfGraph" => fields!(WfGraph: num_nodes, _pad0, offsets, targets, edges, weights, labels, timestamps, node_w,
            weight_max, weight_min, weight_sum, label_k, _pad1, label_stats, nbr_degree_max,
            nbr_degree_min, node_props, hub_slot, hub_bits, hub_words, row_base, hot_edges, cold_targets, cold_weights,
            cold_labels, cold_times, term_entries0, term_entries1, term_entries2, term_entries3, term_sums0, term_sums1,
            term_sums2, term_sums3, seg_order, seg_starts, table_at, seg_k, multiplicity, has_tables, table_min_degree, row_sig, wide_sig),
        "WfRunArgs" => fields!(WfRunArgs: first_query, num_queries, seed, length, mode, ratio, fixed, ratio_short,
            short_row, per_node_starts, starts, out, lens, counter, stats, error, query_ids, struct_cost, out_edges),
        "WfSampleArgs" => fields!(WfSampleArgs: frontier, classified, batch_ptr, bound_ptr, full_before, edge_ptr,
            offsets, targets, out_eid, out_nbr, out_dst, seed, k, n, first_batch, layer, fanout, with_replacement, row_base,
            hot_edges, cold_targets),
        "WfTriCount" => {
            use crate::triangles::CountArgs;
            fields!(CountArgs: offsets, targets, poff, partners, warp_units, warp_count, block_units, block_count, lane_units,
                lane_count, next, total, per_node, block_slots, warp_group, table_blocks, _pad)
        }
        "WfTriOrient" => {
            use crate::triangles::OrientArgs;
            fields!(OrientArgs: offsets, targets, n, counts, out_offsets, out_targets, out_src, bad)
        }
        other => panic!("no host struct mirrors `{other}`"),
    }
}

/// The layout C gives `struct c_name { ... };` in `source` (x86-64 / CUDA rules: each field at
/// a multiple of its alignment, the size a multiple of the largest), for the field types the
/// kernels' structs use. Comments are ignored; `double a, b;` declares two fields.
#[cfg(test)]
fn c_layout(source: &str, c_name: &str) -> Result<(Vec<(String, usize)>, usize), String> {
    let head = format!("struct {c_name} {{");
    let start = source.find(&head).ok_or_else(|| format!("no `{head}` in the source"))? + head.len();
    let body = &source[start..start + source[start..].find("};").ok_or("the struct does not end")?];
    let code: String = body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join(" ");
    let (mut fields, mut offset, mut align_max) = (Vec::new(), 0usize, 1usize);
    for decl in code.split(';').map(str::trim).filter(|d| !d.is_empty()) {
        let pointer = decl.contains('*');
        let first = decl.split_whitespace().find(|w| *w != "const").ok_or_else(|| format!("`{decl}`: no type"))?;
        let size = if pointer {
            8
        } else {
            match first {
                "u64" | "i64" | "double" => 8,
                "u32" | "i32" | "int" | "float" => 4,
                "u16" | "i16" => 2,
                "u8" | "i8" | "bool" | "char" => 1,
                other => return Err(format!("`{decl}`: unknown type `{other}`")),
            }
        };
        // The names: after the type (and any `*`, `const`), comma separated.
        let names = decl.rsplit(|c: char| c == '*' || c == ' ').next().unwrap_or("");
        let all: Vec<&str> = if decl.contains(',') {
            let after_type = decl.splitn(2, char::is_whitespace).nth(1).unwrap_or("");
            after_type.split(',').map(|n| n.trim().trim_start_matches('*').trim()).collect()
        } else {
            vec![names.trim()]
        };
        for name in all {
            offset = offset.div_ceil(size) * size;
            fields.push((name.to_string(), offset));
            offset += size;
            align_max = align_max.max(size);
        }
    }
    Ok((fields, offset.div_ceil(align_max) * align_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every host struct against the C declaration the kernels are compiled with.
    #[test]
    fn host_structs_match_the_kernels_declarations() {
        let sources = [
            ("WfGraph", crate::codegen::PRELUDE),
            ("WfRunArgs", crate::WALK_KERNEL),
            ("WfSampleArgs", crate::sample::SAMPLE_KERNELS),
            ("WfTriCount", crate::triangles::TRIANGLE_KERNELS),
            ("WfTriOrient", crate::triangles::TRIANGLE_KERNELS),
        ];
        for (name, src) in sources {
            let (host, host_size) = host_layout(name);
            let (c, c_size) = c_layout(src, name).unwrap();
            let c: Vec<(&str, usize)> = c.iter().map(|(n, o)| (n.as_str(), *o)).collect();
            assert_eq!(host, c, "{name}: the Rust struct and the C declaration differ");
            assert_eq!(host_size, c_size, "{name}: size");
        }
        assert_eq!(host_layout("WfGraph").1, 320);
        assert_eq!(host_layout("WfRunArgs").1, 136);
    }

    /// The check sees a moved field, a changed type and a missing one.
    #[test]
    fn a_declaration_that_differs_is_caught() {
        let ok = "struct S {\n    u32 a;      // note\n    const u64* p;\n    double x, y;\n};";
        assert_eq!(c_layout(ok, "S").unwrap(), (vec![("a".into(), 0), ("p".into(), 8), ("x".into(), 16), ("y".into(), 24)], 32));
        let run = crate::WALK_KERNEL;
        let moved = run.replacen("    u64 seed;\n", "    u32 flags;\n    u64 seed;\n", 1);
        assert_ne!(moved, run);
        let (c, _) = c_layout(&moved, "WfRunArgs").unwrap();
        let c: Vec<(&str, usize)> = c.iter().map(|(n, o)| (n.as_str(), *o)).collect();
        assert_ne!(host_layout("WfRunArgs").0, c);
        assert!(c_layout("struct S { wide_t a; };", "S").unwrap_err().contains("unknown type"));
    }
}

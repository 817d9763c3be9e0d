// Weighted Node2Vec written against ThunderRW's programming model (its `compute` and walker
// generator), for the side-by-side benchmark only: the walk of wayfarer's walks/node2vec.rs,
// the edge's weight times 1/p, 1 or 1/q. ThunderRW's own node2vec app ignores edge weights, so
// its "weighted" row needs this app. Built by scripts/cpu-peers-bench.sh inside a fetched
// ThunderRW copy; it is not part of wayfarer.
#include "creeper_main.h"

HyperParameter g_para = {ExecutionMode::Dynamic, SamplingMethod::MaxWeightRejectionSampling, 0, {nullptr, 0}};

struct WeightedNode2Vec {
    int l_;
    double p_;  // 1 / the return parameter
    double q_;  // 1 / the in-out parameter
    double bound_;
    Graph* g_;

    WeightedNode2Vec() {}
    WeightedNode2Vec(int l, double p, double q, double max_edge_weight, Graph* g)
        : l_(l), p_(p), q_(q), bound_(max_edge_weight * std::max(1.0, std::max(p, q))), g_(g) {}

    inline double weight(WalkerMeta& w, intT begin, intT end, int64_t eid) {
        double base = g_->edge_weight_[eid];
        if (w.length_ == 1) return base;
        int prev = w.seq_[w.length_ - 2];
        if (end == prev) return base * p_;
        if (g_->is_neighbor(prev, end)) return base;
        return base * q_;
    }

    inline bool update(WalkerMeta& w, intT begin, intT end, int64_t eid) { return w.length_ == l_; }

    inline double max_weight(WalkerMeta& w) { return bound_; }
};

void execute(Graph& graph, InputParser& cmd_parser) {
    int l = cmd_parser.get_cmd_option("-l").empty() ? 80 : std::stoi(cmd_parser.get_cmd_option("-l"));
    double p = cmd_parser.get_cmd_option("-p").empty() ? 2.0 : std::stod(cmd_parser.get_cmd_option("-p"));
    double q = cmd_parser.get_cmd_option("-q").empty() ? 0.5 : std::stod(cmd_parser.get_cmd_option("-q"));
    g_para.length_ = l;
    double max_edge_weight = 0.0;
    for (int64_t e = 0; e < graph.num_edges(); ++e) max_edge_weight = std::max(max_edge_weight, graph.edge_weight_[e]);
    std::vector<WalkerMeta> walkers;
    generate_all_source(graph, walkers);
    compute(graph, walkers, WeightedNode2Vec(l, 1.0 / p, 1.0 / q, max_edge_weight, &graph));
}

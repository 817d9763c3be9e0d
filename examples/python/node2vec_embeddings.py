"""Node2Vec embeddings of WordNet, end to end: walks, word2vec, and a classifier.

Node2Vec walks on the embedded WordNet 3.0 graph (wayfarer), skip-gram embeddings of the walks
(gensim's Word2Vec), then a logistic regression predicting each synset's part of speech (noun,
verb, adjective, adverb: the leading digit of its id) from its embedding alone, on held-out
synsets. With --pecanpy, PecanPy's Node2Vec walks on the same graph, p and q go through the
same embedding and classifier, for a side-by-side of time and accuracy.

    pip install ./python gensim scikit-learn [pecanpy]
    python examples/python/node2vec_embeddings.py [--walks-per-node 4 --length 40 --pecanpy]

Prints one line per stage with its time, then the accuracy (and PecanPy's, with --pecanpy).
"""

import argparse
import os
import tempfile
import time

import numpy as np

import wayfarer


def embed(walks, dim, window, epochs, workers, seed):
    """Skip-gram embeddings of the walks (lists of node-id strings)."""
    from gensim.models import Word2Vec

    model = Word2Vec(walks, vector_size=dim, window=window, min_count=1, sg=1, workers=workers, epochs=epochs, seed=seed)
    return model.wv


def classify(wv, nodes, seed):
    """Accuracy of predicting the part of speech from the embedding, on 30% held out."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    keep = [v for v in nodes if str(v) in wv]
    x = np.stack([wv[str(v)] for v in keep])
    y = np.array([v // 100_000_000 for v in keep])  # WordNet ids: POS * 10^8 + offset
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.3, random_state=seed, stratify=y)
    clf = LogisticRegression(max_iter=1000).fit(xtr, ytr)
    return clf.score(xte, yte), np.bincount(y).max() / len(y)


def stage(name, t0):
    dt = time.perf_counter() - t0
    print(f"  {name:34s} {dt:8.2f} s", flush=True)
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walks-per-node", type=int, default=4)
    ap.add_argument("--length", type=int, default=40, help="steps per walk")
    ap.add_argument("--p", type=float, default=2.0)
    ap.add_argument("--q", type=float, default=0.5)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--pecanpy", action="store_true", help="also run PecanPy's Node2Vec (SparseOTF) on the same graph")
    a = ap.parse_args()

    print(f"wayfarer {wayfarer.__version__}; {a.walks_per_node} walks per node, {a.length} steps, p={a.p} q={a.q}, "
          f"dim {a.dim}, window {a.window}, {a.epochs} epoch(s), {a.workers} workers")
    t = time.perf_counter()
    g = wayfarer.default_graph()
    stage(f"load WordNet ({g.num_nodes} nodes)", t)
    nodes = g.node_ids()

    results = {}
    t = time.perf_counter()
    walks = g.walk("node2vec", length=a.length, walks_per_node=a.walks_per_node, p=a.p, q=a.q, seed=a.seed,
                   backend=a.backend, ids="internal")
    t_walk = stage(f"wayfarer walks ({g.last_summary.split('backend ')[1].split(',')[0]})", t)
    t = time.perf_counter()
    # Node ids as words: the walks hold internal ids 0..n, so one array lookup per walk.
    words = np.array([str(v) for v in nodes], dtype=object)
    sentences = [words[row[row >= 0]].tolist() for row in walks]
    t_conv = stage("walks as sentences", t)
    t = time.perf_counter()
    wv = embed(sentences, a.dim, a.window, a.epochs, a.workers, a.seed)
    t_w2v = stage("word2vec", t)
    t = time.perf_counter()
    acc, base = classify(wv, nodes, a.seed)
    stage("logistic regression", t)
    results["wayfarer"] = (t_walk, t_conv, t_w2v, acc)

    if a.pecanpy:
        from pecanpy import pecanpy

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "wordnet.edg")
            indptr, indices = g.csr()
            src = np.repeat(nodes, np.diff(indptr))
            np.savetxt(path, np.stack([src, nodes[indices]], axis=1), fmt="%d", delimiter="\t")
            t = time.perf_counter()
            pg = pecanpy.SparseOTF(p=a.p, q=a.q, workers=a.workers, verbose=False, extend=False)
            pg.read_edg(path, weighted=False, directed=True)
            t_load = stage("PecanPy: read the edge list", t)
            t = time.perf_counter()
            pwalks = pg.simulate_walks(num_walks=a.walks_per_node, walk_length=a.length + 1)
            t_pwalk = stage("PecanPy walks (SparseOTF)", t)
        t = time.perf_counter()
        pwv = embed(pwalks, a.dim, a.window, a.epochs, a.workers, a.seed)
        t_pw2v = stage("word2vec (PecanPy's walks)", t)
        pacc, _ = classify(pwv, nodes, a.seed)
        results["pecanpy"] = (t_pwalk, t_load, t_pw2v, pacc)

    print(f"\npart-of-speech accuracy from the embedding (majority class {base:.3f}):")
    for name, (tw, _, tv, acc) in results.items():
        print(f"  {name:9s} accuracy {acc:.3f}; walks {tw:.2f} s, word2vec {tv:.2f} s")
    if "pecanpy" in results:
        print(f"  walk time ratio PecanPy / wayfarer: {results['pecanpy'][0] / results['wayfarer'][0]:.1f}x")


if __name__ == "__main__":
    main()

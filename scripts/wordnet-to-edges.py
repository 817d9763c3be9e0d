#!/usr/bin/env python3
"""Convert the WordNet 3.0 database (Debian package `wordnet-base`) into wayfarer's embedded
default graph: a gzipped text edge list `source target label`, one line per pointer.

Nodes are synsets, with id = POS * 10^8 + byte offset in data.<pos> (POS: 1 noun, 2 verb,
3 adjective, 4 adverb), so every id is stable and traceable to the WordNet database. Edges are
WordNet pointers (semantic and lexical), directed as WordNet stores them; the label is the
pointer type, numbered by POINTER_TYPES below (written to labels.tsv beside the graph).

Usage: scripts/wordnet-to-edges.py [/usr/share/wordnet] [data/wordnet]
"""
import gzip
import os
import sys

POINTER_TYPES = [
    ("!", "antonym"), ("@", "hypernym"), ("@i", "instance_hypernym"), ("~", "hyponym"),
    ("~i", "instance_hyponym"), ("#m", "member_holonym"), ("#s", "substance_holonym"),
    ("#p", "part_holonym"), ("%m", "member_meronym"), ("%s", "substance_meronym"),
    ("%p", "part_meronym"), ("=", "attribute"), ("+", "derivationally_related"),
    (";c", "domain_topic"), ("-c", "member_of_domain_topic"), (";r", "domain_region"),
    ("-r", "member_of_domain_region"), (";u", "domain_usage"), ("-u", "member_of_domain_usage"),
    ("*", "entailment"), (">", "cause"), ("^", "also_see"), ("$", "verb_group"),
    ("&", "similar_to"), ("<", "participle_of"), ("\\", "pertainym_or_derived_from"),
]
LABEL = {sym: i for i, (sym, _) in enumerate(POINTER_TYPES)}
POS = {"n": 1, "v": 2, "a": 3, "s": 3, "r": 4}
FILES = [("noun", 1), ("verb", 2), ("adj", 3), ("adv", 4)]


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "data", "wordnet")
    edges = []
    synsets = 0
    for name, pos in FILES:
        with open(os.path.join(src, "data." + name), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue  # license header
                fields = line.split(" | ")[0].split()
                offset = int(fields[0])
                w_cnt = int(fields[3], 16)
                i = 4 + 2 * w_cnt
                p_cnt = int(fields[i])
                i += 1
                me = pos * 10**8 + offset
                synsets += 1
                for _ in range(p_cnt):
                    sym, target, tpos = fields[i], int(fields[i + 1]), fields[i + 2]
                    i += 4
                    edges.append((me, POS[tpos] * 10**8 + target, LABEL[sym]))
    edges.sort()
    os.makedirs(out, exist_ok=True)
    # mtime=0 keeps the gzip bytes identical across runs.
    with open(os.path.join(out, "wordnet-edges.txt.gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as gz:
            gz.write(b"# WordNet 3.0 pointer graph: source target label (see labels.tsv)\n")
            gz.write("".join(f"{s} {t} {l}\n" for s, t, l in edges).encode())
    with open(os.path.join(out, "labels.tsv"), "w") as f:
        f.write("label\tsymbol\tpointer_type\n")
        for i, (sym, desc) in enumerate(POINTER_TYPES):
            f.write(f"{i}\t{sym}\t{desc}\n")
    print(f"{synsets} synsets, {len(edges)} pointers", file=sys.stderr)


if __name__ == "__main__":
    main()

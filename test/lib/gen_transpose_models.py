#!/usr/bin/env python3
"""Emits random transpose models for the permutation property tests.

  gen_transpose_models.py OUTDIR [--seed S] [--per-rank N] [--ranks 2,3,4]

Each model is one forward function whose loss is a sum of terms
sum(T(y) * c), with y = x (a parameter) or y = x.W (a matmul on the last
dim, W a parameter) and T one of

  * linalg.transpose by a random permutation,
  * a chain of two linalg.transposes (random, or the head split [1, 0, 2]
    followed by K^T [0, 2, 1] after an expand_shape),
  * a linalg.generic that only copies its input through two different
    permuted maps (result[out(i)] = x[in(i)]).

c is a fixed non-parameter input with T(y)'s shape, so every gradient is
c moved back through the inverse permutation: a swapped permutation shows
up as wrong values (or a verifier error), not only on non-square shapes.
Sizes mix odd, even and multiples of 4, distinct within a tensor so a
swapped permutation cannot go unnoticed. The file names are printed, one a
line. The same seed always gives the same models.
"""
import argparse
import os
import random

SIZES = [2, 3, 4, 5, 6, 7, 8, 12]


def ty(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>" if shape else "tensor<f32>"


def apply(perm, shape):
    # linalg.transpose: result dim i is input dim perm[i].
    return [shape[p] for p in perm]


def iters(kinds):
    return ", ".join(f'"{k}"' for k in kinds)


def dims(n):
    return ", ".join(f"d{i}" for i in range(n))


def amap(n, res):
    return f"affine_map<({dims(n)}) -> ({', '.join(f'd{r}' for r in res)})>"


def random_perm(rng, rank, non_involution=True):
    while True:
        p = list(range(rank))
        rng.shuffle(p)
        if p == list(range(rank)):
            continue
        inv = [p.index(i) for i in range(rank)]
        if non_involution and rank > 2 and p == inv:
            continue
        return p


class Model:
    def __init__(self, name):
        self.name = name
        self.args = []  # (name, type, is_param)
        self.body = []
        self.terms = []
        self.n = 0

    def fresh(self, prefix):
        self.n += 1
        return f"%{prefix}{self.n}"

    def arg(self, prefix, shape, param):
        name = f"%{prefix}{len(self.args)}"
        self.args.append((name, ty(shape), param))
        return name

    def empty(self, shape):
        v = self.fresh("e")
        self.body.append(f"  {v} = tensor.empty() : {ty(shape)}")
        return v

    def transpose(self, x, shape, perm):
        out = apply(perm, shape)
        e = self.empty(out)
        v = self.fresh("t")
        self.body.append(
            f"  {v} = linalg.transpose ins({x} : {ty(shape)}) outs({e} : {ty(out)}) "
            f"permutation = [{', '.join(map(str, perm))}]")
        return v, out

    def generic_transpose(self, x, shape, inmap, outmap):
        # result[out(i)] = x[in(i)]: loop dim inmap[k] has x's size k.
        n = len(shape)
        loop = [0] * n
        for k, d in enumerate(inmap):
            loop[d] = shape[k]
        out = [loop[d] for d in outmap]
        e = self.empty(out)
        v = self.fresh("g")
        self.body.append(
            f"  {v} = linalg.generic {{indexing_maps = [{amap(n, inmap)}, {amap(n, outmap)}], "
            f"iterator_types = [{iters(['parallel'] * n)}]}} "
            f"ins({x} : {ty(shape)}) outs({e} : {ty(out)}) {{\n"
            f"  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  }} -> {ty(out)}")
        return v, out

    def matmul_last(self, x, shape, w, n):
        # y[..., j] = sum_k x[..., k] W[k, j]
        r = len(shape)
        out = shape[:-1] + [n]
        e = self.empty(out)
        z = self.fresh("z")
        self.body.append(f"  {z} = linalg.fill ins(%zero : f32) outs({e} : {ty(out)}) -> {ty(out)}")
        v = self.fresh("m")
        lx = list(range(r - 1)) + [r]
        lw = [r, r - 1]
        lo = list(range(r))
        self.body.append(
            f"  {v} = linalg.generic {{indexing_maps = [{amap(r + 1, lx)}, {amap(r + 1, lw)}, "
            f"{amap(r + 1, lo)}], iterator_types = [{iters(['parallel'] * r + ['reduction'])}]}} "
            f"ins({x}, {w} : {ty(shape)}, {ty([shape[-1], n])}) outs({z} : {ty(out)}) {{\n"
            f"  ^bb0(%a: f32, %b: f32, %acc: f32):\n    %p = arith.mulf %a, %b : f32\n"
            f"    %s = arith.addf %acc, %p : f32\n    linalg.yield %s : f32\n  }} -> {ty(out)}")
        return v, out

    def term(self, t, shape):
        c = self.arg("c", shape, False)
        r = len(shape)
        v = self.fresh("l")
        self.body.append(
            f"  {v} = linalg.generic {{indexing_maps = [{amap(r, range(r))}, {amap(r, range(r))}, "
            f"affine_map<({dims(r)}) -> ()>], iterator_types = [{iters(['reduction'] * r)}]}} "
            f"ins({t}, {c} : {ty(shape)}, {ty(shape)}) outs(%lz : tensor<f32>) {{\n"
            f"  ^bb0(%a: f32, %b: f32, %acc: f32):\n    %p = arith.mulf %a, %b : f32\n"
            f"    %s = arith.addf %acc, %p : f32\n    linalg.yield %s : f32\n  }} -> tensor<f32>")
        self.terms.append(v)

    def text(self, comment):
        head = [f"// {line}" for line in comment]
        sig = ",\n    ".join(f"{n}: {t}" + (" {fbl.param}" if p else "")
                             for n, t, p in self.args)
        out = head + [f"func.func @{self.name}(\n    {sig}) -> tensor<f32> {{",
                      "  %zero = arith.constant 0.0 : f32",
                      "  %le = tensor.empty() : tensor<f32>",
                      "  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>"]
        out += self.body
        acc = self.terms[0]
        for t in self.terms[1:]:
            v = self.fresh("sum")
            out.append(f"  {v} = linalg.add ins({acc}, {t} : tensor<f32>, tensor<f32>) "
                       f"outs(%le : tensor<f32>) -> tensor<f32>")
            acc = v
        out += [f"  return {acc} : tensor<f32>", "}", ""]
        return "\n".join(out)


def gen_model(rng, rank, idx):
    m = Model(f"perm_r{rank}_{idx}")
    notes = []
    shape = rng.sample(SIZES, rank)
    # 1. transpose(x, p).
    p = random_perm(rng, rank)
    x = m.arg("x", shape, True)
    t, s = m.transpose(x, shape, p)
    m.term(t, s)
    notes.append(f"transpose {shape} by {p}")
    # 2. transpose(x.W, p): the transposed tensor is computed.
    shape2 = rng.sample(SIZES, rank)
    nout = rng.choice(SIZES)
    x = m.arg("x", shape2, True)
    w = m.arg("w", [shape2[-1], nout], True)
    y, ys = m.matmul_last(x, shape2, w, nout)
    p2 = random_perm(rng, rank)
    t, s = m.transpose(y, ys, p2)
    m.term(t, s)
    notes.append(f"transpose (x.W) {ys} by {p2}")
    # 3. A chain of two transposes.
    shape3 = rng.sample(SIZES, rank)
    q1, q2 = random_perm(rng, rank, False), random_perm(rng, rank, False)
    x = m.arg("x", shape3, True)
    t, s = m.transpose(x, shape3, q1)
    t, s = m.transpose(t, s, q2)
    m.term(t, s)
    notes.append(f"transpose {shape3} by {q1} then {q2}")
    # 4. A generic-written transpose with two permuted maps.
    shape4 = rng.sample(SIZES, rank)
    # Two different maps, either of which may be the identity.
    inmap, outmap = list(range(rank)), list(range(rank))
    while inmap == outmap:
        rng.shuffle(inmap)
        rng.shuffle(outmap)
    x = m.arg("x", shape4, True)
    t, s = m.generic_transpose(x, shape4, inmap, outmap)
    m.term(t, s)
    notes.append(f"generic copy {shape4}, in map {inmap}, out map {outmap}")
    return m, notes


def head_split_model(rng, name, seq, heads, dh, model_dim_w):
    # x.W -> expand [S, H*D] -> [S, H, D] -> [1, 0, 2] -> [0, 2, 1] (K^T).
    m = Model(name)
    x = m.arg("x", [seq, model_dim_w], True)
    w = m.arg("w", [model_dim_w, heads * dh], True)
    y, ys = m.matmul_last(x, [seq, model_dim_w], w, heads * dh)
    e = m.fresh("k")
    m.body.append(f"  {e} = tensor.expand_shape {y} [[0], [1, 2]] output_shape [{seq}, {heads}, {dh}] "
                  f": {ty(ys)} into {ty([seq, heads, dh])}")
    t, s = m.transpose(e, [seq, heads, dh], [1, 0, 2])
    t, s = m.transpose(t, s, [0, 2, 1])
    m.term(t, s)
    return m, [f"head split [{seq}, {heads}*{dh}] -> [1, 0, 2] -> [0, 2, 1] (K^T)"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-rank", type=int, default=1)
    ap.add_argument("--ranks", default="2,3,4")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.outdir, exist_ok=True)
    models = []
    for rank in map(int, args.ranks.split(",")):
        for i in range(args.per_rank):
            models.append(gen_model(rng, rank, i))
    # The attention importers' pattern, at odd and at multiple-of-4 sizes.
    models.append(head_split_model(rng, "head_split_odd", 5, 2, 3, 7))
    models.append(head_split_model(rng, "head_split_x4", 4, 2, 8, 8))
    for m, notes in models:
        path = os.path.join(args.outdir, m.name + ".mlir")
        with open(path, "w") as f:
            f.write(m.text([f"gen_transpose_models.py --seed {args.seed}"] + notes))
        print(path)


if __name__ == "__main__":
    main()

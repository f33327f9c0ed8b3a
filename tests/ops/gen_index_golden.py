#!/usr/bin/python3
"""Writes tests/ops/index_golden.txt: small cases of the scatter/index
family computed by PyTorch 1.13 on CPU, inputs included.

Run with Debian's python3-torch:  /usr/bin/python3 tests/ops/gen_index_golden.py

Format, one case per block:
  case <name>
  <tensor-name> <dtype> <ndim> <sizes...> <values...>   (floats as hex)
  ...
  end
The C++ test (index_golden_test.cpp) replays each case by name.
"""
import os
import torch

torch.manual_seed(0)
out = []


def fmt(name, t):
    t = t.contiguous()
    dt = {torch.float32: "float32", torch.float64: "float64",
          torch.int64: "int64", torch.int32: "int32", torch.bool: "bool",
          torch.uint8: "uint8"}[t.dtype]
    if t.is_floating_point():
        vals = [float(v).hex() for v in t.reshape(-1).tolist()]
    else:
        vals = [str(int(v)) for v in t.reshape(-1).tolist()]
    return " ".join([name, dt, str(t.dim())] + [str(s) for s in t.shape] + vals)


def case(name, **tensors):
    out.append("case " + name)
    for k, v in tensors.items():
        out.append(fmt(k, v))
    out.append("end")


def rnd(*shape, dtype=torch.float32):
    # Values with many distinct roundings, some negative zeros and repeats.
    t = torch.randn(*shape, dtype=torch.float64) * 3
    return t.to(dtype)


# scatter_reduce_: every reduce, include_self both ways, 1-d and 2-d, float
# and int64, heavy duplicates (5 destinations for 40 values).
for dtype in (torch.float32, torch.float64, torch.int64):
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            self_ = rnd(5, 4, dtype=torch.float64)
            src = rnd(10, 4, dtype=torch.float64)
            if dtype == torch.int64:
                self_ = (self_ * 3).round()
                src = (src * 3).round()
            if reduce == "prod":
                src = src.clamp(-1.5, 1.5)
            self_ = self_.to(dtype)
            src = src.to(dtype)
            index = torch.randint(0, 5, (10, 4))
            res = self_.scatter_reduce(0, index, src, reduce,
                                       include_self=include_self)
            name = "scatter_reduce_%s_%s_%d" % (
                str(dtype).split(".")[1], reduce, include_self)
            case(name, self=self_, index=index, src=src, out=res)
            # along dim 1, an index narrower than src
            index1 = torch.randint(0, 4, (5, 3))
            res1 = self_.scatter_reduce(1, index1, src[:5], reduce,
                                        include_self=include_self)
            case(name + "_dim1", self=self_, index=index1, src=src[:5],
                 out=res1)

# scatter_ (a tensor src: no duplicates so the result is defined) and
# scatter_ with a value; scatter_add_.
self_ = rnd(4, 6)
index = torch.stack([torch.randperm(4)[:3] for _ in range(6)], 1)
src = rnd(3, 6)
case("scatter_src", self=self_, index=index, src=src,
     out=self_.clone().scatter_(0, index, src))
case("scatter_value", self=self_, index=index,
     out=self_.clone().scatter_(0, index, 2.5))
index = torch.randint(0, 4, (7, 6))
src = rnd(7, 6)
case("scatter_add", self=self_, index=index, src=src,
     out=self_.clone().scatter_add_(0, index, src))

# index_put_ with accumulate: one index on dim 0, on dim 1, two adjacent,
# two apart (result dims go first), and a bool mask; int and float.
x = rnd(5, 4, 3)
i0 = torch.randint(-5, 5, (12,))
v = rnd(12, 4, 3)
case("index_put_acc_dim0", self=x, i0=i0, values=v,
     out=x.clone().index_put_((i0,), v, accumulate=True))
i1 = torch.randint(0, 4, (6,))
v = rnd(5, 6, 3)
case("index_put_acc_dim1", self=x, i1=i1, values=v,
     out=x.clone().index_put_((torch.arange(5)[:, None].expand(5, 6),
                               i1[None, :].expand(5, 6)), v, accumulate=True))
ia = torch.randint(0, 5, (2, 3))
ib = torch.randint(0, 4, (3,))
v = rnd(2, 3, 3)
case("index_put_acc_two", self=x, ia=ia, ib=ib, values=v,
     out=x.clone().index_put_((ia, ib), v, accumulate=True))
ic = torch.randint(0, 3, (3,))
v = rnd(3, 4)
res = x.clone()
res[ia[0], :, ic] += 0  # (shape check only)
res = x.clone()
torch.ops.aten.index_put_(res, [ia[0], None, ic], v, True)
case("index_put_acc_apart", self=x, ia=ia[0], ic=ic, values=v, out=res)
mask = torch.rand(5, 4) > 0.5
v = rnd(int(mask.sum()), 3)
case("index_put_mask", self=x, mask=mask, values=v,
     out=x.clone().index_put_((mask,), v))
xi = torch.randint(-9, 9, (6,))
ii = torch.randint(0, 6, (20,))
vi = torch.randint(-9, 9, (20,))
case("index_put_acc_int", self=xi, i0=ii, values=vi,
     out=xi.clone().index_put_((ii,), vi, accumulate=True))

# put_ with accumulate and negative indices; take.
x = rnd(3, 4)
idx = torch.randint(-12, 12, (30,))
v = rnd(30)
case("put_acc", self=x, index=idx, source=v,
     out=x.clone().put_(idx, v, accumulate=True))
idx2 = torch.randint(-12, 12, (2, 5))
case("take", self=x, index=idx2, out=torch.take(x, idx2))

# masked_fill_, masked_select with broadcasting.
m = torch.rand(4) > 0.5
case("masked_fill", self=x, mask=m, out=x.clone().masked_fill_(m, -1.25))
m2 = torch.rand(3, 1) > 0.3
case("masked_select", self=x, mask=m2, out=torch.masked_select(x, m2))

# index_add_ with alpha, index_copy_ without duplicates.
x = rnd(6, 3)
idx = torch.randint(0, 6, (9,))
src = rnd(9, 3)
case("index_add_alpha_int", self=x.round().long(), index=idx,
     source=src.round().long(),
     out=x.round().long().index_add_(0, idx, src.round().long(), alpha=3))
perm = torch.randperm(6)[:4]
src = rnd(4, 3)
case("index_copy", self=x, index=perm, source=src,
     out=x.clone().index_copy_(0, perm, src))

# bincount: counts, float32 and float64 weights, minlength.
inp = torch.randint(0, 7, (50,))
w32 = rnd(50)
w64 = rnd(50, dtype=torch.float64)
case("bincount", input=inp, out=torch.bincount(inp, minlength=9))
case("bincount_w32", input=inp, weights=w32, out=torch.bincount(inp, w32))
case("bincount_w64", input=inp, weights=w64, out=torch.bincount(inp, w64))

# histc: explicit ranges with values on bin edges, the data range.
for dtype in (torch.float32, torch.float64):
    d = str(dtype).split(".")[1]
    xs = torch.cat([rnd(997, dtype=dtype),
                    torch.linspace(-1, 1, 21, dtype=dtype),
                    torch.tensor([0.1, 0.2, 0.3, 0.7, -0.0], dtype=dtype)])
    for bins, lo, hi in ((10, -1.0, 1.0), (7, 0.1, 0.7), (13, -2.5, 3.0),
                         (5, 0.0, 0.0)):
        res = torch.histc(xs, bins=bins, min=lo, max=hi)
        case("histc_%s_%d" % (d, bins), input=xs,
             params=torch.tensor([bins, lo, hi], dtype=torch.float64),
             out=res)

# embedding_bag: sum, mean, max with offsets (an empty bag), 2-d input,
# padding_idx, include_last_offset, per_sample_weights (exact values).
F = torch.nn.functional
wt = rnd(10, 5)
inp = torch.randint(0, 10, (17,))
offs = torch.tensor([0, 4, 4, 9, 16])
for mode in ("sum", "mean", "max"):
    case("embedding_bag_" + mode, input=inp, weight=wt, offsets=offs,
         out=F.embedding_bag(inp, wt, offs, mode=mode))
    case("embedding_bag_pad_" + mode, input=inp, weight=wt, offsets=offs,
         out=F.embedding_bag(inp, wt, offs, mode=mode, padding_idx=3))
    # PyTorch 1.13 corrupts memory unless the last offset is input's length.
    offs_last = torch.tensor([0, 4, 4, 9, 17])
    case("embedding_bag_last_" + mode, input=inp, weight=wt,
         offsets=offs_last,
         out=F.embedding_bag(inp, wt, offs_last, mode=mode,
                             include_last_offset=True))
inp2 = torch.randint(0, 10, (4, 3))
case("embedding_bag_2d_mean", input=inp2, weight=wt,
     out=F.embedding_bag(inp2, wt, mode="mean"))
wq = (rnd(10, 5) * 4).round() / 4
psw = torch.tensor([1.0, 2.0, -0.5, 0.25] * 4 + [3.0])
case("embedding_bag_psw", input=inp, weight=wq, offsets=offs,
     per_sample_weights=psw,
     out=F.embedding_bag(inp, wq, offs, mode="sum",
                         per_sample_weights=psw))

# index_reduce_ (appended last: the draws above are unchanged): every
# reduce, include_self both ways, float and int64, 12 slices into 4 rows,
# along dim 0 and along dim 1 (an int32 index).
for dtype in (torch.float32, torch.float64, torch.int64):
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            self_ = rnd(4, 3, dtype=torch.float64)
            src = rnd(12, 3, dtype=torch.float64)
            if dtype == torch.int64:
                self_ = (self_ * 3).round()
                src = (src * 3).round()
            if reduce == "prod":
                src = src.clamp(-1.5, 1.5)
            self_ = self_.to(dtype)
            src = src.to(dtype)
            index = torch.randint(0, 4, (12,))
            name = "index_reduce_%s_%s_%d" % (
                str(dtype).split(".")[1], reduce, include_self)
            case(name, self=self_, index=index, src=src,
                 out=self_.index_reduce(0, index, src, reduce,
                                        include_self=include_self))
            index1 = torch.randint(0, 3, (5,), dtype=torch.int32)
            src1 = src[:4, :3].repeat(1, 2)[:, :5].contiguous()
            case(name + "_dim1", self=self_, index=index1, src=src1,
                 out=self_.index_reduce(1, index1, src1, reduce,
                                        include_self=include_self))

# Appended after index_reduce_ (the draws above are unchanged):
# embedding_bag with per_sample_weights and a padding_idx that occurs (its
# entries are skipped, weights and all), and bincount with weights of 4099
# elements into 2053 bins (several blocks of bins in the deterministic
# variant; PyTorch adds in index order).
pad_at = int(inp[1])
case("embedding_bag_psw_pad", input=inp, weight=wq, offsets=offs,
     per_sample_weights=psw,
     params=torch.tensor([pad_at], dtype=torch.float64),
     out=F.embedding_bag(inp, wq, offs, mode="sum", per_sample_weights=psw,
                         padding_idx=pad_at))
big = torch.randint(0, 2053, (4099,))
for dtype in (torch.float32, torch.float64):
    wb = rnd(4099, dtype=dtype)
    case("bincount_big_w%d" % (32 if dtype == torch.float32 else 64),
         input=big, weights=wb, out=torch.bincount(big, wb))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "index_golden.txt")
tmp = path + ".tmp"
with open(tmp, "w") as f:
    f.write("# generated by gen_index_golden.py with torch %s\n"
            % torch.__version__)
    f.write("\n".join(out) + "\n")
os.replace(tmp, path)

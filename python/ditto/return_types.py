"""The named tuples ops return (torch.return_types): values and indices."""
from collections import namedtuple

max = namedtuple("max", ["values", "indices"])
min = namedtuple("min", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
cummax = namedtuple("cummax", ["values", "indices"])
aminmax = namedtuple("aminmax", ["min", "max"])
var_mean = namedtuple("var_mean", ["var", "mean"])
cummin = namedtuple("cummin", ["values", "indices"])
qr = namedtuple("qr", ["Q", "R"])
svd = namedtuple("svd", ["U", "S", "V"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])

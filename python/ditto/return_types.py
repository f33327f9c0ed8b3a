"""The named tuples ops return (torch.return_types): values and indices."""
from collections import namedtuple

max = namedtuple("max", ["values", "indices"])
min = namedtuple("min", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
qr = namedtuple("qr", ["Q", "R"])
svd = namedtuple("svd", ["U", "S", "V"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])

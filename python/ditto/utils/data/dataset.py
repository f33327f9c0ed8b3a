"""Map-style datasets (torch.utils.data's), and Fashion-MNIST from C++."""
import bisect
import math

from ... import _C


class Dataset:
    """A map-style dataset: __getitem__(index) and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError(
            f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the tensors' rows, as tuples."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor")
        n = tensors[0].size(0)
        for t in tensors:
            if t.dim() == 0 or t.size(0) != n:
                raise ValueError(
                    "Size mismatch between tensors: TensorDataset needs every "
                    f"tensor's first dim to be {n}, got shape {tuple(t.shape)}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The dataset's samples at the given indices."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(
                    "absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[d - 1] if d > 0 else 0
        return self.datasets[d][idx - start]


def random_split(dataset, lengths, generator=None):
    """Non-overlapping random subsets of the given lengths (or fractions
    summing to 1), in torch's order: one randperm from the generator."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(
            "Sum of input lengths does not equal the length of the input "
            "dataset!")
    if generator is None:
        generator = _C.default_generator()
    perm = _C.randperm(n, generator=generator).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out


class _Mapped(Dataset):
    """A dataset whose samples pass through Python transforms."""

    def __init__(self, dataset, transform, target_transform):
        self.dataset = dataset
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        data, target = self.dataset[index]
        if self.transform is not None:
            data = self.transform(data)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return data, target


def _with_transforms(dataset, transform, target_transform):
    if transform is None and target_transform is None:
        return dataset
    native = _C.data.Transform
    if all(t is None or isinstance(t, native)
           for t in (transform, target_transform)):
        return _C.data.MapDataset(dataset, transform, target_transform)
    return _Mapped(dataset, transform, target_transform)


def FashionMNIST(root=_C.data.FASHION_MNIST_ROOT, train=True, transform=None,
                 target_transform=None):
    """Fashion-MNIST from its IDX files (Debian's dataset-fashion-mnist by
    default), read by the C++ library: samples are (image, label), the image
    a 1x28x28 float32 tensor of pixel / 255 and the label an int64 scalar.
    With no transform or C++ ones (ditto.utils.data.transforms), a
    DataLoader over it with the default collate takes no GIL."""
    return _with_transforms(_C.data.FashionMNIST(root, train), transform,
                            target_transform)


def MNIST(root, train=True, transform=None, target_transform=None):
    """MNIST from its IDX files (as FashionMNIST)."""
    return _with_transforms(_C.data.MNIST(root, train), transform,
                            target_transform)

"""Image transforms that run in C++ (torchvision.transforms' names): on a
C++ dataset they keep the loader's workers free of the GIL, and their random
draws come from the sample's generator (per-sample mode) or the worker's."""
from ... import _C

Transform = _C.data.Transform


def Normalize(mean, std):
    """(x - mean) / std per channel of a [..., C, H, W] floating tensor."""
    return _C.data.Normalize(list(mean), list(std))


def RandomCrop(size, padding=0):
    """A random size x size crop after zero padding."""
    return _C.data.RandomCrop(size, padding)


def RandomHorizontalFlip(p=0.5):
    """Flips the last dim with probability p."""
    return _C.data.RandomHorizontalFlip(p)


def Compose(transforms):
    """The transforms in order: in C++ when each is, else in Python."""
    transforms = list(transforms)
    if all(isinstance(t, Transform) for t in transforms):
        return _C.data.Compose(transforms)

    def composed(x):
        for t in transforms:
            x = t(x)
        return x
    return composed

"""ditto.utils.data: torch.utils.data's datasets, samplers and DataLoader,
on ditto's C++ loader (threads, PyTorch's sampling order and seeding,
per-sample seeds and resumable state). See docs/python.md."""
from . import transforms  # noqa: F401
from ._collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, WorkerInfo, get_worker_info  # noqa: F401
from .dataset import (  # noqa: F401
    ConcatDataset, Dataset, FashionMNIST, MNIST, Subset, TensorDataset,
    random_split)
from .sampler import (  # noqa: F401
    BatchSampler, DistributedSampler, RandomSampler, Sampler,
    SequentialSampler, SubsetRandomSampler, WeightedRandomSampler)

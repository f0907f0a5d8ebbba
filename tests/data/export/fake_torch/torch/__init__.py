"""A stand-in for the parts of PyTorch that kforge's --torch exports touch, for machines without torch:
tensors are shapes with a dtype and a device, torch.empty allocates nothing, CUDA is never available.
tests/integration/export.sh imports the generated modules with it and checks the Python side (argument
checks, dims read from shapes, outputs allocated, what launch() receives). The real run is on a GPU."""


class dtype:
    def __init__(self, name, is_floating_point):
        self.name, self.is_floating_point = name, is_floating_point

    def __repr__(self):
        return "torch." + self.name


float64, float32, float16 = dtype("float64", True), dtype("float32", True), dtype("float16", True)
bfloat16 = dtype("bfloat16", True)
int64, int32, int16, int8, uint8 = (dtype(n, False) for n in ("int64", "int32", "int16", "int8", "uint8"))


class device:
    def __init__(self, kind, index=0):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __repr__(self):
        return f"{self.type}:{self.index}"


class Tensor:
    def __init__(self, shape, dtype, dev=None, contiguous=True):
        self.shape, self.dtype = tuple(shape), dtype
        self.device = dev or device("cuda", 0)
        self._contiguous = contiguous

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def dim(self):
        return len(self.shape)

    def is_contiguous(self):
        return self._contiguous

    def contiguous(self):
        return self if self._contiguous else Tensor(self.shape, self.dtype, self.device)


def empty(shape, dtype=None, device=None):
    return Tensor(shape, dtype, device)


class _Cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def current_device():
        return 0


cuda = _Cuda()

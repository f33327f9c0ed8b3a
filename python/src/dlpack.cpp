// DLPack both ways, without copies: Tensor.__dlpack__ and
// __dlpack_device__, and ditto._C._from_dlpack (a capsule, or any object
// with __dlpack__: NumPy arrays, PyTorch tensors). The protocol: the
// producer's capsule is named "dltensor"; a consumer that takes it renames
// it "used_dltensor" and calls the managed tensor's deleter when done; a
// capsule never consumed calls the deleter from its own destructor.

#include <Python.h>

#include <memory>

#include "python/src/common.h"

namespace ditto::python {
namespace {

// DLPack's ABI (dlpack.h 0.8, which NumPy >= 1.22 and PyTorch >= 1.10
// speak), declared here: no Debian package ships the header.
constexpr int32_t kDLCPU = 1;
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLBool = 6,
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

DLDataType dl_dtype(Dtype d) {
  switch (d) {
    case kUInt8:
      return {kDLUInt, 8, 1};
    case kInt32:
      return {kDLInt, 32, 1};
    case kInt64:
      return {kDLInt, 64, 1};
    case kFloat32:
      return {kDLFloat, 32, 1};
    case kFloat64:
      return {kDLFloat, 64, 1};
    case kBool:
      return {kDLBool, 8, 1};
    case kInt8:
      return {kDLInt, 8, 1};
    case kInt16:
      return {kDLInt, 16, 1};
    case kFloat16:
      return {kDLFloat, 16, 1};
    case kBFloat16:
      return {kDLBfloat, 16, 1};
  }
  throw TypeError("[__dlpack__] unknown dtype");
}

Dtype dtype_of(const DLDataType& t) {
  if (t.lanes == 1) {
    if (t.code == kDLFloat && t.bits == 32) {
      return kFloat32;
    }
    if (t.code == kDLFloat && t.bits == 64) {
      return kFloat64;
    }
    if (t.code == kDLFloat && t.bits == 16) {
      return kFloat16;
    }
    if (t.code == kDLBfloat && t.bits == 16) {
      return kBFloat16;
    }
    if (t.code == kDLInt && t.bits == 8) {
      return kInt8;
    }
    if (t.code == kDLInt && t.bits == 16) {
      return kInt16;
    }
    if (t.code == kDLInt && t.bits == 64) {
      return kInt64;
    }
    if (t.code == kDLInt && t.bits == 32) {
      return kInt32;
    }
    if (t.code == kDLUInt && t.bits == 8) {
      return kUInt8;
    }
    if (t.code == kDLBool && t.bits == 8) {
      return kBool;
    }
  }
  throw TypeError(detail::str_cat(
      "[from_dlpack] unsupported DLPack dtype (code ",
      int(t.code),
      ", bits ",
      int(t.bits),
      ", lanes ",
      int(t.lanes),
      "): ditto has float32, float64, int64, int32, uint8 and bool"));
}

// ---- export: the managed tensor owns a handle on the tensor.

struct Exported {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

void delete_exported(DLManagedTensor* self) {
  delete static_cast<Exported*>(self->manager_ctx);
}

// A capsule still named "dltensor" was never consumed: it still owns the
// managed tensor. A consumed one ("used_dltensor") does not.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsule) != 0) {
    auto* m =
        static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
    if (m != nullptr && m->deleter != nullptr) {
      m->deleter(m);
    }
  }
}

py::capsule to_dlpack(const Tensor& t, const py::object& stream) {
  if (!stream.is_none()) {
    throw ValueError(
        "[__dlpack__] ditto tensors live on the CPU: stream must be None");
  }
  if (t.requires_grad()) {
    throw Error(
        "[__dlpack__] Can't export tensors that require gradient, use "
        "tensor.detach()");
  }
  if (t.is_sparse()) {
    throw TypeError(
        "[__dlpack__] DLPack holds strided tensors only: this one is sparse "
        "(layout torch.sparse_coo); export its to_dense(), or its _indices() "
        "and _values()");
  }
  auto e = std::make_unique<Exported>();
  e->tensor = t;
  e->shape.assign(t.sizes().begin(), t.sizes().end());
  e->strides.assign(t.strides().begin(), t.strides().end());
  DLTensor& d = e->managed.dl_tensor;
  d.data = const_cast<void*>(t.raw_data());
  if (t.storage()) {
    t.storage()->share_address(); // resize_ may not free it under the taker
  }
  d.device = {kDLCPU, 0};
  d.ndim = int32_t(t.dim());
  d.dtype = dl_dtype(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = &delete_exported;
  PyObject* capsule = PyCapsule_New(&e->managed, kCapsule, capsule_destructor);
  if (capsule == nullptr) {
    throw py::error_already_set();
  }
  static_cast<void>(e.release()); // the capsule (or its consumer) owns it
  return py::reinterpret_steal<py::capsule>(capsule);
}

// ---- import: the tensor's storage calls the producer's deleter.

Tensor from_dlpack(const py::object& obj) {
  py::object capsule = obj;
  if (!PyCapsule_CheckExact(obj.ptr())) {
    if (!py::hasattr(obj, "__dlpack__")) {
      throw TypeError(detail::str_cat(
          "[from_dlpack] expected an object with __dlpack__ or a DLPack "
          "capsule, got ",
          std::string(py::str(py::type::of(obj).attr("__name__")))));
    }
    if (py::hasattr(obj, "__dlpack_device__")) {
      auto dev = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
      if (dev.first != kDLCPU) {
        throw ValueError(detail::str_cat(
            "[from_dlpack] ditto tensors live on the CPU; the object is on "
            "DLPack device type ",
            dev.first));
      }
    }
    capsule = obj.attr("__dlpack__")();
  }
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, kUsedCapsule) != 0) {
    throw ValueError(
        "[from_dlpack] the DLPack capsule was already consumed (a capsule "
        "can be consumed once)");
  }
  if (PyCapsule_IsValid(cap, kCapsule) == 0) {
    throw TypeError("[from_dlpack] expected a DLPack capsule named dltensor");
  }
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kCapsule));
  const DLTensor& d = m->dl_tensor;
  // Every check before the capsule is consumed: on error the capsule
  // still owns the managed tensor and frees it.
  if (d.device.device_type != kDLCPU) {
    throw ValueError(detail::str_cat(
        "[from_dlpack] ditto tensors live on the CPU; the capsule is on "
        "DLPack device type ",
        d.device.device_type));
  }
  const Dtype dtype = dtype_of(d.dtype);
  if (d.ndim < 0) {
    throw ValueError("[from_dlpack] negative ndim");
  }
  Shape sizes(d.shape, d.shape + d.ndim);
  Shape strides;
  if (d.strides != nullptr) {
    strides.assign(d.strides, d.strides + d.ndim);
  } else {
    strides.assign(sizes.size(), 1);
    for (int64_t i = int64_t(sizes.size()) - 2; i >= 0; --i) {
      strides[size_t(i)] = strides[size_t(i) + 1] * sizes[size_t(i) + 1];
    }
  }
  for (int64_t s : strides) {
    if (s < 0) {
      throw ValueError(
          "[from_dlpack] negative strides are not supported (copy the "
          "array first)");
    }
  }
  void* data = static_cast<char*>(d.data) + d.byte_offset;
  // The producer's deleter may need the GIL (NumPy's drops a reference),
  // and the last tensor may let go anywhere.
  auto done = std::make_shared<bool>(false);
  auto release = [m, done](void*) {
    *done = true;
    if (m->deleter != nullptr && Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      m->deleter(m);
    }
  };
  PyCapsule_SetName(cap, kUsedCapsule);
  try {
    return from_blob(data, sizes, strides, dtype, release);
  } catch (...) {
    if (!*done && m->deleter != nullptr) {
      m->deleter(m);
    }
    throw;
  }
}

} // namespace

void init_dlpack(py::module_& m, py::class_<Tensor>& cls) {
  cls.def("__dlpack__", &to_dlpack, py::arg("stream") = py::none());
  cls.def("__dlpack_device__", [](const Tensor&) {
    return py::make_tuple(kDLCPU, 0);
  });
  m.def("_from_dlpack", &from_dlpack, py::arg("ext_tensor"));
}

} // namespace ditto::python

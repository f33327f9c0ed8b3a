#include "ditto/kernels/cpu/kernel_table.h"

#include "ditto/core/error.h"

namespace ditto::kernels {

namespace scalar {
void fill_kernel_table(KernelTable& t);
}
#if DITTO_HAVE_AVX2
namespace avx2 {
void fill_kernel_table(KernelTable& t);
}
#endif
#if DITTO_HAVE_AVX512
namespace avx512 {
void fill_kernel_table(KernelTable& t);
}
#endif

namespace {

struct Tables {
  KernelTable scalar;
  KernelTable avx2;
  KernelTable avx512;
  Tables() {
    scalar::fill_kernel_table(this->scalar);
#if DITTO_HAVE_AVX2
    avx2::fill_kernel_table(this->avx2);
#endif
#if DITTO_HAVE_AVX512
    avx512::fill_kernel_table(this->avx512);
#endif
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

} // namespace

const KernelTable& kernel_table(CpuCapability c) {
  switch (c) {
    case CpuCapability::Scalar:
      return tables().scalar;
    case CpuCapability::Avx2:
      return tables().avx2;
    case CpuCapability::Avx512:
      return tables().avx512;
  }
  DITTO_ASSERT(false);
}

const KernelTable& kernel_table() {
  return kernel_table(get_cpu_capability());
}

} // namespace ditto::kernels

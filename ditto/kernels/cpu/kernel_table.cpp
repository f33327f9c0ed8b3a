#include "ditto/kernels/cpu/kernel_table.h"

#include "ditto/core/error.h"

namespace ditto::kernels {

// Note [No instruction before the CPU check]
// A per-capability translation unit is compiled with that capability's -m
// flags, so GCC may use its instructions anywhere in it: in a kernel, but
// also to fill the table of pointers, in a static initializer or in an
// inline function it emits. So nothing of such a unit runs unless the CPU
// supports the capability: each table is filled on first use of that
// capability, after cpu_capability_supported() said yes, never before (no
// static object fills every table at load). Functions of a per-capability
// unit are only reached through its table; a test (tools/isa_audit.sh)
// disassembles the library and fails if any function outside the
// per-capability namespaces contains an instruction beyond baseline x86-64.

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
#if DITTO_HAVE_NEON
namespace neon {
void fill_kernel_table(KernelTable& t);
}
#endif

namespace {

template <void (*Fill)(KernelTable&)>
const KernelTable& filled(CpuCapability c) {
  DITTO_ASSERT(cpu_capability_supported(c));
  static const KernelTable table = [] {
    KernelTable t;
    Fill(t);
    return t;
  }();
  return table;
}

} // namespace

const KernelTable& kernel_table(CpuCapability c) {
  switch (c) {
    case CpuCapability::Scalar:
      return filled<scalar::fill_kernel_table>(c);
#if DITTO_HAVE_AVX2
    case CpuCapability::Avx2:
      return filled<avx2::fill_kernel_table>(c);
#endif
#if DITTO_HAVE_AVX512
    case CpuCapability::Avx512:
      return filled<avx512::fill_kernel_table>(c);
#endif
#if DITTO_HAVE_NEON
    case CpuCapability::Neon:
      return filled<neon::fill_kernel_table>(c);
#endif
    default:
      break;
  }
  detail::throw_error<ValueError>(
      "kernel_table",
      "CPU capability ",
      cpu_capability_name(c),
      " is not compiled into this build");
}

const KernelTable& kernel_table() {
  return kernel_table(get_cpu_capability());
}

} // namespace ditto::kernels

// One mutant of the zoo (kernels/mutants.h) as a plugin; built once per mutant name
// with -DATTNV_MUTANT="name" (plugin/CMakeLists.txt): libattnv_mutant_<name>.so.
#include <stdexcept>

#include "attnv_export_kernel.h"
#include "kernels/mutants.h"

namespace {

std::unique_ptr<attnv::Kernel> make_mutant() {
  for (const attnv::kernels::Mutant& m : attnv::kernels::mutant_zoo())
    if (m.name == ATTNV_MUTANT) return m.make();
  throw std::runtime_error("no mutant named " ATTNV_MUTANT);
}

}  // namespace

ATTNV_EXPORT_KERNEL_VERSIONED(make_mutant(), "mutant " ATTNV_MUTANT)

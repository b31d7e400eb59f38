#pragma once
// <immintrin.h> for the AVX-512 files. GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() (a
// self-initialised variable) as the unused operand of their masked builtins, and -Wuninitialized
// reports it at every inlined call (GCC bug 105593, fixed in GCC 13). Silenced for the header's
// lines only, not for the files that include this one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

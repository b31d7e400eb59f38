#pragma once
// kSanitized: true in ASan, TSan and MSan builds, whose shadow memory needs the address space that
// a test limiting it (RLIMIT_AS, `ulimit -v`) would take away; such tests skip themselves there.
namespace attnv {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace attnv

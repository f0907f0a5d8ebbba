/* kforge cpu backend: what the kernel file sees of its compiler is NVRTC's, not the host's. Included by
 * the pre-pass after kf_shim.h (whose system headers needed the host's names) and before the kernel
 * file's first line: the predefined names NVRTC lacks are taken away, so `#ifdef __GNUC__` or
 * `#ifdef __x86_64__` chooses the same code here as on the GPU. NVRTC's own are in kf_shim.h. */
#ifndef KF_DEVICE_ENV_H
#define KF_DEVICE_ENV_H
/* Feature-test macros: NVRTC and clang (the instrumented build of the sanitizer and the cost model) have
 * them, g++ (the plain build) does not. Both cpu builds get the same ones, answering 0, so
 * `#ifdef __has_feature` chooses NVRTC's side in both and `__has_feature(address_sanitizer)` cannot tell
 * the instrumented build from the plain one (a kernel that still tells them apart is caught: the
 * verifier compares the instrumented build's outputs with the reference's). */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wbuiltin-macro-redefined"
#undef __has_feature
#undef __has_extension
#undef __is_identifier
#endif
#define __has_feature(x) 0
#define __has_extension(x) 0
#define __is_identifier(x) 1
#undef __GNUC__
#undef __GNUC_MINOR__
#undef __GNUC_PATCHLEVEL__
#undef __GNUG__
#undef __clang__
#undef __clang_major__
#undef __clang_minor__
#undef __clang_patchlevel__
#undef __clang_version__
#undef __llvm__
#undef __VERSION__
#undef __x86_64__
#undef __x86_64
#undef __amd64__
#undef __amd64
#undef __linux__
#undef __linux
#undef __gnu_linux__
#undef linux
#undef __unix__
#undef __unix
#undef unix
#undef __ELF__
#undef __NVCC__
#endif

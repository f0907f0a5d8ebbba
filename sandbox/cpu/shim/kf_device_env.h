/* kforge cpu backend: what the kernel file sees of its compiler is NVRTC's, not the host's. Included by
 * the pre-pass after kf_shim.h (whose system headers needed the host's names) and before the kernel
 * file's first line: the predefined names NVRTC lacks are taken away, so `#ifdef __GNUC__` or
 * `#ifdef __x86_64__` chooses the same code here as on the GPU. NVRTC's own are in kf_shim.h. */
#ifndef KF_DEVICE_ENV_H
#define KF_DEVICE_ENV_H
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

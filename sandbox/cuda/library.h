/* The worker's `--library-check` mode (sandbox/cuda/library.c): cuBLAS, cuBLASLt and cuDNN loaded and
 * exercised as far as a machine without a GPU allows. Included by sandbox/worker/main.c for its
 * argument dispatch; the library calls themselves are private to the cuda backend (cuda_int.h). */
#ifndef KF_CUDA_LIBRARY_H
#define KF_CUDA_LIBRARY_H

/* `kforge-worker --library-check`: loads each library with dlopen, resolves every entry point the
 * worker calls, and builds the host-side descriptors of sample calls (a bias+gelu batched cuBLASLt
 * matmul, a grouped convolution with bias and relu, cuDNN's attention operation graph in both masks
 * and layouts). Prints key=value lines; exit 0 when all held, 1 when a descriptor failed, 4 when a
 * library is missing. */
int kf_culib_check_main(int argc, char **argv);

#endif

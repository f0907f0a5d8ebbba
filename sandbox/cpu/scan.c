/* Static scan (PCRE2) for constructs a backend cannot run: on the cpu backend inline PTX, wmma/mma,
 * TMA and bulk copies, async copies and pipelines, CUTLASS/CuTe, CUB, grid-wide cooperative groups,
 * dynamic parallelism, textures/surfaces, clusters. Comments and string literals are blanked first (line
 * breaks kept) so a construct named in a comment is not a use. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "../sandbox.h"
#include "lex.h"
#include "regex.h"

struct scan_rule {
	const char *re;
	const char *what;
};

/* Each pattern runs on the blanked source; the first match (lowest offset) over all rules is reported. */
static const struct scan_rule cpu_rules[] = {
    {"\\b(?:asm|__asm__|__asm)\\s*(?:volatile\\s*|__volatile__\\s*)?\\(", "inline PTX (asm)"},
    {"#\\s*include\\s*[<\"]mma\\.h[>\"]|\\bnvcuda\\s*::\\s*wmma\\b|\\bwmma\\s*::",
     "wmma (tensor core fragments)"},
    {"\\bmma\\.sync\\b|\\bwgmma\\b|\\btcgen05\\b", "mma/wgmma tensor core instructions"},
    {"\\bCUtensorMap\\b|\\bcp\\.async\\.bulk\\b|\\bcp_async_bulk|\\bfence\\.proxy\\.async\\b|\\bcuda::device:"
     ":experimental\\b",
     "TMA / bulk copies"},
    {"\\bcp\\.async\\b|\\b__pipeline_\\w+|\\bmemcpy_async\\b|\\bcuda::pipeline\\b|\\bcuda::barrier\\b|"
     "#\\s*include\\s*[<\"]cuda_pipeline\\w*\\.h[>\"]|#\\s*include\\s*[<\"]cuda/(?:pipeline|barrier)[>\"]|"
     "#\\s*include\\s*[<\"]cuda_awbarrier\\w*\\.h[>\"]|\\b__awbarrier\\w*",
     "async copies (cp.async / memcpy_async / cuda::pipeline)"},
    {"#\\s*include\\s*[<\"](?:cutlass|cute)/|\\bcutlass::|\\bcute::", "CUTLASS/CuTe"},
    {"#\\s*include\\s*[<\"]cub/|\\bcub::", "CUB"},
    {"#\\s*include\\s*[<\"]thrust/|\\bthrust::", "Thrust"},
    {"#\\s*include\\s*[<\"](?:cuda|nv)/"
     "|\\bcuda::(?:std::)?(?:atomic|atomic_ref|annotated_ptr|ptx|aligned_size_t)\\b|\\bNV_IF_(?:ELSE_)?"
     "TARGET\\b",
     "libcu++ (cuda/...)"},
    {"\\bthis_grid\\s*\\(|\\bgrid_group\\b|\\bthis_multi_grid\\b|\\bmulti_grid_group\\b|\\bthis_cluster\\s*"
     "\\(|"
     "\\bcluster_group\\b|\\bcoalesced_threads\\s*\\(|\\bbinary_partition\\s*\\(|\\blabeled_partition\\s*\\(|"
     "#\\s*include\\s*[<\"]cooperative_groups/(?!reduce\\.h)",
     "cooperative groups beyond thread_block and tiled_partition"},
    {"<<<|\\bcudaLaunchDevice\\b|\\bcudaDeviceSynchronize\\s*\\(|\\bcudaGetParameterBuffer\\b",
     "dynamic parallelism (a launch from device code)"},
    {"\\btex[123]D(?:Layered|Lod|Grad)?\\b|\\btex1Dfetch\\b|\\btexture\\s*<|\\bcudaTextureObject_t\\b|"
     "\\bsurf[123]D(?:read|write)\\b|\\bcudaSurfaceObject_t\\b|\\btex2DLayered\\b",
     "textures/surfaces"},
    {"\\b__cluster_dims__\\b|\\bcluster\\.sync\\b|\\b__cluster_barrier\\w*|\\bbarrier\\.cluster\\b",
     "thread block clusters"},
    {"#\\s*include\\s*[<\"]cuda_fp8\\.h[>\"]|\\b__nv_fp8\\w*|#\\s*include\\s*[<\"]cuda_fp6\\.h[>\"]|"
     "#\\s*include\\s*[<\"]cuda_fp4\\.h[>\"]",
     "fp8/fp6/fp4 types"},
    {"\\bblock_tile_memory\\b|\\btiled_partition\\s*<\\s*(?!(?:1|2|4|8|16|32)\\s*>)\\d+\\s*>|"
     "\\bthread_block_tile\\s*<\\s*(?!(?:1|2|4|8|16|32)\\s*[,>])\\d+",
     "cooperative groups tiles larger than a warp (block_tile_memory, tiled_partition<N> with N > 32)"},
    {"\\btiled_partition\\s*\\(",
     "cooperative groups tiled_partition(group, n) (a tile size known only at run time)"},
    {"\\bthread_group\\b|\\bcoalesced_group\\b|\\b(?:cooperative_groups|cg)\\s*::\\s*(?:details|experimental|"
     "this_thread|invoke_one\\w*|inclusive_scan|exclusive_scan|reduce_update_async|reduce_store_async)\\b",
     "cooperative groups beyond thread_block and tiled_partition<N> (thread_group, coalesced_group, scans, "
     "...)"},
    {"#\\s*include\\s*[<\"]curand_kernel\\.h[>\"]|\\bcurand_init\\s*\\(|\\bcurandState\\w*",
     "the cuRAND device API (curand_kernel.h)"},
    {"\\b(?:malloc|free|realloc|calloc)\\s*\\(", "device-side heap allocation (malloc/free)"},
    {"\\bsetmaxnreg\\b|\\bmbarrier\\b|\\bstmatrix\\b|\\bldmatrix\\b|\\belect\\.sync\\b",
     "Hopper/Ampere PTX intrinsics"},
};

static pcre2_code *cpu_re[KF_ARRAY_SIZE(cpu_rules)];
static struct kf_regex_table cpu_table =
    KF_REGEX_TABLE("scan pattern", KF_ARRAY_SIZE(cpu_rules), &cpu_rules[0].re, sizeof(cpu_rules[0]), NULL, 0,
		   false, 0, 0, cpu_re);

enum kf_status kf_scan_unsupported(const struct kf_kfile *k, enum kf_backend_kind b, struct kf_err *err)
{
	if (b != KF_BACKEND_CPU)
		return KF_OK;
	if (!k || !k->source)
		return kf_err_set(err, KF_ERR_INVALID, "no kernel source to scan");
	char *text = kf_lex_blank(k->source, k->source_len, KF_LEX_KEEP_CODE);
	if (!text)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory scanning '%s'",
				  k->path ? k->path : "kernel");
	size_t best_off = (size_t)-1;
	const char *best_what = NULL;
	enum kf_status st = kf_regex_table_ready(&cpu_table, err);
	pcre2_match_data *md = st ? NULL : pcre2_match_data_create(1, NULL);
	if (!st && !md)
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory scanning");
	for (size_t r = 0; r < KF_ARRAY_SIZE(cpu_rules) && !st; r++) {
		int rc = kf_regex_table_match(&cpu_table, r, text, k->source_len, 0, md);
		if (rc > 0) {
			size_t off = pcre2_get_ovector_pointer(md)[0];
			if (off < best_off) {
				best_off = off;
				best_what = cpu_rules[r].what;
			}
		} else if (rc == PCRE2_ERROR_NOMEMORY) {
			st = kf_err_set(err, KF_ERR_NOMEM, "out of memory scanning");
		}
	}
	pcre2_match_data_free(md);
	if (st == KF_OK && best_what) {
		int line = 1;
		for (size_t i = 0; i < best_off; i++)
			line += text[i] == '\n';
		st = kf_err_set(err, KF_ERR_UNSUPPORTED, "%s:%d: uses %s, which the cpu backend cannot run",
				k->path ? k->path : "kernel", line, best_what);
	}
	free(text);
	return st;
}

/* ---- host libraries (every backend) ------------------------------------------------------------ */

struct host_lib {
	const char *prefix; /* header name start, matched case-sensitively */
	const char *what;
};

static const struct host_lib host_libs[] = {
    {"cublas", "cuBLAS"},
    {"cudnn", "cuDNN"},
    {"cufft", "cuFFT"},
    {"curand.h", "cuRAND (host API; <curand_kernel.h> is the device one)"},
    {"cusparse", "cuSPARSE"},
    {"cusolver", "cuSOLVER"},
    {"nccl", "NCCL"},
    {"cutensor", "cuTENSOR"},
    {"npp", "NPP"},
    {"nvjpeg", "nvJPEG"},
    {"nvrtc", "NVRTC"},
    {"cuda.h", "the CUDA driver API"},
    {"cupti", "CUPTI"},
    {"nvml", "NVML"},
    {"cufile", "cuFile"},
    {"cuda_profiler_api", "the CUDA profiler API"},
    {"cudaProfiler", "the CUDA profiler API"},
    {"torch/", "PyTorch (host C++)"},
    {"ATen/", "PyTorch (host C++)"},
    {"c10/", "PyTorch (host C++)"},
    {"pybind11/", "pybind11 (host C++)"},
};

static const char *const host_include_re[] = {"^[ \t]*#[ \t]*include[ \t]*[<\"][ \t]*([^>\"\n]+)[>\"]"};
static const uint32_t host_include_opts[] = {PCRE2_MULTILINE};
static pcre2_code *host_include_code[1];
static struct kf_regex_table host_include_table =
    KF_REGEX_TABLE("host header pattern", 1, host_include_re, sizeof(char *), host_include_opts, 0, false, 0,
		   0, host_include_code);

enum kf_status kf_scan_host_headers(const struct kf_kfile *k, struct kf_err *err)
{
	if (!k || !k->source)
		return kf_err_set(err, KF_ERR_INVALID, "no kernel source to scan");
	enum kf_status st = kf_regex_table_ready(&host_include_table, err);
	if (st)
		return st;
	char *text = kf_lex_blank(k->source, k->source_len, KF_LEX_KEEP_CODE);
	if (!text)
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory scanning '%s'",
				  k->path ? k->path : "kernel");
	pcre2_match_data *md = pcre2_match_data_create(2, NULL);
	if (!md) {
		st = kf_err_set(err, KF_ERR_NOMEM, "out of memory scanning");
		goto out;
	}
	for (PCRE2_SIZE off = 0; off < k->source_len;) {
		if (kf_regex_table_match(&host_include_table, 0, text, k->source_len, off, md) <= 0)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		const char *h = text + ov[2];
		size_t hlen = ov[3] - ov[2];
		for (size_t i = 0; i < KF_ARRAY_SIZE(host_libs); i++) {
			size_t pl = strlen(host_libs[i].prefix);
			/* "cuda.h" exactly; the others as a prefix (cublas_v2.h, cudnn_ops.h, torch/...) */
			bool exact = pl >= 2 && host_libs[i].prefix[pl - 1] == 'h' &&
				     host_libs[i].prefix[pl - 2] == '.';
			if (hlen < pl || strncmp(h, host_libs[i].prefix, pl) || (exact && hlen != pl))
				continue;
			int line = 1;
			for (size_t j = 0; j < ov[2] && j < k->source_len; j++)
				line += text[j] == '\n';
			st = kf_err_set(
			    err, KF_ERR_COMPILE,
			    "%s:%d: <%.*s> is the host API of %s: a kernel file is device code and "
			    "cannot call host libraries",
			    k->path ? k->path : "kernel", line, (int)(hlen > 80 ? 80 : hlen), h,
			    host_libs[i].what);
			goto out;
		}
		off = ov[1] > off ? ov[1] : off + 1;
	}
out:
	pcre2_match_data_free(md);
	free(text);
	return st;
}

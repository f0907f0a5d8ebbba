/* Technique tags: which optimisation techniques a CUDA kernel source uses, found with PCRE2 patterns on
 * the source with comments blanked. Tags feed retrieval (FTS), MAP-Elites behaviour
 * features and the "what changed against the parent" line of prompt examples. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#include "lex.h"
#include "redact.h"
#include "regex.h"

struct tag_rule {
	const char *name;
	const char *pattern;
};

/* Order is the output order. Patterns run on comment-free source; \b keeps identifiers whole. */
static const struct tag_rule rules[] = {
    {"shared_memory", "\\b__shared__\\b"},
    /* A 2-D __shared__ array is a tile (matmul, transpose, conv). */
    {"smem_tiling", "\\b__shared__\\s+[\\w:<>, ]+?\\s+\\w+\\s*\\[[^\\]]+\\]\\s*\\["},
    {"dynamic_smem", "\\bextern\\s+__shared__\\b"},
    /* 8- and 16-byte vector types are single load/store instructions (float3 is not). */
    {"vectorized_loads",
     "\\b(?:float[24]|double2|u?int[24]|u?long(?:long)?2|half2|__half2|__nv_bfloat162)\\b"},
    {"warp_shuffle", "\\b__shfl(?:_xor|_down|_up)?_sync\\s*\\("},
    {"warp_vote", "\\b__(?:ballot|any|all|match_any|match_all)_sync\\s*\\(|\\b__activemask\\s*\\(|\\b__"
		  "reduce_\\w+_sync\\s*\\("},
    {"tensor_cores",
     "\\bwmma::|\\bnvcuda::wmma\\b|\\bmma\\.sync\\b|\\bwgmma\\b|\\bmma_sync\\s*\\(|\\bldmatrix\\b"},
    {"async_copy", "\\bcp\\.async\\b|\\bmemcpy_async\\s*\\(|\\b__pipeline_memcpy_async\\b|\\bcuda::"
		   "pipeline\\b|\\bcp_async\\w*\\s*\\("},
    {"tma", "\\bcp\\.async\\.bulk\\b|\\bCUtensorMap\\b|\\bcuTensorMapEncode\\w*"},
    {"loop_unroll", "#\\s*pragma\\s+unroll\\b"},
    {"fast_math", "\\b__(?:expf|exp10f|logf|log2f|log10f|sinf|cosf|tanf|powf|fdividef|saturatef|frcp_r[nzdu]|"
		  "fsqrt_r[nzdu]|"
		  "frsqrt_rn|fmaf_r[nzdu]|fmul_r[nzdu])\\s*\\(|\\brsqrtf\\s*\\("},
    {"atomics", "\\batomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?\\s*\\("},
    {"half_precision",
     "\\b(?:__half2?|half2|__nv_bfloat162?)\\b|\\b__float2half\\w*\\s*\\(|\\b__float2bfloat16\\w*\\s*\\(|"
     "\\b__h(?:add|mul|fma|sub)2?\\s*\\("},
    {"readonly_cache", "\\b__ldg\\s*\\(|\\b__ld(?:cs|cg|ca|lu|cv)\\s*\\(|\\bld\\.global\\.nc\\b"},
    {"launch_bounds", "\\b__launch_bounds__\\s*\\("},
    {"restrict", "\\b__restrict__\\b"},
    {"grid_stride", "\\bblockDim\\.x\\s*\\*\\s*gridDim\\.x\\b|\\bgridDim\\.x\\s*\\*\\s*blockDim\\.x\\b"},
    {"cooperative_groups", "\\bcooperative_groups\\b|\\bcg::"},
    {"constant_memory", "\\b__constant__\\b"},
    {"inline_ptx", "\\basm\\s*(?:volatile\\s*)?\\("},
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))

/* JIT is an optimisation; a platform without it still matches through the interpreter. */
static pcre2_code *compiled[N_RULES];
static struct kf_regex_table tag_table = KF_REGEX_TABLE("tag pattern", N_RULES, &rules[0].pattern,
							sizeof(rules[0]), NULL, 0, true, 0, 0, compiled);

const char *const *kf_kb_tag_names(void)
{
	static const char *names[N_RULES + 1];
	for (size_t i = 0; i < N_RULES; i++)
		names[i] = rules[i].name;
	names[N_RULES] = NULL;
	return names;
}

enum kf_status kf_kb_tags_extract(const char *source, size_t len, struct kf_buf *out, struct kf_err *err)
{
	pcre2_match_data *md;
	char *text;
	enum kf_status st = KF_OK;
	int n = 0;

	if ((st = kf_regex_table_ready(&tag_table, err)))
		return st;
	if (!(text = kf_lex_blank(source, len, KF_LEX_KEEP_LITERALS)))
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	if (!(md = pcre2_match_data_create(1, NULL))) {
		free(text);
		return kf_err_set(err, KF_ERR_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < N_RULES && !st; i++) {
		int rc = kf_regex_table_match(&tag_table, i, text, len, 0, md);
		if (rc >= 0) {
			if ((n++ && (st = kf_buf_addch(out, ','))) || (st = kf_buf_adds(out, rules[i].name)))
				kf_err_set(err, st, "tag list too long");
		} else if (rc != PCRE2_ERROR_NOMATCH) {
			/* A match limit on a pathological source: that tag is unknown, the others still
			 * count. */
			continue;
		}
	}
	pcre2_match_data_free(md);
	free(text);
	return st;
}

static bool has_tag(const char *list, const char *tag, size_t n)
{
	const char *p = list;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == n && !strncmp(p, tag, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

enum kf_status kb_tags_diff(const char *tags, const char *parent_tags, struct kf_buf *out)
{
	enum kf_status st = KF_OK;
	int n = 0;
	const char *lists[2] = {tags, parent_tags}, *others[2] = {parent_tags, tags};
	const char sign[2] = {'+', '-'};
	for (int k = 0; k < 2 && !st; k++) {
		const char *p = lists[k];
		while (p && *p && !st) {
			const char *e = strchr(p, ',');
			size_t l = e ? (size_t)(e - p) : strlen(p);
			if (l && !has_tag(others[k], p, l))
				st = kf_buf_addf(out, "%s%c%.*s", n++ ? " " : "", sign[k], (int)l, p);
			p = e ? e + 1 : NULL;
		}
	}
	return st;
}

/* Strings that look like provider API keys (OpenAI "sk-...", Anthropic "sk-ant-...", Google "AIza...",
 * a bearer header). Masked keys in provider error messages ("sk-abc****wxyz") do not match: the run of
 * key characters is too short. */
static const char secret_pattern[] = "\\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|\\bAIza[0-9A-Za-z_-]{30,}|(?i:"
				     "\\bbearer\\s+[A-Za-z0-9._~+/-]{20,})";
static const char *const secret_src[] = {secret_pattern};
static pcre2_code *secret_re[1];
static struct kf_regex_table secret_table =
    KF_REGEX_TABLE("secret pattern", 1, secret_src, sizeof(secret_src[0]), NULL, 0, false, 0, 0, secret_re);

bool kb_has_secret(const char *s)
{
	pcre2_match_data *md;
	int rc;
	if (!s || !*s)
		return false;
	/* The keys this process actually holds, in light encodings too (core/redact.h). */
	if (kf_redact_has_secret(s))
		return true;
	/* Fail closed: if the pattern cannot run, nothing is known to be clean. */
	if (kf_regex_table_ready(&secret_table, NULL) || !(md = pcre2_match_data_create(1, NULL)))
		return true;
	rc = kf_regex_table_match(&secret_table, 0, s, strlen(s), 0, md);
	pcre2_match_data_free(md);
	return rc != PCRE2_ERROR_NOMATCH;
}

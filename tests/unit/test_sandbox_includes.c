/* Tests for the include rules (sandbox/includes.c): every way we found to make a compiler read a file it
 * should not (each checked against GCC's own preprocessor when it was written: a multi-line comment
 * before '#', backslash-space-newline splices, digraphs, a NUL GCC reads as a blank, a stringified
 * include for NVRTC) is refused with its line, and ordinary includes pass. Then end to end: kf_compile
 * refuses before any compiler runs, on both backends, and nothing of the file reaches the log. */
#include <fcntl.h>
#include <unistd.h>

#include "kfile.h"
#include "sandbox/compile_int.h"
#include "sandbox/sandbox.h"
#include "testing.h"

struct icase {
	const char *what;
	const char *src;
	size_t len; /* 0: strlen */
	int line;   /* 0: allowed; else the line the refusal names */
	const char *needle;
};

/* clang-format off */
static const struct icase icases[] = {
	{"system header", "#include <cuda_fp16.h>\n#include <stdio.h>\n#include <sys/stat.h>\n", 0, 0, NULL},
	{"relative header", "#include \"my/helpers.h\"\n", 0, 0, NULL},
	{"line comment", "// #include \"/etc/passwd\"\nint x;\n", 0, 0, NULL},
	{"has_include of a header", "#if __has_include(<cuda_bf16.h>)\n#endif\n", 0, 0, NULL},
	{"absolute", "int a;\n#include \"/etc/passwd\"\n", 0, 2, "an absolute path"},
	{"angle absolute", "#include </etc/passwd>\n", 0, 1, "an absolute path"},
	{"dotdot", "#include \"../../../../etc/passwd\"\n", 0, 1, "'..'"},
	{"proc relative", "#include <proc/self/environ>\n", 0, 1, "proc/"},
	{"dev zero", "#include \"/dev/zero\"\n", 0, 1, "an absolute path"},
	{"stringified for NVRTC", "#define S(x) #x\n#define P(x) S(x)\n#include P(/proc/self/environ)\n", 0, 3,
	 "computed"},
	{"macro name", "#define F \"/etc/passwd\"\n#include F\n", 0, 2, "computed"},
	{"include_next", "#include_next </etc/shadow>\n", 0, 1, "#include_next"},
	{"import", "#import \"/etc/passwd\"\n", 0, 1, "#import"},
	{"embed", "#embed \"/etc/passwd\"\n", 0, 1, "#embed"},
	{"spaces and comments", "  #  /* x */ include /* y */ \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"block comment before", "/* a\n*/ #include \"/etc/hostname\"\n", 0, 2, "an absolute path"},
	{"splice", "#inc\\\nlude \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"splice with blanks", "#inc\\   \nlude \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"trigraph splice", "#inc?\?/\nlude \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"digraph", "%:include \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"trigraph hash", "?\?=include \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"byte order mark", "\xef\xbb\xbf#include \"/etc/passwd\"\n", 0, 1, "an absolute path"},
	{"NUL as a blank", "x\0#include \"/etc/hostname\"\n", 28, 1, "NUL"},
	{"has_include", "#if __has_include(\"/etc/shadow\")\n#endif\n", 0, 1, "__has_include"},
	{"has_include computed", "#define H <x.h>\n#if __has_include(H)\n#endif\n", 0, 2, "computed"},
	{"pragma dependency", "#pragma GCC dependency \"/etc/passwd\"\n", 0, 1, "dependency"},
	{"_Pragma dependency", "_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", 0, 1, "dependency"},
	{"incbin", "__asm__(\".incbin \\\"/etc/passwd\\\"\");\n", 0, 1, ".incbin"},
	{"home", "#include \"~/.bashrc\"\n", 0, 1, "home"},
	{"backslash", "#include \"..\\\\x.h\"\n", 0, 1, "backslash"},
};
/* clang-format on */

static void rules(void)
{
	for (size_t i = 0; i < KF_ARRAY_SIZE(icases); i++) {
		const struct icase *c = &icases[i];
		struct kf_buf log = KF_BUF_INIT(8192);
		size_t len = c->len ? c->len : strlen(c->src);
		enum kf_status st = kf_include_check(c->src, len, "k.cu", &log);
		if (!c->line) {
			CHECKF(st == KF_OK, "%s: refused: %s", c->what, log.data);
		} else {
			char at[32];
			snprintf(at, sizeof(at), "k.cu:%d: error:", c->line);
			CHECKF(st == KF_ERR_COMPILE, "%s: allowed", c->what);
			CHECKF(strstr(log.data, at) != NULL, "%s: wrong line: %s", c->what, log.data);
			CHECKF(strstr(log.data, c->needle) != NULL, "%s: '%s' not in: %s", c->what, c->needle,
			       log.data);
		}
		kf_buf_release(&log);
	}
}

/* kf_compile refuses before a compiler runs: the log is the rule, never a line of the file. */
static void compile_refuses(void)
{
	static const char src[] = "// kforge:launch k grid=(1) block=(32) args=(a)\n"
				  "#include \"/etc/passwd\"\n"
				  "extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n";
	for (int b = 0; b < 2; b++) {
		struct kf_kfile *k = NULL;
		struct kf_compiled *c = NULL;
		struct kf_err err = KF_ERR_INIT;
		struct kf_compile_opts o = {.backend = b ? KF_BACKEND_CUDA : KF_BACKEND_CPU,
					    .no_cache = true};
		CHECK(kf_kfile_parse("k.cu", src, strlen(src), &k, &err) == KF_OK);
		if (!k)
			continue;
		CHECK_EQ_INT(kf_compile(k, &o, &c, &err), KF_ERR_COMPILE);
		CHECK(c != NULL);
		if (c) {
			CHECK_CONTAINS(c->log, "k.cu:2: error: #include \"/etc/passwd\" is not allowed");
			CHECK(!strstr(c->log, "root:"));
		}
		kf_compiled_free(c);
		kf_kfile_free(k);
	}
}

KF_TEST_MAIN(TEST(rules), TEST(compile_refuses))

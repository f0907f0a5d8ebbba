/* kforge doctor: what this machine offers kforge. Host compiler (run in a sandboxed child), NVRTC, the
 * CUDA toolkit, CUPTI (a file check only: CUPTI is never loaded in the parent), the GPU as a worker
 * sees it (kf_device_probe), API keys (set or not, never their values) and the knowledge base. Always
 * exits 0: it reports, it does not judge. */
#include <glob.h>
#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "json.h"
#include "sandbox/sandbox.h"

struct doctor {
	bool json;
	cJSON *doc;
};

/* One line "  label   value" or one JSON field in the current section. */
static void item(struct doctor *d, cJSON *sec, const char *key, const char *label, const char *value)
{
	if (d->json)
		kf_json_add_string(sec, key, value);
	else
		printf("  %-18s %s\n", label, value ? value : "-");
}

static void item_bool(struct doctor *d, cJSON *sec, const char *key, const char *label, bool v,
		      const char *yes, const char *no)
{
	if (d->json)
		kf_json_add_bool(sec, key, v);
	else
		printf("  %-18s %s\n", label, v ? yes : no);
}

static void item_int(struct doctor *d, cJSON *sec, const char *key, const char *label, int64_t v)
{
	if (d->json)
		kf_json_add_int(sec, key, v);
	else
		printf("  %-18s %lld\n", label, (long long)v);
}

static cJSON *section(struct doctor *d, const char *key, const char *title)
{
	if (!d->json) {
		printf("%s\n", title);
		return NULL;
	}
	return cJSON_AddObjectToObject(d->doc, key);
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static bool exists(const char *p, bool want_dir)
{
	struct stat sb;
	return stat(p, &sb) == 0 && (want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
}

/* The first file matching any pattern, into out; false when none. */
static bool first_match(const char *const *patterns, size_t n, char *out, size_t out_n)
{
	for (size_t i = 0; i < n; i++) {
		glob_t g;
		if (glob(patterns[i], 0, NULL, &g) == 0 && g.gl_pathc > 0) {
			snprintf(out, out_n, "%s", g.gl_pathv[0]);
			globfree(&g);
			return true;
		}
		globfree(&g);
	}
	return false;
}

static void host_compiler(struct doctor *d)
{
	const char *cxx = env_or("CXX", "g++");
	const char *argv[] = {cxx, "--version", NULL};
	struct kf_child_limits lim = {.timeout_ms = 10000, .cpu_s = 10, .no_network = true};
	struct kf_buf out = KF_BUF_INIT(16384);
	struct kf_child_result res;
	struct kf_err err = KF_ERR_INIT;
	cJSON *sec = section(d, "host_compiler", "host compiler (cpu backend)");
	enum kf_status st = kf_child_run_argv(argv, NULL, &lim, &out, &res, &err);
	char line[256] = "";

	item(d, sec, "command", "command", cxx);
	if (!st && res.term_signal == 0 && res.exit_code == 0) {
		char *nl = strchr(out.data, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - out.data) : (int)out.len, out.data);
		item_bool(d, sec, "available", "available", true, "yes", "no");
		item(d, sec, "version", "version", line);
	} else {
		if (st)
			snprintf(line, sizeof(line), "%s", err.msg);
		else
			snprintf(line, sizeof(line), "'%s --version' exited with %d%s", cxx, res.exit_code,
				 res.term_signal ? " (signal)" : "");
		item_bool(d, sec, "available", "available", false, "yes", "no");
		item(d, sec, "error", "error", line);
	}
	kf_buf_release(&out);
}

static void cuda_toolkit(struct doctor *d)
{
	const char *home = env_or("CUDA_HOME", "/usr/local/cuda");
	char p[4096], found[4096], ver[32] = "unavailable";
	int major, minor;
	cJSON *sec = section(d, "cuda", "CUDA toolkit");
	const char *cupti[2];
	char pat1[4200], pat2[4200];

	if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
		snprintf(ver, sizeof(ver), "%d.%d", major, minor);
	item(d, sec, "nvrtc", "nvrtc", ver);
	item(d, sec, "path", "toolkit path", home);
	item_bool(d, sec, "toolkit_present", "toolkit present", exists(home, true), "yes", "no");
	snprintf(p, sizeof(p), "%s/include/cuda.h", home);
	item_bool(d, sec, "headers", "headers", exists(p, false), "yes (include/cuda.h)", "no");
	snprintf(p, sizeof(p), "%s/bin/nvcc", home);
	item_bool(d, sec, "nvcc", "nvcc", exists(p, false), "yes", "no");
	/* CUPTI is only looked for: loading it belongs in the worker (docs/architecture.md) */
	snprintf(pat1, sizeof(pat1), "%s/lib64/libcupti.so*", home);
	snprintf(pat2, sizeof(pat2), "%s/extras/CUPTI/lib64/libcupti.so*", home);
	cupti[0] = pat1;
	cupti[1] = pat2;
	if (first_match(cupti, 2, found, sizeof(found))) {
		item_bool(d, sec, "cupti", "cupti", true, "yes", "no");
		item(d, sec, "cupti_path", "cupti library", found);
	} else {
		item_bool(d, sec, "cupti", "cupti", false, "yes",
			  "not found (timing falls back to CUDA events)");
	}
}

static void device(struct doctor *d, enum kf_backend_kind b)
{
	struct kf_device_info info;
	struct kf_err err = KF_ERR_INIT;
	enum kf_status st;
	cJSON *sec = section(d, b == KF_BACKEND_CUDA ? "gpu" : "cpu_backend",
			     b == KF_BACKEND_CUDA ? "GPU (cuda backend, probed by a worker)"
						  : "cpu backend (probed by a worker)");
	char buf[256];

	memset(&info, 0, sizeof(info));
	st = kf_device_probe(b, NULL, &info, &err);
	item_bool(d, sec, "available", "available", st == KF_OK, "yes", "no");
	if (st) {
		item(d, sec, "reason", "reason", err.msg);
		return;
	}
	item(d, sec, "name", "device", info.name);
	item(d, sec, "arch", "arch", info.arch);
	if (b == KF_BACKEND_CUDA) {
		snprintf(buf, sizeof(buf), "%d.%d", info.driver_version / 1000,
			 (info.driver_version % 1000) / 10);
		item(d, sec, "driver", "driver (CUDA)", buf);
		item_int(d, sec, "sm_count", "SMs", info.sm_count);
		snprintf(buf, sizeof(buf), "%.1f GiB",
			 (double)info.global_mem_bytes / (1024.0 * 1024 * 1024));
		item(d, sec, "memory", "memory", buf);
		snprintf(buf, sizeof(buf), "%.1f MiB", (double)info.l2_bytes / (1024.0 * 1024));
		item(d, sec, "l2", "L2", buf);
		item_bool(d, sec, "cupti_timing", "CUPTI timing", info.cupti, "yes", "no (CUDA events)");
	} else {
		item_int(d, sec, "threads", "worker threads", info.sm_count);
	}
}

/* Every sandbox layer: active, switched off, or unavailable here (and why); then what that means for
 * the cpu backend. */
static void sandbox(struct doctor *d)
{
	const struct kf_sandbox_report *r = kf_sandbox_report();
	cJSON *sec = section(d, "sandbox", "sandbox layers (sandbox/README.md)");
	cJSON *layers = d->json ? cJSON_AddObjectToObject(sec, "layers") : NULL;
	char buf[400];

	item_bool(d, sec, "parent_not_dumpable", "parent", r->parent_nodump,
		  "not dumpable (no /proc/PID/mem, environ or ptrace from children)", "DUMPABLE");
	item_bool(d, sec, "parent_env_scrubbed", "parent environ", r->env_scrubbed,
		  "initial block zeroed (/proc/PID/environ shows nothing)", "not scrubbed");
	for (unsigned b = 0; b < KF_LAYER_COUNT; b++) {
		unsigned bit = 1u << b;
		const char *state = (r->active & bit)       ? "active"
				    : !(r->requested & bit) ? "off ($KFORGE_SANDBOX_LAYERS)"
				    : (r->available & bit)  ? "inactive (needs the userns layer)"
							    : "unavailable";
		if (d->json) {
			cJSON *l = cJSON_AddObjectToObject(layers, kf_layer_name(b));
			kf_json_add_bool(l, "active", (r->active & bit) != 0);
			kf_json_add_bool(l, "requested", (r->requested & bit) != 0);
			kf_json_add_bool(l, "available", (r->available & bit) != 0);
			if (!(r->available & bit))
				kf_json_add_string(l, "why", r->why[b]);
			kf_json_add_string(l, "does", kf_layer_summary(b));
			continue;
		}
		if (!(r->available & bit) && r->why[b][0])
			snprintf(buf, sizeof(buf), "%s: %s", state, r->why[b]);
		else
			snprintf(buf, sizeof(buf), "%s", state);
		printf("  %-18s %s\n", kf_layer_name(b), buf);
	}
	if (r->landlock_abi)
		item_int(d, sec, "landlock_abi", "landlock ABI", r->landlock_abi);
	if (r->cgroup[0])
		item(d, sec, "cgroup_version", "cgroup", r->cgroup);
	if (r->bad_spec[0]) {
		snprintf(buf, sizeof(buf), "unknown layer '%s' in $KFORGE_SANDBOX_LAYERS (ignored)",
			 r->bad_spec);
		item(d, sec, "warning", "warning", buf);
	}
	if (r->cpu_opt_out)
		snprintf(buf, sizeof(buf), "RUNS UNSANDBOXED CANDIDATE CODE: %s is set",
			 KF_SANDBOX_OPT_OUT_ENV);
	else if (r->cpu_allowed)
		snprintf(buf, sizeof(buf), "runs candidate code (syscall allow-list + %s)",
			 (r->active & KF_LAYER_LANDLOCK) ? "filesystem allow-list" : "separate uid");
	else
		snprintf(buf, sizeof(buf),
			 "refuses to run candidate code: needs seccomp and landlock or uid (or %s=1)",
			 KF_SANDBOX_OPT_OUT_ENV);
	item(d, sec, "cpu_backend", "cpu backend", buf);
	if (d->json)
		kf_json_add_bool(sec, "cpu_allowed", r->cpu_allowed);
}

static void keys(struct doctor *d)
{
	static const char *const names[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
	cJSON *sec = section(d, "api_keys", "API keys (values never shown)");
	for (size_t i = 0; i < KF_ARRAY_SIZE(names); i++) {
		const char *v = getenv(names[i]);
		item(d, sec, names[i], names[i], v && *v ? "set" : "not set");
	}
}

static void database(struct doctor *d, const char *flag)
{
	const char *path = kf_cli_db_path(flag);
	cJSON *sec = section(d, "database", "knowledge base");
	item(d, sec, "path", "path", path);
	item_bool(d, sec, "exists", "exists", exists(path, false), "yes", "no (created on first use)");
}

int kf_cli_sandbox_layers(int argc, char **argv)
{
	struct doctor d = {0};
	int rc = KF_EXIT_OK;
	for (int i = 1; i < argc; i++)
		d.json = d.json || !strcmp(argv[i], "--json");
	if (d.json && !(d.doc = cJSON_CreateObject())) {
		kf_cli_error("out of memory");
		return KF_EXIT_INTERNAL;
	}
	sandbox(&d);
	if (d.json) {
		struct kf_err err = KF_ERR_INIT;
		rc = kf_json_fput(d.doc, true, stdout, &err) ? KF_EXIT_INTERNAL : KF_EXIT_OK;
		cJSON_Delete(d.doc);
	}
	return rc;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = {0};
	const char *db = NULL;
	const struct kf_opt opts[] = {{"json", false, NULL, &d.json}, {"db", true, &db, NULL}};
	const char *pos[1];
	size_t n_pos;
	int rc;

	if (kf_cli_start(
		"doctor",
		"kforge doctor [--json] [--db FILE]\n\n"
		"Reports the host C++ compiler, NVRTC, the CUDA toolkit and CUPTI, the GPU and the\n"
		"cpu backend as a worker sees them, each sandbox layer (active, off or unavailable,\n"
		"and why), whether API keys are set (never their values) and the knowledge-base\n"
		"path. Exit 0.\n",
		argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 0, 0, &n_pos, NULL, &rc))
		return rc;
	if (d.json && !(d.doc = cJSON_CreateObject())) {
		kf_cli_error("out of memory");
		return KF_EXIT_INTERNAL;
	}
	if (d.json)
		kf_json_add_string(d.doc, "version", KF_VERSION);
	else
		printf("kforge %s\n", KF_VERSION);
	host_compiler(&d);
	cuda_toolkit(&d);
	device(&d, KF_BACKEND_CUDA);
	device(&d, KF_BACKEND_CPU);
	sandbox(&d);
	keys(&d);
	database(&d, db);
	if (d.json) {
		struct kf_err err = KF_ERR_INIT;
		rc = kf_json_fput(d.doc, true, stdout, &err) ? KF_EXIT_INTERNAL : KF_EXIT_OK;
		if (rc)
			kf_cli_error("%s", err.msg);
		cJSON_Delete(d.doc);
		return rc;
	}
	return KF_EXIT_OK;
}

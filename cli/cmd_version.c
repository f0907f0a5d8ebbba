/* kforge version: the version, how this binary was built, and the versions of the libraries it runs
 * with (read from the libraries at run time, so a mismatched .so shows up here). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <curl/curl.h>
#include <nvrtc.h>
#include <pcre2.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"

#ifndef KF_GIT_DESCRIBE
#define KF_GIT_DESCRIBE "" /* the Makefile may pass -DKF_GIT_DESCRIBE="\"v0.1-3-gabc\"" */
#endif

#if defined(__clang__)
#define KF_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define KF_COMPILER "gcc " __VERSION__
#else
#define KF_COMPILER "unknown"
#endif

int cmd_version(int argc, char **argv)
{
	bool json = false;
	const struct kf_opt opts[] = {{"json", false, NULL, &json}};
	const char *pos[1];
	size_t n_pos;
	char nvrtc[32] = "unavailable", pcre[64] = "unknown";
	const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	int major = 0, minor = 0, rc;

	if (kf_cli_start("version",
			 "Prints the kforge version, the compiler that built it and the versions of\n"
			 "NVRTC, libcurl, SQLite, PCRE2 and cJSON it runs with.\n",
			 argc, argv, opts, KF_ARRAY_SIZE(opts), pos, 0, 0, &n_pos, NULL, &rc))
		return rc;
	if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
		snprintf(nvrtc, sizeof(nvrtc), "%d.%d", major, minor);
	if (pcre2_config(PCRE2_CONFIG_VERSION, pcre) < 0)
		snprintf(pcre, sizeof(pcre), "unknown");
	if (json) {
		struct kf_err err = KF_ERR_INIT;
		cJSON *o = cJSON_CreateObject(), *lib;
		if (!o) {
			kf_cli_error("out of memory");
			return KF_EXIT_INTERNAL;
		}
		kf_json_add_string(o, "version", KF_VERSION);
		kf_json_add_string(o, "git", *KF_GIT_DESCRIBE ? KF_GIT_DESCRIBE : NULL);
		kf_json_add_string(o, "compiler", KF_COMPILER);
		kf_json_add_string(o, "built", __DATE__ " " __TIME__);
		lib = cJSON_AddObjectToObject(o, "libraries");
		kf_json_add_string(lib, "nvrtc", nvrtc);
		kf_json_add_string(lib, "libcurl", cv ? cv->version : "unknown");
		kf_json_add_string(lib, "sqlite", sqlite3_libversion());
		kf_json_add_string(lib, "pcre2", pcre);
		kf_json_add_string(lib, "cjson", cJSON_Version());
		rc = kf_json_fput(o, true, stdout, &err) ? KF_EXIT_INTERNAL : KF_EXIT_OK;
		if (rc)
			kf_cli_error("%s", err.msg);
		cJSON_Delete(o);
		return rc;
	}
	printf("kforge %s%s%s\n", KF_VERSION, *KF_GIT_DESCRIBE ? " " : "", KF_GIT_DESCRIBE);
	printf("compiler  %s\n", KF_COMPILER);
	printf("built     %s %s\n", __DATE__, __TIME__);
	printf("nvrtc     %s\n", nvrtc);
	printf("libcurl   %s\n", cv ? cv->version : "unknown");
	printf("sqlite    %s\n", sqlite3_libversion());
	printf("pcre2     %s\n", pcre);
	printf("cjson     %s\n", cJSON_Version());
	return KF_EXIT_OK;
}

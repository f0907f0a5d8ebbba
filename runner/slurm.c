/* Slurm submission (runner/runner.h): a job array of bench shards, each with its own database and out dir,
 * merged afterwards by `kforge kb merge` and reported by `kforge bench --collect`. No scheduler of ours. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs.h"
#include "runner/runner.h"

#define SCRIPT_MAX ((size_t)1 << 20)

static enum kf_status sh_quote(struct kf_buf *b, const char *s)
{
	enum kf_status st = kf_buf_addch(b, '\'');
	for (; *s && !st; s++)
		st = *s == '\'' ? kf_buf_adds(b, "'\\''") : kf_buf_addch(b, *s);
	if (!st)
		st = kf_buf_addch(b, '\'');
	return st;
}

/* Options the script sets per shard, never passed through: name, and whether it takes a value. */
static bool slurm_drop(const char *a, bool *takes_value)
{
	static const char *const val[] = {"--db", "--out", "--shard", "--shards"};
	static const char *const flag[] = {"--slurm", "--json", "--collect"};
	for (size_t i = 0; i < KF_ARRAY_SIZE(val); i++) {
		size_t n = strlen(val[i]);
		if (!strncmp(a, val[i], n) && (a[n] == 0 || a[n] == '=')) {
			*takes_value = a[n] == 0;
			return true;
		}
	}
	for (size_t i = 0; i < KF_ARRAY_SIZE(flag); i++)
		if (!strcmp(a, flag[i])) {
			*takes_value = false;
			return true;
		}
	return false;
}

static void abs_path(const char *p, const char *cwd, char *buf, size_t n)
{
	if (p[0] == '/')
		snprintf(buf, n, "%s", p);
	else
		snprintf(buf, n, "%s/%s", cwd, p);
}

enum kf_status kf_slurm_script(const struct kf_slurm_opts *o, struct kf_buf *sc, struct kf_slurm_job *job,
			       struct kf_err *err)
{
	char self[PATH_MAX], cwd[PATH_MAX], out_abs[PATH_MAX];
	enum kf_status st;
	size_t sl;

	if (o->self) {
		snprintf(self, sizeof(self), "%s", o->self);
	} else {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return kf_err_set(err, KF_ERR_INTERNAL, "cannot find the kforge binary");
		self[n] = 0;
	}
	if (o->cwd)
		snprintf(cwd, sizeof(cwd), "%s", o->cwd);
	else if (!getcwd(cwd, sizeof(cwd)))
		return kf_err_set(err, KF_ERR_INTERNAL, "cannot find the current folder: %s",
				  strerror(errno));
	abs_path(o->db_path, cwd, job->stem, sizeof(job->stem));
	sl = strlen(job->stem);
	if (sl > 3 && !strcmp(job->stem + sl - 3, ".db"))
		job->stem[sl - 3] = 0;
	abs_path(o->out_dir, cwd, out_abs, sizeof(out_abs));
	snprintf(job->script, sizeof(job->script), "%s/bench.sbatch", out_abs);
	st = kf_buf_addf(
	    sc,
	    "#!/bin/bash\n# kforge bench as a Slurm job array: element I runs shard I/%u with its own\n"
	    "# database and out dir; afterwards: kforge kb merge then kforge bench --collect.\n"
	    "#SBATCH --job-name=kforge-bench\n#SBATCH --array=1-%u\n#SBATCH --ntasks=1\n"
	    "#SBATCH --output=%s/slurm-%%A_%%a.log\nset -eu\ncd ",
	    o->shards, o->shards, out_abs);
	if (!st)
		st = sh_quote(sc, cwd);
	if (!st)
		st = kf_buf_adds(sc, "\nI=$SLURM_ARRAY_TASK_ID\nexec ");
	if (!st)
		st = sh_quote(sc, self);
	if (!st)
		st = kf_buf_adds(sc, " bench");
	for (int i = 1; i < o->argc && !st; i++) {
		bool tv;
		if (slurm_drop(o->argv[i], &tv)) {
			i += tv;
			continue;
		}
		st = kf_buf_addch(sc, ' ');
		if (!st)
			st = sh_quote(sc, o->argv[i]);
	}
	if (!st)
		st = kf_buf_addf(sc, " --shard \"$I/%u\" --db ", o->shards);
	if (!st)
		st = sh_quote(sc, job->stem);
	if (!st)
		st = kf_buf_adds(sc, "\".shard-$I.db\" --out ");
	if (!st)
		st = sh_quote(sc, out_abs);
	if (!st)
		st = kf_buf_adds(sc, "\"/shard-$I\"\n");
	if (st)
		return kf_err_set(err, st, "cannot write the job script: %s", kf_status_name(st));
	return KF_OK;
}

enum kf_status kf_slurm_submit(const struct kf_slurm_opts *o, struct kf_slurm_job *job, struct kf_err *err)
{
	struct kf_buf sc = KF_BUF_INIT(SCRIPT_MAX), q = KF_BUF_INIT(PATH_MAX * 2 + 64);
	char dir[PATH_MAX];
	enum kf_status st;
	FILE *p;
	int rc;

	memset(job, 0, sizeof(*job));
	if ((st = kf_slurm_script(o, &sc, job, err)))
		goto out;
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(job->script, '/') - job->script), job->script);
	if ((st = kf_mkdir_p(dir, 0777, err)))
		goto out;
	if ((st = kf_write_file_atomic(job->script, sc.data, sc.len, err))) {
		kf_err_prefix(err, "cannot write '%s'", job->script);
		goto out;
	}
	chmod(job->script, 0755);

	st = sh_quote(&q, o->sbatch && *o->sbatch ? o->sbatch : "sbatch");
	if (!st)
		st = kf_buf_adds(&q, " --parsable ");
	if (!st)
		st = sh_quote(&q, job->script);
	if (st) {
		st = kf_err_set(err, st, "the sbatch command line is too long");
		goto out;
	}
	fflush(NULL);
	if (!(p = popen(q.data, "r"))) {
		st = kf_err_set(err, KF_ERR_UNAVAILABLE, "cannot run sbatch: %s", strerror(errno));
		goto out;
	}
	if (!fgets(job->job_id, sizeof(job->job_id), p))
		job->job_id[0] = 0;
	while (fgetc(p) != EOF)
		;
	rc = pclose(p);
	job->job_id[strcspn(job->job_id, ";\r\n")] = 0;
	if (rc != 0 || !job->job_id[0])
		st = kf_err_set(
		    err, WIFEXITED(rc) && WEXITSTATUS(rc) == 127 ? KF_ERR_UNAVAILABLE : KF_ERR_INTERNAL,
		    "sbatch failed (exit %d); the script is '%s'", WIFEXITED(rc) ? WEXITSTATUS(rc) : -1,
		    job->script);
out:
	kf_buf_release(&sc);
	kf_buf_release(&q);
	return st;
}

-- kforge knowledge base, schema version 4: the task's baselines beside every timing (docs/baselines.md),
-- so reports, bench metrics and retrieval can say how a kernel compares with a tuned kernel or a library
-- call (cuBLAS, cuDNN), not only with the task's deliberately simple reference.
--
-- One row per baseline of the task for every timing row, in the task's order (idx), whatever became of it:
-- status  'timed' (verified, then timed), 'unavailable' (the backend cannot run it: a library call off the
--         cuda backend; reason says why), 'rejected' (failed verification or its timed outputs were wrong:
--         reason has the verdict's evidence; never used), 'failed' (the harness could not run it),
--         'skipped' (not asked for)
-- kind    'kernel' (a kernel file) or 'library' (a library call)
-- median_ms, speedup, speedup_ci_lo, speedup_ci_hi: for timed rows only (0 otherwise); speedup is baseline
--         time / candidate time on the timing's clock (timings.clock: a cpu row is CPU time); a chained
--         row's median_ms is its time through the reference (timings.ref_median_ms x base/ref of the
--         baselines' session), so that median_ms / timings.median_ms is its speedup's point
-- significant  1: the candidate is significantly faster than the baseline (its interval's rule)
-- method  'interleaved' (timed beside the candidate, A B C A B C) or 'chained' (a search times its
--         baselines once: ref/cand of this timing x base/ref of that one session, with a two-session
--         bootstrap interval)
-- Timings recorded before version 4 have no rows here.
CREATE TABLE timing_baselines (
	timing_id     INTEGER NOT NULL REFERENCES timings(id),
	idx           INTEGER NOT NULL,
	name          TEXT NOT NULL,
	kind          TEXT NOT NULL DEFAULT 'kernel',
	status        TEXT NOT NULL,
	reason        TEXT NOT NULL DEFAULT '',
	median_ms     REAL NOT NULL DEFAULT 0,
	speedup       REAL NOT NULL DEFAULT 0,
	speedup_ci_lo REAL NOT NULL DEFAULT 0,
	speedup_ci_hi REAL NOT NULL DEFAULT 0,
	significant   INTEGER NOT NULL DEFAULT 0,
	method        TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (timing_id, idx)
) WITHOUT ROWID;

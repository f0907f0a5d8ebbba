-- A knowledge base as kforge wrote it at schema version 1 (before the wins table and FTS5): the DDL of
-- kb/sql/001-base.sql as shipped, and a few rows. tests/unit/test_kb.c opens it with the current build
-- and checks that the migration keeps every row and derives the wins and search indexes from them.
CREATE TABLE tasks (
	id          INTEGER PRIMARY KEY,
	name        TEXT NOT NULL,
	hash        TEXT NOT NULL,             -- sha256 hex of the task file
	category    TEXT NOT NULL DEFAULT '',
	level       INTEGER NOT NULL DEFAULT 0,
	title       TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	created_at  REAL NOT NULL,
	UNIQUE (name, hash)
);

CREATE TABLE runs (
	id            INTEGER PRIMARY KEY,
	uid           TEXT NOT NULL UNIQUE,    -- random hex: the same run seen through two merges
	task_id       INTEGER NOT NULL REFERENCES tasks(id),
	strategy      TEXT NOT NULL DEFAULT '',
	provider      TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	backend       TEXT NOT NULL DEFAULT '',
	seed          INTEGER NOT NULL DEFAULT 0,
	budget_calls  INTEGER NOT NULL DEFAULT 0, -- 0: no limit
	budget_tokens INTEGER NOT NULL DEFAULT 0,
	budget_usd    REAL NOT NULL DEFAULT 0,
	budget_time_s REAL NOT NULL DEFAULT 0,
	config        TEXT NOT NULL DEFAULT '{}', -- JSON options, never an API key
	status        TEXT NOT NULL DEFAULT 'running',
	started_at    REAL NOT NULL,
	updated_at    REAL NOT NULL,
	finished_at   REAL NOT NULL DEFAULT 0,
	spend_usd     REAL NOT NULL DEFAULT 0,
	n_calls       INTEGER NOT NULL DEFAULT 0,
	tokens_in     INTEGER NOT NULL DEFAULT 0,
	tokens_out    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_task ON runs(task_id, id);

CREATE TABLE llm_calls (
	id            INTEGER PRIMARY KEY,
	run_id        INTEGER NOT NULL REFERENCES runs(id),
	seq           INTEGER NOT NULL,         -- 0-based order within the run (replay order)
	provider      TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	prompt        TEXT NOT NULL DEFAULT '[]', -- JSON array of {role, content}
	response      TEXT NOT NULL DEFAULT '',
	finish_reason TEXT NOT NULL DEFAULT '',
	tokens_in     INTEGER NOT NULL DEFAULT 0,
	tokens_out    INTEGER NOT NULL DEFAULT 0,
	cost_usd      REAL NOT NULL DEFAULT 0,
	latency_ms    REAL NOT NULL DEFAULT 0,
	error         TEXT,                     -- NULL when the call succeeded
	request_id    TEXT NOT NULL DEFAULT '',
	created_at    REAL NOT NULL,
	UNIQUE (run_id, seq)
);

CREATE TABLE candidates (
	id          INTEGER PRIMARY KEY,
	run_id      INTEGER NOT NULL REFERENCES runs(id),
	task_id     INTEGER NOT NULL REFERENCES tasks(id),
	parent_id   INTEGER REFERENCES candidates(id),
	parent2_id  INTEGER REFERENCES candidates(id),
	llm_call_id INTEGER REFERENCES llm_calls(id),
	generation  INTEGER NOT NULL DEFAULT 0,
	island      INTEGER NOT NULL DEFAULT 0,
	node        INTEGER NOT NULL DEFAULT 0,
	edit_kind   TEXT NOT NULL DEFAULT 'rewrite',
	source      TEXT NOT NULL,
	source_hash TEXT NOT NULL,
	tags        TEXT NOT NULL DEFAULT '',   -- technique tags, comma-separated
	change      TEXT NOT NULL DEFAULT '',   -- what changed against the parent
	created_at  REAL NOT NULL
);
CREATE INDEX candidates_run ON candidates(run_id, id);
CREATE INDEX candidates_task_hash ON candidates(task_id, source_hash);
CREATE INDEX candidates_parent ON candidates(parent_id);

CREATE TABLE evaluations (
	id           INTEGER PRIMARY KEY,
	candidate_id INTEGER NOT NULL REFERENCES candidates(id),
	backend      TEXT NOT NULL DEFAULT '',
	arch         TEXT NOT NULL DEFAULT '',
	toolchain    TEXT NOT NULL DEFAULT '',
	device       TEXT NOT NULL DEFAULT '',
	dtype        TEXT NOT NULL DEFAULT '',
	verdict      TEXT NOT NULL,             -- docs/spec/verification.md status
	reason       TEXT NOT NULL DEFAULT '',
	seed         INTEGER NOT NULL DEFAULT 0,
	speedup      REAL NOT NULL DEFAULT 0,   -- aggregate over timing shapes; 0: not timed
	wall_ms      REAL NOT NULL DEFAULT 0,
	created_at   REAL NOT NULL
);
CREATE INDEX evaluations_candidate ON evaluations(candidate_id, id);

CREATE TABLE eval_shapes (
	evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
	idx           INTEGER NOT NULL,
	dims          TEXT NOT NULL DEFAULT '{}',
	status        TEXT NOT NULL DEFAULT '',
	max_abs       REAL,                     -- NULL when not compared
	max_rel       REAL,
	detail        TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (evaluation_id, idx)
) WITHOUT ROWID;

CREATE TABLE timings (
	id            INTEGER PRIMARY KEY,
	candidate_id  INTEGER NOT NULL REFERENCES candidates(id),
	evaluation_id INTEGER REFERENCES evaluations(id),
	shape         TEXT NOT NULL DEFAULT '{}',
	clock         TEXT NOT NULL DEFAULT '',  -- cupti | cuda_event | cpu
	n_samples     INTEGER NOT NULL DEFAULT 0,
	median_ms     REAL NOT NULL DEFAULT 0,
	iqr_ms        REAL NOT NULL DEFAULT 0,
	ci_lo_ms      REAL NOT NULL DEFAULT 0,
	ci_hi_ms      REAL NOT NULL DEFAULT 0,
	ref_median_ms REAL NOT NULL DEFAULT 0,
	speedup       REAL NOT NULL DEFAULT 0,
	speedup_ci_lo REAL NOT NULL DEFAULT 0,
	speedup_ci_hi REAL NOT NULL DEFAULT 0,
	created_at    REAL NOT NULL
);
CREATE INDEX timings_candidate ON timings(candidate_id, id);

INSERT INTO tasks VALUES (1, 'softmax_rows', 'aaaa000000000000000000000000000000000000000000000000000000000001', 'reduction', 1, 'Row softmax', 'softmax over the last dim of a 2-D tensor', 1700000000.0);
INSERT INTO tasks VALUES (2, 'vec_add', 'aaaa000000000000000000000000000000000000000000000000000000000002', 'elementwise', 1, 'Vector add', 'c = a + b elementwise', 1700000001.0);
INSERT INTO runs VALUES (1, 'v1run0000000000000000000000000001', 1, 'evo', 'replay', 'm1', 'cpu', 7, 10, 0, 1.5, 0, '{"islands":2}', 'done', 1700000010.0, 1700000100.0, 1700000100.0, 0.0125, 2, 3000, 800);
INSERT INTO llm_calls VALUES (1, 1, 0, 'replay', 'm1', '[{"role":"user","content":"make softmax faster"}]', 'use a warp reduction', 'stop', 1500, 400, 0.00625, 1200.5, NULL, 'req-1', 1700000020.0);
INSERT INTO llm_calls VALUES (2, 1, 1, 'replay', 'm1', '[{"role":"user","content":"again"}]', '', 'error', 1500, 400, 0.00625, 30000.0, 'timeout after 30 s', 'req-2', 1700000050.0);
INSERT INTO candidates VALUES (1, 1, 1, NULL, NULL, NULL, 0, 0, 0, 'seed', '__global__ void softmax(const float *x, float *y, int n) { }', '2e312ffe4db3ae82f914fcb4f77ee27e997162d0e653f5db4519e663db614c91', '', '', 1700000015.0);
INSERT INTO candidates VALUES (2, 1, 1, 1, NULL, 1, 1, 0, 0, 'rewrite', '__global__ void softmax(const float *x, float *y, int n) { float v = __shfl_xor_sync(0xffffffff, 0.f, 16); }', 'ee601936b98a6b0c98409a4ef4897328fe39ef1c849044a98fa4b605530f77f7', 'warp_shuffle', '', 1700000030.0);
INSERT INTO candidates VALUES (3, 1, 1, 2, NULL, NULL, 2, 0, 0, 'diff', '__global__ void softmax(const float *x, float *y, int n) { __shared__ float s[32]; }', '59c934cbeeed52c745c96253cf29f48703fa2160bdd9a3935e35ef02f4b2c701', 'shared_memory', 'moved the reduction to shared memory', 1700000060.0);
INSERT INTO evaluations VALUES (1, 1, 'cpu', 'cpu', 'g++ 12.2.0 shim 1', '', 'f32', 'pass', '', 42, 1.0, 55.0, 1700000016.0);
INSERT INTO evaluations VALUES (2, 2, 'cpu', 'cpu', 'g++ 12.2.0 shim 1', '', 'f32', 'pass', '', 42, 1.8, 60.0, 1700000031.0);
INSERT INTO evaluations VALUES (3, 3, 'cpu', 'cpu', 'g++ 12.2.0 shim 1', '', 'f32', 'wrong_output', 'shape {"R":7,"C":33}: index 5 got 0.1 want 0.2', 42, 0, 40.0, 1700000061.0);
INSERT INTO eval_shapes VALUES (1, 0, '{"R":4,"C":32}', 'pass', 1e-07, 2e-06, '');
INSERT INTO eval_shapes VALUES (3, 0, '{"R":7,"C":33}', 'wrong_output', 0.1, 0.5, 'index 5 got 0.1 want 0.2');
INSERT INTO timings VALUES (1, 2, 2, '{"R":1024,"C":1024}', 'cpu', 21, 1.25, 0.05, 1.2, 1.3, 2.25, 1.8, 1.7, 1.9, 1700000032.0);
PRAGMA user_version = 1;

-- kforge knowledge base, schema version 1: the record of every task, run, candidate, LLM exchange,
-- evaluation and timing. Applied by kb/kb.c on open; never edit a shipped version, add a new file.
-- Times are Unix seconds (REAL), money USD (REAL), durations in ms. API keys are never stored.

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

-- kforge knowledge base, schema version 3: what became of each LLM call (so failed calls and unusable
-- replies can be counted and shown with their reasons), its cache and reasoning tokens, and short lessons
-- (what an attempt tried, what happened, why) kept beside the code for later prompts.

-- purpose:  'candidate' (a kernel was asked for) or 'strategies' (a list of approaches was asked for)
-- outcome:  'candidate' (it became a candidate), 'strategies' (approaches were read from it), 'unusable'
--           (a reply that gave nothing to evaluate: no kernel, edits that did not apply, cut off), 'failed'
--           (the call itself failed: error holds the message); '' for calls recorded before version 3
-- failure:  the failure kind of a failed call (auth, quota, rate_limit, refusal, ...: agent.h)
-- reason:   why a reply was unusable, in one line
ALTER TABLE llm_calls ADD COLUMN purpose TEXT NOT NULL DEFAULT 'candidate';
ALTER TABLE llm_calls ADD COLUMN outcome TEXT NOT NULL DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN failure TEXT NOT NULL DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN tokens_cached INTEGER NOT NULL DEFAULT 0;
ALTER TABLE llm_calls ADD COLUMN tokens_cache_write INTEGER NOT NULL DEFAULT 0;
ALTER TABLE llm_calls ADD COLUMN tokens_reasoning INTEGER NOT NULL DEFAULT 0;
ALTER TABLE llm_calls ADD COLUMN endpoint TEXT NOT NULL DEFAULT '';
UPDATE llm_calls SET outcome = 'failed' WHERE error IS NOT NULL;

-- The proposed strategy a candidate's lineage follows, 1-based (0: none), so a resumed run gives each island
-- and strategy node back its own.
ALTER TABLE candidates ADD COLUMN strategy_no INTEGER NOT NULL DEFAULT 0;

-- One lesson per evaluated attempt worth remembering: a failure (verdict and its reason) or a verified
-- kernel that was not faster. clock is the timing class of the run that learnt it (gpu, cpu, model),
-- arch the target ('sm_90', 'cpu'), so a prompt only gets lessons that hold where it runs.
CREATE TABLE lessons (
	id           INTEGER PRIMARY KEY,
	task_id      INTEGER NOT NULL REFERENCES tasks(id),
	run_id       INTEGER NOT NULL REFERENCES runs(id),
	candidate_id INTEGER REFERENCES candidates(id),
	arch         TEXT NOT NULL DEFAULT '',
	clock        TEXT NOT NULL DEFAULT '',
	verdict      TEXT NOT NULL DEFAULT '',
	tried        TEXT NOT NULL DEFAULT '',  -- the attempt's one-line rationale (or its technique tags)
	outcome      TEXT NOT NULL DEFAULT '',  -- what happened, one line
	created_at   REAL NOT NULL
);
CREATE INDEX lessons_task ON lessons(task_id, id);

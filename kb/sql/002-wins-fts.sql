-- kforge knowledge base, schema version 2: the wins table (best verified kernel per task x arch x dtype)
-- and FTS5 indexes over task text and kernel sources/tags for retrieval. Builds both from v1 rows.

CREATE TABLE wins (
	task_id       INTEGER NOT NULL REFERENCES tasks(id),
	arch          TEXT NOT NULL,
	dtype         TEXT NOT NULL,
	candidate_id  INTEGER NOT NULL REFERENCES candidates(id),
	evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
	speedup       REAL NOT NULL,
	updated_at    REAL NOT NULL,
	PRIMARY KEY (task_id, arch, dtype)
) WITHOUT ROWID;

-- Earliest evaluation wins a tie, as it would have when recorded live (a later one must beat it).
INSERT INTO wins (task_id, arch, dtype, candidate_id, evaluation_id, speedup, updated_at)
SELECT c.task_id, e.arch, e.dtype, e.candidate_id, e.id, e.speedup, e.created_at
FROM evaluations e JOIN candidates c ON c.id = e.candidate_id
WHERE e.verdict = 'pass' AND e.speedup > 0
  AND e.id = (SELECT e2.id FROM evaluations e2 JOIN candidates c2 ON c2.id = e2.candidate_id
              WHERE e2.verdict = 'pass' AND e2.speedup > 0 AND c2.task_id = c.task_id
                AND e2.arch = e.arch AND e2.dtype = e.dtype
              ORDER BY e2.speedup DESC, e2.id ASC LIMIT 1);

-- Retrieval reads one task's verified evaluations on one arch best first. The task is copied onto each
-- evaluation (kb.c fills it from the candidate) so that is one index range read in order, whatever the
-- size of the database.
ALTER TABLE evaluations ADD COLUMN task_id INTEGER REFERENCES tasks(id);
UPDATE evaluations SET task_id = (SELECT c.task_id FROM candidates c WHERE c.id = evaluations.candidate_id);
CREATE INDEX evaluations_task_best ON evaluations(task_id, arch, verdict, speedup DESC, candidate_id);
CREATE INDEX tasks_category ON tasks(category, id);
CREATE INDEX tasks_name ON tasks(name, id);

CREATE VIRTUAL TABLE task_fts USING fts5(name, category, description, content='tasks', content_rowid='id');
CREATE VIRTUAL TABLE kernel_fts USING fts5(source, tags, content='candidates', content_rowid='id');
INSERT INTO task_fts(task_fts) VALUES ('rebuild');
INSERT INTO kernel_fts(kernel_fts) VALUES ('rebuild');

CREATE TRIGGER tasks_fts_ai AFTER INSERT ON tasks BEGIN
	INSERT INTO task_fts(rowid, name, category, description) VALUES (new.id, new.name, new.category, new.description);
END;
CREATE TRIGGER tasks_fts_ad AFTER DELETE ON tasks BEGIN
	INSERT INTO task_fts(task_fts, rowid, name, category, description)
	VALUES ('delete', old.id, old.name, old.category, old.description);
END;
CREATE TRIGGER tasks_fts_au AFTER UPDATE OF name, category, description ON tasks BEGIN
	INSERT INTO task_fts(task_fts, rowid, name, category, description)
	VALUES ('delete', old.id, old.name, old.category, old.description);
	INSERT INTO task_fts(rowid, name, category, description) VALUES (new.id, new.name, new.category, new.description);
END;
CREATE TRIGGER candidates_fts_ai AFTER INSERT ON candidates BEGIN
	INSERT INTO kernel_fts(rowid, source, tags) VALUES (new.id, new.source, new.tags);
END;
CREATE TRIGGER candidates_fts_ad AFTER DELETE ON candidates BEGIN
	INSERT INTO kernel_fts(kernel_fts, rowid, source, tags) VALUES ('delete', old.id, old.source, old.tags);
END;
CREATE TRIGGER candidates_fts_au AFTER UPDATE OF source, tags ON candidates BEGIN
	INSERT INTO kernel_fts(kernel_fts, rowid, source, tags) VALUES ('delete', old.id, old.source, old.tags);
	INSERT INTO kernel_fts(rowid, source, tags) VALUES (new.id, new.source, new.tags);
END;

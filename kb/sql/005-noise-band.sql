-- kforge knowledge base, schema version 5: the A/A calibration beside every timing (docs/spec/verification.md,
-- "When a speedup is significant"). The timing protocol times the task's reference against a twin of itself
-- (its own worker, the same rounds) at each timed shape:
-- aa_lo, aa_hi  the 95% interval of reference / twin (0 0: no A/A run, rows recorded before version 5)
-- noise_band    max(floor, |A/A point - 1|): a speedup is significant only when its
--               interval's lower bound exceeds 1 + noise_band (floor: 2% on a GPU, 3% on the cpu backend)
-- Rows recorded before version 5 have noise_band 0: the uncalibrated rule (lower bound above 1).
ALTER TABLE timings ADD COLUMN noise_band REAL NOT NULL DEFAULT 0;
ALTER TABLE timings ADD COLUMN aa_lo REAL NOT NULL DEFAULT 0;
ALTER TABLE timings ADD COLUMN aa_hi REAL NOT NULL DEFAULT 0;

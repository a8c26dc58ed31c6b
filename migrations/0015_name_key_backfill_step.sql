CREATE TABLE `one_off_steps` (
	`name` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`cursor` text,
	`updated_at` text NOT NULL
);--> statement-breakpoint
-- Unique names (docs/decisions.md, "Unique names"): migration 0009 keyed ASCII names with lower(); a name with
-- other characters needs NFC and Unicode case folding, which SQLite cannot do (no ICU in D1, no functions of
-- ours), so the Worker keys those once (src/pkg/name-keys.ts, run by the minute cron until it records the
-- step done). A database with no such names (every new one) starts with the step done.
INSERT INTO `one_off_steps` (`name`, `state`, `cursor`, `updated_at`)
SELECT 'name-keys',
  CASE WHEN EXISTS (SELECT 1 FROM `categories` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `classifications` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `entity_types` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `user_statuses` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `data_types` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `assets` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `deviations` WHERE `reference_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `activity_types` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `job_configurations` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `output_types` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `model_definitions` WHERE `name_key` IS NULL)
   OR EXISTS (SELECT 1 FROM `search_indices` WHERE `name_key` IS NULL)
  THEN 'pending' ELSE 'done' END,
  NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE NOT EXISTS (SELECT 1 FROM `one_off_steps` WHERE `name` = 'name-keys');

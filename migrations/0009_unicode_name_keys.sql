DROP INDEX `activity_types_name_uq`;--> statement-breakpoint
ALTER TABLE `activity_types` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `activity_types` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `activity_types_name_uq` ON `activity_types` (`name_key`);--> statement-breakpoint
DROP INDEX `assets_kind_name_idx`;--> statement-breakpoint
DROP INDEX `assets_plant_name_uq`;--> statement-breakpoint
ALTER TABLE `assets` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `assets` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE INDEX `assets_kind_name_idx` ON `assets` (`kind`,`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `assets_plant_name_uq` ON `assets` (`name_key`) WHERE "assets"."kind" = 'plant';--> statement-breakpoint
DROP INDEX `categories_name_uq`;--> statement-breakpoint
ALTER TABLE `categories` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `categories` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `categories_name_uq` ON `categories` (`name_key`);--> statement-breakpoint
DROP INDEX `classifications_name_uq`;--> statement-breakpoint
ALTER TABLE `classifications` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `classifications` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `classifications_name_uq` ON `classifications` (`name_key`);--> statement-breakpoint
DROP INDEX `data_types_name_uq`;--> statement-breakpoint
ALTER TABLE `data_types` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `data_types` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `data_types_name_uq` ON `data_types` (`name_key`);--> statement-breakpoint
DROP INDEX `deviations_reference_uq`;--> statement-breakpoint
ALTER TABLE `deviations` ADD `reference_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `deviations` SET `reference_key` = CASE WHEN `reference_id` GLOB '*[^ -~]*' THEN NULL ELSE lower(`reference_id`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `deviations_reference_uq` ON `deviations` (`reference_key`);--> statement-breakpoint
DROP INDEX `entity_types_name_uq`;--> statement-breakpoint
ALTER TABLE `entity_types` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `entity_types` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `entity_types_name_uq` ON `entity_types` (`name_key`);--> statement-breakpoint
DROP INDEX `job_configurations_name_uq`;--> statement-breakpoint
ALTER TABLE `job_configurations` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `job_configurations` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `job_configurations_name_uq` ON `job_configurations` (`name_key`);--> statement-breakpoint
DROP INDEX `model_definitions_name_version_uq`;--> statement-breakpoint
ALTER TABLE `model_definitions` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `model_definitions` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `model_definitions_name_version_uq` ON `model_definitions` (`name_key`,`version`);--> statement-breakpoint
DROP INDEX `output_types_name_uq`;--> statement-breakpoint
ALTER TABLE `output_types` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `output_types` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `output_types_name_uq` ON `output_types` (`name_key`);--> statement-breakpoint
DROP INDEX `search_indices_name_uq`;--> statement-breakpoint
ALTER TABLE `search_indices` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `search_indices` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `search_indices_name_uq` ON `search_indices` (`name_key`);--> statement-breakpoint
DROP INDEX `user_statuses_name_uq`;--> statement-breakpoint
ALTER TABLE `user_statuses` ADD `name_key` text;--> statement-breakpoint
-- Existing rows: an ASCII name's key is lower(name) (what the key function gives for ASCII); a key with other
-- characters is left NULL and written by the minute cron (src/pkg/name-keys.ts), which folds in JavaScript.
UPDATE `user_statuses` SET `name_key` = CASE WHEN `name` GLOB '*[^ -~]*' THEN NULL ELSE lower(`name`) END;--> statement-breakpoint
CREATE UNIQUE INDEX `user_statuses_name_uq` ON `user_statuses` (`name_key`);
CREATE TABLE `channel_catalogue` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text,
	`quantity` text,
	`accepts_readings` integer,
	`built_in` integer DEFAULT false NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `channel_catalogue_name_uq` ON `channel_catalogue` (`kind`,`name_key`);--> statement-breakpoint
CREATE INDEX `channel_catalogue_kind_idx` ON `channel_catalogue` (`kind`,`name_key`);--> statement-breakpoint
CREATE TABLE `channels` (
	`id` text PRIMARY KEY NOT NULL,
	`channel_number` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`asset_id` text NOT NULL,
	`asset_kind` text NOT NULL,
	`plant_id` text,
	`channel_type_id` text NOT NULL,
	`data_origin_id` text NOT NULL,
	`availability_id` text NOT NULL,
	`unit` text NOT NULL,
	`nominal_thickness` real,
	`minimum_thickness` real,
	`max_interval_years` real,
	`controllers` text DEFAULT '[]' NOT NULL,
	`max_shelve_minutes` integer DEFAULT 480 NOT NULL,
	`analysis` text,
	`next_inspection_at` text,
	`alarm_state` text DEFAULT 'normal' NOT NULL,
	`reading_count` integer DEFAULT 0 NOT NULL,
	`last_reading_at` text,
	`last_value` real,
	`series_version` integer DEFAULT 0 NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`asset_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`channel_type_id`) REFERENCES `channel_catalogue`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`data_origin_id`) REFERENCES `channel_catalogue`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`availability_id`) REFERENCES `channel_catalogue`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `channels_number_uq` ON `channels` (`channel_number`);--> statement-breakpoint
CREATE INDEX `channels_asset_idx` ON `channels` (`asset_id`,`channel_number`);--> statement-breakpoint
CREATE INDEX `channels_plant_idx` ON `channels` (`plant_id`,`channel_number`);--> statement-breakpoint
CREATE INDEX `channels_type_idx` ON `channels` (`channel_type_id`,`channel_number`);--> statement-breakpoint
CREATE INDEX `channels_next_inspection_idx` ON `channels` (`next_inspection_at`,`channel_number`);--> statement-breakpoint
CREATE INDEX `channels_created_idx` ON `channels` ("created_at" desc,`id`);--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0101', 'channelType', 'Thickness', 'thickness', 'Wall thickness at a condition monitoring location (mm, in): the corrosion analysis runs.', 'thickness', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0102', 'channelType', 'Pressure', 'pressure', 'Pressure (bar, psi, kPa, MPa).', 'pressure', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0103', 'channelType', 'Temperature', 'temperature', 'Temperature (degC, degF, K).', 'temperature', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0104', 'channelType', 'Vibration', 'vibration', 'Vibration velocity or acceleration (mm/s, in/s, g).', 'vibration', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0105', 'channelType', 'Flow', 'flow', 'Flow (m3/h, l/min).', 'flow', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0106', 'channelType', 'Level', 'level', 'Level (m, %).', 'level', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0107', 'channelType', 'Other', 'other', 'Any other quantity, in any listed unit.', 'other', NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0201', 'dataOrigin', 'Manual inspection', 'manual inspection', 'Entered by an inspector, by hand or through an activity input.', NULL, NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0202', 'dataOrigin', 'Sensor', 'sensor', 'Sent by an instrument or historian.', NULL, NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0203', 'dataOrigin', 'Model', 'model', 'Computed by a model or a job.', NULL, NULL, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0301', 'channelAvailability', 'Available', 'available', 'In service: accepts readings.', NULL, 1, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0302', 'channelAvailability', 'Out of service', 'out of service', 'Temporarily not measured: refuses readings.', NULL, 0, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `channel_catalogue` (`id`, `kind`, `name`, `name_key`, `description`, `quantity`, `accepts_readings`, `built_in`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-0000000c0303', 'channelAvailability', 'Decommissioned', 'decommissioned', 'No longer measured: refuses readings; its series stays readable.', NULL, 0, 1, 'builtin1', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', NULL);

CREATE TABLE `counters` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `criticality_history` (
	`id` text PRIMARY KEY NOT NULL,
	`item_id` text NOT NULL,
	`monitor_job_id` text NOT NULL,
	`criticality` real NOT NULL,
	`recorded_at` text NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `population_items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `criticality_history_item_idx` ON `criticality_history` (`item_id`,`recorded_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `criticality_history_job_uq` ON `criticality_history` (`item_id`,`monitor_job_id`);--> statement-breakpoint
CREATE TABLE `model_definitions` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`location` text NOT NULL,
	`uri` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `model_definitions_name_version_uq` ON `model_definitions` (lower("name"),`version`);--> statement-breakpoint
CREATE TABLE `models` (
	`id` text PRIMARY KEY NOT NULL,
	`model_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`definition_name` text NOT NULL,
	`definition_version` text NOT NULL,
	`status` text NOT NULL,
	`cpu_cores` real NOT NULL,
	`memory_gb` real NOT NULL,
	`gpu_cores` real,
	`gpu_sku` text,
	`configurable_parameters` text NOT NULL,
	`static_parameters` text NOT NULL,
	`type_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `models_model_id_uq` ON `models` (`model_id`);--> statement-breakpoint
CREATE INDEX `models_definition_idx` ON `models` (lower("definition_name"),`definition_version`);--> statement-breakpoint
CREATE TABLE `monitor_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`monitor_ref` text NOT NULL,
	`job_id` text,
	`status` text NOT NULL,
	`error_message` text,
	`output` text,
	`definition_name` text NOT NULL,
	`definition_version` text NOT NULL,
	`location` text NOT NULL,
	`parameters` text NOT NULL,
	`trigger_kind` text NOT NULL,
	`run_key` text,
	`deadline_at` text NOT NULL,
	`created_at` text NOT NULL,
	`completed_at` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`monitor_ref`) REFERENCES `monitors`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `monitor_jobs_run_key_uq` ON `monitor_jobs` (`run_key`);--> statement-breakpoint
CREATE INDEX `monitor_jobs_monitor_idx` ON `monitor_jobs` (`monitor_ref`,`created_at`);--> statement-breakpoint
CREATE INDEX `monitor_jobs_job_idx` ON `monitor_jobs` (`job_id`);--> statement-breakpoint
CREATE TABLE `monitors` (
	`id` text PRIMARY KEY NOT NULL,
	`monitor_id` text NOT NULL,
	`name` text NOT NULL,
	`model_ref` text NOT NULL,
	`status` text NOT NULL,
	`trigger_schedule` text,
	`time_zone` text,
	`trigger_event` text,
	`instructions` text,
	`cpu_cores` real,
	`memory_gb` real,
	`gpu_cores` real,
	`gpu_sku` text,
	`configurable_parameters` text,
	`controllers` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`model_ref`) REFERENCES `models`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `monitors_monitor_id_uq` ON `monitors` (`monitor_id`);--> statement-breakpoint
CREATE INDEX `monitors_model_idx` ON `monitors` (`model_ref`);--> statement-breakpoint
CREATE TABLE `population_items` (
	`id` text PRIMARY KEY NOT NULL,
	`population_id` text NOT NULL,
	`asset_id` text NOT NULL,
	`asset_name` text,
	`criticality` real,
	`last_monitor_job_id` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`population_id`) REFERENCES `populations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `population_items_asset_uq` ON `population_items` (`population_id`,`asset_id`);--> statement-breakpoint
CREATE INDEX `population_items_asset_idx` ON `population_items` (`asset_id`);--> statement-breakpoint
CREATE TABLE `populations` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_kind` text NOT NULL,
	`owner_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`asset_type` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `populations_owner_idx` ON `populations` (`owner_kind`,`owner_id`);
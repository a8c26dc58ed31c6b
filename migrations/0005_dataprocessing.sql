CREATE TABLE `job_configurations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`image_name` text NOT NULL,
	`image_tag` text NOT NULL,
	`cpu_cores` real NOT NULL,
	`memory_gb` real NOT NULL,
	`gpu_cores` real,
	`gpu_sku` text,
	`run_options_enc` text NOT NULL,
	`run_command` text,
	`next_config_id` text,
	`frequency` text,
	`time_zone` text,
	`output_type_id` text,
	`timeout_minutes` integer NOT NULL,
	`object_owner_id` text NOT NULL,
	`object_owner_name` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `job_configurations_name_uq` ON `job_configurations` (lower("name"));--> statement-breakpoint
CREATE INDEX `job_configurations_next_idx` ON `job_configurations` (`next_config_id`);--> statement-breakpoint
CREATE TABLE `job_outputs` (
	`id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`job_output_type_id` text,
	`output` text NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `job_outputs_job_idx` ON `job_outputs` (`job_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`configuration_id` text,
	`chain_id` text NOT NULL,
	`chain_position` integer NOT NULL,
	`status` text NOT NULL,
	`error_message` text,
	`output` text,
	`output_truncated` integer DEFAULT false NOT NULL,
	`spec` text NOT NULL,
	`run_options_enc` text NOT NULL,
	`run_key` text,
	`end_hook_kind` text,
	`end_hook_ref` text,
	`output_rejections` text,
	`started_at` text,
	`ended_at` text,
	`deadline_at` text,
	`host_unreachable_since` text,
	`object_owner_id` text NOT NULL,
	`object_owner_name` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_run_key_uq` ON `jobs` (`run_key`);--> statement-breakpoint
CREATE INDEX `jobs_chain_idx` ON `jobs` (`chain_id`,`chain_position`);--> statement-breakpoint
CREATE INDEX `jobs_config_idx` ON `jobs` (`configuration_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_active_idx` ON `jobs` (`status`) WHERE "jobs"."status" IN ('Started', 'InProgress');--> statement-breakpoint
CREATE INDEX `jobs_created_idx` ON `jobs` (`created_at`);--> statement-breakpoint
CREATE TABLE `output_types` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`schema` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `output_types_name_uq` ON `output_types` (lower("name"));
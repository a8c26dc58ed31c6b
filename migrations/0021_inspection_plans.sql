CREATE TABLE `inspection_plan_items` (
	`work_item_id` text PRIMARY KEY NOT NULL,
	`plan_id` text NOT NULL,
	`asset_key` text NOT NULL,
	`due_at` text NOT NULL,
	`reason` text NOT NULL,
	`generated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `inspection_plan_items_due_uq` ON `inspection_plan_items` (`plan_id`,`asset_key`,`due_at`);--> statement-breakpoint
CREATE TABLE `inspection_plan_targets` (
	`plan_id` text NOT NULL,
	`asset_key` text NOT NULL,
	`next_due_at` text,
	`next_reason` text,
	`generate_at` text,
	`open_work_item_id` text,
	`last_generated_work_item_id` text,
	`last_generated_due_at` text,
	`last_generated_at` text,
	`last_completed_work_item_id` text,
	`last_completed_at` text,
	`calendar_after` text,
	`condition_after` text,
	`meter_base` real,
	`channel_version` integer,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`plan_id`, `asset_key`),
	FOREIGN KEY (`plan_id`) REFERENCES `inspection_plans`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `inspection_plan_targets_generate_idx` ON `inspection_plan_targets` (`generate_at`);--> statement-breakpoint
CREATE INDEX `inspection_plan_targets_open_idx` ON `inspection_plan_targets` (`open_work_item_id`);--> statement-breakpoint
CREATE INDEX `inspection_plan_targets_asset_idx` ON `inspection_plan_targets` (`asset_key`);--> statement-breakpoint
CREATE TABLE `inspection_plans` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`work_template_id` text NOT NULL,
	`asset_ids` text NOT NULL,
	`item_per` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`responsible_id` text,
	`responsible_name` text,
	`tags` text NOT NULL,
	`properties` text NOT NULL,
	`status` text NOT NULL,
	`time_zone` text NOT NULL,
	`start_date` text NOT NULL,
	`calendar` text,
	`from_completion` text,
	`condition` text,
	`condition_channel_id` text,
	`lead_time_days` integer DEFAULT 0 NOT NULL,
	`stack` integer DEFAULT false NOT NULL,
	`reminder_interval_days` integer,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE INDEX `inspection_plans_name_idx` ON `inspection_plans` (`name`,`id`);--> statement-breakpoint
CREATE INDEX `inspection_plans_template_idx` ON `inspection_plans` (`work_template_id`);--> statement-breakpoint
CREATE INDEX `inspection_plans_channel_idx` ON `inspection_plans` (`condition_channel_id`);--> statement-breakpoint
CREATE INDEX `inspection_plans_created_idx` ON `inspection_plans` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `overdue_scans` (
	`name` text PRIMARY KEY NOT NULL,
	`scanned_until` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `overdue_work_items` (
	`work_item_id` text PRIMARY KEY NOT NULL,
	`due_at` text NOT NULL,
	`announced_at` text NOT NULL,
	`reminders` integer DEFAULT 0 NOT NULL,
	`next_reminder_at` text
);
--> statement-breakpoint
CREATE INDEX `overdue_work_items_reminder_idx` ON `overdue_work_items` (`next_reminder_at`);
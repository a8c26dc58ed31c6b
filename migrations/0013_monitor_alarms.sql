CREATE TABLE `monitor_alarm_events` (
	`id` text PRIMARY KEY NOT NULL,
	`alarm_id` text NOT NULL,
	`monitor_ref` text NOT NULL,
	`item_id` text NOT NULL,
	`controller` text NOT NULL,
	`action` text NOT NULL,
	`monitor_job_id` text NOT NULL,
	`conditions` text NOT NULL,
	`recorded_at` text NOT NULL,
	FOREIGN KEY (`alarm_id`) REFERENCES `monitor_alarms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `monitor_alarm_events_action_uq` ON `monitor_alarm_events` (`alarm_id`,`action`);--> statement-breakpoint
CREATE INDEX `monitor_alarm_events_item_idx` ON `monitor_alarm_events` (`item_id`,`recorded_at`);--> statement-breakpoint
CREATE TABLE `monitor_alarms` (
	`id` text PRIMARY KEY NOT NULL,
	`monitor_ref` text NOT NULL,
	`item_id` text NOT NULL,
	`asset_id` text NOT NULL,
	`controller` text NOT NULL,
	`active_key` text,
	`entered_job_id` text NOT NULL,
	`entered_at` text NOT NULL,
	`entered_values` text NOT NULL,
	`left_job_id` text,
	`left_at` text,
	`left_values` text,
	`deviation_id` text,
	`work_item_id` text,
	FOREIGN KEY (`monitor_ref`) REFERENCES `monitors`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `population_items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `monitor_alarms_active_uq` ON `monitor_alarms` (`active_key`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_monitor_idx` ON `monitor_alarms` (`monitor_ref`,`active_key`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_item_idx` ON `monitor_alarms` (`item_id`,`entered_at`);--> statement-breakpoint
CREATE TABLE `monitor_event_causes` (
	`event_id` text PRIMARY KEY NOT NULL,
	`monitor_ref` text NOT NULL,
	`monitor_job_id` text NOT NULL,
	`depth` integer NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `monitor_event_causes_created_idx` ON `monitor_event_causes` (`created_at`);--> statement-breakpoint
ALTER TABLE `deviations` ADD `origin` text;--> statement-breakpoint
ALTER TABLE `deviations` ADD `origin_monitor_ref` text;--> statement-breakpoint
CREATE INDEX `deviations_origin_monitor_idx` ON `deviations` (`origin_monitor_ref`);--> statement-breakpoint
ALTER TABLE `monitor_jobs` ADD `trigger_depth` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `monitor_jobs` ADD `reports` text;--> statement-breakpoint
ALTER TABLE `monitor_jobs` ADD `evaluated_at` text;
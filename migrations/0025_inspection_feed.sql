ALTER TABLE `input_templates` ADD `reading` text;--> statement-breakpoint
CREATE TABLE `activity_input_readings` (
	`activity_id` text NOT NULL,
	`input_template_id` text NOT NULL,
	`status` text NOT NULL,
	`channel_id` text,
	`timestamp` integer,
	`value` real,
	`problem` text,
	`activity_version` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`activity_id`, `input_template_id`)
);
--> statement-breakpoint
CREATE INDEX `activity_input_readings_channel_idx` ON `activity_input_readings` (`channel_id`);

CREATE TABLE `activity_media_references` (
	`activity_id` text NOT NULL,
	`media_reference_id` text NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text,
	PRIMARY KEY(`activity_id`, `media_reference_id`),
	FOREIGN KEY (`activity_id`) REFERENCES `activities`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`media_reference_id`) REFERENCES `media_references`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `activity_media_references_reference_idx` ON `activity_media_references` (`media_reference_id`,`activity_id`);--> statement-breakpoint
CREATE TABLE `media_references` (
	`id` text PRIMARY KEY NOT NULL,
	`media_id` text NOT NULL,
	`display_name` text,
	`description` text,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`media_id`) REFERENCES `medias`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `media_references_media_idx` ON `media_references` (`media_id`);--> statement-breakpoint
CREATE INDEX `media_references_name_idx` ON `media_references` (lower("display_name"),`id`);
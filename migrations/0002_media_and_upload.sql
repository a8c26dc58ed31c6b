CREATE TABLE `data_types` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`allowed_extensions` text NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `data_types_name_uq` ON `data_types` (lower("name"));--> statement-breakpoint
CREATE TABLE `file_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`file_id` text NOT NULL,
	`r2_upload_id` text NOT NULL,
	`r2_key` text NOT NULL,
	`part_size` integer NOT NULL,
	`owner_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `file_uploads_expiry_idx` ON `file_uploads` (`expires_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `file_uploads_file_uq` ON `file_uploads` (`file_id`);--> statement-breakpoint
CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`data_type_id` text NOT NULL,
	`size` integer NOT NULL,
	`content_type` text NOT NULL,
	`checksum` text,
	`r2_key` text NOT NULL,
	`state` text NOT NULL,
	`status` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`object_type` text,
	`object_id` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`data_type_id`) REFERENCES `data_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `files_state_status_idx` ON `files` (`state`,`status`);--> statement-breakpoint
CREATE INDEX `files_data_type_idx` ON `files` (`data_type_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `files_owner_idx` ON `files` (`owner_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `medias` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`size` integer NOT NULL,
	`checksum` text NOT NULL,
	`declared_type` text NOT NULL,
	`is_image` integer NOT NULL,
	`image_format` text,
	`width` integer,
	`height` integer,
	`variants` text NOT NULL,
	`recognition` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE INDEX `medias_owner_idx` ON `medias` (`owner_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `upload_parts` (
	`upload_id` text NOT NULL,
	`part_number` integer NOT NULL,
	`etag` text NOT NULL,
	`size` integer NOT NULL,
	`uploaded_at` text NOT NULL,
	PRIMARY KEY(`upload_id`, `part_number`),
	FOREIGN KEY (`upload_id`) REFERENCES `file_uploads`(`id`) ON UPDATE no action ON DELETE cascade
);

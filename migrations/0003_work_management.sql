CREATE TABLE `activities` (
	`id` text PRIMARY KEY NOT NULL,
	`work_item_id` text,
	`based_on_id` text NOT NULL,
	`based_on_revision` integer NOT NULL,
	`display_name` text NOT NULL,
	`reference_id` text,
	`status` text NOT NULL,
	`date_of_activity` text,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`responsible_id` text,
	`responsible_name` text,
	`activity_type_id` text,
	`position` integer DEFAULT 0 NOT NULL,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`work_item_id`) REFERENCES `work_items`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`activity_type_id`) REFERENCES `activity_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `activities_based_on_idx` ON `activities` (`based_on_id`,`based_on_revision`,`id`);--> statement-breakpoint
CREATE INDEX `activities_work_item_idx` ON `activities` (`work_item_id`,`position`);--> statement-breakpoint
CREATE INDEX `activities_name_idx` ON `activities` (lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `activities_status_idx` ON `activities` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `activities_date_idx` ON `activities` (`date_of_activity`,`id`);--> statement-breakpoint
CREATE INDEX `activities_owner_idx` ON `activities` (`owner_id`,`id`);--> statement-breakpoint
CREATE INDEX `activities_responsible_idx` ON `activities` (`responsible_id`,`id`);--> statement-breakpoint
CREATE INDEX `activities_type_idx` ON `activities` (`activity_type_id`,`id`);--> statement-breakpoint
CREATE TABLE `activity_inputs` (
	`activity_id` text NOT NULL,
	`input_template_id` text NOT NULL,
	`name` text NOT NULL,
	`display_name` text,
	`format` text NOT NULL,
	`required` integer DEFAULT false NOT NULL,
	`position` integer NOT NULL,
	`value` text,
	PRIMARY KEY(`activity_id`, `input_template_id`),
	FOREIGN KEY (`activity_id`) REFERENCES `activities`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `activity_templates` (
	`id` text NOT NULL,
	`revision` integer NOT NULL,
	`is_latest` integer NOT NULL,
	`display_name` text NOT NULL,
	`reference_id` text,
	`status` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`activity_type_id` text,
	`template_type` text,
	`description` text,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	PRIMARY KEY(`id`, `revision`),
	FOREIGN KEY (`activity_type_id`) REFERENCES `activity_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `activity_templates_latest_uq` ON `activity_templates` (`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_name_idx` ON `activity_templates` (`is_latest`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `activity_templates_latest_status_idx` ON `activity_templates` (`is_latest`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `activity_templates_latest_type_idx` ON `activity_templates` (`is_latest`,`activity_type_id`,`id`);--> statement-breakpoint
CREATE INDEX `activity_templates_activity_type_idx` ON `activity_templates` (`activity_type_id`);--> statement-breakpoint
CREATE TABLE `activity_types` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `activity_types_name_uq` ON `activity_types` (lower("name"));--> statement-breakpoint
CREATE TABLE `assets` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`parent_id` text,
	`plant_id` text,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`parent_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `assets_kind_name_idx` ON `assets` (`kind`,lower("name"));--> statement-breakpoint
CREATE INDEX `assets_parent_idx` ON `assets` (`parent_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `assets_plant_name_uq` ON `assets` (lower("name")) WHERE "assets"."kind" = 'plant';--> statement-breakpoint
CREATE TABLE `designations` (
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`asset_kind` text NOT NULL,
	`asset_id` text NOT NULL,
	`derived` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`entity_kind`, `entity_id`, `asset_kind`, `asset_id`),
	FOREIGN KEY (`asset_id`) REFERENCES `assets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `designations_asset_idx` ON `designations` (`entity_kind`,`asset_kind`,`asset_id`,`entity_id`);--> statement-breakpoint
CREATE INDEX `designations_asset_id_idx` ON `designations` (`asset_id`);--> statement-breakpoint
CREATE TABLE `deviation_relationships` (
	`deviation_id` text NOT NULL,
	`related_id` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`deviation_id`, `related_id`),
	FOREIGN KEY (`deviation_id`) REFERENCES `deviations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`related_id`) REFERENCES `deviations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `deviation_relationships_related_idx` ON `deviation_relationships` (`related_id`);--> statement-breakpoint
CREATE TABLE `deviation_work_items` (
	`deviation_id` text NOT NULL,
	`work_item_id` text NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text,
	PRIMARY KEY(`deviation_id`, `work_item_id`),
	FOREIGN KEY (`deviation_id`) REFERENCES `deviations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`work_item_id`) REFERENCES `work_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `deviation_work_items_work_item_idx` ON `deviation_work_items` (`work_item_id`,`deviation_id`);--> statement-breakpoint
CREATE TABLE `deviations` (
	`id` text PRIMARY KEY NOT NULL,
	`reference_id` text NOT NULL,
	`description` text,
	`status` text NOT NULL,
	`type_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`risk_id` text,
	`risk_name` text,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`type_id`) REFERENCES `entity_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deviations_reference_uq` ON `deviations` (lower("reference_id"));--> statement-breakpoint
CREATE INDEX `deviations_reference_idx` ON `deviations` (`reference_id`,`id`);--> statement-breakpoint
CREATE INDEX `deviations_status_idx` ON `deviations` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `deviations_type_idx` ON `deviations` (`type_id`,`id`);--> statement-breakpoint
CREATE INDEX `deviations_owner_idx` ON `deviations` (`owner_id`,`id`);--> statement-breakpoint
CREATE INDEX `deviations_risk_idx` ON `deviations` (`risk_id`,`id`);--> statement-breakpoint
CREATE INDEX `deviations_created_idx` ON `deviations` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `entity_tags` (
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`tag` text NOT NULL,
	PRIMARY KEY(`entity_kind`, `entity_id`, `tag`)
);
--> statement-breakpoint
CREATE INDEX `entity_tags_tag_idx` ON `entity_tags` (`tag`,`entity_kind`,`entity_id`);--> statement-breakpoint
CREATE TABLE `file_references` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_kind` text NOT NULL,
	`owner_id` text NOT NULL,
	`location` text NOT NULL,
	`platform_file_id` text,
	`url` text,
	`name` text,
	`inherited_from` text,
	`created_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE INDEX `file_references_owner_idx` ON `file_references` (`owner_kind`,`owner_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `file_references_platform_file_idx` ON `file_references` (`platform_file_id`);--> statement-breakpoint
CREATE TABLE `input_templates` (
	`activity_template_id` text NOT NULL,
	`activity_template_revision` integer NOT NULL,
	`id` text NOT NULL,
	`name` text NOT NULL,
	`display_name` text,
	`format` text NOT NULL,
	`required` integer DEFAULT false NOT NULL,
	`position` integer NOT NULL,
	`metadata` text,
	PRIMARY KEY(`activity_template_id`, `activity_template_revision`, `id`),
	FOREIGN KEY (`activity_template_id`,`activity_template_revision`) REFERENCES `activity_templates`(`id`,`revision`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `section_templates` (
	`work_template_id` text NOT NULL,
	`work_template_revision` integer NOT NULL,
	`id` text NOT NULL,
	`display_name` text NOT NULL,
	`description` text,
	`position` integer NOT NULL,
	`metadata` text,
	PRIMARY KEY(`work_template_id`, `work_template_revision`, `id`),
	FOREIGN KEY (`work_template_id`,`work_template_revision`) REFERENCES `work_templates`(`id`,`revision`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `work_item_activity_templates` (
	`work_item_id` text NOT NULL,
	`activity_template_id` text NOT NULL,
	`activity_template_revision` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`work_item_id`, `activity_template_id`),
	FOREIGN KEY (`work_item_id`) REFERENCES `work_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `work_item_activity_templates_template_idx` ON `work_item_activity_templates` (`activity_template_id`,`activity_template_revision`);--> statement-breakpoint
CREATE TABLE `work_item_templates` (
	`work_item_id` text NOT NULL,
	`work_template_id` text NOT NULL,
	`work_template_revision` integer NOT NULL,
	`position` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`work_item_id`, `work_template_id`),
	FOREIGN KEY (`work_item_id`) REFERENCES `work_items`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `work_item_templates_template_idx` ON `work_item_templates` (`work_template_id`,`work_template_revision`,`work_item_id`);--> statement-breakpoint
CREATE TABLE `work_items` (
	`id` text PRIMARY KEY NOT NULL,
	`display_name` text NOT NULL,
	`reference_id` text,
	`status` text NOT NULL,
	`due_date` text,
	`type_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`tags` text NOT NULL,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`type_id`) REFERENCES `entity_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `work_items_name_idx` ON `work_items` (lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `work_items_status_idx` ON `work_items` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `work_items_due_idx` ON `work_items` (`due_date`,`id`);--> statement-breakpoint
CREATE INDEX `work_items_owner_idx` ON `work_items` (`owner_id`,`id`);--> statement-breakpoint
CREATE INDEX `work_items_created_idx` ON `work_items` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `work_template_activity_templates` (
	`work_template_id` text NOT NULL,
	`work_template_revision` integer NOT NULL,
	`id` text NOT NULL,
	`activity_template_id` text NOT NULL,
	`section_template_id` text,
	`position` integer NOT NULL,
	`metadata` text,
	PRIMARY KEY(`work_template_id`, `work_template_revision`, `id`),
	FOREIGN KEY (`work_template_id`,`work_template_revision`) REFERENCES `work_templates`(`id`,`revision`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `wtat_activity_template_idx` ON `work_template_activity_templates` (`activity_template_id`);--> statement-breakpoint
CREATE TABLE `work_templates` (
	`id` text NOT NULL,
	`revision` integer NOT NULL,
	`is_latest` integer NOT NULL,
	`display_name` text NOT NULL,
	`reference_id` text,
	`status` text NOT NULL,
	`type_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`tags` text NOT NULL,
	`properties` text NOT NULL,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	PRIMARY KEY(`id`, `revision`),
	FOREIGN KEY (`type_id`) REFERENCES `entity_types`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `work_templates_latest_uq` ON `work_templates` (`id`) WHERE "work_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `work_templates_latest_name_idx` ON `work_templates` (`is_latest`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `work_templates_latest_status_idx` ON `work_templates` (`is_latest`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `work_templates_latest_owner_idx` ON `work_templates` (`is_latest`,`owner_id`,`id`);--> statement-breakpoint
ALTER TABLE `upload_parts` ADD `checksum` text;
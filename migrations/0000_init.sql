CREATE TABLE `categories` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `categories_name_uq` ON `categories` (lower("name"));--> statement-breakpoint
CREATE TABLE `classification_elements` (
	`id` text PRIMARY KEY NOT NULL,
	`classification_id` text NOT NULL,
	`parent_id` text,
	`position` integer NOT NULL,
	`name` text NOT NULL,
	`display_name` text,
	`code` text,
	`applier_code` text,
	`color` text,
	`sort_order` integer,
	`grade` real,
	FOREIGN KEY (`classification_id`) REFERENCES `classifications`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `classification_elements_name_uq` ON `classification_elements` (`classification_id`,`name`);--> statement-breakpoint
CREATE INDEX `classification_elements_parent_idx` ON `classification_elements` (`classification_id`,`parent_id`,`position`);--> statement-breakpoint
CREATE TABLE `classifications` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`format` text NOT NULL,
	`description` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `classifications_name_uq` ON `classifications` (lower("name"));--> statement-breakpoint
CREATE TABLE `entity_type_properties` (
	`entity_type_id` text NOT NULL,
	`property_definition_id` text NOT NULL,
	`position` integer NOT NULL,
	PRIMARY KEY(`entity_type_id`, `property_definition_id`),
	FOREIGN KEY (`entity_type_id`) REFERENCES `entity_types`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`property_definition_id`) REFERENCES `property_definitions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `entity_type_properties_definition_idx` ON `entity_type_properties` (`property_definition_id`);--> statement-breakpoint
CREATE TABLE `entity_types` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`applies_to` text,
	`icon_name` text,
	`icon_color` text,
	`is_default` integer DEFAULT false NOT NULL,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `entity_types_name_uq` ON `entity_types` (lower("name"));--> statement-breakpoint
CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`action` text NOT NULL,
	`payload` text NOT NULL,
	`occurred_at` text NOT NULL,
	`actor_id` text,
	`request_id` text,
	`dispatched_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_id_uq` ON `outbox` (`id`);--> statement-breakpoint
CREATE INDEX `outbox_pending_idx` ON `outbox` (`dispatched_at`,`seq`);--> statement-breakpoint
CREATE TABLE `processed_events` (
	`event_id` text PRIMARY KEY NOT NULL,
	`processed_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `property_definitions` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`format` text NOT NULL,
	`regex` text,
	`regex_error_message` text,
	`unit` text,
	`classification_id` text,
	`entity_type` text,
	`is_multiselect` integer DEFAULT false NOT NULL,
	`application_rule` text NOT NULL,
	`required` integer DEFAULT false NOT NULL,
	`default_value` text,
	`value_expression` text,
	`instruction` text,
	`instruction_image_key` text,
	`metadata` text,
	`category_id` text NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`classification_id`) REFERENCES `classifications`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `property_definitions_name_uq` ON `property_definitions` (`name`);--> statement-breakpoint
CREATE INDEX `property_definitions_rule_idx` ON `property_definitions` (`application_rule`,`name`);--> statement-breakpoint
CREATE INDEX `property_definitions_category_idx` ON `property_definitions` (`category_id`);--> statement-breakpoint
CREATE INDEX `property_definitions_classification_idx` ON `property_definitions` (`classification_id`);--> statement-breakpoint
CREATE TABLE `property_values` (
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`name` text NOT NULL,
	`position` integer DEFAULT 0 NOT NULL,
	`definition_id` text NOT NULL,
	`value_text` text,
	`value_num` real,
	`value_json` text NOT NULL,
	PRIMARY KEY(`entity_kind`, `entity_id`, `name`, `position`)
);
--> statement-breakpoint
CREATE INDEX `property_values_num_idx` ON `property_values` (`entity_kind`,`name`,`value_num`,`entity_id`);--> statement-breakpoint
CREATE INDEX `property_values_text_idx` ON `property_values` (`entity_kind`,`name`,`value_text`,`entity_id`);--> statement-breakpoint
CREATE INDEX `property_values_definition_idx` ON `property_values` (`definition_id`);--> statement-breakpoint
CREATE TABLE `system_statuses` (
	`name` text PRIMARY KEY NOT NULL,
	`sort_order` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `user_statuses` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`sort_order` integer NOT NULL,
	`status` text NOT NULL,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`status`) REFERENCES `system_statuses`(`name`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_statuses_name_uq` ON `user_statuses` (lower("name"));--> statement-breakpoint
CREATE INDEX `user_statuses_order_idx` ON `user_statuses` (`sort_order`);
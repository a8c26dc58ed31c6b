CREATE TABLE `audit_archived_entities` (
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`first_seq` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`last_after` text,
	PRIMARY KEY(`entity_kind`, `entity_id`, `first_seq`)
);
--> statement-breakpoint
CREATE TABLE `audit_records` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` text NOT NULL,
	`occurred_at` text NOT NULL,
	`entity_kind` text NOT NULL,
	`entity_id` text NOT NULL,
	`action` text NOT NULL,
	`etag` text,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`actor_name` text,
	`cause` text,
	`request_id` text,
	`reason` text,
	`before` text,
	`after` text
);
--> statement-breakpoint
CREATE INDEX `audit_records_entity_idx` ON `audit_records` (`entity_kind`,`entity_id`,`seq`);--> statement-breakpoint
CREATE INDEX `audit_records_occurred_idx` ON `audit_records` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `audit_records_actor_idx` ON `audit_records` (`actor_id`,`seq`);--> statement-breakpoint
CREATE INDEX `audit_records_request_idx` ON `audit_records` (`request_id`);--> statement-breakpoint
CREATE TABLE `audit_seals` (
	`seq` integer PRIMARY KEY NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL,
	`sealed_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_segments` (
	`first_seq` integer PRIMARY KEY NOT NULL,
	`last_seq` integer NOT NULL,
	`day` text NOT NULL,
	`records` integer NOT NULL,
	`first_at` text NOT NULL,
	`last_at` text NOT NULL,
	`prev_hash` text NOT NULL,
	`first_hash` text NOT NULL,
	`last_hash` text NOT NULL,
	`object_key` text NOT NULL,
	`bytes` integer NOT NULL,
	`archived_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_segments_last_idx` ON `audit_segments` (`last_seq`);--> statement-breakpoint
CREATE INDEX `audit_segments_at_idx` ON `audit_segments` (`first_at`,`last_at`);
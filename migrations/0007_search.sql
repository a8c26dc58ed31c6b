CREATE TABLE `search_index_logs` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`index_id` text NOT NULL,
	`sync_id` text,
	`level` text NOT NULL,
	`message` text NOT NULL,
	`at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `search_index_logs_index_idx` ON `search_index_logs` (`index_id`,`seq`);--> statement-breakpoint
CREATE TABLE `search_indices` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`display_name` text NOT NULL,
	`description` text,
	`type` text NOT NULL,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`trigger_schedule` text,
	`mapping` text,
	`library` text,
	`library_file_name` text,
	`grant_permissions` text,
	`status` text NOT NULL,
	`document_count` integer DEFAULT 0 NOT NULL,
	`last_sync` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `search_indices_name_uq` ON `search_indices` (lower("name"));--> statement-breakpoint
CREATE INDEX `search_indices_owner_idx` ON `search_indices` (`owner_id`,`id`);--> statement-breakpoint
CREATE INDEX `search_indices_type_idx` ON `search_indices` (`type`,`id`);--> statement-breakpoint
CREATE TABLE `search_queries` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`owner_id` text NOT NULL,
	`owner_name` text,
	`index_id` text NOT NULL,
	`query_object` text NOT NULL,
	`metadata` text,
	`etag` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_by` text,
	FOREIGN KEY (`index_id`) REFERENCES `search_indices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `search_queries_owner_idx` ON `search_queries` (`owner_id`,`id`);--> statement-breakpoint
CREATE INDEX `search_queries_index_idx` ON `search_queries` (`index_id`,`id`);--> statement-breakpoint
CREATE INDEX `search_queries_name_idx` ON `search_queries` (lower("name"),`id`);
--> statement-breakpoint
-- The standard indices exist from the first start (spec 2.10); their mappings and descriptions live in src/search/standard.ts.
-- Owned by the service itself until an index_admin gives one an owner; 'Pending' until their first synchronisation (the minute cron starts it).
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000001', 'platform-risks', 'Risks', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard1', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000002', 'platform-deviations', 'Deviations', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard2', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000003', 'platform-equipment', 'Equipment', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard3', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000004', 'platform-main-systems', 'Main systems', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard4', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000005', 'platform-channels', 'Channels', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard5', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000006', 'platform-work-items', 'Work items', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard6', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000007', 'platform-structure-node-reference', 'Structure node references', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard7', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000008', 'platform-plants', 'Plants', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard8', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-000000000009', 'platform-main-system-objects', 'Main system objects', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard9', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-00000000000a', 'platform-activities', 'Activities', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard10', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-00000000000b', 'platform-activity-date-inputs', 'Activity date inputs', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard11', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-00000000000c', 'platform-activity-number-inputs', 'Activity number inputs', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard12', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);
--> statement-breakpoint
INSERT INTO `search_indices` (`id`, `name`, `display_name`, `description`, `type`, `owner_id`, `owner_name`, `trigger_schedule`, `mapping`, `library`, `library_file_name`, `grant_permissions`, `status`, `document_count`, `last_sync`, `etag`, `created_at`, `updated_at`, `created_by`) VALUES ('00000000-0000-4000-8000-00000000000d', 'platform-activity-text-inputs', 'Activity text inputs', NULL, 'standard', 'integrity-edge', 'integrity-edge', NULL, NULL, NULL, NULL, NULL, 'Pending', 0, NULL, 'standard13', '2026-11-25T00:00:00.000Z', '2026-11-25T00:00:00.000Z', NULL);

DROP INDEX `activities_name_idx`;--> statement-breakpoint
DROP INDEX `activities_status_idx`;--> statement-breakpoint
CREATE INDEX `activities_name_idx` ON `activities` (`display_name`,`id`,`date_of_activity`);--> statement-breakpoint
CREATE INDEX `activities_status_idx` ON `activities` (`status`,`display_name`,`id`,`date_of_activity`);--> statement-breakpoint
DROP INDEX `activity_templates_latest_name_idx`;--> statement-breakpoint
DROP INDEX `activity_templates_latest_status_idx`;--> statement-breakpoint
DROP INDEX `activity_templates_latest_type_idx`;--> statement-breakpoint
DROP INDEX `activity_templates_latest_owner_idx`;--> statement-breakpoint
DROP INDEX `activity_templates_latest_template_type_idx`;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_owner_status_idx` ON `activity_templates` (`owner_id`,`status`,lower("display_name"),`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_name_idx` ON `activity_templates` (lower("display_name"),`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_status_idx` ON `activity_templates` (`status`,lower("display_name"),`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_type_idx` ON `activity_templates` (`activity_type_id`,lower("display_name"),`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_owner_idx` ON `activity_templates` (`owner_id`,lower("display_name"),`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_template_type_idx` ON `activity_templates` (`template_type`,lower("display_name"),`id`) WHERE "activity_templates"."is_latest" = 1;--> statement-breakpoint
DROP INDEX `work_items_name_idx`;--> statement-breakpoint
DROP INDEX `work_items_status_idx`;--> statement-breakpoint
CREATE INDEX `work_items_name_idx` ON `work_items` (`display_name`,`id`,`due_date`);--> statement-breakpoint
CREATE INDEX `work_items_status_idx` ON `work_items` (`status`,`display_name`,`id`,`due_date`);--> statement-breakpoint
DROP INDEX `work_templates_latest_name_idx`;--> statement-breakpoint
DROP INDEX `work_templates_latest_status_idx`;--> statement-breakpoint
DROP INDEX `work_templates_latest_owner_idx`;--> statement-breakpoint
CREATE INDEX `work_templates_latest_owner_status_idx` ON `work_templates` (`owner_id`,`status`,lower("display_name"),`id`) WHERE "work_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `work_templates_latest_name_idx` ON `work_templates` (lower("display_name"),`id`) WHERE "work_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `work_templates_latest_status_idx` ON `work_templates` (`status`,lower("display_name"),`id`) WHERE "work_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `work_templates_latest_owner_idx` ON `work_templates` (`owner_id`,lower("display_name"),`id`) WHERE "work_templates"."is_latest" = 1;--> statement-breakpoint
CREATE INDEX `files_owner_status_idx` ON `files` (`owner_id`,`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `models_owner_status_idx` ON `models` (`owner_id`,`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `monitors_owner_status_idx` ON `monitors` (`owner_id`,`status`,"created_at" desc,`id`);
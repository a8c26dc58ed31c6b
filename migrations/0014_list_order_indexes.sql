DROP INDEX `activities_name_idx`;--> statement-breakpoint
DROP INDEX `activities_status_idx`;--> statement-breakpoint
DROP INDEX `activities_owner_idx`;--> statement-breakpoint
DROP INDEX `activities_responsible_idx`;--> statement-breakpoint
DROP INDEX `activities_type_idx`;--> statement-breakpoint
CREATE INDEX `activities_owner_status_idx` ON `activities` (`owner_id`,`status`,`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `activities_name_idx` ON `activities` (`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `activities_status_idx` ON `activities` (`status`,`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `activities_owner_idx` ON `activities` (`owner_id`,`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `activities_responsible_idx` ON `activities` (`responsible_id`,`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `activities_type_idx` ON `activities` (`activity_type_id`,`display_name`,`id`);--> statement-breakpoint
DROP INDEX `activity_templates_latest_status_idx`;--> statement-breakpoint
DROP INDEX `activity_templates_latest_type_idx`;--> statement-breakpoint
CREATE INDEX `activity_templates_latest_owner_idx` ON `activity_templates` (`is_latest`,`owner_id`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `activity_templates_latest_template_type_idx` ON `activity_templates` (`is_latest`,`template_type`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `activity_templates_latest_status_idx` ON `activity_templates` (`is_latest`,`status`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `activity_templates_latest_type_idx` ON `activity_templates` (`is_latest`,`activity_type_id`,lower("display_name"),`id`);--> statement-breakpoint
DROP INDEX `deviations_status_idx`;--> statement-breakpoint
DROP INDEX `deviations_type_idx`;--> statement-breakpoint
DROP INDEX `deviations_owner_idx`;--> statement-breakpoint
DROP INDEX `deviations_risk_idx`;--> statement-breakpoint
DROP INDEX `deviations_created_idx`;--> statement-breakpoint
CREATE INDEX `deviations_owner_status_idx` ON `deviations` (`owner_id`,`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `deviations_status_idx` ON `deviations` (`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `deviations_type_idx` ON `deviations` (`type_id`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `deviations_owner_idx` ON `deviations` (`owner_id`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `deviations_risk_idx` ON `deviations` (`risk_id`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `deviations_created_idx` ON `deviations` ("created_at" desc,`id`);--> statement-breakpoint
DROP INDEX `files_state_status_idx`;--> statement-breakpoint
DROP INDEX `files_data_type_idx`;--> statement-breakpoint
DROP INDEX `files_owner_idx`;--> statement-breakpoint
CREATE INDEX `files_state_created_idx` ON `files` (`state`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `files_state_status_idx` ON `files` (`state`,`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `files_data_type_idx` ON `files` (`data_type_id`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `files_owner_idx` ON `files` (`owner_id`,"created_at" desc,`id`);--> statement-breakpoint
DROP INDEX `jobs_config_idx`;--> statement-breakpoint
DROP INDEX `jobs_created_idx`;--> statement-breakpoint
CREATE INDEX `jobs_status_idx` ON `jobs` (`status`,"created_at" desc,`chain_position`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_config_idx` ON `jobs` (`configuration_id`,"created_at" desc,`chain_position`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_created_idx` ON `jobs` ("created_at" desc,`chain_position`,`id`);--> statement-breakpoint
DROP INDEX `medias_owner_idx`;--> statement-breakpoint
CREATE INDEX `medias_created_idx` ON `medias` ("created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `medias_type_idx` ON `medias` (`declared_type`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `medias_owner_idx` ON `medias` (`owner_id`,"created_at" desc,`id`);--> statement-breakpoint
DROP INDEX `monitors_model_idx`;--> statement-breakpoint
CREATE INDEX `monitors_created_idx` ON `monitors` ("created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `monitors_status_idx` ON `monitors` (`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `monitors_owner_idx` ON `monitors` (`owner_id`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `monitors_model_idx` ON `monitors` (`model_ref`,"created_at" desc,`id`);--> statement-breakpoint
DROP INDEX `work_items_name_idx`;--> statement-breakpoint
DROP INDEX `work_items_status_idx`;--> statement-breakpoint
DROP INDEX `work_items_owner_idx`;--> statement-breakpoint
CREATE INDEX `work_items_owner_status_idx` ON `work_items` (`owner_id`,`status`,`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `work_items_name_idx` ON `work_items` (`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `work_items_status_idx` ON `work_items` (`status`,`display_name`,`id`);--> statement-breakpoint
CREATE INDEX `work_items_owner_idx` ON `work_items` (`owner_id`,`display_name`,`id`);--> statement-breakpoint
DROP INDEX `work_templates_latest_status_idx`;--> statement-breakpoint
DROP INDEX `work_templates_latest_owner_idx`;--> statement-breakpoint
CREATE INDEX `work_templates_latest_status_idx` ON `work_templates` (`is_latest`,`status`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `work_templates_latest_owner_idx` ON `work_templates` (`is_latest`,`owner_id`,lower("display_name"),`id`);--> statement-breakpoint
CREATE INDEX `job_configurations_name_idx` ON `job_configurations` (lower("name"),`id`);--> statement-breakpoint
CREATE INDEX `job_configurations_owner_idx` ON `job_configurations` (`object_owner_id`,lower("name"),`id`);--> statement-breakpoint
CREATE INDEX `models_created_idx` ON `models` ("created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `models_status_idx` ON `models` (`status`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `models_owner_idx` ON `models` (`owner_id`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `models_definition_name_idx` ON `models` (`definition_name`,"created_at" desc,`id`);--> statement-breakpoint
CREATE INDEX `monitor_jobs_created_idx` ON `monitor_jobs` (`created_at`);
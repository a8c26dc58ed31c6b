-- Hand-ordered (issue 35): alarms are raised by channels as well as monitors, so monitor_alarms and
-- monitor_alarm_streaks lose their foreign keys to monitors and population_items (a channel's alarm names
-- the channel in both). D1 cannot switch foreign keys off, and dropping a table deletes its rows first,
-- which would cascade to the history: so the history is copied into a table that references the NEW
-- alarms table, the old history and the old alarms are dropped (nothing references them then), and the
-- renames carry the reference along. Triggers delete what the cascades used to.
PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_monitor_alarms` (
	`id` text PRIMARY KEY NOT NULL,
	`source_kind` text DEFAULT 'monitor' NOT NULL,
	`monitor_ref` text NOT NULL,
	`item_id` text NOT NULL,
	`asset_id` text NOT NULL,
	`plant_id` text,
	`controller` text NOT NULL,
	`severity` text DEFAULT 'medium' NOT NULL,
	`active_key` text,
	`entered_job_id` text NOT NULL,
	`entered_at` text NOT NULL,
	`entered_values` text NOT NULL,
	`left_job_id` text,
	`left_at` text,
	`left_values` text,
	`deviation_id` text,
	`deviation_status` text,
	`work_item_id` text,
	`held` integer DEFAULT false NOT NULL,
	`acknowledged_at` text,
	`acknowledged_by_id` text,
	`acknowledged_by_name` text,
	`acknowledged_comment` text,
	`assignee_id` text,
	`assignee_name` text,
	`assigned_at` text,
	`shelve_mode` text,
	`shelved_at` text,
	`shelved_until` text,
	`shelved_by_id` text,
	`shelved_by_name` text,
	`shelve_comment` text,
	`escalate_at` text,
	`escalations` integer DEFAULT 0 NOT NULL,
	`escalate_after_minutes` integer,
	`escalate_every_minutes` integer,
	`etag` text DEFAULT '' NOT NULL,
	`updated_at` text DEFAULT '' NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_monitor_alarms`("id", "monitor_ref", "item_id", "asset_id", "plant_id", "controller", "severity", "active_key", "entered_job_id", "entered_at", "entered_values", "left_job_id", "left_at", "left_values", "deviation_id", "deviation_status", "work_item_id", "held", "acknowledged_at", "acknowledged_by_id", "acknowledged_by_name", "acknowledged_comment", "assignee_id", "assignee_name", "assigned_at", "shelve_mode", "shelved_at", "shelved_until", "shelved_by_id", "shelved_by_name", "shelve_comment", "escalate_at", "escalations", "escalate_after_minutes", "escalate_every_minutes", "etag", "updated_at") SELECT "id", "monitor_ref", "item_id", "asset_id", "plant_id", "controller", "severity", "active_key", "entered_job_id", "entered_at", "entered_values", "left_job_id", "left_at", "left_values", "deviation_id", "deviation_status", "work_item_id", "held", "acknowledged_at", "acknowledged_by_id", "acknowledged_by_name", "acknowledged_comment", "assignee_id", "assignee_name", "assigned_at", "shelve_mode", "shelved_at", "shelved_until", "shelved_by_id", "shelved_by_name", "shelve_comment", "escalate_at", "escalations", "escalate_after_minutes", "escalate_every_minutes", "etag", "updated_at" FROM `monitor_alarms`;--> statement-breakpoint
CREATE TABLE `__new_monitor_alarm_events` (
	`id` text PRIMARY KEY NOT NULL,
	`alarm_id` text NOT NULL,
	`monitor_ref` text NOT NULL,
	`item_id` text NOT NULL,
	`controller` text NOT NULL,
	`action` text NOT NULL,
	`monitor_job_id` text,
	`conditions` text,
	`actor_id` text,
	`actor_name` text,
	`comment` text,
	`details` text,
	`recorded_at` text NOT NULL,
	FOREIGN KEY (`alarm_id`) REFERENCES `__new_monitor_alarms`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_monitor_alarm_events`("id", "alarm_id", "monitor_ref", "item_id", "controller", "action", "monitor_job_id", "conditions", "actor_id", "actor_name", "comment", "details", "recorded_at") SELECT "id", "alarm_id", "monitor_ref", "item_id", "controller", "action", "monitor_job_id", "conditions", "actor_id", "actor_name", "comment", "details", "recorded_at" FROM `monitor_alarm_events`;--> statement-breakpoint
DROP TABLE `monitor_alarm_events`;--> statement-breakpoint
DROP TABLE `monitor_alarms`;--> statement-breakpoint
ALTER TABLE `__new_monitor_alarms` RENAME TO `monitor_alarms`;--> statement-breakpoint
ALTER TABLE `__new_monitor_alarm_events` RENAME TO `monitor_alarm_events`;--> statement-breakpoint
CREATE UNIQUE INDEX `monitor_alarms_active_uq` ON `monitor_alarms` (`active_key`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_monitor_idx` ON `monitor_alarms` (`monitor_ref`,`active_key`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_item_idx` ON `monitor_alarms` (`item_id`,`entered_at`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_shelved_idx` ON `monitor_alarms` (`shelved_until`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_escalate_idx` ON `monitor_alarms` (`escalate_at`);--> statement-breakpoint
CREATE INDEX `monitor_alarms_entered_idx` ON `monitor_alarms` (`entered_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `monitor_alarm_events_action_uq` ON `monitor_alarm_events` (`alarm_id`,`action`) WHERE "monitor_alarm_events"."action" IN ('entered', 'left', 'released');--> statement-breakpoint
CREATE INDEX `monitor_alarm_events_item_idx` ON `monitor_alarm_events` (`item_id`,`recorded_at`);--> statement-breakpoint
CREATE INDEX `monitor_alarm_events_alarm_idx` ON `monitor_alarm_events` (`alarm_id`,`recorded_at`);--> statement-breakpoint
CREATE TABLE `__new_monitor_alarm_streaks` (
	`key` text PRIMARY KEY NOT NULL,
	`monitor_ref` text NOT NULL,
	`item_id` text NOT NULL,
	`direction` text NOT NULL,
	`count` integer NOT NULL,
	`job_id` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_monitor_alarm_streaks`("key", "monitor_ref", "item_id", "direction", "count", "job_id", "updated_at") SELECT "key", "monitor_ref", "item_id", "direction", "count", "job_id", "updated_at" FROM `monitor_alarm_streaks`;--> statement-breakpoint
DROP TABLE `monitor_alarm_streaks`;--> statement-breakpoint
ALTER TABLE `__new_monitor_alarm_streaks` RENAME TO `monitor_alarm_streaks`;--> statement-breakpoint
CREATE INDEX `monitor_alarm_streaks_monitor_idx` ON `monitor_alarm_streaks` (`monitor_ref`);--> statement-breakpoint
PRAGMA defer_foreign_keys = off;--> statement-breakpoint
CREATE TRIGGER `monitor_alarms_of_deleted_monitor` AFTER DELETE ON `monitors` BEGIN
  DELETE FROM `monitor_alarms` WHERE `source_kind` = 'monitor' AND `monitor_ref` = OLD.`id`;
  DELETE FROM `monitor_alarm_streaks` WHERE `monitor_ref` = OLD.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `monitor_alarms_of_deleted_item` AFTER DELETE ON `population_items` BEGIN
  DELETE FROM `monitor_alarms` WHERE `source_kind` = 'monitor' AND `item_id` = OLD.`id`;
  DELETE FROM `monitor_alarm_streaks` WHERE `item_id` = OLD.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `monitor_alarms_of_deleted_channel` AFTER DELETE ON `channels` BEGIN
  DELETE FROM `monitor_alarms` WHERE `source_kind` = 'channel' AND `monitor_ref` = OLD.`id`;
  DELETE FROM `monitor_alarm_streaks` WHERE `monitor_ref` = OLD.`id`;
END;